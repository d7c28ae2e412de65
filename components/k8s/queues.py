"""Kueue objects of a cluster (pure): ResourceFlavors per accelerator and capacity type, a ClusterQueue per team
in the environment's cohort, a LocalQueue per team namespace, and how a team's quota is split across flavors.

Quota model. A team's `gpu_quota` (GPUs; also Neuron devices on clusters with Neuron pools) and `tpu_quota`
(chips) apply on every cluster. On a cluster the team's GPUs are split across the GPU flavors in proportion to
each flavor's share of the cluster's GPUs at maximum pool size (largest remainder, so the parts add up to the
quota), then converted to the unit the flavor's quota is kept in: MIG instances or time-slicing replicas per GPU,
NeuronCores per Neuron device. A team that may borrow uses idle quota of the other teams in the cohort; one that
may not gets borrowingLimit 0.

Neuron. The device plugin advertises every Neuron device twice, as `aws.amazon.com/neuron` (devices) and as
`aws.amazon.com/neuroncore` (its cores); a quota on one would let a pod take the same hardware through the other.
Kueue therefore keeps Neuron quota in cores only: its config turns a device request into cores
(`resources.transformations`, strategy Replace), and the queues cover `aws.amazon.com/neuroncore`. Pods still
request what they like from the kubelet; the transformation changes only what Kueue charges.

Known limits of the Neuron quota:
- The namespace ResourceQuota (`admissible`, the ceiling for pods Kueue does not queue) counts the two resources
  separately, `requests.aws.amazon.com/neuron` in devices and `requests.aws.amazon.com/neuroncore` in cores, each up
  to the team's whole Neuron share: a team's pods outside Kueue can take both, so up to twice the hardware its quota
  names (ResourceQuota has no transformation; Kueue-queued workloads are charged once, in cores).
- The transformation has one factor per cluster (`neuron_transformation`): a cluster mixing Neuron accelerators with
  different cores per device (Trainium, 2; Trainium2, 4 under LNC=2) charges every device request at the largest, so
  a `aws.amazon.com/neuron` request on a trn1 node costs twice its cores in quota. Requesting
  `aws.amazon.com/neuroncore` instead is charged exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from components.spec import CapacityType, MigStrategy, Taint, TeamSpec

from .cluster import (
    ACCELERATOR_LABEL,
    CAPACITY_LABEL,
    GKE_SPOT_LABEL,
    GKE_TPU_ACCELERATOR_LABEL,
    GKE_TPU_TOPOLOGY_LABEL,
    NEURON_CORE,
    NEURON_DEVICE,
    POOL_LABEL,
    TPU_CHIP,
    ClusterView,
    tolerations,
)
from .sharing import device_resource, units_per_device

KUEUE_API = "kueue.x-k8s.io/v1beta2"
"""Served and stored since Kueue 0.15; v1beta1 is deprecated in the pinned 0.19 CRDs."""
DEFAULT_FLAVOR = "default-flavor"
"""The flavor of cpu and memory: no node labels, so it never steers pods."""
LOCAL_QUEUE = "default"
"""Kueue puts jobs without a `kueue.x-k8s.io/queue-name` label into the LocalQueue named `default`."""
KUEUE_EXCLUDED_RESOURCE_PREFIXES = ("vpc.amazonaws.com/efa", "ephemeral-storage")
"""Requested resources Kueue admits without quota. Kueue 0.19's default `quotaCheckStrategy: BlockUndeclared`
checks every requested resource, so one no ClusterQueue covers leaves the workload pending with "resource ...
unavailable in ClusterQueue" forever (kubernetes-sigs/kueue v0.19.2, apis/config/v1beta2/configuration_types.go `Resources`
~576-596; pkg/scheduler/flavorassigner/flavorassigner.go ~1071; pkg/workload/workload.go ~468 matches by plain
prefix). The queues cover cpu, memory and each flavor's unit (nvidia.com/gpu or MIG, NeuronCores, google.com/tpu),
not EFA interfaces or ephemeral storage. Neither Neuron resource is excluded: devices become cores
(`neuron_transformation`) and cores are counted."""
# Resource groups in a fixed order; a flavor belongs to exactly one group (a Kueue rule).
GROUPS = ("nvidia", "neuron", "tpu")
_TPU_TAINT = Taint(key=TPU_CHIP, value="present", effect="NoSchedule")


@dataclass(frozen=True)
class Flavor:
    name: str
    group: str
    """"nvidia", "neuron" or "tpu": the ClusterQueue resource group it belongs to."""
    resource: str
    """The resource its quota is kept in (`sharing.device_resource`)."""
    devices: int
    """GPUs, Neuron devices or TPU chips of the flavor at maximum pool size; the weight of the quota split."""
    units_per_device: int = 1
    """`resource` units per device: MIG instances or replicas per GPU, NeuronCores per Neuron device, else 1."""
    node_labels: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, str]] = field(default_factory=list)


def _capacity(capacity: CapacityType) -> str:
    return capacity.value.replace("_", "-")


def flavors(view: ClusterView, strategy: MigStrategy, gpu_operator_on_gke: bool = False) -> list[Flavor]:
    """One flavor per (accelerator, capacity type) in the cluster's pools, selecting nodes by the `ai-infra/accelerator`
    and `ai-infra/capacity` labels; where pools of one accelerator and capacity share GPUs differently (say one MIG,
    one whole), one flavor per pool instead, adding `ai-infra/pool`, so units are never mixed. TPU flavors select
    GKE's TPU accelerator and topology labels (and `gke-spot` for spot slices)."""
    result: list[Flavor] = []
    key = lambda p: (p.accelerator, p.capacity.value)  # noqa: E731
    for (accelerator, _), group in groupby(sorted(view.gpu_pools, key=key), key=key):
        pools = list(group)
        shape = {p: (device_resource(p, view.cloud, strategy, gpu_operator_on_gke), units_per_device(p)) for p in pools}
        uniform = len(set(shape.values())) == 1
        for members in ([pools] if uniform else [[p] for p in pools]):
            first = members[0]
            labels = {ACCELERATOR_LABEL: accelerator, CAPACITY_LABEL: first.capacity.value}
            name = f"{accelerator}-{_capacity(first.capacity)}"
            if not uniform:
                labels[POOL_LABEL] = first.name
                name = f"{name}-{first.name}"
            resource, units = shape[first]
            result.append(Flavor(
                name=name, group="nvidia" if first.nvidia else "neuron", resource=resource,
                devices=sum(p.devices for p in members), units_per_device=units, node_labels=labels,
                tolerations=tolerations([t for p in members for t in p.taints])))
    tkey = lambda p: (p.gke_accelerator, p.topology, p.capacity.value)  # noqa: E731
    for (accelerator, topology, _), group in groupby(sorted(view.tpu_pools, key=tkey), key=tkey):
        slices = list(group)
        capacity = slices[0].capacity
        labels = {GKE_TPU_ACCELERATOR_LABEL: accelerator, GKE_TPU_TOPOLOGY_LABEL: topology}
        if capacity is CapacityType.SPOT:
            labels[GKE_SPOT_LABEL] = "true"
        result.append(Flavor(
            name=f"{accelerator}-{topology}-{_capacity(capacity)}", group="tpu", resource=TPU_CHIP,
            devices=sum(s.chips for s in slices), node_labels=labels, tolerations=tolerations([_TPU_TAINT])))
    return result


def split_quota(total: int, weights: list[int]) -> list[int]:
    """`total` split in proportion to `weights` (largest remainder; ties to the earlier weight). Sums to `total`
    whenever some weight is positive; all zeros when `weights` are all zero."""
    weight_sum = sum(weights)
    if weight_sum == 0:
        return [0] * len(weights)
    exact = [total * w / weight_sum for w in weights]
    parts = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return parts


def team_shares(team: TeamSpec, flavor_list: list[Flavor]) -> dict[str, int]:
    """A team's nominal quota per flavor, in the flavor's units (see the module doc)."""
    shares: dict[str, int] = {}
    for group in GROUPS:
        members = [f for f in flavor_list if f.group == group]
        quota = team.tpu_quota if group == "tpu" else team.gpu_quota
        for flavor, devices in zip(members, split_quota(quota, [f.devices for f in members])):
            shares[flavor.name] = devices * flavor.units_per_device
    return shares


def resource_flavor(flavor: Flavor | None) -> dict[str, Any]:
    """A ResourceFlavor; `None` gives the default flavor (no node labels, no tolerations)."""
    spec: dict[str, Any] = {}
    if flavor is not None:
        spec = {"nodeLabels": dict(flavor.node_labels)}
        if flavor.tolerations:
            spec["tolerations"] = list(flavor.tolerations)
    return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor",
            "metadata": {"name": flavor.name if flavor else DEFAULT_FLAVOR}, "spec": spec}


_DECIMAL_SUFFIXES = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = {1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_INT64_MAX = 2**63 - 1


def quantity(amount: int) -> str:
    """A count as the canonical Kubernetes quantity, the string `resource.Quantity` prints for it (DecimalSI):
    trailing zeros move into the largest suffix whose exponent is a multiple of 3 (256 -> "256", 1000 -> "1k",
    1500 -> "1500"). Kueue's ClusterQueue webhook rewrites quotas to this form on create and pulumi-kubernetes does not
    normalise custom resources, so anything else shows as a change on the next `pulumi up` (kubernetes/apimachinery
    pkg/api/resource/quantity.go CanonicalizeBytes, amount.go AsCanonicalBytes)."""
    if not 0 <= amount <= _INT64_MAX:
        raise ValueError(f"quantity {amount} is out of range; allowed: 0 to {_INT64_MAX}")
    if amount == 0:
        return "0"
    exponent = 0
    while amount % 10 == 0:
        amount, exponent = amount // 10, exponent + 1
    shift = exponent % 3
    return f"{amount * 10 ** shift}{_DECIMAL_SUFFIXES[exponent - shift]}"


def bytes_quantity(amount: int) -> str:
    """Bytes as the canonical Kubernetes quantity of a binary (`Ki`..`Ei`) value: the largest power of 1024 that
    divides it (2048Gi -> "2Ti", 1536Gi -> "1536Gi", 1024Mi -> "1Gi"); below 1024 a plain number (same source as
    `quantity`: BinarySI under 1024 prints as DecimalSI, AsCanonicalBase1024Bytes)."""
    if not 0 <= amount <= _INT64_MAX:
        raise ValueError(f"quantity {amount} bytes is out of range; allowed: 0 to {_INT64_MAX}")
    if amount < 1024:
        return quantity(amount)
    power = 0
    while amount % 1024 == 0:
        amount, power = amount // 1024, power + 1
    return f"{amount}{_BINARY_SUFFIXES.get(power, '')}"


def gib_quantity(gib: int) -> str:
    """GiB as the canonical quantity (`bytes_quantity`)."""
    return bytes_quantity(gib * 2**30)


def _quota(name: str, nominal: str, can_borrow: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "nominalQuota": nominal}
    if not can_borrow:
        entry["borrowingLimit"] = "0"
    return entry


def cluster_queue(team_name: str, team: TeamSpec, flavor_list: list[Flavor], cohort: str) -> dict[str, Any]:
    """The team's ClusterQueue: admits only from the team's namespace; cpu/memory on the default flavor; one
    resource group per accelerator kind in which every flavor lists every covered resource (0 where it has none)."""
    groups: list[dict[str, Any]] = [{
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": DEFAULT_FLAVOR, "resources": [
            _quota("cpu", quantity(team.cpu_quota), team.can_borrow),
            _quota("memory", gib_quantity(team.memory_gib_quota), team.can_borrow)]}],
    }]
    shares = team_shares(team, flavor_list)
    for group in GROUPS:
        members = [f for f in flavor_list if f.group == group]
        if not members:
            continue
        covered = sorted({f.resource for f in members})
        groups.append({"coveredResources": covered, "flavors": [
            {"name": f.name, "resources": [
                _quota(r, quantity(shares[f.name] if r == f.resource else 0), team.can_borrow) for r in covered]}
            for f in members]})
    return {
        "apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": team_name},
        "spec": {
            "cohortName": cohort,
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team_name}},
            "queueingStrategy": "BestEffortFIFO",
            # Lent quota comes back by preempting borrowers; inside the queue higher priority wins.
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": groups,
        },
    }


def local_queue(team_name: str) -> dict[str, Any]:
    return {"apiVersion": KUEUE_API, "kind": "LocalQueue",
            "metadata": {"name": LOCAL_QUEUE, "namespace": team_name}, "spec": {"clusterQueue": team_name}}


def admissible(team_name: str, teams: dict[str, TeamSpec], flavor_list: list[Flavor]) -> dict[str, int]:
    """The most of each resource Kueue could admit for a team: its nominal quota, or with borrowing the cohort's
    total. Memory in GiB; Neuron both in cores and in devices. The namespace ResourceQuota uses it as a ceiling for pods
    that bypass Kueue."""
    def nominal(team: TeamSpec) -> dict[str, int]:
        totals = {"cpu": team.cpu_quota, "memory": team.memory_gib_quota}
        shares = team_shares(team, flavor_list)
        for flavor in flavor_list:
            totals[flavor.resource] = totals.get(flavor.resource, 0) + shares[flavor.name]
            if flavor.resource == NEURON_CORE:  # and the same hardware counted in devices
                totals[NEURON_DEVICE] = totals.get(NEURON_DEVICE, 0) + shares[flavor.name] // flavor.units_per_device
        return totals

    lenders = teams.values() if teams[team_name].can_borrow else [teams[team_name]]
    total: dict[str, int] = {}
    for team in lenders:
        for resource, amount in nominal(team).items():
            total[resource] = total.get(resource, 0) + amount
    return total


def neuron_transformation(flavor_list: list[Flavor]) -> dict[str, Any] | None:
    """Kueue's charge for a Neuron device request: `aws.amazon.com/neuron` replaced by that many devices' worth of
    `aws.amazon.com/neuroncore` (`ResourceTransformation`, kubernetes-sigs/kueue v0.19.2 apis/config/v1beta2/
    configuration_types.go: input, strategy Retain|Replace, outputs per unit of input; pkg/workload/workload.go
    applyResourceTransformations). One factor per cluster: where Neuron flavors differ in cores per device, the largest
    is taken, so a device is never charged less than it holds (devices of the smaller kind are overcharged). None
    without Neuron flavors."""
    cores = [f.units_per_device for f in flavor_list if f.resource == NEURON_CORE]
    if not cores:
        return None
    return {"input": NEURON_DEVICE, "strategy": "Replace", "outputs": {NEURON_CORE: str(max(cores))}}


def kueue_resources_config(flavor_list: list[Flavor]) -> dict[str, Any]:
    """The `resources` block of Kueue's Configuration (`Resources`, kubernetes-sigs/kueue v0.19.2
    apis/config/v1beta2/configuration_types.go): `excludeResourcePrefixes` (see `KUEUE_EXCLUDED_RESOURCE_PREFIXES`)
    and, on clusters with Neuron pools, the device-to-core `transformations`. The strategy stays the default
    BlockUndeclared (IgnoreUndeclared would refuse the prefixes, pkg/config/validation.go ~117)."""
    config: dict[str, Any] = {"excludeResourcePrefixes": list(KUEUE_EXCLUDED_RESOURCE_PREFIXES)}
    transformation = neuron_transformation(flavor_list)
    if transformation is not None:
        config["transformations"] = [transformation]
    return config
