"""S3 state bucket (versioned, SSE-KMS with a bucket key, no public access, TLS only) and a KMS key for awskms://."""

import json
import re

import pulumi
import pulumi_aws as aws

S3_MAX_NAME = 63
BUCKET_SUFFIX = "-pulumi-state"
MAX_PREFIX = S3_MAX_NAME - len(BUCKET_SUFFIX)  # 50


def keep(**options) -> pulumi.ResourceOptions:
    """Protected and retained: the state of every stack, and the key that decrypts its secrets, live here."""
    return pulumi.ResourceOptions(protect=True, retain_on_delete=True, **options)


def bucket_name(prefix: str) -> str:
    """`<prefix>-pulumi-state`. S3 bucket names are global across all accounts, so the prefix should name the
    organisation. The name stays as it was: a new one would replace the (protected) bucket of existing bootstraps."""
    return f"{prefix}{BUCKET_SUFFIX}"


def check(prefix_key: str, prefix: str) -> None:
    """Fail before anything is registered when the bucket name S3 would get is invalid (lowercase letters, digits and
    hyphens, starting with a letter or digit; at most 63 characters)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", prefix) or len(prefix) > MAX_PREFIX:
        raise pulumi.RunError(
            f"{prefix_key}: got {prefix!r} ({len(prefix)} characters); with aws in clouds it names the S3 bucket "
            f"<prefix>{BUCKET_SUFFIX}, so allowed: lowercase letters, digits and hyphens, starting "
            f"with a letter or digit, at most {MAX_PREFIX} characters (S3 bucket names are at most {S3_MAX_NAME})")


def build(prefix: str) -> None:
    region = aws.get_region().region
    key = aws.kms.Key("state-key", aws.kms.KeyArgs(
        description="Pulumi state and secrets", enable_key_rotation=True, deletion_window_in_days=30), opts=keep())
    # The awskms:// secrets provider of every stack names the alias: deleting it breaks decryption.
    alias = aws.kms.Alias("state-key-alias", aws.kms.AliasArgs(name=f"alias/{prefix}-pulumi", target_key_id=key.key_id),
                          opts=keep())
    bucket = aws.s3.Bucket("state-bucket", aws.s3.BucketArgs(bucket=bucket_name(prefix)), opts=keep())
    aws.s3.BucketPublicAccessBlock("state-public-access", aws.s3.BucketPublicAccessBlockArgs(
        bucket=bucket.id, block_public_acls=True, block_public_policy=True, ignore_public_acls=True,
        restrict_public_buckets=True), opts=keep())
    aws.s3.BucketVersioning("state-versioning", aws.s3.BucketVersioningInitArgs(
        bucket=bucket.id, versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled")),
        opts=keep())
    aws.s3.BucketServerSideEncryptionConfiguration("state-encryption", aws.s3.BucketServerSideEncryptionConfigurationInitArgs(
        bucket=bucket.id, rules=[aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
            bucket_key_enabled=True,
            apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                sse_algorithm="aws:kms", kms_master_key_id=key.arn))]), opts=keep())
    aws.s3.BucketLifecycleConfiguration("state-lifecycle", aws.s3.BucketLifecycleConfigurationArgs(
        bucket=bucket.id, rules=[aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="old-state-versions", status="Enabled", filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
            noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                noncurrent_days=365))]), opts=keep())
    aws.s3.BucketPolicy("state-tls-only", aws.s3.BucketPolicyArgs(bucket=bucket.id, policy=bucket.arn.apply(lambda arn: json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
                       "Resource": [arn, f"{arn}/*"], "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}))),
        opts=keep())
    pulumi.export("aws_login", bucket.bucket.apply(lambda b: f"s3://{b}?region={region}&awssdk=v2"))
    pulumi.export("aws_secrets_provider", alias.name.apply(lambda a: f"awskms://{a}?region={region}"))
