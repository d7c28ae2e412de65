"""GCS state bucket (UBLA, public access prevention, CMEK, versioning) and a Cloud KMS key for gcpkms://."""

import pulumi
import pulumi_gcp as gcp

KEEP = pulumi.ResourceOptions(protect=True, retain_on_delete=True)


def build(prefix: str, region: str) -> None:
    project = gcp.organizations.get_project()
    ring = gcp.kms.KeyRing("state-keyring", name=f"{prefix}-pulumi", location=region, opts=KEEP)  # key rings can't be deleted
    key = gcp.kms.CryptoKey("state-key", name="pulumi-state", key_ring=ring.id, rotation_period="7776000s", opts=KEEP)
    storage_agent = gcp.storage.get_project_service_account()
    grant = gcp.kms.CryptoKeyIAMMember("state-key-gcs", crypto_key_id=key.id, role="roles/cloudkms.cryptoKeyEncrypterDecrypter",
                                       member=f"serviceAccount:{storage_agent.email_address}")
    bucket = gcp.storage.Bucket(
        "state-bucket", name=f"{prefix}-pulumi-state-{project.number}", location=region.upper(),
        uniform_bucket_level_access=True, public_access_prevention="enforced",
        versioning=gcp.storage.BucketVersioningArgs(enabled=True),
        encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=key.id),
        lifecycle_rules=[gcp.storage.BucketLifecycleRuleArgs(
            action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
            condition=gcp.storage.BucketLifecycleRuleConditionArgs(days_since_noncurrent_time=365, with_state="ARCHIVED"))],
        opts=pulumi.ResourceOptions(protect=True, retain_on_delete=True, depends_on=[grant]))
    pulumi.export("gcp_login", bucket.name.apply(lambda b: f"gs://{b}"))
    pulumi.export("gcp_secrets_provider", key.id.apply(lambda k: f"gcpkms://{k}"))
