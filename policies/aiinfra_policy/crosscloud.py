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
from .props import Unknowns, get, items, named_entries, need
from .registry import Context, rule

EKS_POOL, GKE_POOL, AKS_POOL = "aws:eks/nodeGroup:NodeGroup", "gcp:container/nodePool:NodePool", "azure-native:containerservice:AgentPool"
POOLS = (EKS_POOL, GKE_POOL, AKS_POOL)
GKE_CLUSTER, AKS_CLUSTER = "gcp:container/cluster:Cluster", "azure-native:containerservice:ManagedCluster"
POOL_HOLDERS = (*POOLS, GKE_CLUSTER, AKS_CLUSTER)
"""Pool resources, and the clusters that declare pools inline (GKE `nodePools[]` and its default pool, AKS
`agentPoolProfiles[]`): the cloud creates those pools too, so the pool rules read them."""
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
    spot: bool
    taints: list[str]


def _first(props: Any, *paths: str) -> Any:
    """The value at the first of `paths` that is set (None if none is); an unknown one on the way raises Unknown."""
    for path in paths:
        value = need(props, path)
        if value is not None:
            return value
    return None


def pool_of(type_: str, props: Any) -> Pool:
    """What a node pool carries, from the inputs each cloud's API receives (raises Unknown when it can't tell)."""
    if type_ == EKS_POOL:
        kinds = need(props, "instanceTypes", []) or []
        model, count = _table().get(f"aws:{kinds[0]}", (None, 0)) if kinds else (None, 0)
        taints = [f"{need(t, 'key')}:{need(t, 'effect')}" for t in items(props, "taints")]
        return Pool(model, count, int(need(props, "scalingConfig.minSize", 0)), int(need(props, "scalingConfig.maxSize", 0)),
                    need(props, "capacityType", "ON_DEMAND") == "SPOT", taints)
    if type_ == GKE_POOL:
        machine = str(need(props, "nodeConfig.machineType", ""))
        accels = list(items(props, "nodeConfig.guestAccelerators"))
        if accels:
            model = _GCP_GPU_NAME.sub("", str(get(accels[0], "type"))).replace("tesla-", "")
            count = int(need(accels[0], "count", 0))
        elif (tpu := _TPU_MACHINE.match(machine)) is not None:
            model, count = "tpu", int(tpu.group(1))
        else:
            model, count = _table().get(f"gcp:{machine}", (None, 0))
        low = _first(props, "autoscaling.totalMinNodeCount", "autoscaling.minNodeCount", "nodeCount")
        high = _first(props, "autoscaling.totalMaxNodeCount", "autoscaling.maxNodeCount", "nodeCount", "initialNodeCount")
        taints = [f"{need(t, 'key')}:{need(t, 'effect')}" for t in items(props, "nodeConfig.taints")]
        if model and model != "tpu":
            taints.append("nvidia.com/gpu:NO_SCHEDULE")  # GKE adds this taint to every GPU node pool itself
        spot = need(props, "nodeConfig.spot", False) is True or need(props, "nodeConfig.preemptible", False) is True
        return Pool(model, count, int(low or 0), int(high or 0), spot, taints)
    vm = str(need(props, "vmSize", ""))
    model, count = _table().get(f"azure:{vm}", (None, 0))
    taints = [str(t) for t in items(props, "nodeTaints")]
    low = need(props, "minCount", get(props, "count", 0))
    high = need(props, "maxCount", get(props, "count", 0))
    return Pool(model, count, int(low or 0), int(high or 0), need(props, "scaleSetPriority", "Regular") == "Spot", taints)


def pools_in(type_: str, props: Any) -> Iterator[tuple[str, Pool]]:
    """(label for messages, pool) of every node pool a resource declares: a pool resource is one pool; a cluster's
    inline pools are named in the label."""
    if type_ in POOLS:
        yield "", pool_of(type_, props)
    elif type_ == AKS_CLUSTER:
        for label, entry in named_entries(props, "agentPoolProfiles", "agent pool"):
            yield label, pool_of(AKS_POOL, entry)
    elif type_ == GKE_CLUSTER:
        inline = named_entries(props, "nodePools", "node pool")
        for label, entry in inline:
            yield label, pool_of(GKE_POOL, entry)
        # Without inline pools GKE creates a default pool of initialNodeCount nodes from nodeConfig; it is gone
        # right after creation when removeDefaultNodePool is set.
        if not inline and need(props, "removeDefaultNodePool") is not True:
            default = {"nodeConfig": get(props, "nodeConfig") or {}, "nodeCount": need(props, "initialNodeCount", 1)}
            yield "default node pool: ", pool_of(GKE_POOL, default)


@rule("accelerator-pool-tainted", "Checks whether GPU, Neuron and TPU node pools are tainted so other pods stay off them.",
      severity="medium", types=POOL_HOLDERS, remediation="Taint the pool nvidia.com/gpu=true:NoSchedule (aws.amazon.com/neuron for Neuron).",
      frameworks={"SOC2": ("CC9.1",), "NIST-800-53": ("SC-6",)})
def pool_tainted(props: Any, ctx: Context) -> Iterator[str]:
    for label, pool in pools_in(ctx.type, props):
        if pool.accelerator and pool.accelerator != "tpu" and not any(t.startswith(ACCEL_TAINTS) for t in pool.taints):
            yield f"{label}{pool.accelerator} pool has no accelerator taint: CPU pods can land on GPU nodes"


@rule("allowed-accelerators", "Checks whether node pools use only the accelerator models allowed for the environment.",
      severity="high", types=POOL_HOLDERS, remediation="Use an accelerator from allowedAccelerators or extend the list in the policy config.",
      frameworks=COST, config={"allowedAccelerators": {"type": "array", "items": {"type": "string"}, "default": [],
                                                      "description": "Accelerator models allowed (catalog names); empty allows all."}})
def allowed_accelerators(props: Any, ctx: Context) -> Iterator[str]:
    allowed = ctx.config.get("allowedAccelerators") or []
    for label, pool in pools_in(ctx.type, props) if allowed else ():
        if pool.accelerator and pool.accelerator not in allowed and not (pool.accelerator == "tpu" and any(a.startswith("tpu") for a in allowed)):
            yield f"{label}accelerator {pool.accelerator} is not allowed here; allowed: {', '.join(allowed)}"


@rule("gpu-cap-per-pool", "Checks whether a node pool can grow to at most maxGpusPerPool accelerators.",
      severity="high", types=POOL_HOLDERS, remediation="Lower max nodes or raise maxGpusPerPool in the policy config.", frameworks=COST,
      config={"maxGpusPerPool": {"type": "integer", "default": 64, "description": "Most accelerators one pool may scale to."}})
def gpu_cap_pool(props: Any, ctx: Context) -> Iterator[str]:
    cap = int(ctx.config.get("maxGpusPerPool", 64))
    for label, pool in pools_in(ctx.type, props):
        if pool.accelerator and pool.per_node * pool.max_nodes > cap:
            yield f"{label}pool can scale to {pool.per_node * pool.max_nodes} accelerators ({pool.max_nodes} x {pool.per_node}); the cap is {cap}"


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
    unknowns = Unknowns()  # pools that can't be counted in preview only add to the total: the known ones may do
    for r in resources:
        if r.resource_type in POOL_HOLDERS:
            with unknowns.skip():
                total += sum(p.per_node * p.max_nodes for _, p in pools_in(r.resource_type, r.props) if p.accelerator)
    if total > cap:
        yield "", f"accelerator pools can scale to {total} accelerators in total; the environment cap is {cap}"
    unknowns.raise_first()


GLOBAL_SERVICES = ("aws:iam/", "aws:route53/", "aws:cloudfront/", "aws:globalaccelerator/", "aws:organizations/",
                   "aws:shield/", "gcp:serviceaccount/", "gcp:projects/", "gcp:organizations/", "gcp:folder/")
"""Types of global services: they have no region, so the provider's region says nothing about where they live."""


def _region(props: Any, provider: Any, type_: str = "") -> str | None:
    """The resource's region, zone or location, else its provider's (`region` for aws and gcp, `location` for
    azure-native); an unknown one raises Unknown."""
    for key in ("region", "location", "zone"):
        value = need(props, key)
        if isinstance(value, str):
            return value.lower()
    if type_.startswith(GLOBAL_SERVICES) or provider is None:
        return None
    value = _first(provider, "region", "location")
    return value.lower() if isinstance(value, str) else None


def _provider_props(resource: Any) -> Any:
    provider = getattr(resource, "provider", None)
    return provider.props if provider is not None else None


def _within(region: str, allowed: list[str]) -> bool:
    """Whether a region, or a zone of it (europe-west4-b, us-east-1a), is one of `allowed`."""
    return any(region == a or region.startswith(a + "-") or (region[:-1] == a and region[-1:].isalpha()) for a in allowed)


@rule("data-residency", "Checks whether every regional resource is in an allowed region.",
      severity="critical", remediation="Move the resource to an allowed region or extend allowedRegions.",
      frameworks={"GDPR": ("Art.44",), "HIPAA": ("164.308(b)",), "SOC2": ("C1.1",), "NIST-800-53": ("SA-9(5)",)},
      config=ALLOWED_REGIONS)
def residency(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    allowed = [r.lower() for r in ctx.config.get("allowedRegions") or []]
    if not allowed:
        return
    unknowns = Unknowns()  # e.g. `location=resource_group.location` of a group whose location is not yet known
    for r in resources:
        if r.resource_type.startswith(("pulumi:", "kubernetes:")):
            continue
        with unknowns.skip():
            region = _region(r.props, _provider_props(r), r.resource_type)
            if region is None or region == "global" or region in ("us", "eu", "asia"):
                continue
            if not _within(region, allowed):
                yield r.urn, f"region {region} is outside the allowed regions {', '.join(allowed)}"
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
            if zone and region and zone in zones and not _within(region, [z.lower() for z in zones[zone]]):
                yield r.urn, f"data-zone {zone} data is in {region}; allowed: {', '.join(zones[zone])}"
    unknowns.raise_first()
