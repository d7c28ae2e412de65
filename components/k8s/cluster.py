"""What the Kubernetes layer sees of a cluster: its accelerator pools resolved against the catalog (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from components.spec import (
    CapacityType,
    Cloud,
    GpuDriver,
    GpuSharing,
    NODE_LABEL_PREFIX,
    RegionSpec,
    Taint,
    TpuMode,
    accelerator_taint,
    resolve_gpu_pool,
    resolve_tpu,
)
from components.spec.common import RESERVED_NAMESPACES
from components.spec.resolve import AKS_SPOT_TAINT

# Namespaces the layer installs into. Team namespaces may not take these names (see `RESERVED_NAMESPACES`).
GPU_NAMESPACE = "gpu-operator"
"""NVIDIA GPU Operator, or on GKE the standalone DCGM exporter, and their configs."""
KUEUE_NAMESPACE = "kueue-system"
MONITORING_NAMESPACE = "monitoring"
NEURON_NAMESPACE = "kube-system"
"""The Neuron chart puts its device plugin in kube-system whatever the release namespace."""
assert {GPU_NAMESPACE, KUEUE_NAMESPACE, MONITORING_NAMESPACE} <= RESERVED_NAMESPACES

NVIDIA_GPU = "nvidia.com/gpu"
NEURON_DEVICE = "aws.amazon.com/neuron"
NEURON_CORE = "aws.amazon.com/neuroncore"
"""The Neuron device plugin registers both: whole devices, and NeuronCores (awsdocs-neuron, "Neuron Device Plugin")."""
TPU_CHIP = "google.com/tpu"
# NeuronCores the device plugin advertises per Neuron device, by catalog accelerator (the catalog has no such column).
# Trainium and Inferentia2: two NeuronCore-v2 per chip (awsdocs-neuron, about-neuron/arch/neuron-hardware/trainium.rst
# and inferentia2.rst; Karpenter's instance-types.md: trn1.32xlarge 16 devices / 32 cores, inf2.48xlarge 12 / 24).
# Trainium2: eight physical NeuronCore-v3, exposed as four logical cores under the default Logical NeuronCore config
# LNC=2 ("a Trn2.48xlarge instance presents 64 available NeuronCores", about-neuron/arch/neuron-features/
# logical-neuroncore-config.rst; EKS nodes keep LNC=2 unless their user data sets /opt/aws/neuron/logical_nc_config,
# which the device plugin mounts; ours don't). Should a node run LNC=1 (128 cores), the quota stays the stricter one.
NEURON_CORES_PER_DEVICE = {"trainium": 2, "trainium2": 4, "inferentia2": 2}

# Node labels every cloud component puts on accelerator pools (components.spec.accelerator_node_labels).
POOL_LABEL = f"{NODE_LABEL_PREFIX}/pool"
ACCELERATOR_LABEL = f"{NODE_LABEL_PREFIX}/accelerator"
CAPACITY_LABEL = f"{NODE_LABEL_PREFIX}/capacity"
# GKE's own TPU and spot node labels (GKE sets them; TPU pools carry no ai-infra labels).
GKE_TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
GKE_TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"


@dataclass(frozen=True)
class GpuPool:
    """A GPU or Neuron node pool, resolved against the catalog."""

    name: str
    accelerator: str
    """Catalog accelerator, e.g. "h100-80gb"; the value of the `ai-infra/accelerator` node label."""
    vendor: str
    """"nvidia" or "aws-neuron"."""
    per_node: int
    """Accelerator devices per node."""
    max_nodes: int
    capacity: CapacityType
    sharing: GpuSharing
    driver: GpuDriver
    taints: tuple[Taint, ...]
    """Every taint on the pool's nodes: the accelerator taint, the pool's own, and a cloud's spot taint."""
    mig_profiles: tuple[str, ...]
    """MIG profiles the GPU offers (empty for GPUs without MIG)."""

    @property
    def devices(self) -> int:
        """Accelerator devices at the pool's maximum size."""
        return self.per_node * self.max_nodes

    @property
    def nvidia(self) -> bool:
        return self.vendor == "nvidia"

    @property
    def neuron_cores_per_device(self) -> int:
        """NeuronCores the device plugin advertises per device (`NEURON_CORES_PER_DEVICE`); 0 for NVIDIA GPUs."""
        if self.nvidia:
            return 0
        if self.accelerator not in NEURON_CORES_PER_DEVICE:
            known = ", ".join(sorted(NEURON_CORES_PER_DEVICE))
            raise ValueError(f"gpu_pools.{self.name}.accelerator: no NeuronCore count per device is known for Neuron "
                             f"accelerator '{self.accelerator}'; known: {known} (components/k8s/cluster.py)")
        return NEURON_CORES_PER_DEVICE[self.accelerator]


@dataclass(frozen=True)
class TpuPool:
    """A GKE TPU slice set (the `slices` identical slices of a TpuSliceSpec)."""

    name: str
    gke_accelerator: str
    """GKE accelerator label value, e.g. "tpu-v5p-slice"."""
    topology: str
    chips: int
    """Chips of all slices together."""
    capacity: CapacityType


@dataclass(frozen=True)
class ClusterView:
    cloud: Cloud
    gpu_pools: tuple[GpuPool, ...]
    tpu_pools: tuple[TpuPool, ...]
    system_nodes: int = 0
    """Most nodes of the cluster's system (CPU) pool: `cluster.system_pool.max_nodes`."""

    @property
    def nvidia_pools(self) -> tuple[GpuPool, ...]:
        return tuple(p for p in self.gpu_pools if p.nvidia)

    @property
    def neuron_pools(self) -> tuple[GpuPool, ...]:
        return tuple(p for p in self.gpu_pools if not p.nvidia)


def cluster_view(cloud: Cloud, spec: RegionSpec) -> ClusterView:
    """The accelerator pools of a region's cluster. TPU slices in modes `tpu_vm` and `queued_resource` are outside the cluster."""
    gpu_pools = []
    for name, pool in spec.gpu_pools.items():
        row = resolve_gpu_pool(cloud, pool)
        key, value, effect = accelerator_taint(row)
        taints = [Taint(key=key, value=value, effect=effect), *pool.taints]
        if cloud is Cloud.AZURE and pool.capacity is CapacityType.SPOT:
            taints.append(AKS_SPOT_TAINT)  # workloads and device daemons on spot GPUs must tolerate it
        gpu_pools.append(GpuPool(
            name=name, accelerator=row.accelerator, vendor=row.vendor, per_node=row.accelerator_count,
            max_nodes=pool.max_nodes, capacity=pool.capacity, sharing=pool.sharing, driver=pool.driver,
            taints=tuple(dict.fromkeys(taints)), mig_profiles=row.mig_profiles))
    tpu_pools = []
    for name, slice_ in spec.tpu_slices.items():
        if slice_.mode is not TpuMode.GKE:
            continue
        plan = resolve_tpu(slice_)
        tpu_pools.append(TpuPool(name=name, gke_accelerator=plan.gke_accelerator, topology=plan.topology,
                                 chips=plan.chips * slice_.slices, capacity=slice_.capacity))
    system_nodes = spec.cluster.system_pool.max_nodes if spec.cluster is not None else 0
    return ClusterView(cloud=cloud, gpu_pools=tuple(gpu_pools), tpu_pools=tuple(tpu_pools), system_nodes=system_nodes)


def tolerations(taints: list[Taint] | tuple[Taint, ...]) -> list[dict[str, str]]:
    """Tolerations (wire form) for each distinct taint key and effect, whatever the value."""
    keys = dict.fromkeys((t.key, t.effect) for t in taints)
    return [{"key": key, "operator": "Exists", "effect": effect} for key, effect in keys]

