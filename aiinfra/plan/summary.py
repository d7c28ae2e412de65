"""A readable plan summary: resources grouped by cloud, region and component, with the key facts."""

from __future__ import annotations

import datetime
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from components.catalog import find_instance, tpu_generations

from .diagnostics import render_diagnostics
from .masking import mask_secrets
from .runtime import UNKNOWN, PlanResult, ResourceRecord

Facts = Callable[[dict[str, Any]], str]


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return None if data == UNKNOWN else data


def _obj(data: Any, *path: str) -> dict[str, Any]:
    """The object at `path`; {} when it is missing or not an object (unknown, or a secret shown as `[secret]`)."""
    value = _get(data, *path)
    return value if isinstance(value, dict) else {}


def _items(data: Any, *path: str) -> list[Any]:
    """The list at `path`; [] when it is missing or not a list (unknown, or a secret shown as `[secret]`)."""
    value = _get(data, *path)
    return value if isinstance(value, list) else []


def _range(lo: Any, hi: Any) -> str:
    return f"{lo if lo is not None else '?'}..{hi if hi is not None else '?'} nodes"


def _with_accelerators(cloud: str, instance_type: Any) -> str:
    """`p5.48xlarge (8x h100-80gb)`: the catalog's accelerators of a known GPU/Neuron type, else the type alone."""
    row = find_instance(cloud, instance_type) if isinstance(instance_type, str) else None
    name = instance_type if instance_type is not None else "?"
    return f"{name} ({row.accelerator_count}x {row.accelerator})" if row is not None else str(name)


def _types_with_accelerators(cloud: str, types: list[Any]) -> str:
    """`g6.xlarge, g6.2xlarge (1x l4)` when every type has the same accelerators; else each with its own."""
    labels = [_with_accelerators(cloud, t) for t in types]
    suffixes = {label[len(str(t)):] for label, t in zip(labels, types)}
    if len(suffixes) == 1:
        return ", ".join(str(t) for t in types) + suffixes.pop()
    return ", ".join(labels)


def _aws_node_group(i: dict[str, Any]) -> str:
    types = _types_with_accelerators("aws", _items(i, "instanceTypes") or ["?"])
    sc = _obj(i, "scalingConfig")
    return f"{types} {_get(i, 'amiType') or ''} {_get(i, 'capacityType') or 'ON_DEMAND'} {_range(sc.get('minSize'), sc.get('maxSize'))}"


def _tpu_chips(machine_type: Any) -> tuple[str, int] | None:
    """(`tpu-v5p`, chips per VM) of a GKE TPU machine type, from the catalog's TPU table."""
    for generation in tpu_generations():
        for chips, name in generation.machine_types.items():
            if name == machine_type:
                return generation.accelerator, chips
    return None


def _slice_chips(topology: str) -> int | None:
    try:
        return math.prod(int(d) for d in topology.split("x"))
    except ValueError:
        return None


def _gcp_node_pool(i: dict[str, Any]) -> str:
    nc = _obj(i, "nodeConfig")
    machine = nc.get("machineType", "?")
    accels = ",".join(f"{a.get('count')}x {a.get('type')}" for a in _items(nc, "guestAccelerators") if isinstance(a, dict))
    tpu = _tpu_chips(machine)
    if tpu is not None:  # a TPU machine type names its chips only in its name: `ct5p-hightpu-4t`
        accels = f"({tpu[1]}x {tpu[0]})"
    auto = _obj(i, "autoscaling")
    count = _get(i, "nodeCount")
    size = _range(auto.get("totalMinNodeCount", auto.get("minNodeCount")), auto.get("totalMaxNodeCount", auto.get("maxNodeCount"))) if auto else f"{'?' if count is None else count} nodes"
    topo = _get(i, "placementPolicy", "tpuTopology")
    chips = _slice_chips(topo) if isinstance(topo, str) else None
    extra = f" tpu slice {topo}" + (f" ({chips} chips)" if chips else "") if topo else ""
    spot = " spot" if nc.get("spot") else ""
    return f"{machine} {accels}{extra}{spot} {size}".replace("  ", " ")


def _azure_agent_pool(i: dict[str, Any]) -> str:
    size = _with_accelerators("azure", _get(i, "vmSize"))
    return f"{size} {_get(i, 'scaleSetPriority') or 'Regular'} {_range(_get(i, 'minCount'), _get(i, 'maxCount'))}"


def _aks_cluster(i: dict[str, Any]) -> str:
    """Version, upgrade channel and privacy; then the pools the cluster resource itself creates (the system pool),
    sized as EKS and GKE system pools are."""
    text = (f"k8s {_get(i, 'kubernetesVersion') or 'AKS default'}, "
            f"upgrade channel={_get(i, 'autoUpgradeProfile', 'upgradeChannel') or 'none'}, "
            f"private={_get(i, 'apiServerAccessProfile', 'enablePrivateCluster')}")
    for pool in _items(i, "agentPoolProfiles"):
        if not isinstance(pool, dict):
            continue
        nodes = (_range(pool.get("minCount"), pool.get("maxCount")) if pool.get("enableAutoScaling")
                 else f"{pool.get('count', '?')} nodes")
        mode, name = str(pool.get("mode") or "user").lower(), pool.get("name", "?")
        label = f"{mode} pool" + (f" {name}" if name != mode else "")
        text += f"; {label}: {_with_accelerators('azure', pool.get('vmSize'))} {nodes}"
    return text


def _gke_cluster(i: dict[str, Any]) -> str:
    """Privacy and channel, then the weekly maintenance window (day, UTC start, hours) the channel's upgrades wait for."""
    text = f"private endpoint={_get(i, 'privateClusterConfig', 'enablePrivateEndpoint')}, channel={_get(i, 'releaseChannel', 'channel')}"
    window = _get(i, "maintenancePolicy", "recurringWindow")
    if isinstance(window, dict) and all(isinstance(window.get(k), str) for k in ("startTime", "endTime", "recurrence")):
        try:
            start, end = (datetime.datetime.fromisoformat(window[k].replace("Z", "+00:00")) for k in ("startTime", "endTime"))
            hours = (end - start) // datetime.timedelta(hours=1)
        except (ValueError, TypeError):  # unknown until apply, `[secret]`, or one time with a zone and one without
            return text + ", maintenance window ?"
        text += f", maintenance {window['recurrence'].rpartition('BYDAY=')[2]} {start:%H:%M} UTC for {hours} h"
    return text


def _aks_maintenance(i: dict[str, Any]) -> str:
    """An AKS planned-maintenance schedule: its weekly window."""
    return (f"{_get(i, 'configName')}: {_get(i, 'maintenanceWindow', 'schedule', 'weekly', 'dayOfWeek')} "
            f"{_get(i, 'maintenanceWindow', 'startTime')} UTC for {_get(i, 'maintenanceWindow', 'durationHours')} h")


def _throughput(i: dict[str, Any]) -> str:
    """Provisioned throughput, when the resource sets one (FSx SCRATCH_2 has a fixed baseline and sets none)."""
    value = _get(i, "perUnitStorageThroughput")
    return f" {value} MB/s/TiB" if value is not None else ""


FACTS: dict[str, Facts] = {
    "aws:eks/cluster:Cluster": lambda i: f"k8s {_get(i, 'version') or 'default'}, public endpoint={_get(i, 'vpcConfig', 'endpointPublicAccess')}",
    "aws:eks/nodeGroup:NodeGroup": _aws_node_group,
    "aws:fsx/lustreFileSystem:LustreFileSystem": lambda i: f"{_get(i, 'storageCapacity')} GiB {_get(i, 'deploymentType')}{_throughput(i)}",
    "aws:ec2/vpc:Vpc": lambda i: f"{_get(i, 'cidrBlock')}",
    "gcp:container/cluster:Cluster": _gke_cluster,
    "gcp:container/nodePool:NodePool": _gcp_node_pool,
    "gcp:lustre/instance:Instance": lambda i: f"{_get(i, 'capacityGib')} GiB{_throughput(i)}",
    "gcp:tpu/v2QueuedResource:V2QueuedResource": lambda i: "TPU VM queued resource",
    "gcp:compute/network:Network": lambda i: "custom-mode VPC" if _get(i, "autoCreateSubnetworks") is False else "VPC",
    "azure-native:containerservice:ManagedCluster": _aks_cluster,
    "azure-native:containerservice:AgentPool": _azure_agent_pool,
    "azure-native:containerservice:MaintenanceConfiguration": _aks_maintenance,
    "azure-native:storagecache:AmlFilesystem": lambda i: f"{_get(i, 'storageCapacityTiB')} TiB {_get(i, 'sku', 'name')}",
    "azure-native:network:VirtualNetwork": lambda i: ",".join(map(str, _items(i, "addressSpace", "addressPrefixes"))),
    "kubernetes:helm.sh/v3:Release": lambda i: f"{_get(i, 'chart')} {_get(i, 'version')}",
    # Load balancers and the global endpoint: who can reach them and where traffic goes.
    "aws:lb/loadBalancer:LoadBalancer": lambda i: f"{_get(i, 'loadBalancerType') or 'application'}, internal={_get(i, 'internal')}",
    "aws:globalaccelerator/endpointGroup:EndpointGroup": lambda i: f"{_get(i, 'endpointGroupRegion')}, "
    f"traffic dial {_get(i, 'trafficDialPercentage') if _get(i, 'trafficDialPercentage') is not None else 100}%",
    "gcp:compute/backendService:BackendService": lambda i: f"{_get(i, 'loadBalancingScheme')} {_get(i, 'protocol')}",
    "azure-native:cdn:AFDOrigin": lambda i: f"{_get(i, 'hostName')}"
    + (f" through Private Link in {region}" if (region := _get(i, 'sharedPrivateLinkResource', 'privateLinkLocation')) else ""),
    "kubernetes:core/v1:Service": lambda i: f"{_get(i, 'metadata', 'namespace')}/{_get(i, 'metadata', 'name')} "
    f"{_get(i, 'spec', 'type') or 'ClusterIP'} :{','.join(str(_get(p, 'port')) for p in _items(i, 'spec', 'ports'))}"
    + (", internal" if _get(i, 'metadata', 'annotations', 'service.beta.kubernetes.io/azure-load-balancer-internal') == "true" else ""),
    "kubernetes:core/v1:PersistentVolumeClaim": lambda i: f"{_get(i, 'metadata', 'namespace')}/{_get(i, 'metadata', 'name')} "
    f"{_get(i, 'spec', 'resources', 'requests', 'storage')}",
}
COUNTED = {
    "aws:s3/bucket:Bucket": ("bucket", "buckets"),
    "aws:s3/bucketV2:BucketV2": ("bucket", "buckets"),
    "gcp:storage/bucket:Bucket": ("bucket", "buckets"),
    "azure-native:storage:BlobContainer": ("container", "containers"),
    "aws:kms/key:Key": ("KMS key", "KMS keys"),
    "gcp:kms/cryptoKey:CryptoKey": ("KMS key", "KMS keys"),
    "azure-native:keyvault:Key": ("Key Vault key", "Key Vault keys"),
    "kubernetes:core/v1:Namespace": ("namespace", "namespaces"),
}


@dataclass
class Group:
    component: ResourceRecord
    resources: list[ResourceRecord] = field(default_factory=list)

    @property
    def cloud(self) -> str:
        parts = self.component.type.split(":")
        return parts[1] if self.component.type.startswith("ai-infra:") else parts[0]

    def region(self, known: set[str]) -> str:
        """The region named in the component's name (`<env>-<region>-...`), else the most common input region."""
        for region in sorted(known, key=len, reverse=True):
            if f"-{region}" in f"-{self.component.name}-" or self.component.name.startswith(f"{region}-"):
                return region
        regions = Counter(r for res in self.resources if (r := _region_of(res)))
        return regions.most_common(1)[0][0] if regions else "global"


PROVIDER_PREFIX = "pulumi:providers:"


def _region_of(record: ResourceRecord) -> str | None:
    """A resource's region or location input, lower-cased (GCS writes US-CENTRAL1); zones map to their region."""
    for key in ("region", "location"):
        value = record.inputs.get(key)
        if isinstance(value, str) and value != UNKNOWN:
            value = value.lower()
            return value[:-2] if len(value) > 2 and value[-2] == "-" and value[-1].isalpha() and value[-3].isdigit() else value
    return None


def group_resources(plan: PlanResult) -> tuple[list[Group], list[ResourceRecord]]:
    """Custom resources grouped under their top-level component; the rest (providers, loose resources)."""
    by_urn = {r.urn: r for r in plan.resources}
    stack_urns = {r.urn for r in plan.resources if r.type == "pulumi:pulumi:Stack"}
    groups: dict[str, Group] = {}
    loose: list[ResourceRecord] = []
    for record in plan.resources:
        if not record.custom:
            continue
        top = record
        while top.parent and top.parent not in stack_urns and top.parent in by_urn:
            top = by_urn[top.parent]
        if top is record:
            loose.append(record)
        else:
            groups.setdefault(top.urn, Group(top)).resources.append(record)
    return list(groups.values()), loose


def render_summary(plan: PlanResult) -> str:
    groups, loose = group_resources(plan)
    custom = [r for r in plan.resources if r.custom]
    components = [r for r in plan.resources if not r.custom and r.type != "pulumi:pulumi:Stack"]
    lines = [f"Plan for {plan.project}/{plan.stack}: {_count(len(custom), 'resource', 'resources')} and "
             f"{_count(len(components), 'component', 'components')} to create, and the stack"]
    tree: dict[str, dict[str, list[Group]]] = defaultdict(lambda: defaultdict(list))
    known = {r for res in plan.resources if (r := _region_of(res)) and r != "global"}
    for group in groups:
        tree[group.cloud][group.region(known)].append(group)
    for cloud in sorted(tree):
        lines.append("")
        lines.append(f"{cloud}")
        for region in sorted(tree[cloud]):
            lines.append(f"  {region}")
            for group in sorted(tree[cloud][region], key=lambda g: (g.component.name, g.component.type)):
                lines.append(f"    {group.component.type.split(':')[-1]} {group.component.name}  ({_count(len(group.resources), 'resource', 'resources')})")
                lines += [f"      - {line}" for line in _facts(group.resources)]
    providers = [r for r in loose if r.type.startswith(PROVIDER_PREFIX)]
    loose = [r for r in loose if not r.type.startswith(PROVIDER_PREFIX)]
    if loose:
        lines.append("")
        lines.append("resources outside components")
        by_place: dict[tuple[str, str], list[ResourceRecord]] = defaultdict(list)
        for record in loose:
            by_place[(record.type.split(":")[0], _region_of(record) or "provider default region")].append(record)
        for (cloud, region), records in sorted(by_place.items()):
            lines.append(f"  {cloud} / {region}")
            lines += [f"    {count} x {kind}" for kind, count in sorted(Counter(r.type for r in records).items())]
            lines += [f"      - {line}" for line in _facts(records)]
    if providers:
        lines += ["", "providers"]
        kinds = Counter((r.type[len(PROVIDER_PREFIX):], _region_of(r) or "") for r in providers)
        lines += [f"  {n} x {package}" + (f", region {region}" if region else "") for (package, region), n in sorted(kinds.items())]
    stack = next((r.urn for r in plan.resources if r.type == "pulumi:pulumi:Stack"), "")
    lines += render_diagnostics(plan.diagnostics, stack)
    return "\n".join(lines)


def _facts(resources: list[ResourceRecord]) -> list[str]:
    lines = []
    for record in sorted(resources, key=lambda r: (r.name, r.type)):  # registration order varies from run to run
        extractor = FACTS.get(record.type)
        if extractor is not None:
            # Secrets read as `[secret]`, and a value known only after deploy as '?'.
            text = extractor(mask_secrets(record.inputs, marked=False)).replace(UNKNOWN, "?")
            lines.append(f"{record.type.split(':')[-1]} {record.name}: {' '.join(text.split())}")
    counts = Counter(COUNTED[r.type] for r in resources if r.type in COUNTED)
    if counts:
        lines.append(", ".join(_count(n, *what) for what, n in sorted(counts.items())))
    return lines


def _count(n: int, singular: str, plural: str) -> str:
    """`1 bucket`, `2 buckets`."""
    return f"{n} {singular if n == 1 else plural}"
