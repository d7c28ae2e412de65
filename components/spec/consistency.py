"""Settings a cloud would refuse at `pulumi up`, or ignore without a word: the API server's allowlist (a network listed
twice or inside the cluster's own, private ranges at a public endpoint, more entries than the cloud takes), taints
that repeat a key and effect (the pool's own, or one the toolkit or AKS sets), and settings of another cloud.
Pure: each function returns (path, message) issues, paths relative to the platform."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network

from components import catalog
from components.catalog.errors import CLOUD_NAMES
from components.planning import ranges

from .aws import EKS_KUBERNETES_VERSION
from .cloud import CloudSpec, RegionSpec
from .common import Cloud
from .compute import ApiAccess, CapacityType, ClusterSpec, GpuPoolSpec
from .resolve import AKS_SPOT_TAINT, accelerator_taint, resolve_gpu_pool
from .storage import BucketSpec

Path = tuple[str | int, ...]
Issue = tuple[Path, str]


# The most authorized_cidrs entries each cloud takes, by API access, and why. EKS: "Public endpoint access CIDR ranges
# per cluster: 40", not adjustable (docs.aws.amazon.com/eks/latest/userguide/service-quotas.html); a private endpoint
# takes them as cluster security group rules, an adjustable EC2 quota, so no limit is set here. GKE: "Public clusters
# can have up to 50 authorized network CIDR ranges; private clusters can have up to 100"
# (cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks, Limitations): a public endpoint is held to 50,
# and with a private one the toolkit adds the cluster's network as one more. AKS: "You can specify up to 200
# authorized IP ranges" (learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges); a private AKS API server takes
# no list.
AUTHORIZED_CIDR_LIMITS: dict[tuple[Cloud, ApiAccess], tuple[int, str]] = {
    (Cloud.AWS, ApiAccess.PUBLIC_RESTRICTED): (40, "EKS takes at most 40 public access CIDR ranges per cluster, a quota "
                                                   "AWS does not raise"),
    (Cloud.GCP, ApiAccess.PUBLIC_RESTRICTED): (50, "GKE takes at most 50 authorized networks for a public endpoint"),
    (Cloud.GCP, ApiAccess.PRIVATE): (99, "GKE takes at most 100 authorized networks for a private endpoint, and the "
                                         "toolkit adds the cluster's own network as one of them"),
    (Cloud.AZURE, ApiAccess.PUBLIC_RESTRICTED): (200, "AKS takes at most 200 authorized IP ranges"),
}

GKE_GPU_TAINT_VALUE = "present"
"""The value of the GPU taint on GKE, which GKE puts on GPU nodes itself (components/gcp/gpu_pool.py GPU_TAINT)."""


def region_issues(cloud: Cloud, region: RegionSpec, path: Path) -> list[Issue]:
    """The region's cluster access and fields, its pools' taints and its buckets' tiering."""
    issues: list[Issue] = []
    if region.cluster is not None:
        issues += _cluster_issues(cloud, region.cluster, region.network.cidr, (*path, "cluster"))
    for name, pool in region.gpu_pools.items():
        issues += _taint_issues(cloud, pool, (*path, "gpu_pools", name, "taints"))
    if cloud is Cloud.GCP:
        for name, bucket in region.buckets.items():
            issues += _autoclass_issues(bucket, (*path, "buckets", name, "tiering"))
    return issues


def endpoint_issues(cloud: Cloud, cloud_spec: CloudSpec, base: Path) -> list[Issue]:
    """Global endpoint settings of another cloud."""
    endpoint = cloud_spec.global_endpoint
    if endpoint is None or cloud is Cloud.AZURE or "azure_tier" not in endpoint.model_fields_set:
        return []
    service = ("AWS Global Accelerator (or Route 53 latency records)" if cloud is Cloud.AWS
               else "a global external Application Load Balancer")
    return [((*base, "global_endpoint", "azure_tier"), f"azure_tier '{endpoint.azure_tier.value}' is Azure-only (the Front "
                                                       f"Door tier); the {CLOUD_NAMES[cloud.value]} global endpoint is "
                                                       f"{service}, which has no tier: remove azure_tier")]


def _cluster_issues(cloud: Cloud, cluster: ClusterSpec, network: IPv4Network, path: Path) -> Iterator[Issue]:
    if cloud is Cloud.AWS and "upgrade_channel" in cluster.model_fields_set:
        yield ((*path, "upgrade_channel"), f"upgrade_channel '{cluster.upgrade_channel.value}' has no effect on AWS: EKS has "
                                           "no release channels and never upgrades a cluster by itself (the toolkit pins "
                                           f"kubernetes_version, default {EKS_KUBERNETES_VERSION}); remove upgrade_channel "
                                           "and set kubernetes_version to choose the minor")
    where = (*path, "authorized_cidrs")
    public = cluster.api_access is ApiAccess.PUBLIC_RESTRICTED
    first: dict[IPv4Network, int] = {}
    for i, cidr in enumerate(cluster.authorized_cidrs):
        if cidr in first:
            # AWS names a security group rule after each entry (a duplicate URN); the clouds take each range once.
            yield ((*where, i), f"{cidr} is listed twice (also authorized_cidrs[{first[cidr]}]); list each network once")
            continue
        first[cidr] = i
        if public:
            if reserved := [f"{block} ({what})" for block, what in ranges.NON_PUBLIC_BLOCKS if cidr.overlaps(block)]:
                yield ((*where, i), f"{cidr} is not a public range: it overlaps {' and '.join(reserved)}, addresses no "
                                    "client reaches a public endpoint from (EKS refuses them); list your public egress "
                                    "ranges, or use api_access 'private' for networks that reach the cluster privately")
        elif cidr.subnet_of(network):
            # EKS would get two identical security group rules (InvalidPermission.Duplicate) for the network itself.
            yield ((*where, i), f"{cidr} is inside this region's network cidr {network}, which the toolkit already admits "
                                "to the API server; remove it (authorized_cidrs lists the other networks that reach it)")
    limit = AUTHORIZED_CIDR_LIMITS.get((cloud, cluster.api_access))
    if limit is not None and len(cluster.authorized_cidrs) > limit[0]:
        yield (where, f"got {len(cluster.authorized_cidrs)} entries; {limit[1]}: allowed with api_access "
                      f"'{cluster.api_access.value}': at most {limit[0]}; merge adjacent ranges into larger prefixes")


def toolkit_taints(cloud: Cloud, pool: GpuPoolSpec) -> dict[tuple[str, str], tuple[str, str]]:
    """(key, effect) -> (the taint as `key=value:effect`, who sets it) of the taints a pool gets besides its own: the
    accelerator taint (unless the pool's type is unknown, which the catalog checks report) and AKS's spot taint."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    try:
        key, value, effect = accelerator_taint(resolve_gpu_pool(cloud, pool))
    except catalog.CatalogError:
        pass
    else:
        value = GKE_GPU_TAINT_VALUE if cloud is Cloud.GCP and key == "nvidia.com/gpu" else value
        pools = "NVIDIA GPU pool" if key == "nvidia.com/gpu" else "AWS Neuron pool"
        found[(key, effect)] = (f"{key}={value}:{effect}", f"the accelerator taint the toolkit sets on every {pools}")
    if cloud is Cloud.AZURE and pool.capacity is CapacityType.SPOT:
        key, value, effect = AKS_SPOT_TAINT.key, AKS_SPOT_TAINT.value, AKS_SPOT_TAINT.effect
        found[(key, effect)] = (f"{key}={value}:{effect}", "the taint AKS sets on every spot pool")
    return found


def _taint_issues(cloud: Cloud, pool: GpuPoolSpec, path: Path) -> Iterator[Issue]:
    """Kubernetes refuses a node whose taints repeat a key and effect ("taints must be unique by key and effect pair":
    kubernetes/kubernetes pkg/apis/core/validation/validation.go), and AKS refuses such a pool; the EKS and GKE
    components would keep one and drop the others without a word."""
    own = toolkit_taints(cloud, pool)
    first: dict[tuple[str, str], int] = {}
    for i, taint in enumerate(pool.taints):
        pair = (taint.key, taint.effect)
        if pair in own:
            written, who = own[pair]
            yield ((*path, i), f"taint {taint.key} with effect {taint.effect} is {who} ({written}); a node takes one taint "
                               "per key and effect: remove it, or use another key or effect")
        elif pair in first:
            yield ((*path, i), f"taint {taint.key} with effect {taint.effect} repeats taints[{first[pair]}]; Kubernetes takes "
                               "one taint per key and effect (\"taints must be unique by key and effect pair\"): keep one")
        else:
            first[pair] = i


def _autoclass_issues(bucket: BucketSpec, path: Path) -> Iterator[Issue]:
    """Autoclass "manages all aspects of storage classes for a bucket" (cloud.google.com/storage/docs/autoclass): the
    GCP bucket gets no class transitions with it (components/gcp/lifecycle.py), only expire_after_days."""
    if not bucket.autoclass:
        return
    tiering = bucket.tiering
    for field in ("warm_after_days", "cold_after_days", "archive_after_days"):
        days = getattr(tiering, field)
        if field in tiering.model_fields_set and days is not None:
            yield ((*path, field), f"{field} {days} has no effect with autoclass: Autoclass moves objects between storage "
                                   "classes itself, so the bucket gets no class transitions; remove it (expire_after_days "
                                   "still applies), or set autoclass to false")
