"""Required tags/labels, protection of stateful resources, and bucket versioning outside AWS."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .common import ENVIRONMENT
from .props import Unknowns, get, log_named, need, provider_props
from .registry import Context, rule

# Resource types that carry tags or labels, by where they keep them.
AWS_TAGGABLE = {
    "aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/instance:Instance", "aws:ec2/securityGroup:SecurityGroup",
    "aws:ec2/natGateway:NatGateway", "aws:ec2/launchTemplate:LaunchTemplate", "aws:eks/cluster:Cluster",
    "aws:eks/nodeGroup:NodeGroup", "aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", "aws:kms/key:Key",
    "aws:fsx/lustreFileSystem:LustreFileSystem", "aws:lb/loadBalancer:LoadBalancer", "aws:iam/role:Role",
    "aws:cloudwatch/logGroup:LogGroup", "aws:globalaccelerator/accelerator:Accelerator", "aws:ebs/volume:Volume",
}
GCP_LABELLED = {"gcp:storage/bucket:Bucket": "labels", "gcp:container/cluster:Cluster": "resourceLabels",
                "gcp:compute/instance:Instance": "labels", "gcp:lustre/instance:Instance": "labels",
                "gcp:kms/cryptoKey:CryptoKey": "labels", "gcp:compute/disk:Disk": "labels"}
STATEFUL = {
    "aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", "aws:kms/key:Key", "aws:fsx/lustreFileSystem:LustreFileSystem",
    "aws:ebs/volume:Volume", "aws:rds/instance:Instance", "gcp:storage/bucket:Bucket", "gcp:kms/cryptoKey:CryptoKey",
    "gcp:lustre/instance:Instance", "gcp:filestore/instance:Instance", "azure-native:storage:StorageAccount",
    "azure-native:keyvault:Vault", "azure-native:keyvault:Key", "azure-native:storagecache:AmlFilesystem",
    # Clusters: their volumes, secrets and workloads go with them (protect only; retain_on_delete would leave a
    # cluster running outside any stack after a teardown).
    "aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster", "azure-native:containerservice:ManagedCluster",
}
REQUIRED = {"requiredTags": {"type": "array", "items": {"type": "string"}, "default": ["environment", "team", "cost-center"],
                             "description": "Tag/label keys every taggable resource must carry."}}


def provider_tags(provider: Any, key: str) -> dict[str, str]:
    """The default tags (aws `defaultTags.tags`) or labels (gcp `defaultLabels`) a provider adds to every resource."""
    value = get(provider, key) if provider is not None else None
    if isinstance(value, str):  # provider config arrives JSON-encoded
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    if key == "defaultTags":
        value = (value or {}).get("tags") if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


@rule("required-tags", "Checks whether taggable resources carry the team, cost-center and environment tags.",
      severity="low", remediation="Set the tags on the resource, or through the AWS provider's defaultTags / GCP provider's defaultLabels.",
      frameworks={"SOC2": ("CC2.1",), "NIST-800-53": ("CM-8",), "CIS": ("Controls 1.1",)}, config=REQUIRED)
def required_tags(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    required = ctx.config.get("requiredTags") or REQUIRED["requiredTags"]["default"]
    unknowns = Unknowns()  # tags computed from other resources' outputs may be unknown in preview
    for r in resources:
        provider = provider_props(r)
        with unknowns.skip():
            if r.resource_type in AWS_TAGGABLE:
                tags = {**provider_tags(provider, "defaultTags"), **(need(r.props, "tags") or {})}
            elif r.resource_type in GCP_LABELLED:
                tags = {**provider_tags(provider, "defaultLabels"), **(need(r.props, GCP_LABELLED[r.resource_type]) or {})}
            elif r.resource_type.startswith("azure-native:") and get(r.props, "location") is not None:
                tags = need(r.props, "tags") or {}
            else:
                continue
            missing = [k for k in required if k not in tags]
            if missing:
                yield r.urn, f"missing tags: {', '.join(missing)}"
    unknowns.raise_first()


@rule("stateful-resources-protected", "Checks whether stateful resources (keys, buckets, file systems, clusters) are protected outside dev.",
      severity="high", types=tuple(sorted(STATEFUL)), remediation="Set the resource option protect=True (and retain_on_delete, except on clusters) outside dev.",
      frameworks={"HIPAA": ("164.308(a)(7)",), "SOC2": ("A1.2",), "NIST-800-53": ("CP-9",), "GDPR": ("Art.32",)}, config=ENVIRONMENT)
def protected(props: Any, ctx: Context) -> Iterator[str]:
    if environment_of(props, ctx) != "dev" and not ctx.protect:
        yield f"a {ctx.type.split(':')[-1]} is not protected: `pulumi destroy` or a refactor could delete its data"


def environment_of(props: Any, ctx: Context) -> str | None:
    """The configured environment; with `unknown` (the baseline config, for any project) the resource's own
    `environment` tag or label, its provider's default tags and labels included (None without one: not dev)."""
    environment = ctx.config.get("environment", "dev")
    if environment != "unknown":
        return environment
    tags = {**provider_tags(ctx.provider, "defaultTags"), **provider_tags(ctx.provider, "defaultLabels")}
    for key in ("tags", "labels", GCP_LABELLED.get(ctx.type, "labels")):
        value = get(props, key)
        tags.update(value if isinstance(value, dict) else {})
    value = tags.get("environment")
    return value if isinstance(value, str) else None


@rule("gcs-bucket-versioning", "Checks whether Cloud Storage buckets keep object versions.",
      severity="medium", types=("gcp:storage/bucket:Bucket",),
      remediation="Set versioning.enabled true (access-log buckets, named with a log or logs segment, are exempt).",
      frameworks={"HIPAA": ("164.312(c)(1)",), "SOC2": ("A1.2",), "NIST-800-53": ("CP-9",), "GDPR": ("Art.32",)})
def gcs_versioning(props: Any, ctx: Context) -> Iterator[str]:
    if log_named(ctx.name):
        return
    if need(props, "versioning.enabled") is not True and not get(props, "softDeletePolicy.retentionDurationSeconds"):
        yield "versioning is off"


@rule("azure-blob-versioning", "Checks whether Azure blob services keep versions and soft-deleted blobs.",
      severity="medium", types=("azure-native:storage:BlobServiceProperties",), remediation="Set isVersioningEnabled true and deleteRetentionPolicy.enabled true.",
      frameworks={"HIPAA": ("164.312(c)(1)",), "SOC2": ("A1.2",), "NIST-800-53": ("CP-9",)})
def blob_versioning(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "isVersioningEnabled") is not True:
        yield "blob versioning is off"
    if need(props, "deleteRetentionPolicy.enabled") is not True:
        yield "blob soft delete is off"
