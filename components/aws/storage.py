"""S3 buckets: one per dataset or model class (public access blocked, SSE-KMS with bucket keys, TLS-only policy
that also denies other encryption, versioning, access logs, lifecycle tiering) and the region's log bucket."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pulumi
import pulumi_aws as aws

from components.spec import BucketSpec
from components.spec.aws import LoadBalancerKind, WarmStorageClass
from components.spec.storage import linked_tiering

from .context import AwsContext, render
from .lifecycle import Lifecycle, lifecycle
from .naming import bucket_name
from .policies import S3_ACCESS_LOG_PREFIX, bucket_policy, log_bucket_policy

NONCURRENT_LOG_DAYS = 30


@dataclass(frozen=True)
class LogTarget:
    """The region's log bucket as log producers need it."""

    bucket: pulumi.Output[str]
    """Bucket name."""
    arn: pulumi.Output[str]
    ready: pulumi.Resource
    """The bucket policy: load balancers and log delivery check their write access when they are configured."""


def lifecycle_rules(rules: Lifecycle, rule_id: str) -> list[aws.s3.BucketLifecycleConfigurationRuleArgs]:
    """One rule for the whole bucket (empty prefix filter)."""
    expiration = (aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=rules.expire_after_days)
                  if rules.expire_after_days is not None
                  else aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(expired_object_delete_marker=True))
    noncurrent = (aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
        noncurrent_days=rules.noncurrent_expire_after_days) if rules.noncurrent_expire_after_days is not None else None)
    return [aws.s3.BucketLifecycleConfigurationRuleArgs(
        id=rule_id, status="Enabled", filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
        transitions=[aws.s3.BucketLifecycleConfigurationRuleTransitionArgs(days=t.days, storage_class=t.storage_class)
                     for t in rules.transitions] or None,
        expiration=expiration, noncurrent_version_expiration=noncurrent,
        abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
            days_after_initiation=rules.abort_multipart_after_days))]


class _BucketBase(pulumi.ComponentResource):
    """Shared children of both bucket kinds: the bucket, its public access block, encryption and versioning (protected
    outside dev, like the bucket policy)."""

    bucket: aws.s3.Bucket

    def _create(self, name: str, ctx: AwsContext, physical: str, kind: str, *, tags: dict[str, str],
                encryption: aws.s3.BucketServerSideEncryptionConfigurationRuleArgs, versioned: bool) -> None:
        self._ctx, self._name = ctx, name
        self.bucket = aws.s3.Bucket(f"{name}-bucket", aws.s3.BucketArgs(
            bucket=pulumi.Output.from_input(ctx.account_id).apply(
                lambda account: bucket_name(ctx.environment, ctx.region, physical, account, kind)),
            # Outside dev the bucket is protected and kept; in dev `pulumi destroy` may empty it.
            force_destroy=not ctx.protected, tags=tags, region=ctx.region), opts=ctx.stateful(self))
        self._public_access = aws.s3.BucketPublicAccessBlock(f"{name}-public-access", aws.s3.BucketPublicAccessBlockArgs(
            bucket=self.bucket.id, block_public_acls=True, block_public_policy=True, ignore_public_acls=True,
            restrict_public_buckets=True, region=ctx.region), opts=self._guard())
        aws.s3.BucketServerSideEncryptionConfiguration(f"{name}-encryption", aws.s3.BucketServerSideEncryptionConfigurationInitArgs(
            bucket=self.bucket.id, rules=[encryption], region=ctx.region), opts=self._guard())
        if versioned:
            aws.s3.BucketVersioning(f"{name}-versioning", aws.s3.BucketVersioningInitArgs(
                bucket=self.bucket.id, versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
                region=ctx.region), opts=self._guard())

    def _child(self, **extra: object) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **extra)

    def _guard(self, **extra: object) -> pulumi.ResourceOptions:
        """Security settings of the bucket (public access block, encryption, versioning, policy): protected like the
        bucket, or removing the component would delete them (public access unblocked, versioning suspended, TLS-only
        policy gone) before the protected bucket's own delete fails. Protected only: they hold no data to keep."""
        return pulumi.ResourceOptions(parent=self, protect=self._ctx.protected, **extra)

    def _lifecycle(self, rules: Lifecycle) -> None:
        aws.s3.BucketLifecycleConfiguration(f"{self._name}-lifecycle", aws.s3.BucketLifecycleConfigurationArgs(
            bucket=self.bucket.id, rules=lifecycle_rules(rules, "ai-infra-tiering"), region=self._ctx.region), opts=self._child())

    def _policy(self, policy: pulumi.Input[str]) -> aws.s3.BucketPolicy:
        return aws.s3.BucketPolicy(f"{self._name}-policy", aws.s3.BucketPolicyArgs(
            bucket=self.bucket.id, policy=policy, region=self._ctx.region), opts=self._guard(depends_on=[self._public_access]))


@dataclass(frozen=True)
class LogBucketArgs:
    context: AwsContext
    retention_days: int
    """Days access and flow logs are kept (the network's flow log retention)."""
    load_balancer: LoadBalancerKind | None = None
    """The kind of the region's load balancer, whose access logs land here (ALBs get their delivery statement,
    NLBs use the shared log delivery one). Default: none, no load balancer in the region."""


class LogBucket(_BucketBase):
    """`ai-infra:aws:LogBucket`: where S3 server access logs, load balancer access logs and (optionally) VPC and
    Global Accelerator flow logs land. SSE-S3, because S3 log delivery and ELB access logs support nothing else;
    versioned, so logs can't be silently overwritten; expired after the retention."""

    def __init__(self, name: str, args: LogBucketArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:LogBucket", name, None, opts)
        ctx = args.context
        self._create(name, ctx, "logs", "logs", tags={"data-class": "logs"}, versioned=True,
                     encryption=aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                         apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                             sse_algorithm="AES256")))
        self._lifecycle(Lifecycle(transitions=(), expire_after_days=args.retention_days,
                                  noncurrent_expire_after_days=NONCURRENT_LOG_DAYS))
        # No per-Region lookup: the documented delivery principal is the same in every Region (elb_logs.py).
        policy = self._policy(render(partial(log_bucket_policy, load_balancer=args.load_balancer), self.bucket.arn,
                                     ctx.account_id))
        self.target = LogTarget(self.bucket.bucket, self.bucket.arn, policy)
        self.register_outputs({"bucket": self.bucket.bucket, "arn": self.bucket.arn})


@dataclass(frozen=True)
class BucketArgs:
    context: AwsContext
    bucket_name: str
    """The spec's bucket name (part of the physical name and of the access log prefix)."""
    spec: BucketSpec
    kms_key_arn: pulumi.Input[str]
    logs: LogTarget
    """The region's log bucket (server access logs)."""
    warm_storage_class: WarmStorageClass = WarmStorageClass.STANDARD_IA
    """Default STANDARD_IA."""
    lustre_link: bool = False
    """An FSx for Lustre file system links this bucket: no DEEP_ARCHIVE step unless the spec sets one (which the spec
    checks refuse), since FSx cannot read archived objects (`components.spec.storage.linked_tiering`). Default False."""


class Bucket(_BucketBase):
    """`ai-infra:aws:Bucket`. Children: `<name>-bucket` (protected and kept outside dev), `-public-access`, `-encryption`,
    `-versioning`, `-policy` (protected outside dev), `-logging`, `-lifecycle`."""

    def __init__(self, name: str, args: BucketArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:Bucket", name, None, opts)
        ctx, spec = args.context, args.spec
        tags = {"data-class": spec.data_class.value, **({"data-zone": spec.data_zone} if spec.data_zone else {})}
        self._create(name, ctx, args.bucket_name, "data", tags=tags, versioned=spec.versioning,
                     encryption=aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                         apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                             sse_algorithm="aws:kms", kms_master_key_id=args.kms_key_arn),
                         bucket_key_enabled=True))
        aws.s3.BucketLogging(f"{name}-logging", aws.s3.BucketLoggingInitArgs(
            bucket=self.bucket.id, target_bucket=args.logs.bucket, target_prefix=f"{S3_ACCESS_LOG_PREFIX}{args.bucket_name}/",
            region=ctx.region), opts=self._child(depends_on=[args.logs.ready]))
        tiering = linked_tiering(spec.tiering) if args.lustre_link else spec.tiering
        self._lifecycle(lifecycle(tiering, args.warm_storage_class, versioned=spec.versioning,
                                  noncurrent_expire_after_days=spec.noncurrent_expire_after_days))
        self._policy(render(bucket_policy, self.bucket.arn, args.kms_key_arn))
        self.register_outputs({"bucket": self.bucket.bucket, "arn": self.bucket.arn})
