"""GCS state bucket (UBLA, public access prevention, CMEK, versioning) and a Cloud KMS key for gcpkms://."""

import pulumi
import pulumi_gcp as gcp


def keep(**options) -> pulumi.ResourceOptions:
    """Protected and retained: the state of every stack, and the key that decrypts its secrets, live here."""
    return pulumi.ResourceOptions(protect=True, retain_on_delete=True, **options)


def build(prefix: str, region: str) -> None:
    project = gcp.organizations.get_project()
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
        name=f"{prefix}-pulumi-state-{project.number}", location=region.upper(),
        uniform_bucket_level_access=True, public_access_prevention="enforced",
        versioning=gcp.storage.BucketVersioningArgs(enabled=True),
        encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=key.id),
        lifecycle_rules=[gcp.storage.BucketLifecycleRuleArgs(
            action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
            condition=gcp.storage.BucketLifecycleRuleConditionArgs(days_since_noncurrent_time=365, with_state="ARCHIVED"))]),
        opts=keep(depends_on=[grant]))
    pulumi.export("gcp_login", bucket.name.apply(lambda b: f"gs://{b}"))
    pulumi.export("gcp_secrets_provider", key.id.apply(lambda k: f"gcpkms://{k}"))
