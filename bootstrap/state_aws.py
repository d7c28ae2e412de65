"""S3 state bucket (versioned, SSE-KMS with a bucket key, no public access, TLS only) and a KMS key for awskms://."""

import json

import pulumi
import pulumi_aws as aws

KEEP = pulumi.ResourceOptions(protect=True, retain_on_delete=True)


def build(prefix: str) -> None:
    region = aws.get_region().region
    key = aws.kms.Key("state-key", description="Pulumi state and secrets", enable_key_rotation=True,
                      deletion_window_in_days=30, opts=KEEP)
    alias = aws.kms.Alias("state-key-alias", name=f"alias/{prefix}-pulumi", target_key_id=key.key_id)
    bucket = aws.s3.Bucket("state-bucket", bucket=f"{prefix}-pulumi-state", opts=KEEP)
    aws.s3.BucketPublicAccessBlock("state-public-access", bucket=bucket.id, block_public_acls=True,
                                   block_public_policy=True, ignore_public_acls=True, restrict_public_buckets=True)
    aws.s3.BucketVersioning("state-versioning", bucket=bucket.id,
                            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"))
    aws.s3.BucketServerSideEncryptionConfiguration("state-encryption", bucket=bucket.id, rules=[
        aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
            bucket_key_enabled=True,
            apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                sse_algorithm="aws:kms", kms_master_key_id=key.arn))])
    aws.s3.BucketLifecycleConfiguration("state-lifecycle", bucket=bucket.id, rules=[
        aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="old-state-versions", status="Enabled", filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
            noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(noncurrent_days=365))])
    aws.s3.BucketPolicy("state-tls-only", bucket=bucket.id, policy=bucket.arn.apply(lambda arn: json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
                       "Resource": [arn, f"{arn}/*"], "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]})))
    pulumi.export("aws_login", bucket.bucket.apply(lambda b: f"s3://{b}?region={region}&awssdk=v2"))
    pulumi.export("aws_secrets_provider", alias.name.apply(lambda a: f"awskms://{a}?region={region}"))
