"""Helm values of the accelerator stack per cloud (pure): NVIDIA GPU Operator, standalone DCGM exporter (GKE),
AWS Neuron and EFA device plugins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.spec import AddonsSpec, Cloud, GpuDriver

from .cluster import NEURON_DEVICE, POOL_LABEL, ClusterView, GpuPool, tolerations
from .dcgm_metrics import OPERATOR_METRICS_CONFIGMAP, metrics_annotations, metrics_csv
from .sharing import (
    DEFAULT_DEVICE_PLUGIN_CONFIG,
    DEVICE_PLUGIN_CONFIGMAP,
    MIG_CONFIGMAP,
    MIG_DISABLED,
    operator_partitions_mig,
)

# GKE's driver installer puts the driver here; NVIDIA's GKE guide points the operator at it
# (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html, "Google driver installer").
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
_CONTROL_PLANE_TOLERATION = {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "",
                             "effect": "NoSchedule"}
# Name the GPU's node in every DCGM series, so dashboards and alerts group by `node` on every cloud.
NODE_RELABELING = {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"}


def uses_gpu_operator(view: ClusterView, addons: AddonsSpec) -> bool:
    """The operator runs where there are NVIDIA pools, except on GKE unless `gpu_operator_on_gke` asks for it."""
    return bool(view.nvidia_pools) and (view.cloud is not Cloud.GCP or addons.gpu_operator_on_gke)


def uses_standalone_dcgm(view: ClusterView, addons: AddonsSpec) -> bool:
    """GKE without the operator: GKE installs driver and device plugin, a standalone DCGM exporter gives metrics."""
    return bool(view.nvidia_pools) and view.cloud is Cloud.GCP and not addons.gpu_operator_on_gke


def dcgm_service_monitor(enabled: bool) -> dict[str, Any]:
    """ServiceMonitor settings for the exporter (both charts spell them alike). `honorLabels` keeps the exporter's
    own `namespace`/`pod` labels (the workload using the GPU, i.e. the team) instead of the exporter's."""
    return {"enabled": enabled, "interval": "30s", "honorLabels": True, "relabelings": [NODE_RELABELING]}


def _daemon_tolerations(pools: tuple[GpuPool, ...]) -> list[dict[str, str]]:
    return tolerations([t for p in pools for t in p.taints])


def gpu_operator_values(view: ClusterView, addons: AddonsSpec, service_monitor: bool) -> dict[str, Any]:
    """GPU Operator values for the cluster's NVIDIA pools.

    - driver: from the node image where the cloud installs it (EKS AL2023 NVIDIA AMI, AKS GPU driver install,
      GKE driver installer); the operator installs it when a pool says `driver: operator`. The operator skips
      nodes whose driver is pre-installed, so mixed clusters work.
    - toolkit: the EKS and AKS GPU images ship the NVIDIA container toolkit with the driver; the operator's
      toolkit runs where it installs the driver, and on GKE (whose nodes have no NVIDIA toolkit).
    - MIG: strategy from `addons.mig_strategy`; layouts from our mig-parted ConfigMap, picked per pool by the
      `nvidia.com/mig.config` node label. On AKS the MIG manager is off: AKS creates the MIG instances itself.
    - time-slicing/MPS: our device plugin ConfigMap, picked per pool by `nvidia.com/device-plugin.config`.
    - DCGM exporter: our metrics list (`dcgm_metrics`, with the XID counter the XID alert reads), in a ConfigMap the
      chart creates from `dcgmExporter.config`; its hash on the pods (`dcgmExporter.annotations`, the exporter pods'
      annotations) rolls them when the list changes.
    """
    pools = view.nvidia_pools
    operator_driver = any(p.driver is GpuDriver.OPERATOR for p in pools)
    toolkit = operator_driver or view.cloud is Cloud.GCP
    daemon_tolerations = _daemon_tolerations(pools)
    mig_manager = operator_partitions_mig(view.cloud, addons.gpu_operator_on_gke)
    values: dict[str, Any] = {
        "driver": {"enabled": operator_driver},
        "toolkit": {"enabled": toolkit},
        "mig": {"strategy": addons.mig_strategy.value},
        "migManager": {"enabled": mig_manager},
        "devicePlugin": {"config": {"create": False, "name": DEVICE_PLUGIN_CONFIGMAP,
                                    "default": DEFAULT_DEVICE_PLUGIN_CONFIG}},
        "dcgmExporter": {"enabled": True, "serviceMonitor": dcgm_service_monitor(service_monitor),
                         "config": {"name": OPERATOR_METRICS_CONFIGMAP, "create": True, "data": metrics_csv()},
                         "annotations": metrics_annotations()},
        "daemonsets": {"tolerations": daemon_tolerations},
        "node-feature-discovery": {"worker": {"tolerations": [_CONTROL_PLANE_TOLERATION, *daemon_tolerations]}},
    }
    if mig_manager:
        values["migManager"]["config"] = {"create": False, "name": MIG_CONFIGMAP, "default": MIG_DISABLED}
    if view.cloud is Cloud.GCP:
        # NVIDIA's GPU Operator MIG guide: on Google Cloud the node must reboot to apply a MIG layout.
        values["migManager"]["env"] = [{"name": "WITH_REBOOT", "value": "true"}]
        values["cdi"] = {"enabled": True}
        if not operator_driver:
            values["hostPaths"] = {"driverInstallDir": GKE_DRIVER_DIR}
            values["toolkit"]["installDir"] = GKE_DRIVER_DIR
    return values


def standalone_dcgm_values(view: ClusterView, service_monitor: bool) -> dict[str, Any]:
    """dcgm-exporter chart values for GKE nodes whose driver and device plugin GKE installs.

    As in Google's DCGM example for Managed Service for Prometheus (GoogleCloudPlatform/prometheus-engine,
    examples/nvidia-dcgm): GPU nodes only, the host's GKE driver directory mounted at /usr/local/nvidia with its
    libraries on LD_LIBRARY_PATH, privileged (no NVIDIA runtime injects /dev/nvidia*), and GPU IDs by device name
    (GKE's device plugin names GPUs nvidia0.., which the exporter maps to pods). `customMetrics`: our metrics list
    (`dcgm_metrics`, with the XID counter the XID alert reads) as the data of the chart's metrics ConfigMap, and its
    hash in `podAnnotations`, which rolls the pods when the list changes.
    """
    return {
        "serviceMonitor": dcgm_service_monitor(service_monitor),
        "customMetrics": metrics_csv(),
        "podAnnotations": metrics_annotations(),
        "tolerations": _daemon_tolerations(view.nvidia_pools),
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": GKE_ACCELERATOR_LABEL, "operator": "Exists"}]}]}}},
        # Replacing the chart's securityContext map merges key by key: allowPrivilegeEscalation must go to true,
        # or the API server rejects privileged with it false.
        "securityContext": {"privileged": True, "allowPrivilegeEscalation": True},
        "extraHostVolumes": [{"name": "nvidia-install-dir-host", "hostPath": GKE_DRIVER_DIR}],
        # Lists replace the chart's: keep its metrics-list mount.
        "extraVolumeMounts": [
            {"name": "exporter-metrics-volume", "mountPath": "/etc/dcgm-exporter/default-counters.csv",
             "subPath": "default-counters.csv"},
            {"name": "nvidia-install-dir-host", "mountPath": "/usr/local/nvidia", "readOnly": True},
        ],
        "extraEnv": [
            {"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"},
            {"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "device-name"},
        ],
    }


def neuron_values(view: ClusterView) -> dict[str, Any]:
    """Neuron chart values: the device plugin only (the Neuron docs install it with `npd.enabled=false`), tolerating
    any extra taints of the Neuron pools besides the chart's default `aws.amazon.com/neuron` toleration."""
    values: dict[str, Any] = {"npd": {"enabled": False}}
    extra = [t for p in view.neuron_pools for t in p.taints if t.key != NEURON_DEVICE]
    if extra:
        values["devicePlugin"] = {"tolerations": [
            {"key": "CriticalAddonsOnly", "operator": "Exists"},
            {"key": NEURON_DEVICE, "operator": "Exists", "effect": "NoSchedule"},
            *tolerations(extra)]}
    return values


def efa_values(view: ClusterView, efa_pools: Sequence[str]) -> dict[str, Any]:
    """aws-efa-k8s-device-plugin chart values (aws/eks-charts stable/aws-efa-k8s-device-plugin v0.5.30): the
    DaemonSet only on the EFA pools' nodes, tolerating their taints (the accelerator taint, the pool's own).

    The chart's node affinity is one `matchExpressions` term per `supportedInstanceLabels.keys` entry, `In` the
    listed values, plus `eks.amazonaws.com/compute-type NotIn [auto]` (templates/daemonset.yaml); keyed on the
    `ai-infra/pool` label it selects exactly the pools with EFA interfaces (the chart's default is every EFA-capable
    instance type, which includes pools without EFA). It already tolerates CriticalAddonsOnly."""
    pools = [p for p in view.gpu_pools if p.name in set(efa_pools)]
    return {
        "supportedInstanceLabels": {"keys": [POOL_LABEL], "values": [p.name for p in pools]},
        "tolerations": tolerations([t for p in pools for t in p.taints]),
    }
