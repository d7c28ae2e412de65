"""Kubernetes workload rules: privileged or host-network pods, GPU limits, internal load balancers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .aws import EXPOSURE
from .props import get, items, need
from .registry import Context, rule

WORKLOADS = {
    "kubernetes:core/v1:Pod": "spec",
    "kubernetes:apps/v1:Deployment": "spec.template.spec",
    "kubernetes:apps/v1:StatefulSet": "spec.template.spec",
    "kubernetes:apps/v1:DaemonSet": "spec.template.spec",
    "kubernetes:apps/v1:ReplicaSet": "spec.template.spec",
    "kubernetes:batch/v1:Job": "spec.template.spec",
    "kubernetes:batch/v1:CronJob": "spec.jobTemplate.spec.template.spec",
}
ACCELERATORS = ("nvidia.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "google.com/tpu")
INTERNAL_ANNOTATIONS = {
    "service.beta.kubernetes.io/aws-load-balancer-internal": ("true",),
    "service.beta.kubernetes.io/aws-load-balancer-scheme": ("internal",),
    "networking.gke.io/load-balancer-type": ("Internal",),
    "cloud.google.com/load-balancer-type": ("Internal",),
    "service.beta.kubernetes.io/azure-load-balancer-internal": ("true",),
}


def _containers(props: Any, ctx: Context) -> tuple[Any, list[Any]]:
    pod = WORKLOADS[ctx.type]
    return get(props, pod, {}), list(items(props, f"{pod}.containers")) + list(items(props, f"{pod}.initContainers"))


@rule("k8s-no-privileged-pods", "Checks whether workloads avoid privileged containers and the host network.",
      severity="high", types=tuple(WORKLOADS), remediation="Drop securityContext.privileged and hostNetwork/hostPID; use device plugins for GPUs.",
      frameworks={"SOC2": ("CC6.8",), "PCI-DSS-v4": ("2.2.5",), "NIST-800-53": ("AC-6",), "CIS": ("K8s 5.2.2", "K8s 5.2.5")})
def privileged(props: Any, ctx: Context) -> Iterator[str]:
    pod, containers = _containers(props, ctx)
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if need(pod, host) is True:
            yield f"{host} is on"
    for c in containers:
        if need(c, "securityContext.privileged") is True:
            yield f"container {get(c, 'name', '?')} is privileged"


@rule("k8s-gpu-limits", "Checks whether containers that use accelerators set them as limits.",
      severity="medium", types=tuple(WORKLOADS), remediation="Set resources.limits for nvidia.com/gpu (or neuron/TPU); extended resources are scheduled from limits.",
      frameworks={"SOC2": ("A1.1",), "NIST-800-53": ("SC-6",)})
def gpu_limits(props: Any, ctx: Context) -> Iterator[str]:
    pod, containers = _containers(props, ctx)
    tolerates = any(get(t, "key") in ACCELERATORS for t in items(pod, "tolerations"))
    wants = False
    for c in containers:
        requests, limits = get(c, "resources.requests", {}) or {}, get(c, "resources.limits", {}) or {}
        for resource in ACCELERATORS:
            if resource in requests and resource not in limits:
                yield f"container {get(c, 'name', '?')} requests {resource} without a limit"
            wants = wants or resource in limits
    if tolerates and not wants:
        yield "tolerates the accelerator taint but requests no accelerator: it would squat on GPU nodes"


@rule("k8s-internal-load-balancer", "Checks whether LoadBalancer Services carry a cloud's internal annotation.",
      severity="high", types=("kubernetes:core/v1:Service",), remediation="Annotate the Service as internal and publish through the global endpoint.",
      frameworks={**EXPOSURE, "CIS": ("K8s 5.7.4",)})
def internal_lb(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "spec.type", "ClusterIP") != "LoadBalancer":
        return
    annotations = need(props, "metadata.annotations", {}) or {}
    if not any(str(annotations.get(key, "")) in values for key, values in INTERNAL_ANNOTATIONS.items()):
        yield "a LoadBalancer Service without an internal annotation gets a public address"
