"""Accelerator enablement on a cluster: the NVIDIA GPU Operator (or, on GKE, GKE's own GPU stack plus a standalone
DCGM exporter), MIG and time-slicing configs, and the AWS Neuron and EFA device plugins.

TPU pools need nothing here: GKE installs the TPU runtime and advertises `google.com/tpu` itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.spec import AddonsSpec, Cloud

from . import charts
from .cluster import GPU_NAMESPACE, NEURON_NAMESPACE, ClusterView
from .gpu_values import (
    efa_values,
    gpu_operator_values,
    neuron_values,
    standalone_dcgm_values,
    uses_gpu_operator,
    uses_standalone_dcgm,
)
from .objects import child_opts, config_map, namespace
from .sharing import DEVICE_PLUGIN_CONFIGMAP, MIG_CONFIGMAP, device_plugin_configs, mig_parted_config, operator_partitions_mig

# GKE admits pods of the system-node-critical/system-cluster-critical priority classes outside kube-system only
# in namespaces with a ResourceQuota scoped to them (NVIDIA's GKE guide creates this quota for the operator);
# the operator's DaemonSets, NFD and the dcgm-exporter chart use system-node-critical. A pod over the quota is refused
# at creation, so the quota must hold every such pod at the pools' largest size (`gke_critical_pods`).
CRITICAL_PRIORITY_CLASSES = ["system-node-critical", "system-cluster-critical"]
OPERATOR_PODS_PER_GPU_NODE = 9
"""GPU Operator v26.7.0 pods on each GPU node (deployments/gpu-operator/values.yaml; `daemonsets.priorityClassName:
system-node-critical`): driver (when it installs the driver), container toolkit, device plugin, DCGM exporter, GPU
feature discovery, MIG manager and the operator validator DaemonSets, plus the CUDA and plugin validation pods the
validator starts on a new node. Node status exporter, DCGM host engine, GDS, GDRCopy and the sandbox/vGPU operands
are off."""
OPERATOR_CLUSTER_PODS = 3
"""The operator Deployment and NFD's master and garbage collector (the NFD subchart's `priorityClassName:
system-node-critical` covers all three NFD workloads)."""
STANDALONE_PODS_PER_GPU_NODE = 1
"""The dcgm-exporter chart's DaemonSet pod, without the operator."""
CRITICAL_HEADROOM = 0.25
"""Spare quota for pods that briefly overlap (a DaemonSet pod replaced while the old one terminates, a rescheduled
Deployment pod), at least `CRITICAL_HEADROOM_MIN`."""
CRITICAL_HEADROOM_MIN = 10
EFA_NAMESPACE = "kube-system"


def gke_critical_pods(view: ClusterView, addons: AddonsSpec) -> int:
    """Pods of the GPU namespace in the critical priority classes at the pools' maximum size: per GPU node the
    operator's operands (or the standalone exporter), an NFD worker on every node it tolerates (the system pool and
    the GPU pools; TPU nodes' taint keeps it off), the cluster-wide Deployments, and headroom."""
    gpu_nodes = sum(p.max_nodes for p in view.nvidia_pools)
    if uses_gpu_operator(view, addons):
        pods = gpu_nodes * OPERATOR_PODS_PER_GPU_NODE + (gpu_nodes + view.system_nodes) + OPERATOR_CLUSTER_PODS
    else:
        pods = gpu_nodes * STANDALONE_PODS_PER_GPU_NODE
    return pods + max(CRITICAL_HEADROOM_MIN, math.ceil(pods * CRITICAL_HEADROOM))


@dataclass(frozen=True)
class AcceleratorsArgs:
    view: ClusterView
    """The cluster's accelerator pools."""
    addons: AddonsSpec
    """MIG strategy and whether GKE uses the GPU Operator."""
    cluster: pulumi.Resource
    """The cluster component: every object is `deleted_with` it."""
    node_pools: Sequence[pulumi.Resource] = ()
    """Accelerator node pools; the device stacks install after them. Default none."""
    service_monitors: bool = False
    """Let the exporter charts create ServiceMonitors (self-managed Prometheus, whose CRDs `monitoring_ready`
    installs). Default off (managed Prometheus scrapes through its own config)."""
    monitoring_ready: Sequence[pulumi.Resource] = ()
    """Resources that install the ServiceMonitor CRD. Default none."""
    efa_pools: Sequence[str] = ()
    """Names of the accelerator pools whose nodes have EFA interfaces (EKS): the EFA device plugin advertises
    `vpc.amazonaws.com/efa` on them. Default none."""


class Accelerators(pulumi.ComponentResource):
    """`ai-infra:kubernetes:Accelerators`. Children, as the pools need them: `<name>-gpu-namespace`,
    `-gpu-critical-quota` (GKE), `-mig-config`, `-device-plugin-config`, `-gpu-operator` or `-dcgm-exporter`,
    `-neuron`, and `-efa` (EKS pools with EFA). Nothing at all for a cluster with TPU pools only."""

    def __init__(self, name: str, args: AcceleratorsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:kubernetes:Accelerators", name, None, opts)
        view, addons = args.view, args.addons
        opts_for = lambda *deps: child_opts(self, args.cluster, [*args.node_pools, *deps])  # noqa: E731
        self.gpu_operator: k8s.helm.v3.Release | None = None
        self.dcgm_exporter: k8s.helm.v3.Release | None = None
        self.neuron: k8s.helm.v3.Release | None = None
        self.efa: k8s.helm.v3.Release | None = None
        operator = uses_gpu_operator(view, addons)
        standalone = uses_standalone_dcgm(view, addons)
        if operator or standalone:
            ns = namespace(f"{name}-gpu-namespace", GPU_NAMESPACE,
                           # Driver, toolkit and exporter pods are privileged; say so instead of relying on defaults.
                           {"pod-security.kubernetes.io/enforce": "privileged"}, opts_for())
            ready: list[pulumi.Resource] = [ns, *args.monitoring_ready]
            if view.cloud is Cloud.GCP:
                ready.append(self._critical_quota(name, args, ns))
            if operator:
                ready += self._operator_configs(name, args, ns)
                self.gpu_operator = charts.release(
                    f"{name}-gpu-operator", charts.GPU_OPERATOR, GPU_NAMESPACE,
                    gpu_operator_values(view, addons, args.service_monitors), opts_for(*ready),
                    release_name="gpu-operator")
            else:
                self.dcgm_exporter = charts.release(
                    f"{name}-dcgm-exporter", charts.DCGM_EXPORTER, GPU_NAMESPACE,
                    standalone_dcgm_values(view, args.service_monitors), opts_for(*ready),
                    release_name="dcgm-exporter")
        if view.neuron_pools:
            self.neuron = charts.release(f"{name}-neuron", charts.NEURON, NEURON_NAMESPACE, neuron_values(view),
                                         opts_for(), release_name="neuron")
        if args.efa_pools and view.cloud is Cloud.AWS:
            # Nothing else advertises `vpc.amazonaws.com/efa` (the cluster autoscaler is told the nodes have it);
            # Into kube-system, as the chart's README installs it (aws/eks-charts stable/aws-efa-k8s-device-plugin).
            self.efa = charts.release(f"{name}-efa", charts.EFA_DEVICE_PLUGIN, EFA_NAMESPACE,
                                      efa_values(view, args.efa_pools), opts_for(),
                                      release_name="aws-efa-k8s-device-plugin")
        self.register_outputs({
            "gpu_operator": self.gpu_operator is not None,
            "dcgm_exporter": self.dcgm_exporter is not None,
            "neuron_device_plugin": self.neuron is not None,
            "efa_device_plugin": self.efa is not None,
        })

    def _critical_quota(self, name: str, args: AcceleratorsArgs, ns: k8s.core.v1.Namespace) -> k8s.core.v1.ResourceQuota:
        return k8s.core.v1.ResourceQuota(
            f"{name}-gpu-critical-quota",
            metadata=k8s.meta.v1.ObjectMetaArgs(name="critical-pods", namespace=GPU_NAMESPACE),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(
                hard={"pods": str(gke_critical_pods(args.view, args.addons))},
                scope_selector=k8s.core.v1.ScopeSelectorArgs(match_expressions=[
                    k8s.core.v1.ScopedResourceSelectorRequirementArgs(
                        scope_name="PriorityClass", operator="In", values=CRITICAL_PRIORITY_CLASSES)])),
            opts=child_opts(self, args.cluster, [ns]))

    def _operator_configs(self, name: str, args: AcceleratorsArgs, ns: k8s.core.v1.Namespace) -> list[pulumi.Resource]:
        """The device plugin configs (whole GPUs by default, time-slicing/MPS per label) and, where the operator
        partitions MIG, the mig-parted layouts; the release points at both by name."""
        view, opts = args.view, child_opts(self, args.cluster, [ns])
        configs: list[pulumi.Resource] = [config_map(
            f"{name}-device-plugin-config", DEVICE_PLUGIN_CONFIGMAP, GPU_NAMESPACE,
            device_plugin_configs(view.nvidia_pools, args.addons.mig_strategy), opts)]
        if operator_partitions_mig(view.cloud, args.addons.gpu_operator_on_gke):
            configs.append(config_map(f"{name}-mig-config", MIG_CONFIGMAP, GPU_NAMESPACE,
                                      {"config.yaml": mig_parted_config(view.nvidia_pools)}, opts))
        return configs
