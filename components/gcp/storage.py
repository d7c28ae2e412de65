"""Cloud Storage buckets: uniform bucket-level access, public access prevention enforced, CMEK only (Google-managed
and customer-supplied keys refused for new objects), versioning, soft delete, lifecycle tiering or Autoclass,
and usage (access) logs delivered to the region's access-log bucket."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.spec import BucketSpec

from .context import GcpContext
from .lifecycle import AUTOCLASS_TERMINAL_CLASS, LifecycleRule, lifecycle_rules
from .naming import bucket_name

SECONDS_PER_DAY = 86400
ANALYTICS_WRITER = "group:cloud-storage-analytics@google.com"
"""Google's group that writes usage logs; needs object create on the log bucket (GCS usage logs docs)."""
RESTRICTED = "FullyRestricted"


def rule_args(rule: LifecycleRule) -> gcp.storage.BucketLifecycleRuleArgs:
    return gcp.storage.BucketLifecycleRuleArgs(
        action=gcp.storage.BucketLifecycleRuleActionArgs(type=rule.action, storage_class=rule.storage_class),
        condition=gcp.storage.BucketLifecycleRuleConditionArgs(
            age=rule.age_days, matches_storage_classes=list(rule.matches_storage_classes) or None,
            with_state=rule.with_state, days_since_noncurrent_time=rule.days_since_noncurrent))


def _base(ctx: GcpContext, name: str, labels: dict[str, str]) -> dict[str, object]:
    """Settings every platform bucket shares."""
    return dict(
        project=ctx.project, name=name, location=ctx.region.upper(), storage_class="STANDARD",
        uniform_bucket_level_access=True, public_access_prevention="enforced", labels=labels,
        # Unprotected (dev): deleting the bucket deletes its objects first, so `pulumi destroy` works on a non-empty
        # bucket, as with S3 in dev; protected buckets are kept on delete and never emptied (pulumi_gcp BucketArgs.
        # force_destroy: pub.dev/documentation/pulumi_gcp/latest/storage/BucketArgs/forceDestroy.html).
        force_destroy=not ctx.protected)


@dataclass(frozen=True)
class AccessLogBucketArgs:
    context: GcpContext
    kms_key_id: pulumi.Input[str]
    retention_days: int
    """Days usage logs are kept before deletion."""


class AccessLogBucket(pulumi.ComponentResource):
    """`ai-infra:gcp:AccessLogBucket`: the region's bucket for Cloud Storage usage logs. Children: `<name>-bucket`,
    `<name>-writer`."""

    bucket: gcp.storage.Bucket

    def __init__(self, name: str, args: AccessLogBucketArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:AccessLogBucket", name, None, opts)
        ctx = args.context
        expire = LifecycleRule(action="Delete", age_days=args.retention_days)
        self.bucket = gcp.storage.Bucket(f"{name}-bucket", gcp.storage.BucketArgs(
            **_base(ctx, bucket_name(ctx.project, ctx.environment, ctx.region, "access-logs"), {"data-class": "logs"}),
            # CMEK by default; no enforcement config, since objects are written by Google's analytics service.
            encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=args.kms_key_id),
            versioning=gcp.storage.BucketVersioningArgs(enabled=False),
            lifecycle_rules=[rule_args(expire)]), opts=ctx.stateful(self))
        gcp.storage.BucketIAMMember(f"{name}-writer", gcp.storage.BucketIAMMemberArgs(
            bucket=self.bucket.name, role="roles/storage.objectCreator", member=ANALYTICS_WRITER), opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"bucket": self.bucket.name})


@dataclass(frozen=True)
class BucketArgs:
    context: GcpContext
    bucket_name: str
    """The spec's bucket name; the GCS name adds project, environment and a hash (bucket names are global)."""
    spec: BucketSpec
    kms_key_id: pulumi.Input[str]
    """Default key for new objects; the Cloud Storage service agent must hold Encrypter/Decrypter (`Kms.key_id`)."""
    access_log_bucket: pulumi.Input[str]
    """Bucket receiving usage logs."""


class Bucket(pulumi.ComponentResource):
    """`ai-infra:gcp:Bucket`. Children: `<name>-bucket`."""

    bucket: gcp.storage.Bucket

    def __init__(self, name: str, args: BucketArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:Bucket", name, None, opts)
        ctx, spec = args.context, args.spec
        gcs_name = bucket_name(ctx.project, ctx.environment, ctx.region, args.bucket_name)
        labels = {"data-class": spec.data_class.value, **({"data-zone": spec.data_zone} if spec.data_zone else {})}
        self.bucket = gcp.storage.Bucket(f"{name}-bucket", gcp.storage.BucketArgs(
            **_base(ctx, gcs_name, labels),
            encryption=gcp.storage.BucketEncryptionArgs(
                default_kms_key_name=args.kms_key_id,
                google_managed_encryption_enforcement_config=gcp.storage.BucketEncryptionGoogleManagedEncryptionEnforcementConfigArgs(
                    restriction_mode=RESTRICTED),
                customer_supplied_encryption_enforcement_config=gcp.storage.BucketEncryptionCustomerSuppliedEncryptionEnforcementConfigArgs(
                    restriction_mode=RESTRICTED)),
            versioning=gcp.storage.BucketVersioningArgs(enabled=spec.versioning),
            soft_delete_policy=gcp.storage.BucketSoftDeletePolicyArgs(retention_duration_seconds=spec.soft_delete_days * SECONDS_PER_DAY),
            autoclass=gcp.storage.BucketAutoclassArgs(enabled=True, terminal_storage_class=AUTOCLASS_TERMINAL_CLASS) if spec.autoclass else None,
            lifecycle_rules=[rule_args(rule) for rule in lifecycle_rules(spec)],
            logging=gcp.storage.BucketLoggingArgs(log_bucket=args.access_log_bucket, log_object_prefix=gcs_name)),
            opts=ctx.stateful(self))
        self.register_outputs({"bucket": self.bucket.name, "url": self.bucket.url})
