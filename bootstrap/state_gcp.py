"""GCS state bucket (UBLA, public access prevention, CMEK, versioning) and a Cloud KMS key for gcpkms://."""

import re

import pulumi
import pulumi_gcp as gcp

GCS_MAX_NAME = 63
BUCKET_INFIX = "-pulumi-state-"
PROJECT_NUMBER_DIGITS = 12  # what a project number has today; assumed when the real one is not known (offline plans)


def keep(**options) -> pulumi.ResourceOptions:
    """Protected and retained: the state of every stack, and the key that decrypts its secrets, live here."""
    return pulumi.ResourceOptions(protect=True, retain_on_delete=True, **options)


def bucket_name(prefix: str, project_number: str) -> str:
    """`<prefix>-pulumi-state-<project number>`: GCS names are global, the project number makes it the project's own.
    The name stays as it was: a new one would replace the (protected) bucket of existing bootstraps."""
    return f"{prefix}{BUCKET_INFIX}{project_number}"


def check(prefix_key: str, prefix: str) -> str:
    """Fail before anything is registered when the bucket name GCS would get is invalid (Cloud Storage, "Bucket naming
    guidelines": lowercase letters, digits, dashes, underscores and dots, dotted names needing domain verification;
    starting and ending with a letter or digit; 3 to 63 characters without dots; not starting with "goog"; not
    containing "google" or a close misspelling). Returns the project number the name ends with."""
    number = str(gcp.organizations.get_project().number)
    digits = len(number) if number.isdigit() else PROJECT_NUMBER_DIGITS
    longest = GCS_MAX_NAME - len(BUCKET_INFIX) - digits
    if (not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", prefix) or len(prefix) > longest or prefix.startswith("goog")
            or re.search(r"g[o0][o0]g[l1]e", prefix)):
        raise pulumi.RunError(
            f"{prefix_key}: got {prefix!r} ({len(prefix)} characters); with gcp in clouds it names the GCS bucket "
            f"<prefix>{BUCKET_INFIX}<project number> (a {digits}-digit number here), so allowed: lowercase letters, "
            f"digits, hyphens and underscores, starting with a letter or digit, not starting with \"goog\" nor "
            f"containing \"google\" (or a look-alike such as \"g00gle\"), at most {longest} characters "
            f"(GCS bucket names are at most {GCS_MAX_NAME})")
    return number


def build(prefix: str, region: str, project_number: str) -> None:
    # A new project has the Cloud KMS API off: creating the key ring would fail with SERVICE_DISABLED. Leave it on
    # when this resource goes: every stack's secrets provider (gcpkms://) calls it.
    kms_api = gcp.projects.Service("state-kms-api", gcp.projects.ServiceArgs(
        service="cloudkms.googleapis.com", disable_on_destroy=False), opts=keep())
    ring = gcp.kms.KeyRing("state-keyring", gcp.kms.KeyRingArgs(name=f"{prefix}-pulumi", location=region),
                           opts=keep(depends_on=[kms_api]))  # key rings can't be deleted
    key = gcp.kms.CryptoKey("state-key", gcp.kms.CryptoKeyArgs(
        name="pulumi-state", key_ring=ring.id, rotation_period="7776000s"), opts=keep())
    storage_agent = gcp.storage.get_project_service_account()
    # The bucket's CMEK needs it: without it GCS can neither write nor read the state.
    grant = gcp.kms.CryptoKeyIAMMember("state-key-gcs", gcp.kms.CryptoKeyIAMMemberArgs(
        crypto_key_id=key.id, role="roles/cloudkms.cryptoKeyEncrypterDecrypter",
        member=f"serviceAccount:{storage_agent.email_address}"), opts=keep())
    bucket = gcp.storage.Bucket("state-bucket", gcp.storage.BucketArgs(
        name=bucket_name(prefix, project_number), location=region.upper(),
        uniform_bucket_level_access=True, public_access_prevention="enforced",
        versioning=gcp.storage.BucketVersioningArgs(enabled=True),
        encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=key.id),
        lifecycle_rules=[gcp.storage.BucketLifecycleRuleArgs(
            action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
            condition=gcp.storage.BucketLifecycleRuleConditionArgs(days_since_noncurrent_time=365, with_state="ARCHIVED"))]),
        opts=keep(depends_on=[grant]))
    pulumi.export("gcp_login", bucket.name.apply(lambda b: f"gs://{b}"))
    pulumi.export("gcp_secrets_provider", key.id.apply(lambda k: f"gcpkms://{k}"))
