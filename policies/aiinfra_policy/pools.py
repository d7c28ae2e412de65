"""What accelerators a resource can run, read from the inputs (or outputs) each cloud's API receives: node pools, Cloud
TPU slices, VMs, scale sets and autoscaling groups, GKE node auto-provisioning limits, and the launch templates and
instance templates they take their machine types from.

Pure: the accelerator rules (accelerators.py) read resources with it, and the AWS instance rules (aws_ec2.py) find the
launch template an instance names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .props import Unknown, get, is_unknown, items, named_entries, need, owner_of
from .tpu import TPU_QUEUED, TPU_VM, tpu_nodes, tpu_slice

EKS_POOL, GKE_POOL, AKS_POOL = "aws:eks/nodeGroup:NodeGroup", "gcp:container/nodePool:NodePool", "azure-native:containerservice:AgentPool"
POOLS = (EKS_POOL, GKE_POOL, AKS_POOL)
GKE_CLUSTER, AKS_CLUSTER = "gcp:container/cluster:Cluster", "azure-native:containerservice:ManagedCluster"
POOL_HOLDERS = (*POOLS, GKE_CLUSTER, AKS_CLUSTER)
"""Pool resources, and the clusters that declare pools inline (GKE `nodePools[]` and its default pool, AKS
`agentPoolProfiles[]`): the cloud creates those pools too, so the pool rules read them."""
EC2, EC2_SPOT, ASG = "aws:ec2/instance:Instance", "aws:ec2/spotInstanceRequest:SpotInstanceRequest", "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE, LAUNCH_CONFIGURATION = "aws:ec2/launchTemplate:LaunchTemplate", "aws:ec2/launchConfiguration:LaunchConfiguration"
GCE, WORKBENCH = "gcp:compute/instance:Instance", "gcp:workbench/instance:Instance"
GCE_TEMPLATES = ("gcp:compute/instanceTemplate:InstanceTemplate", "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate")
AZURE_VM, AZURE_VMSS = "azure-native:compute:VirtualMachine", "azure-native:compute:VirtualMachineScaleSet"
MACHINES = (EC2, EC2_SPOT, ASG, GCE, WORKBENCH, AZURE_VM, AZURE_VMSS)
"""VMs and groups of VMs outside any cluster: each is one pool of its machine type (an autoscaling group or scale set
of up to its maximum, the others of one VM)."""
TEMPLATES = (LAUNCH_TEMPLATE, LAUNCH_CONFIGURATION, *GCE_TEMPLATES)
"""Templates name a machine type and launch nothing by themselves: allowed-accelerators reads them, the caps count the
resources that launch from them."""
ACCELERATOR_HOLDERS = (*POOL_HOLDERS, TPU_VM, TPU_QUEUED, *MACHINES)
"""What the accelerator cost rules count: the pool holders (and GKE node auto-provisioning's limits), Cloud TPU VMs and
queued resources (one slice per VM or node spec), and the machines (no taint or dev-pool rule applies to those)."""
TEMPLATED = (EKS_POOL, EC2, EC2_SPOT, ASG)
"""Resources that may take their instance type from the launch template their `launchTemplate` names."""
_TPU_MACHINE = re.compile(r"^ct\w+-\w+-(\d+)t$")
GCP_GPU_MODELS = {
    "nvidia-tesla-t4": "t4", "nvidia-l4": "l4", "nvidia-tesla-a100": "a100-40gb", "nvidia-a100-80gb": "a100-80gb",
    "nvidia-h100-80gb": "h100-80gb", "nvidia-h100-mega-80gb": "h100-mega-80gb", "nvidia-h200-141gb": "h200-141gb",
    "nvidia-b200": "b200"}
"""Compute Engine accelerator types -> catalog model (the catalog's gcp_accelerator_type, which a test keeps equal).
A type not listed is named without its nvidia-/nvidia-tesla- prefix, so no catalog name allows it by accident."""
GKE_TPU_MODELS = {"tpu-v4-podslice": "tpu-v4", "tpu-v5-lite-podslice": "tpu-v5e", "tpu-v5-lite-device": "tpu-v5e",
                  "tpu-v5p-slice": "tpu-v5p", "tpu-v6e-slice": "tpu-v6e"}
"""GKE's TPU accelerator names (cloud.google.com/gke-tpu-accelerator, and node auto-provisioning's TPU resource
types) -> catalog model."""


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
    spot: bool | None
    """Whether its nodes are spot (preemptible) capacity; None when that is unknown during preview (only the dev-pool
    rule reads it)."""
    taints: list[str]
    zones: int = 1
    """Zones the pool's per-zone node counts were multiplied by (1 when its counts are totals)."""
    models: tuple[str, ...] = ()
    """Every model the pool may launch (an EKS node group lists several instance types); empty: just `accelerator`."""

    def scale(self) -> str:
        """How max_nodes x per_node came about, for messages."""
        nodes = f"{self.zones} zones x {self.max_nodes // self.zones}" if self.zones > 1 else str(self.max_nodes)
        return f"{nodes} x {self.per_node}"


class InTemplate(Unknown):
    """The resource takes its instance type from a launch template (or configuration), which one resource's props
    don't show: the accelerator rules judge it with the stack, where the template is (accelerators.py)."""


def gcp_gpu_model(accelerator_type: Any) -> str:
    """The catalog model of a Compute Engine accelerator type (`nvidia-h100-80gb`, a URL ending in one, or Workbench's
    `NVIDIA_H100_80GB`)."""
    name = str(accelerator_type).rsplit("/", 1)[-1].lower().replace("_", "-")
    return GCP_GPU_MODELS.get(name) or re.sub(r"^nvidia-(tesla-)?", "", name)


def machine_model(cloud: str, machine: Any) -> tuple[str | None, int]:
    """(model, accelerators per VM) of an instance type, VM size or machine type in the catalog; (None, 0) if none."""
    return _table().get(f"{cloud}:{str(machine or '').rsplit('/', 1)[-1]}", (None, 0))


def _is(props: Any, path: str, value: Any, default: Any) -> bool | None:
    """Whether the value at `path` (else `default`) is `value`; None when it is unknown."""
    found = get(props, path, default)
    return None if is_unknown(found) else found == value


def _aws_types(kinds: list[Any]) -> tuple[list[tuple[str, int]], str | None, int]:
    """(every catalog (model, count) among `kinds`, largest first; the largest's model and count)."""
    found = sorted((_table()[f"aws:{k}"] for k in kinds if f"aws:{k}" in _table()), key=lambda m: -m[1])
    model, count = found[0] if found else (None, 0)
    return found, model, count


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


def _gce_accelerator(machine: str, accelerators: list[Any], count_key: str) -> tuple[str | None, int]:
    """(model, per VM) of a Compute Engine VM: its guest accelerators, else what its machine type attaches (A2, A3, A4
    and G2 types come with their GPUs; TPU machine types with their chips)."""
    if accelerators:
        return gcp_gpu_model(need(accelerators[0], "type")), int(need(accelerators[0], count_key) or 1)
    if f"gcp:{machine}" in _table():  # the catalog names the GPU model or TPU generation (tpu-v5e, tpu-v5p, ...)
        return _table()[f"gcp:{machine}"]
    if (tpu := _TPU_MACHINE.match(machine)) is not None:
        return f"tpu ({machine})", int(tpu.group(1))  # a generation the catalog lacks: allowed by no name
    return None, 0


def template_ref(type_: str, props: Any) -> tuple[str, Any] | None:
    """(property, reference: the template's id or name, maybe unknown) of the launch template or configuration a
    resource takes its instance type from; None when it names its instance types itself or uses no template."""
    if type_ == ASG:
        policy = get(props, "mixedInstancesPolicy")
        if isinstance(policy, dict) and not is_unknown(policy):
            if [o for o in items(policy, "launchTemplate.overrides") if get(o, "instanceType")]:
                return None
            spec = get(policy, "launchTemplate.launchTemplateSpecification") or {}
            return "mixedInstancesPolicy", get(spec, "launchTemplateId") or get(spec, "launchTemplateName")
        if (configuration := get(props, "launchConfiguration")) is not None:
            return "launchConfiguration", configuration
    if type_ not in TEMPLATED:
        return None
    template, kinds = get(props, "launchTemplate"), get(props, "instanceTypes")
    if template is None or (type_ == EKS_POOL and kinds and not is_unknown(kinds)):
        return None  # EKS refuses an instance type in both places: the group's list is the one
    if is_unknown(template):
        return "launchTemplate", template
    return "launchTemplate", get(template, "id") or get(template, "name")


def find_template(holder: Any, prop: str, ref: Any, templates: list[Any]) -> Any:
    """The launch template (or configuration) `holder` names in `prop`, among the stack's `templates`, by its id,
    name or ARN (props.owner_of); None for a template outside the stack."""
    kind = LAUNCH_CONFIGURATION if prop == "launchConfiguration" else LAUNCH_TEMPLATE
    return owner_of(holder, prop, ref, [t for t in templates if t.resource_type == kind],
                    lambda t: {v for key in ("id", "name", "arn") if isinstance(v := get(t.props, key), str)})


def template_kind(prop: str) -> str:
    return "launch configuration" if prop == "launchConfiguration" else "launch template"


def outside_template(holder: Any, templates: list[Any]) -> str | None:
    """What an instance or spot request names in `launchTemplate` ("launch template lt-0abc") when that template is not
    among the stack's `templates`, so no rule sees its settings; None when it names none or the stack has it. Raises
    Unknown when the reference is unknown (an output of the same update) and no template of the stack matches."""
    template = get(holder.props, "launchTemplate")
    if template is None:
        return None
    ref = template if is_unknown(template) else get(template, "id") or get(template, "name")
    if find_template(holder, "launchTemplate", ref, templates) is not None:
        return None
    if is_unknown(ref):
        raise Unknown("launchTemplate: the launch template it names")
    return f"launch template {ref or '(no id or name)'}"


def _instance_types(type_: str, props: Any) -> list[Any]:
    """The instance types a resource names itself; InTemplate when it takes them from a launch template."""
    direct = {EKS_POOL: "instanceTypes", EC2: "instanceType", EC2_SPOT: "instanceType"}.get(type_)
    if direct is not None and (kinds := need(props, direct)):
        return list(items(props, direct)) if isinstance(kinds, list) else [kinds]
    if type_ == ASG:
        overrides = [need(o, "instanceType") for o in items(props, "mixedInstancesPolicy.launchTemplate.overrides")]
        if any(overrides):
            return [k for k in overrides if k]
    if (ref := template_ref(type_, props)) is not None:
        raise InTemplate(ref[0])
    return []


def pool_of(type_: str, props: Any, cluster: Any = None) -> Pool:
    """What a node pool carries (raises Unknown when it can't tell, InTemplate when its instance type is in a launch
    template); `cluster` is the props of the cluster that declares the pool inline, for a GKE pool's zones."""
    if type_ == EKS_POOL:
        # Any listed type may be launched: count the largest, and keep every model for allowed-accelerators. Neither
        # listed nor in a template: EKS's default t3.medium, no accelerators.
        found, model, count = _aws_types(_instance_types(type_, props))
        taints = [f"{need(t, 'key')}:{need(t, 'effect')}" for t in items(props, "taints")]
        return Pool(model, count, int(need(props, "scalingConfig.minSize", 0)), int(need(props, "scalingConfig.maxSize", 0)),
                    _is(props, "capacityType", "SPOT", "ON_DEMAND"), taints, models=tuple(dict.fromkeys(m for m, _ in found)))
    if type_ == GKE_POOL:
        machine = str(need(props, "nodeConfig.machineType", ""))
        model, count = _gce_accelerator(machine, list(items(props, "nodeConfig.guestAccelerators")), "count")
        low, high, zones = _gke_counts(props, cluster or {})
        taints = [f"{need(t, 'key')}:{need(t, 'effect')}" for t in items(props, "nodeConfig.taints")]
        if model and not model.startswith("tpu"):
            taints.append("nvidia.com/gpu:NO_SCHEDULE")  # GKE adds this taint to every GPU node pool itself
        flags = (_is(props, "nodeConfig.spot", True, False), _is(props, "nodeConfig.preemptible", True, False))
        return Pool(model, count, low, high, True if True in flags else None if None in flags else False, taints, zones)
    vm = str(need(props, "vmSize", ""))
    model, count = machine_model("azure", vm)
    taints = [str(t) for t in items(props, "nodeTaints")]
    low = need(props, "minCount", get(props, "count", 0))
    high = need(props, "maxCount", get(props, "count", 0))
    return Pool(model, count, int(low or 0), int(high or 0), _is(props, "scaleSetPriority", "Spot", "Regular"), taints)


def _tpu_pools(type_: str, props: Any) -> Iterator[tuple[str, Pool]]:
    """A TPU VM is one slice; a queued resource one per node spec (pulumi-gcp 10.2 gives its nodes acceleratorType
    only). A slice runs while it exists: min = max = 1 (spot is not read: no rule that reads it covers slices)."""
    for node_id, node in tpu_nodes(type_, props):
        label = "" if node_id is None else f"node {node_id}: "
        yield label, Pool(*tpu_slice(need(node, "acceleratorType"), need(node, "acceleratorConfig")), 1, 1, False, [])


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


def auto_provisioning(props: Any) -> Iterator[tuple[str, Pool]]:
    """GKE node auto-provisioning's accelerator limits: it creates node pools of any model it has a limit for, up to
    that many accelerators in the cluster (clusterAutoscaling.resourceLimits, `nvidia-*` GPUs and `tpu-*` slices).
    A preview's outputs carry clusterAutoscaling unknown when the program set none: none is set then."""
    autoscaling = get(props, "clusterAutoscaling")
    if autoscaling is None or is_unknown(autoscaling) or need(autoscaling, "enabled") is not True:
        return
    for limit in items(autoscaling, "resourceLimits"):
        kind = str(need(limit, "resourceType")).lower()
        if kind.startswith(("nvidia-", "tpu-")):
            model = gcp_gpu_model(kind) if kind.startswith("nvidia-") else GKE_TPU_MODELS.get(kind, f"tpu ({kind})")
            high = int(need(limit, "maximum") or 0)
            yield f"node auto-provisioning {kind}: ", Pool(model, 1, int(need(limit, "minimum") or 0), high, False, [])


def _machine(type_: str, props: Any) -> Pool:
    """One VM, or a group of up to its maximum, as a pool (taints and spot are not read: no rule reads them here)."""
    if type_ in (EC2, EC2_SPOT, ASG):
        found, model, count = _aws_types(_instance_types(type_, props))
        low, high = (int(need(props, "minSize") or 0), int(need(props, "maxSize") or 0)) if type_ == ASG else (1, 1)
        return Pool(model, count, low, high, False, [], models=tuple(dict.fromkeys(m for m, _ in found)))
    if type_ in (GCE, WORKBENCH, *GCE_TEMPLATES):
        setup = (need(props, "gceSetup") or {}) if type_ == WORKBENCH else props
        accelerators = "acceleratorConfigs" if type_ == WORKBENCH else "guestAccelerators"
        # An instance's outputs carry guestAccelerators unknown when the program set none: its machine type decides then.
        given = [] if is_unknown(get(setup, accelerators)) else list(items(setup, accelerators))
        machine = str(need(setup, "machineType") or "").rsplit("/", 1)[-1]
        model, count = _gce_accelerator(machine, given, "coreCount" if type_ == WORKBENCH else "count")
        return Pool(model, count, *((0, 0) if type_ in GCE_TEMPLATES else (1, 1)), False, [])
    if type_ == AZURE_VMSS:
        model, count = machine_model("azure", need(props, "sku.name"))
        capacity = int(need(props, "sku.capacity") or 0)
        return Pool(model, count, capacity, capacity, False, [])
    if type_ == AZURE_VM:
        return Pool(*machine_model("azure", need(props, "hardwareProfile.vmSize")), 1, 1, False, [])
    if type_ in (LAUNCH_TEMPLATE, LAUNCH_CONFIGURATION):
        return Pool(*machine_model("aws", need(props, "instanceType")), 0, 0, False, [])  # launches nothing itself
    raise ValueError(type_)


def accelerators_in(type_: str, props: Any, separate: frozenset[str] = frozenset(),
                    cluster: Any = None) -> Iterator[tuple[str, Pool]]:
    """(label, pool) of everything a resource can run accelerators on: its node pools (pools_in), GKE node
    auto-provisioning's limits, or the resource as one VM, group or template."""
    if type_ in POOL_HOLDERS or type_ in (TPU_VM, TPU_QUEUED):
        yield from pools_in(type_, props, separate, cluster)
        if type_ == GKE_CLUSTER:
            yield from auto_provisioning(props)
    else:
        yield "", _machine(type_, props)
