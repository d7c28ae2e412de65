"""AWS-specific platform settings, the AWS-only semantic checks, and the pure AWS rules they share with the
AWS components (zones, retention values, lifecycle gaps). No cloud SDK imports here."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator

from .cloud import CloudSpec, RegionSpec
from .common import Cloud
from .compute import CapacityType, GpuPoolSpec, Placement
from .endpoint import GlobalRouting, InferenceSpec
from .storage import BucketSpec

Path = tuple[str | int, ...]
Issue = tuple[Path, str]

EKS_KUBERNETES_VERSION = "1.35"
"""The EKS minor a cluster runs when `cluster.kubernetes_version` is unset: the newest minor the toolkit pins a
Cluster Autoscaler chart for (whose minor must match the cluster's). Explicit rather than the service default,
so the autoscaler is known when planning and a minor upgrade is a reviewed config change, never a surprise."""
EKS_AUTOSCALER_MINORS = ("1.32", "1.33", "1.34", "1.35")
"""The EKS minors the Kubernetes layer pins a Cluster Autoscaler chart for (components/k8s/charts.py; a test keeps the
two in step). With the layer on, another minor is a config error: the autoscaler's minor must match the cluster's."""


def autoscaler_minor_problem(minor: str) -> str | None:
    """Why the Kubernetes layer cannot run on an EKS cluster of this minor, or None when it can."""
    if minor in EKS_AUTOSCALER_MINORS:
        return None
    return (f"EKS Kubernetes version {minor!r} has no pinned cluster-autoscaler chart (the autoscaler's minor must match "
            f"the cluster's); set kubernetes_version to one of: {', '.join(EKS_AUTOSCALER_MINORS)}")


class FlowLogDestination(str, enum.Enum):
    """Where VPC flow logs (all traffic, accepted and rejected) are delivered."""

    CLOUDWATCH = "cloudwatch"
    """A CloudWatch log group encrypted with the region's KMS key, kept `flow_log_retention_days`. Default."""
    S3 = "s3"
    """The region's log bucket (SSE-S3, the only encryption S3 log delivery and ALB access logs support);
    cheaper for large volumes, queried with Athena."""


class WarmStorageClass(str, enum.Enum):
    """The S3 storage class objects move to at `tiering.warm_after_days`."""

    STANDARD_IA = "standard_ia"
    """S3 Standard-Infrequent Access: cheaper storage, per-GB retrieval fee, 30-day minimum. Default."""
    INTELLIGENT_TIERING = "intelligent_tiering"
    """S3 Intelligent-Tiering: S3 moves objects between access tiers itself; a small monitoring fee per object."""


class LoadBalancerKind(str, enum.Enum):
    """The regional load balancer in front of an inference service."""

    APPLICATION = "application"
    """Application Load Balancer: HTTPS listener, HTTP health checks, AWS WAF. Default."""
    NETWORK = "network"
    """Network Load Balancer: TLS listener, lower latency for gRPC/streaming; no WAF (set global_endpoint.waf: false)."""


class AwsCloudSpec(CloudSpec):
    """AWS regions of the platform. Credentials come from the usual AWS sources (profile, environment, SSO);
    every regional resource sets its own `region`, so one provider serves all regions."""

    flow_log_destination: FlowLogDestination = FlowLogDestination.CLOUDWATCH
    """Where VPC flow logs go. Default: a KMS-encrypted CloudWatch log group per region."""
    warm_storage_class: WarmStorageClass = WarmStorageClass.STANDARD_IA
    """Storage class for the `warm` tier of every bucket. Default `standard_ia`."""
    inference_load_balancer: LoadBalancerKind = LoadBalancerKind.APPLICATION
    """Load balancer type for regional inference endpoints. Default `application` (ALB)."""
    deployers: list[str] | None = None
    """IAM role (or user) ARNs that get cluster-admin on every EKS cluster, as the principals that run `pulumi up`
    (the Kubernetes layer installs as them): one access entry each, besides each cluster's `admins`. Give the role with
    its path (an IAM Identity Center role: `role/aws-reserved/sso.amazonaws.com/[<region>/]AWSReservedSSO_...`).
    `[]`: no entry besides `admins`. Default: the role (or user) running the deployment, read from the caller's
    session on every run: the entry follows whoever runs `pulumi up`, so a run by another role (a second CI pipeline,
    an operator's workstation) replaces the previous deployer's entry and that principal loses access. Set the list
    wherever more than one principal deploys, and wherever `previewers` is set (required there: a preview runs the
    program as the previewer, which would otherwise be the one granted cluster-admin)."""
    previewers: list[str] = []
    """IAM role ARNs of the pull-request preview identities (`pulumi preview --refresh`), checked like `cluster.admins`.
    With the Kubernetes layer on, each gets an access entry on every EKS cluster in the Kubernetes group
    `ai-infra-previewers` (no access policy), which the layer lets read the stack's kinds and the Secrets of the Helm
    release namespaces (in `monitoring` that includes `addons.alerts.alertmanager_secret`, the receivers' credentials).
    A principal may not also be a deployer or an admin (EKS takes one access entry per principal), and `deployers` must
    be set. Default none: nothing is created."""


# --- Pure AWS rules shared with components/aws ---------------------------------------------------------------

# CloudWatch Logs accepts only these retention periods (PutRetentionPolicy, retentionInDays).
CLOUDWATCH_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557,
                             2922, 3288, 3653)
# S3 rejects a lifecycle rule whose next transition comes less than 30 days after STANDARD_IA
# ("'Days' ... must be 30 days more than ... STANDARD_IA"): objects stay in IA at least 30 days.
S3_IA_MIN_STAY_DAYS = 30
# S3 moves objects to STANDARD_IA no sooner than 30 days after creation (API reference, Transition: Days "greater
# than or equal to 30" for STANDARD_IA); INTELLIGENT_TIERING has no minimum.
S3_IA_MIN_AGE_DAYS = 30
SYSTEM_POOL = "system"
_RESERVATION_ID = re.compile(r"^cr-[0-9a-f]{17}$")
_IAM_PRINCIPAL = re.compile(r"^arn:aws(-[a-z]+)*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")
# IAM Identity Center (SSO) roles live under the path /aws-reserved/sso.amazonaws.com/ (plus the Identity Center
# region outside us-east-1). EKS refuses the ARN without it ("InvalidParameterException: The specified principalArn is
# invalid: invalid principal", terraform-aws-modules/terraform-aws-eks#2969), the form the STS session shows
# (assumed-role/AWSReservedSSO_.../user) and the console often copies.
_SSO_ROLE = re.compile(r"^arn:aws(-[a-z]+)*:iam::\d{12}:role/(?P<path>(?:[^/]+/)*)AWSReservedSSO_[^/]+$")
SSO_ROLE_PATH = "aws-reserved/sso.amazonaws.com/"
_SSO_PATH_PREFIX = "aws-reserved/sso."  # other partitions have their own domain (sso.amazonaws.com.cn)
ACM_CERTIFICATE = re.compile(r"^arn:aws(-[a-z]+)*:acm:(?P<region>[a-z0-9-]+):\d{12}:certificate/[0-9a-f-]+$")
HOSTED_ZONE = re.compile(r"^Z[A-Z0-9]{1,31}$")
"""A Route 53 hosted zone ID (Z plus upper-case letters and digits)."""

# EKS managed node group names: at most 63 characters (pulumi_aws eks.NodeGroup, node_group_name: "can't be longer than
# 63 characters"). The toolkit sets no node_group_name, so pulumi-aws auto-names the group from its Pulumi name plus
# "-" and 7 random hex digits (pulumi/pulumi-aws provider/resources.go: aws_eks_node_group node_group_name is
# tfbridge.AutoName("nodeGroupName", 255, "-"), Randlen 7; the bridge's 255 is no guard against EKS's 63). The Pulumi
# name is `<environment>-<region>-<pool>` (compose/aws.py, via compose.types.region_name) plus node_group.py's
# "-nodegroup". Worst case 16 + 1 + 14 + 1 + 24 + 10 + 8 = 74: the check can fire. The other per-pool names stay far
# below their limits (launch template `<...>-lt` at most 67 of 128; placement group `<...>-placement` at most 74 of
# 255); IAM roles are per cluster, not per pool; the system pool's group is at most 56 (`<env>-<region>-system-nodegroup`).
EKS_NODE_GROUP_NAME_MAX = 63
AUTONAME_SUFFIX = 8
"""What Pulumi's auto-naming appends to a resource's name: "-" and 7 random hex digits."""
NODE_GROUP_SUFFIX = "-nodegroup"
"""The suffix of the node group resource's name (components/aws/node_group.py `node_group`)."""
# EKS node group labels: keys and values 1 to 63 characters (UpdateLabelsPayload, addOrUpdateLabels: "Key Length
# Constraints: Minimum length of 1. Maximum length of 63. Value Length Constraints: Minimum length of 1. Maximum length
# of 63." https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateLabelsPayload.html). Taints: key 1 to 63,
# value 0 to 63 (https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html). Kubernetes allows a key a prefix
# of up to 253 characters before its 63-character name, and empty label values; EKS does not. The toolkit's own labels
# (ai-infra/pool, /accelerator, /accelerator-count, /capacity, nvidia.com/mig.config, nvidia.com/device-plugin.config)
# and accelerator taints (nvidia.com/gpu, aws.amazon.com/neuron) are short keys with short, non-empty values.
EKS_LABEL_MAX = 63
EKS_TAINT_KEY_MAX = 63
# ELB target group health checks: HealthCheckPath of 1 to 1024 characters (CreateTargetGroup,
# https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_CreateTargetGroup.html). Global Accelerator
# endpoint groups (the anycast global endpoint, which components/aws/endpoint.py gives the same path): at most 255
# (EndpointGroup HealthCheckPath, https://docs.aws.amazon.com/global-accelerator/latest/api/API_EndpointGroup.html).
ELB_HEALTH_CHECK_PATH_MAX = 1024
GLOBAL_ACCELERATOR_HEALTH_CHECK_PATH_MAX = 255


def node_group_resource_name(environment: str, region: str, pool_name: str) -> str:
    """The Pulumi name of a GPU pool's EKS node group (`<environment>-<region>-<pool>-nodegroup`); EKS gets it with
    AUTONAME_SUFFIX more characters."""
    return f"{environment}-{region}-{pool_name}{NODE_GROUP_SUFFIX}"


def zone_name_pattern(region: str) -> re.Pattern[str]:
    """AWS availability zone names of a region: the region plus one letter (us-east-1a)."""
    return re.compile(rf"^{re.escape(region)}[a-z]$")


RESERVED_CAPACITY = (CapacityType.RESERVED, CapacityType.CAPACITY_BLOCK)
"""Capacity bought in advance in one zone: the pool gives that zone (`zones`), and gets subnets there only. AWS's
EKS blueprint for Capacity Blocks (ml-capacity-block) restricts the node group's subnets to the block's zone, as
launches in other zones fail at random ("InvalidParameterException: The following supplied instance types do not
exist"); an On-Demand Capacity Reservation is likewise in one zone."""


def has_log_bucket(cloud_spec: AwsCloudSpec, spec: RegionSpec) -> bool:
    """Whether a region gets its log archive bucket: it has buckets (their access logs), serves inference (load
    balancer logs) or sends flow logs to S3."""
    serving = spec.inference is not None and spec.cluster is not None
    return bool(spec.buckets) or serving or cloud_spec.flow_log_destination is FlowLogDestination.S3


def single_subnet(pool: GpuPoolSpec) -> bool:
    """Whether a pool's nodes must share one subnet: EFA traffic is not routed between subnets, and a cluster
    placement group lives in one zone. Reserved capacity is in one zone too (RESERVED_CAPACITY)."""
    return pool.efa or placement_group(pool) or pool.capacity in RESERVED_CAPACITY


def pinned_pool_zones(spec: RegionSpec) -> set[str | None]:
    """The zones of the region's zone-pinned pools: those in one subnet by nature (`single_subnet`: reserved capacity,
    EFA, compact placement), the pool's own zone or None for the network's first zone (where such a pool without
    `zones` goes); and any pool given exactly one zone."""
    return {pool.zones[0] if pool.zones else None for pool in spec.gpu_pools.values()
            if single_subnet(pool) or len(pool.zones or ()) == 1}


def lustre_zone_index(spec: RegionSpec, zone_names: list[str]) -> int:
    """Which private subnet (by zone, in `zone_names` order) a new Lustre file system of the region goes in: the zone
    of the zone-pinned pools when they all share one (the training nodes then reach it without crossing zones), else
    the first. Applied at creation only (components/aws/lustre.py ignores later subnet changes)."""
    zones = {zone_names[0] if zone is None else zone for zone in pinned_pool_zones(spec)}
    if len(zones) == 1 and (zone := zones.pop()) in zone_names:
        return zone_names.index(zone)
    return 0


def placement_group(pool: GpuPoolSpec) -> bool:
    """Whether a pool gets a cluster placement group: only on request, and never on capacity blocks or
    reservations (EC2 places reserved capacity itself; a placement group makes launches fail there)."""
    return pool.placement is Placement.COMPACT and pool.capacity not in RESERVED_CAPACITY


# --- Checks -------------------------------------------------------------------------------------------------


def extra_checks(platform, cloud_spec: AwsCloudSpec) -> list[Issue]:  # noqa: ANN001
    """AWS-only semantic checks: (path relative to platform, message) issues."""
    base: Path = ("clouds", Cloud.AWS.value)
    issues: list[Issue] = []
    for region, spec in cloud_spec.regions.items():
        issues += list(_check_region(platform.environment, cloud_spec, region, spec, (*base, "regions", region)))
        minor = spec.cluster.kubernetes_version if spec.cluster is not None else None
        if platform.addons.enabled and minor is not None and (problem := autoscaler_minor_problem(minor)):
            issues.append(((*base, "regions", region, "cluster", "kubernetes_version"), problem))
    issues += list(_check_global_endpoint(cloud_spec, (*base, "global_endpoint")))
    issues += list(_check_deployers(platform, cloud_spec, (*base, "deployers")))
    issues += list(_check_previewers(cloud_spec, (*base, "previewers")))
    return issues


def iam_principal_problem(arn: str) -> str | None:
    """Why EKS would refuse `arn` as an access entry's principal, or None."""
    if not _IAM_PRINCIPAL.match(arn):
        return (f"'{arn}' is not an IAM role or user ARN; EKS access entries take arn:aws:iam::<account>:role/<name> "
                "or arn:aws:iam::<account>:user/<name>")
    sso = _SSO_ROLE.match(arn)
    if sso and not sso["path"].startswith(_SSO_PATH_PREFIX):
        return (f"'{arn}' is an IAM Identity Center (SSO) role without its path /{SSO_ROLE_PATH}; EKS refuses it "
                f"(InvalidParameterException: invalid principal): give the role's full ARN, "
                f"arn:aws:iam::<account>:role/{SSO_ROLE_PATH}[<region>/]AWSReservedSSO_<permission set>_<id> "
                "(`aws iam get-role --role-name <name>` prints it)")
    return None


def _check_deployers(platform, cloud_spec: AwsCloudSpec, path: Path) -> Iterator[Issue]:  # noqa: ANN001
    if cloud_spec.deployers is None:
        return
    for i, arn in enumerate(cloud_spec.deployers):
        if problem := iam_principal_problem(arn):
            yield ((*path, i), problem)
    if cloud_spec.deployers or not platform.addons.enabled:
        return
    for region, spec in cloud_spec.regions.items():
        if spec.cluster is not None and not spec.cluster.admins:
            yield (path, f"deployers is empty, so no principal gets cluster-admin on the EKS cluster in {region}, which "
                         "has no admins either, and the Kubernetes layer could not install there; add the deploying role "
                         f"to deployers or to regions.{region}.cluster.admins, or leave deployers out (the running role)")


def _check_previewers(cloud_spec: AwsCloudSpec, path: Path) -> Iterator[Issue]:
    """Previewers are IAM principals EKS can take, and in no other access entry: EKS refuses a second entry for one
    principal (ResourceInUseException), and the admin's entry would give it cluster-admin anyway. And the deployers are
    explicit: the preview runs the program as a previewer, so the default (the running role) would show the deployer's
    cluster-admin entry moving to the previewer, and a later `pulumi up` from that plan would grant it."""
    if cloud_spec.previewers and cloud_spec.deployers is None:
        yield (path[:-1] + ("deployers",),
               f"not set, while previewers lists {', '.join(cloud_spec.previewers)}: the preview runs the program as a "
               "previewer; without deployers the running role would be granted cluster-admin (the preview would move "
               "the deployer's EKS access entry to the previewer); allowed: the IAM role ARNs that run `pulumi up` (for "
               "example [arn:aws:iam::<account>:role/<deploy role>]), or [] to leave cluster-admin to each cluster's admins")
    holders = {arn: "deployers" for arn in cloud_spec.deployers or ()}
    for region, spec in cloud_spec.regions.items():
        for arn in spec.cluster.admins if spec.cluster is not None else ():
            holders.setdefault(arn, f"regions.{region}.cluster.admins")
    for i, arn in enumerate(cloud_spec.previewers):
        if problem := iam_principal_problem(arn):
            yield ((*path, i), problem)
        elif arn in holders:
            yield ((*path, i), f"'{arn}' is also in {holders[arn]}; EKS allows one access entry per principal: keep it in "
                               "one (a previewer reads, an admin or deployer gets cluster-admin)")


def _check_global_endpoint(cloud_spec: AwsCloudSpec, path: Path) -> Iterator[Issue]:
    endpoint = cloud_spec.global_endpoint
    if endpoint is None:
        return
    if endpoint.certificate:
        yield ((*path, "certificate"), "not used on AWS: Global Accelerator passes TLS through to the regional load balancers; "
                                       "set inference.certificate (an ACM certificate ARN) in each region instead")
    if endpoint.waf and cloud_spec.inference_load_balancer is LoadBalancerKind.NETWORK:
        yield ((*path, "waf"), "AWS WAF attaches to Application Load Balancers only and inference_load_balancer is 'network'; "
                               "set waf: false, or use inference_load_balancer 'application'")
    if endpoint.hosted_zone_id and not HOSTED_ZONE.match(endpoint.hosted_zone_id):
        yield ((*path, "hosted_zone_id"), f"'{endpoint.hosted_zone_id}' is not a Route 53 hosted zone ID (for example Z0123456789ABCDEFGHIJ)")
    if endpoint.routing is GlobalRouting.ANYCAST and bool(endpoint.domain) != bool(endpoint.hosted_zone_id):
        # Global Accelerator has no host name of its own to configure: the domain exists only as the Route 53 alias
        # record the endpoint writes into the hosted zone.
        if endpoint.domain:
            yield ((*path, "hosted_zone_id"), f"domain '{endpoint.domain}' is published on AWS as a Route 53 alias record to the "
                                              "Global Accelerator, in the hosted zone given here; set hosted_zone_id, or leave "
                                              "domain out and point your own DNS (CNAME) at the exported global_endpoint.dns_name")
        else:
            yield ((*path, "domain"), f"hosted_zone_id '{endpoint.hosted_zone_id}' is given without domain, the record name to "
                                      "write into it; set domain (for example infer.example.com), or leave hosted_zone_id out")


def _check_region(environment: str, cloud_spec: AwsCloudSpec, region: str, spec: RegionSpec, path: Path) -> Iterator[Issue]:
    net = spec.network
    if net.flow_log_retention_days not in CLOUDWATCH_RETENTION_DAYS:
        allowed = ", ".join(map(str, CLOUDWATCH_RETENTION_DAYS))
        yield ((*path, "network", "flow_log_retention_days"),
               f"got {net.flow_log_retention_days}; CloudWatch Logs keeps logs for one of these periods only (days): {allowed}")
    if spec.cluster is not None:
        for i, admin in enumerate(spec.cluster.admins):
            if problem := iam_principal_problem(admin):
                yield ((*path, "cluster", "admins", i), problem)
    if spec.inference is not None and spec.cluster is None:
        yield ((*path, "inference"), "inference on AWS is served by the region's EKS cluster (IP targets); add `cluster:` to this region")
    if spec.inference is not None and spec.inference.certificate:
        yield from _check_certificate(region, spec.inference.certificate, (*path, "inference", "certificate"))
    if spec.inference is not None:
        yield from _check_health_check_path(cloud_spec, spec.inference, (*path, "inference", "health_check_path"))
    for name, pool in spec.gpu_pools.items():
        yield from _check_pool(region, spec, pool, (*path, "gpu_pools", name))
        yield from _check_node_group_name(environment, region, name, (*path, "gpu_pools", name))
        yield from _check_node_labels(pool, (*path, "gpu_pools", name))
    for name, bucket in spec.buckets.items():
        yield from _check_lifecycle(cloud_spec, bucket.tiering, (*path, "buckets", name, "tiering"))
        yield from _check_soft_delete(bucket, (*path, "buckets", name, "soft_delete_days"))


def _check_health_check_path(cloud_spec: AwsCloudSpec, inference: InferenceSpec, path: Path) -> Iterator[Issue]:
    """The regional target group probes the path (at most 1024 characters); behind an anycast global endpoint, Global
    Accelerator's endpoint group gets it too (at most 255)."""
    given = inference.health_check_path
    endpoint = cloud_spec.global_endpoint
    if endpoint is not None and endpoint.routing is GlobalRouting.ANYCAST:
        limit, who = GLOBAL_ACCELERATOR_HEALTH_CHECK_PATH_MAX, ("Global Accelerator (global_endpoint routing 'anycast') "
                                                                "health-checks the regional load balancers on")
    else:
        limit, who = ELB_HEALTH_CHECK_PATH_MAX, "the load balancer's target group health check takes"
    if len(given) > limit:
        shown = f"'{given[:40]}...'" if len(given) > 40 else f"'{given}'"
        yield (path, f"{shown} has {len(given)} characters; {who} a path of at most {limit} characters; shorten it")


def _check_node_group_name(environment: str, region: str, pool_name: str, path: Path) -> Iterator[Issue]:
    """The node group's auto-name (Pulumi name plus AUTONAME_SUFFIX) must fit EKS's 63 characters."""
    name = node_group_resource_name(environment, region, pool_name)
    length = len(name) + AUTONAME_SUFFIX
    if length <= EKS_NODE_GROUP_NAME_MAX:
        return
    room = len(pool_name) - (length - EKS_NODE_GROUP_NAME_MAX)
    yield (path, f"pool name '{pool_name}' ({len(pool_name)} characters) makes the EKS node group name '{name}-<7 random "
                 f"characters>' {length} characters long; EKS allows at most {EKS_NODE_GROUP_NAME_MAX}: with environment "
                 f"'{environment}' and region '{region}' the pool name may have at most {room} characters; shorten the pool name")


def _check_node_labels(pool: GpuPoolSpec, path: Path) -> Iterator[Issue]:
    """The pool's own labels and taints within EKS's limits (EKS_LABEL_MAX); their Kubernetes syntax is checked by the
    spec itself. The toolkit's own labels and taints always fit."""
    for key, value in pool.labels.items():
        if len(key) > EKS_LABEL_MAX:
            yield ((*path, "labels", key), f"label key '{key}' has {len(key)} characters; EKS node group labels take keys of "
                                           f"1 to {EKS_LABEL_MAX} characters, prefix and '/' included (Kubernetes allows "
                                           "a longer prefix, EKS does not); shorten the key")
        if not value:
            yield ((*path, "labels", key), f"label '{key}' has an empty value; EKS node group labels take values of 1 to "
                                           f"{EKS_LABEL_MAX} characters (Kubernetes allows an empty value, EKS does not); "
                                           "give it a value")
    for i, taint in enumerate(pool.taints):
        if len(taint.key) > EKS_TAINT_KEY_MAX:
            yield ((*path, "taints", i), f"taint key '{taint.key}' has {len(taint.key)} characters; EKS node group taints "
                                         f"take keys of 1 to {EKS_TAINT_KEY_MAX} characters, prefix and '/' included "
                                         "(Kubernetes allows a longer prefix, EKS does not); shorten the key")


def _check_soft_delete(bucket: BucketSpec, path: Path) -> Iterator[Issue]:
    """soft_delete_days is GCS/Blob soft delete; S3 has none, so setting it on AWS would do nothing."""
    if "soft_delete_days" not in bucket.model_fields_set:
        return
    if bucket.versioning:
        instead = (f"deleted and overwritten objects stay as noncurrent versions (versioning) for "
                   f"noncurrent_expire_after_days ({bucket.noncurrent_expire_after_days})")
    else:
        instead = ("versioning is off, so this bucket keeps no deleted or overwritten objects (turn versioning on to "
                   "keep them as noncurrent versions for noncurrent_expire_after_days)")
    yield (path, f"soft_delete_days {bucket.soft_delete_days} has no effect on AWS: S3 has no soft delete; {instead}; "
                 "remove soft_delete_days")


def _check_certificate(region: str, arn: str, path: Path) -> Iterator[Issue]:
    match = ACM_CERTIFICATE.match(arn)
    if match is None:
        yield (path, f"'{arn}' is not an ACM certificate ARN (arn:aws:acm:{region}:<account>:certificate/<id>)")
    elif match["region"] != region:
        yield (path, f"certificate '{arn}' is in {match['region']}; a load balancer in {region} needs an ACM certificate from {region}")


def _check_pool(region: str, spec: RegionSpec, pool: GpuPoolSpec, path: Path) -> Iterator[Issue]:
    if path[-1] == SYSTEM_POOL:
        yield (path, f"'{SYSTEM_POOL}' is the cluster's CPU pool (node label ai-infra/pool={SYSTEM_POOL}); name this pool differently")
    pattern = zone_name_pattern(region)
    for i, zone in enumerate(pool.zones):
        if not pattern.match(zone):
            yield ((*path, "zones", i), f"'{zone}' is not an availability zone of {region}; AWS zones are named {region}a, {region}b, ...")
    if len(pool.zones) > spec.network.zones:
        yield ((*path, "zones"), f"{len(pool.zones)} zones given; this network spans {spec.network.zones}")
    if pool.capacity in RESERVED_CAPACITY and len(pool.zones) != 1:
        given = f"{len(pool.zones)} zones given" if pool.zones else "not set"
        yield ((*path, "zones"), f"{given}; {reservation_kind(pool)} {pool.reservation} is in one availability zone, and the "
                                 f"pool's subnets must all be in it (EKS launches in another zone fail): set zones: "
                                 f"[<the zone of {pool.reservation}>]")
    elif single_subnet(pool) and len(pool.zones) > 1:
        why = "EFA traffic is not routed between subnets" if pool.efa else "a cluster placement group lives in one zone"
        yield ((*path, "zones"), f"{len(pool.zones)} zones given, but {why}; give one zone (or none: the network's first zone)")
    if pool.reservation and not _RESERVATION_ID.match(pool.reservation):
        yield ((*path, "reservation"), f"'{pool.reservation}' is not an EC2 {reservation_kind(pool)} ID; allowed: cr- followed "
                                       "by 17 hex digits")


def reservation_kind(pool: GpuPoolSpec) -> str:
    """What EC2 calls the reservation a reserved pool names, for messages."""
    return "Capacity Block" if pool.capacity is CapacityType.CAPACITY_BLOCK else "On-Demand Capacity Reservation"


def _check_lifecycle(cloud_spec: AwsCloudSpec, tiering, path: Path) -> Iterator[Issue]:  # noqa: ANN001
    warm = tiering.warm_after_days
    if cloud_spec.warm_storage_class is not WarmStorageClass.STANDARD_IA or warm is None:
        return
    if warm < S3_IA_MIN_AGE_DAYS:
        yield ((*path, "warm_after_days"), f"got {warm}; S3 moves objects to STANDARD_IA no sooner than {S3_IA_MIN_AGE_DAYS} days after "
                                           f"creation; set {S3_IA_MIN_AGE_DAYS} or more, or warm_storage_class "
                                           f"'{WarmStorageClass.INTELLIGENT_TIERING.value}' (no minimum age)")
    following = [(f, getattr(tiering, f)) for f in ("cold_after_days", "archive_after_days") if getattr(tiering, f) is not None]
    if following and following[0][1] < warm + S3_IA_MIN_STAY_DAYS:
        field, days = following[0]
        yield ((*path, field), f"got {days}; objects must stay in STANDARD_IA at least {S3_IA_MIN_STAY_DAYS} days, so {field} "
                               f"must be {warm + S3_IA_MIN_STAY_DAYS} or more (warm_after_days is {warm})")
