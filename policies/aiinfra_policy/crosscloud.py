"""Rules across clouds: GPU/TPU pool hygiene and cost guards, data residency, tags, protection of state."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .common import ALLOWED_REGIONS, ENVIRONMENT
from .props import Unknown, Unknowns, get, is_unknown, items, named_entries, need
from .registry import Context, rule
from .tpu import TPU_QUEUED, TPU_VM, tpu_nodes, tpu_slice

EKS_POOL, GKE_POOL, AKS_POOL = "aws:eks/nodeGroup:NodeGroup", "gcp:container/nodePool:NodePool", "azure-native:containerservice:AgentPool"
POOLS = (EKS_POOL, GKE_POOL, AKS_POOL)
GKE_CLUSTER, AKS_CLUSTER = "gcp:container/cluster:Cluster", "azure-native:containerservice:ManagedCluster"
POOL_HOLDERS = (*POOLS, GKE_CLUSTER, AKS_CLUSTER)
"""Pool resources, and the clusters that declare pools inline (GKE `nodePools[]` and its default pool, AKS
`agentPoolProfiles[]`): the cloud creates those pools too, so the pool rules read them."""
ACCELERATOR_HOLDERS = (*POOL_HOLDERS, TPU_VM, TPU_QUEUED)
"""What the accelerator cost rules read: the pool holders, and Cloud TPU VMs and queued resources (one slice per VM
or node spec, outside any cluster, so no taint or dev-pool rule applies to them)."""
ACCEL_TAINTS = ("nvidia.com/gpu", "aws.amazon.com/neuron", "google.com/tpu")
_TPU_MACHINE = re.compile(r"^ct\w+-\w+-(\d+)t$")
_GCP_GPU_NAME = re.compile(r"^nvidia-(tesla-)?")
COST = {"SOC2": ("CC9.1",), "NIST-800-53": ("SA-9",)}


@cache
def _table() -> dict[str, tuple[str, int]]:
    data = json.loads((Path(__file__).parent / "accelerators.json").read_text())
    return {key: (model, count) for key, (model, count) in data.items()}


@dataclass
class Pool:
    accelerator: str | None
    per_node: int
    min_nodes: int
    max_nodes: int
    """Nodes in the whole pool (per-zone counts already multiplied by `zones`)."""
    spot: bool
    taints: list[str]
    zones: int = 1
    """Zones the pool's per-zone node counts were multiplied by (1 when its counts are totals)."""
    models: tuple[str, ...] = ()
    """Every model the pool may launch (an EKS node group lists several instance types); empty: just `accelerator`."""

    def scale(self) -> str:
        """How max_nodes x per_node came about, for messages."""
        nodes = f"{self.zones} zones x {self.max_nodes // self.zones}" if self.zones > 1 else str(self.max_nodes)
        return f"{nodes} x {self.per_node}"


def _tpu_pools(type_: str, props: Any) -> Iterator[tuple[str, Pool]]:
    """A TPU VM is one slice; a queued resource one per node spec (pulumi-gcp 10.2 gives its nodes acceleratorType
    only). A slice runs while it exists: min = max = 1 (spot is not read: no rule that reads it covers slices)."""
    for node_id, node in tpu_nodes(type_, props):
        label = "" if node_id is None else f"node {node_id}: "
        yield label, Pool(*tpu_slice(need(node, "acceleratorType"), need(node, "acceleratorConfig")), 1, 1, False, [])


def _first(props: Any, *paths: str) -> Any:
    """The value at the first of `paths` that is set (None if none is); an unknown one on the way raises Unknown."""
    for path in paths:
        value = need(props, path)
        if value is not None:
            return value
    return None


_GCP_ZONE = re.compile(r"^[a-z]+-[a-z]+\d+-[a-z]$")
GKE_REGIONAL_ZONES = 3
"""Zones of a regional GKE pool that names none: "By default, GKE replicates each node pool across three zones of the
control plane's region" (GKE docs, Regional clusters). Also assumed when the location is not set at all (the
provider's default may be a region), which can only overcount."""


def _gke_zones(pool: Any, cluster: Any) -> int:
    """How many zones a GKE pool's per-zone node counts apply to: its own nodeLocations, else its cluster's (which
    leave out a zonal cluster's own zone, so that zone is added), else 1 for a zonal and 3 for a regional location."""
    own = {str(z).lower() for z in items(pool, "nodeLocations")}
    if own:
        return len(own)
    location = str(need(pool, "location") or need(cluster, "location") or "").lower()
    zonal = {location} if _GCP_ZONE.match(location) else set()
    shared = {str(z).lower() for z in items(cluster, "nodeLocations")}
    if shared:
        return len(shared | zonal)
    return 1 if zonal else GKE_REGIONAL_ZONES


def _gke_counts(props: Any, cluster: Any) -> tuple[int, int, int]:
    """(min nodes, max nodes, zones multiplied by) of a GKE pool. totalMin/MaxNodeCount cover the whole pool;
    min/maxNodeCount, nodeCount and initialNodeCount are per zone ("Maximum number of nodes per zone in the node
    pool", pulumi-gcp NodePoolAutoscaling). Outputs carry 0 for the limits a pool does not use, so a 0 total is unset."""
    autoscaling = need(props, "autoscaling")
    if autoscaling and need(autoscaling, "totalMaxNodeCount"):
        return int(need(autoscaling, "totalMinNodeCount") or 0), int(need(autoscaling, "totalMaxNodeCount")), 1
    if autoscaling:
        low, high = int(need(autoscaling, "minNodeCount") or 0), int(need(autoscaling, "maxNodeCount") or 0)
    else:
        low = high = int(_first(props, "nodeCount", "initialNodeCount") or 0)
    zones = _gke_zones(props, cluster) if high else 1
    return low * zones, high * zones, zones


def pool_of(type_: str, props: Any, cluster: Any = None) -> Pool:
    """What a node pool carries, from the inputs each cloud's API receives (raises Unknown when it can't tell);
    `cluster` is the props of the cluster that declares the pool inline, for a GKE pool's zones."""
    if type_ == EKS_POOL:
        kinds = list(items(props, "instanceTypes"))
        if not kinds and get(props, "launchTemplate"):
            raise Unknown("instanceTypes")  # the instance type is in the launch template, which this can't read
        # Any listed type may be launched: count the largest, and keep every model for allowed-accelerators.
        found = sorted((_table()[f"aws:{k}"] for k in kinds if f"aws:{k}" in _table()), key=lambda m: -m[1])
        model, count = found[0] if found else (None, 0)
        taints = [f"{need(t, 'key')}:{need(t, 'effect')}" for t in items(props, "taints")]
        return Pool(model, count, int(need(props, "scalingConfig.minSize", 0)), int(need(props, "scalingConfig.maxSize", 0)),
                    need(props, "capacityType", "ON_DEMAND") == "SPOT", taints, models=tuple(dict.fromkeys(m for m, _ in found)))
    if type_ == GKE_POOL:
        machine = str(need(props, "nodeConfig.machineType", ""))
        accels = list(items(props, "nodeConfig.guestAccelerators"))
        if accels:
            model = _GCP_GPU_NAME.sub("", str(get(accels[0], "type"))).replace("tesla-", "")
            count = int(need(accels[0], "count", 0))
        elif f"gcp:{machine}" in _table():  # the catalog names the TPU generation (tpu-v5e, tpu-v5p, ...)
            model, count = _table()[f"gcp:{machine}"]
        elif (tpu := _TPU_MACHINE.match(machine)) is not None:
            model, count = f"tpu ({machine})", int(tpu.group(1))  # a generation the catalog lacks: allowed by no name
        else:
            model, count = None, 0
        low, high, zones = _gke_counts(props, cluster or {})
        taints = [f"{need(t, 'key')}:{need(t, 'effect')}" for t in items(props, "nodeConfig.taints")]
        if model and not model.startswith("tpu"):
            taints.append("nvidia.com/gpu:NO_SCHEDULE")  # GKE adds this taint to every GPU node pool itself
        spot = need(props, "nodeConfig.spot", False) is True or need(props, "nodeConfig.preemptible", False) is True
        return Pool(model, count, low, high, spot, taints, zones)
    vm = str(need(props, "vmSize", ""))
    model, count = _table().get(f"azure:{vm}", (None, 0))
    taints = [str(t) for t in items(props, "nodeTaints")]
    low = need(props, "minCount", get(props, "count", 0))
    high = need(props, "maxCount", get(props, "count", 0))
    return Pool(model, count, int(low or 0), int(high or 0), need(props, "scaleSetPriority", "Regular") == "Spot", taints)


def pools_in(type_: str, props: Any, separate: frozenset[str] = frozenset(),
             cluster: Any = None) -> Iterator[tuple[str, Pool]]:
    """(label for messages, pool) of every node pool a resource declares: a pool resource is one pool; a cluster's
    inline pools are named in the label. A cluster's outputs list every pool of the cluster, also those that are
    resources of their own: the pools named in `separate` are such and are left to their own resource. `cluster`: the
    props of a pool resource's cluster, when known (a GKE pool without nodeLocations takes the cluster's)."""
    if type_ in POOLS:
        yield "", pool_of(type_, props, cluster)
    elif type_ in (TPU_VM, TPU_QUEUED):
        yield from _tpu_pools(type_, props)
    elif type_ == AKS_CLUSTER:
        for label, entry in named_entries(props, "agentPoolProfiles", "agent pool"):
            if get(entry, "name") not in separate:
                yield label, pool_of(AKS_POOL, entry)
    elif type_ == GKE_CLUSTER:
        # A cluster given no inline pools has `nodePools` unknown in a preview's outputs (the provider computes the
        # list, which then holds the pools that are resources of their own): none are declared inline.
        inline = [] if is_unknown(get(props, "nodePools")) else named_entries(props, "nodePools", "node pool")
        for label, entry in inline:
            if get(entry, "name") not in separate:
                yield label, pool_of(GKE_POOL, entry, props)
        # Without inline pools GKE creates a default pool of initialNodeCount nodes (per zone) from nodeConfig; it
        # is gone right after creation when removeDefaultNodePool is set.
        if not inline and need(props, "removeDefaultNodePool") is not True:
            default = {"nodeConfig": get(props, "nodeConfig") or {}, "nodeCount": need(props, "initialNodeCount", 1)}
            yield "default node pool: ", pool_of(GKE_POOL, default, props)


@rule("accelerator-pool-tainted", "Checks whether GPU, Neuron and TPU node pools are tainted so other pods stay off them.",
      severity="medium", types=POOL_HOLDERS, remediation="Taint the pool nvidia.com/gpu=true:NoSchedule (aws.amazon.com/neuron for Neuron).",
      frameworks={"SOC2": ("CC9.1",), "NIST-800-53": ("SC-6",)})
def pool_tainted(props: Any, ctx: Context) -> Iterator[str]:
    for label, pool in pools_in(ctx.type, props):
        if pool.accelerator and not pool.accelerator.startswith("tpu") and not any(t.startswith(ACCEL_TAINTS) for t in pool.taints):
            yield f"{label}{pool.accelerator} pool has no accelerator taint: CPU pods can land on GPU nodes"


@rule("allowed-accelerators", "Checks whether node pools and Cloud TPU slices use only the accelerator models allowed for the environment.",
      severity="high", types=ACCELERATOR_HOLDERS, remediation="Use an accelerator from allowedAccelerators or extend the list in the policy config.",
      frameworks=COST, config={"allowedAccelerators": {"type": "array", "items": {"type": "string"}, "default": [],
                                                      "description": "Accelerator models allowed (catalog names); empty allows all."}})
def allowed_accelerators(props: Any, ctx: Context) -> Iterator[str]:
    allowed = ctx.config.get("allowedAccelerators") or []
    for label, pool in pools_in(ctx.type, props) if allowed else ():
        # The exact model: tpu-v5e allows no v5p or v6e slice.
        for model in [m for m in pool.models or (pool.accelerator,) if m and m not in allowed]:
            yield f"{label}accelerator {model} is not allowed here; allowed: {', '.join(allowed)}"


@rule("gpu-cap-per-pool", "Checks whether a node pool or Cloud TPU slice can grow to at most maxGpusPerPool accelerators.",
      severity="high", types=ACCELERATOR_HOLDERS, remediation="Lower max nodes or raise maxGpusPerPool in the policy config.", frameworks=COST,
      config={"maxGpusPerPool": {"type": "integer", "default": 64, "description": "Most accelerators one pool may scale to."}})
def gpu_cap_pool(props: Any, ctx: Context) -> Iterator[str]:
    cap = int(ctx.config.get("maxGpusPerPool", 64))
    for label, pool in pools_in(ctx.type, props):
        if pool.accelerator and pool.per_node * pool.max_nodes > cap:
            yield f"{label}pool can scale to {pool.per_node * pool.max_nodes} accelerators ({pool.scale()}); the cap is {cap}"


@rule("dev-pools-spot-or-scale-to-zero", "Checks whether accelerator pools in dev use spot capacity or scale to zero.",
      severity="medium", types=POOL_HOLDERS, remediation="In dev, set min nodes 0 or use spot capacity.", frameworks=COST, config=ENVIRONMENT)
def dev_pools(props: Any, ctx: Context) -> Iterator[str]:
    if ctx.config.get("environment") != "dev":
        return
    for label, pool in pools_in(ctx.type, props):
        if pool.accelerator and not pool.spot and pool.min_nodes > 0:
            yield f"{label}dev {pool.accelerator} pool keeps {pool.min_nodes} on-demand nodes running; use spot or min 0"


@rule("gpu-cap-per-environment", "Checks whether all accelerator pools together stay under maxGpusPerEnvironment.",
      severity="high", remediation="Lower pool maxima or raise maxGpusPerEnvironment.", frameworks=COST,
      config={"maxGpusPerEnvironment": {"type": "integer", "default": 512, "description": "Most accelerators the environment may scale to."}})
def gpu_cap_env(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    total, cap = 0, int(ctx.config.get("maxGpusPerEnvironment", 512))
    separate = _separate_pools(resources)
    clusters = {r.urn: r.props for r in resources if r.resource_type == GKE_CLUSTER}
    unknowns = Unknowns()  # pools that can't be counted in preview only add to the total: the known ones may do
    for r in resources:
        if r.resource_type in ACCELERATOR_HOLDERS:
            with unknowns.skip():
                managed = frozenset().union(*(separate.get(key, ()) for key in _cluster_keys(r)))
                # A GKE pool depends on the cluster it names: that cluster's nodeLocations are the pool's default.
                cluster = next((clusters[u] for u in _dependency_urns(r) if u in clusters), None)
                total += sum(p.per_node * p.max_nodes for _, p in pools_in(r.resource_type, r.props, managed, cluster)
                             if p.accelerator)
    if total > cap:
        yield "", f"accelerator pools can scale to {total} accelerators in total; the environment cap is {cap}"
    unknowns.raise_first()


def _known_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value and not is_unknown(value) else None


def _cluster_keys(cluster: Any) -> set[str]:
    """What a pool resource's reference to this cluster can be: its URN (a pool depends on the cluster whose name or
    id it takes), its name, or its id (GKE takes either as a node pool's `cluster`)."""
    return {cluster.urn} | {value for prop in ("name", "id") if (value := _known_str(get(cluster.props, prop)))}


def _dependency_urns(resource: Any) -> set[str]:
    return {getattr(d, "urn", str(d)) for d in getattr(resource, "dependencies", []) or []}


def _separate_pools(resources: list[Any]) -> dict[str, set[str]]:
    """Names of the GKE NodePool and AKS AgentPool resources, keyed by each way they refer to their cluster: the
    URNs they depend on, and their `cluster` (GKE, a name or an id) or `resourceName` (AKS, the cluster's name)."""
    found: dict[str, set[str]] = {}
    for pool in resources:
        if pool.resource_type not in (GKE_POOL, AKS_POOL):
            continue
        name = _known_str(get(pool.props, "name")) or _known_str(get(pool.props, "agentPoolName"))
        refs = _dependency_urns(pool)
        if ref := _known_str(get(pool.props, "cluster") or get(pool.props, "resourceName")):
            refs.add(ref)
        for ref in refs if name else ():
            found.setdefault(ref, set()).add(name)
    return found


GLOBAL_SERVICES = ("aws:iam/", "aws:route53/", "aws:cloudfront/", "aws:globalaccelerator/", "aws:organizations/",
                   "aws:shield/", "gcp:serviceaccount/", "gcp:projects/", "gcp:organizations/", "gcp:folder/")
"""Types of global services: they have no region, so the provider's region says nothing about where they live."""


def _region(props: Any, provider: Any, type_: str = "") -> str | None:
    """The resource's region, zone or location, else its provider's (`region` for aws and gcp, `location` for
    azure-native); an unknown one raises Unknown."""
    for key in ("region", "location", "zone"):
        value = need(props, key)
        if isinstance(value, str):
            return region_name(value)
    if type_.startswith(GLOBAL_SERVICES) or provider is None:
        return None
    value = _first(provider, "region", "location")
    return region_name(value) if isinstance(value, str) else None


def region_name(value: str) -> str:
    """A region as the rules compare it: lower case, and without spaces, since Azure takes a location's display name
    too ("West Europe" is westeurope); AWS and GCP names have no spaces."""
    return value.lower().replace(" ", "")


def _provider_props(resource: Any) -> Any:
    provider = getattr(resource, "provider", None)
    return provider.props if provider is not None else None


def _within(region: str, allowed: list[str]) -> bool:
    """Whether a region, or a zone of it (europe-west4-b, us-east-1a), is one of `allowed`."""
    return any(region == a or region.startswith(a + "-") or (region[:-1] == a and region[-1:].isalpha()) for a in allowed)


GCS_MULTI_REGIONS = ("us", "eu", "asia")
"""Cloud Storage multi-regions: data may be stored in any region of the continent, so no list of regions covers one."""
GCS_DUAL_REGIONS = {
    "asia1": ("asia-northeast1", "asia-northeast2"), "eur4": ("europe-north1", "europe-west4"),
    "eur5": ("europe-west1", "europe-west2"), "eur7": ("europe-west2", "europe-west3"),
    "eur8": ("europe-west3", "europe-west6"), "nam4": ("us-central1", "us-east1"),
}
"""Cloud Storage predefined dual-regions and the two regions that hold their data
(https://cloud.google.com/storage/docs/locations#predefined; ASIA1 is Tokyo and Osaka)."""


def _location_allowed(region: str, allowed: list[str]) -> bool:
    """Whether data in `region` stays in `allowed` (lower case): a multi-region only when allowed by its own name, a
    predefined dual-region when allowed by name or when both its regions are."""
    if region in allowed:
        return True
    if region in GCS_MULTI_REGIONS:
        return False  # its data may sit in any region of the continent, not only the allowed ones
    if region in GCS_DUAL_REGIONS:
        return all(_within(member, allowed) for member in GCS_DUAL_REGIONS[region])
    return _within(region, allowed)


def _placement(region: str) -> str:
    """How a location is named in messages: a dual-region with its regions, a multi-region as such."""
    if region in GCS_DUAL_REGIONS:
        return f"dual-region {region} ({' and '.join(GCS_DUAL_REGIONS[region])})"
    return f"multi-region {region} (any region of the continent)" if region in GCS_MULTI_REGIONS else f"region {region}"


INHERITED_LOCATION = frozenset({"azure-native:keyvault:Key", "azure-native:keyvault:Secret"})
"""Azure resources placed with their parent (a key or secret lives in its vault, whose location the rule checks): they
take no location, and report it only after creation, so in a preview it is unknown."""


@rule("data-residency", "Checks whether every regional resource is in an allowed region.",
      severity="critical", remediation="Move the resource to an allowed region or extend allowedRegions.",
      frameworks={"GDPR": ("Art.44",), "HIPAA": ("164.308(b)",), "SOC2": ("C1.1",), "NIST-800-53": ("SA-9(5)",)},
      config=ALLOWED_REGIONS)
def residency(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    allowed = [region_name(r) for r in ctx.config.get("allowedRegions") or []]
    if not allowed:
        return
    unknowns = Unknowns()  # e.g. `location=resource_group.location` of a group whose location is not yet known
    for r in resources:
        if r.resource_type.startswith(("pulumi:", "kubernetes:")) or r.resource_type in INHERITED_LOCATION:
            continue
        with unknowns.skip():
            region = _region(r.props, _provider_props(r), r.resource_type)
            if region is None or region == "global":
                continue
            if not _location_allowed(region, allowed):
                yield r.urn, f"{_placement(region)} is outside the allowed regions {', '.join(allowed)}"
    unknowns.raise_first()


@rule("data-zone-residency", "Checks whether data labelled with a residency zone stays in that zone's regions.",
      severity="critical", remediation="Place buckets and file systems labelled data-zone=<zone> only in that zone's regions.",
      frameworks={"GDPR": ("Art.44",), "SOC2": ("C1.1",)},
      config={"dataZones": {"type": "object", "default": {}, "description": "Zone name -> allowed regions, e.g. {\"eu\": [\"eu-west-1\"]}."}})
def data_zones(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    zones = ctx.config.get("dataZones") or {}
    unknowns = Unknowns()
    for r in resources:
        with unknowns.skip():
            labels = need(r.props, "tags") or need(r.props, "labels") or {}
            zone = need(labels, "data-zone") if isinstance(labels, dict) else None
            region = _region(r.props, _provider_props(r), r.resource_type) if zone else None
            if zone and region and zone in zones and not _location_allowed(region, [region_name(z) for z in zones[zone]]):
                yield r.urn, f"data-zone {zone} data is in {region}; allowed: {', '.join(zones[zone])}"
    unknowns.raise_first()


VPC_ENCRYPTION, VNET = "aws:ec2/vpcEncryptionControl:VpcEncryptionControl", "azure-native:network:VirtualNetwork"
TRANSIT = {"HIPAA": ("164.312(e)(2)(ii)",), "SOC2": ("CC6.7",), "NIST-800-53": ("SC-8",)}
# GCP encrypts VM-to-VM traffic itself, always: nothing to configure, so no GCP rule.


@rule("aws-vpc-transit-encryption-enforced", "Checks whether VPC encryption controls drop unencrypted traffic (enforce mode).",
      severity="medium", types=(VPC_ENCRYPTION,), remediation="Set network.transit_encryption: enforce.", frameworks=TRANSIT)
def vpc_transit_encryption(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "mode") != "enforce":
        yield f"VPC encryption control mode is {need(props, 'mode')!r}: unencrypted traffic is reported, not dropped"


@rule("azure-vnet-transit-encryption-enforced", "Checks whether VNet encryption is on and drops unencrypted flows "
      "(DropUnencrypted).", severity="medium", types=(VNET,), frameworks=TRANSIT,
      remediation="VNet encryption cannot drop unencrypted flows yet (DropUnencrypted is documented as future support): "
                  "network.transit_encryption: monitor is the named opt-in this rule keeps reporting.")
def vnet_transit_encryption(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "encryption.enabled", False) is not True:
        yield "VNet encryption is off"
    elif need(props, "encryption.enforcement") != "DropUnencrypted":
        yield "VNet encryption allows unencrypted flows (AllowUnencrypted): they are allowed, not dropped"
