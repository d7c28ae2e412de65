"""GPU sharing on Kubernetes (pure): MIG layouts for the GPU Operator's MIG manager, time-slicing and MPS configs
for its device plugin, the node labels that pick a config per pool, and what one GPU becomes in schedulable units.

Who partitions or shares a GPU depends on the cloud:
- EKS: the GPU Operator does both, per pool, through the node labels of `sharing_node_labels`.
- AKS: AKS creates MIG instances itself (`gpuInstanceProfile`); time-slicing goes through the operator's device plugin.
- GKE: GKE's own MIG partitions and time-sharing/MPS, set on the node pool by the GCP components; the operator
  only when `addons.gpu_operator_on_gke` is on (then as on EKS).
"""

from __future__ import annotations

import yaml

from components.catalog import CatalogError
from components.spec import Cloud, GpuSharing, MigStrategy, SharingMode

from .cluster import NEURON_CORE, NVIDIA_GPU, GpuPool

MIG_CONFIGMAP = "ai-infra-mig-parted-config"
"""mig-parted config of the operator's MIG manager (key `config.yaml`)."""
DEVICE_PLUGIN_CONFIGMAP = "ai-infra-device-plugin-config"
"""Device plugin configs of the operator, one key per config name."""
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_DISABLED = "all-disabled"
"""MIG layout of every MIG-capable GPU without a label: MIG off."""
DEFAULT_DEVICE_PLUGIN_CONFIG = "default"
"""Device plugin config of every GPU node without a label: whole GPUs."""

# A100/H100/H200/B200 have 7 compute slices and 8 memory slices (NVIDIA MIG user guide, "Supported profiles").
_COMPUTE_SLICES = 7
_MEMORY_SLICES = 8


def operator_shares(cloud: Cloud, gpu_operator_on_gke: bool) -> bool:
    """Whether the GPU Operator's device plugin does time-slicing/MPS (everywhere but GKE without the operator)."""
    return cloud is not Cloud.GCP or gpu_operator_on_gke


def operator_partitions_mig(cloud: Cloud, gpu_operator_on_gke: bool) -> bool:
    """Whether the operator's MIG manager creates MIG instances (EKS; GKE with the operator; never AKS)."""
    return cloud is Cloud.AWS or (cloud is Cloud.GCP and gpu_operator_on_gke)


def mig_instances_per_gpu(profile: str, offered: tuple[str, ...]) -> int:
    """How many `profile` instances fit on one GPU, e.g. 3g.40gb on an H100 80GB -> 2, 1g.10gb -> 7, 1g.20gb -> 4.

    The bound is both the compute slices (g of 7) and the memory slices (the profile's memory over an eighth of
    the full `7g` profile's memory), whichever runs out first.
    """
    if profile not in offered:
        raise CatalogError(f"MIG profile '{profile}' is not offered; allowed: {', '.join(offered) or 'none'}")
    full = next((p for p in offered if p.startswith(f"{_COMPUTE_SLICES}g.")), None)
    if full is None:
        raise CatalogError(f"MIG profiles {', '.join(offered)} lack the full {_COMPUTE_SLICES}g profile")
    compute, memory = _parse(profile)
    memory_slice = _parse(full)[1] / _MEMORY_SLICES
    memory_slices = max(1, round(memory / memory_slice))
    return min(_COMPUTE_SLICES // compute, _MEMORY_SLICES // memory_slices)


def _parse(profile: str) -> tuple[int, int]:
    compute, memory = profile.split(".", 1)
    return int(compute.removesuffix("g")), int(memory.removesuffix("gb"))


def units_per_device(pool: GpuPool) -> int:
    """Units one device of the pool counts as in Kueue: MIG instances, time-slicing/MPS replicas, NeuronCores (Neuron
    quota is kept in cores, see `queues`), or 1."""
    if not pool.nvidia:
        return pool.neuron_cores_per_device
    sharing = pool.sharing
    if sharing.mode is SharingMode.MIG:
        assert sharing.mig_profile is not None  # the spec requires it with mode mig
        return mig_instances_per_gpu(sharing.mig_profile, pool.mig_profiles)
    if sharing.mode in (SharingMode.TIME_SLICING, SharingMode.MPS):
        assert sharing.replicas_per_gpu is not None
        return sharing.replicas_per_gpu
    return 1


def device_resource(pool: GpuPool, cloud: Cloud, strategy: MigStrategy, gpu_operator_on_gke: bool) -> str:
    """The extended resource Kueue counts a pool's quota in: what its pods request, `nvidia.com/mig-<profile>` for MIG
    under the `mixed` strategy (GKE's own MIG always advertises nvidia.com/gpu), else nvidia.com/gpu; for Neuron
    `aws.amazon.com/neuroncore`, into which Kueue's config turns device requests (`queues.kueue_resources_config`)."""
    if not pool.nvidia:
        return NEURON_CORE
    native_gke = cloud is Cloud.GCP and not gpu_operator_on_gke
    if pool.sharing.mode is SharingMode.MIG and strategy is MigStrategy.MIXED and not native_gke:
        return f"nvidia.com/mig-{pool.sharing.mig_profile}"
    return NVIDIA_GPU


def mig_config_name(accelerator: str, profile: str) -> str:
    """Name of a MIG layout: every GPU of the node split into `profile` (per accelerator: counts differ per GPU)."""
    return f"{accelerator}-{profile}"


def device_plugin_config_name(sharing: GpuSharing) -> str:
    return f"{sharing.mode.value.replace('_', '-')}-{sharing.replicas_per_gpu}"


def sharing_node_labels(cloud: Cloud, accelerator: str, sharing: GpuSharing, gpu_operator_on_gke: bool) -> dict[str, str]:
    """Node labels a cloud component puts on a GPU pool so the GPU Operator applies its MIG layout or sharing config.

    Empty where the cloud itself partitions or shares (AKS MIG, GKE without the operator) or the pool doesn't share.
    """
    if sharing.mode is SharingMode.MIG and operator_partitions_mig(cloud, gpu_operator_on_gke):
        assert sharing.mig_profile is not None
        return {MIG_CONFIG_LABEL: mig_config_name(accelerator, sharing.mig_profile)}
    if sharing.mode in (SharingMode.TIME_SLICING, SharingMode.MPS) and operator_shares(cloud, gpu_operator_on_gke):
        return {DEVICE_PLUGIN_CONFIG_LABEL: device_plugin_config_name(sharing)}
    return {}


def mig_parted_config(pools: tuple[GpuPool, ...]) -> str:
    """mig-parted config (`config.yaml`): `all-disabled` plus one layout per (accelerator, MIG profile) in use.

    It replaces the operator's generated default, so `all-disabled` (the default layout) must be present.
    """
    configs: dict[str, list[dict]] = {MIG_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for pool in pools:
        profile = pool.sharing.mig_profile
        if pool.sharing.mode is not SharingMode.MIG or profile is None:
            continue
        configs[mig_config_name(pool.accelerator, profile)] = [{
            "devices": "all", "mig-enabled": True,
            "mig-devices": {profile: mig_instances_per_gpu(profile, pool.mig_profiles)},
        }]
    return yaml.safe_dump({"version": "v1", "mig-configs": configs}, sort_keys=False)


def device_plugin_configs(pools: tuple[GpuPool, ...], strategy: MigStrategy) -> dict[str, str]:
    """Device plugin configs by name: `default` (whole GPUs, or MIG devices under the cluster's strategy) and one
    per time-slicing/MPS replica count in use. Replicas count against quota as nvidia.com/gpu."""
    configs = {DEFAULT_DEVICE_PLUGIN_CONFIG: {"version": "v1", "flags": {"migStrategy": strategy.value}}}
    for pool in pools:
        sharing = pool.sharing
        if sharing.mode not in (SharingMode.TIME_SLICING, SharingMode.MPS):
            continue
        key = "timeSlicing" if sharing.mode is SharingMode.TIME_SLICING else "mps"
        configs[device_plugin_config_name(sharing)] = {
            "version": "v1",
            "flags": {"migStrategy": "none"},
            "sharing": {key: {"resources": [{"name": NVIDIA_GPU, "replicas": sharing.replicas_per_gpu}]}},
        }
    return {name: yaml.safe_dump(config, sort_keys=False) for name, config in configs.items()}
