"""Kubernetes workload rules: privileged or host-network pods, GPU limits, internal load balancers, NodePort Services."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .aws import EXPOSURE
from .props import Unknown, get, is_unknown, items, need, raw
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
AWS_SCHEME, AWS_INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-scheme", "service.beta.kubernetes.io/aws-load-balancer-internal"
AWS_LB_TYPE, AWS_LBC_CLASS = "service.beta.kubernetes.io/aws-load-balancer-type", "service.k8s.aws/nlb"
"""The AWS Load Balancer Controller takes a Service with its class, or type annotation `external` or `nlb-ip`, and makes
its NLB internal unless the scheme annotation (or the deprecated internal: "false") says internet-facing: "If not
specified, default is `internal`" (docs/guide/service/annotations.md; buildLoadBalancerScheme in
pkg/service/model_build_load_balancer.go). The scheme annotation wins over the internal one."""


def _containers(props: Any, ctx: Context) -> tuple[Any, list[Any]]:
    pod = WORKLOADS[ctx.type]
    return get(props, pod, {}), list(items(props, f"{pod}.containers")) + list(items(props, f"{pod}.initContainers"))


PRIVILEGED_WORKLOADS = {"privilegedWorkloads": {
    "type": "array", "items": {"type": "string", "pattern": "^[^/]+/[^/]+/[^/]+$"}, "default": [],
    "description": "Workloads allowed privileged containers and the host network, as `namespace/kind/name` (e.g. "
                   "`kube-system/DaemonSet/csi-azurelustre-node-jammy`), each matched exactly against the object's "
                   "explicit metadata.namespace, its kind and metadata.name. hostPID and hostIPC stay flagged for them. "
                   "Default empty: no workload is exempt."}}


def _exempt(props: Any, ctx: Context) -> bool:
    """Whether the workload is named in `privilegedWorkloads`. Only read when the rule would flag it; a name or
    namespace unknown during preview raises `Unknown`, like any other value the rule needs."""
    allowed = set(ctx.config.get("privilegedWorkloads") or [])
    if not allowed:
        return False
    namespace, name = need(props, "metadata.namespace"), need(props, "metadata.name")
    # No namespace: the provider's default decides where it lands, so nothing the entry names can be verified.
    return bool(namespace and name) and f"{namespace}/{ctx.type.rsplit(':', 1)[-1]}/{name}" in allowed


@rule("k8s-no-privileged-pods", "Checks whether workloads avoid privileged containers and the host network.",
      severity="high", types=tuple(WORKLOADS), remediation="Drop securityContext.privileged and hostNetwork/hostPID; use device plugins for GPUs.",
      frameworks={"SOC2": ("CC6.8",), "PCI-DSS-v4": ("2.2.5",), "NIST-800-53": ("AC-6",), "CIS": ("K8s 5.2.2", "K8s 5.2.5")},
      config=PRIVILEGED_WORKLOADS)
def privileged(props: Any, ctx: Context) -> Iterator[str]:
    pod, containers = _containers(props, ctx)
    # (message, whether `privilegedWorkloads` may allow it): node agents such as CSI node plugins mount on the host.
    found = [(f"{host} is on", host == "hostNetwork") for host in ("hostNetwork", "hostPID", "hostIPC") if need(pod, host) is True]
    found += [(f"container {get(c, 'name', '?')} is privileged", True) for c in containers
              if need(c, "securityContext.privileged") is True]
    exempt = any(allowable for _, allowable in found) and _exempt(props, ctx)
    for message, allowable in found:
        if not (allowable and exempt):
            yield message


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


@rule("k8s-internal-load-balancer", "Checks whether LoadBalancer Services carry a cloud's internal annotation "
      "(or are AWS Load Balancer Controller Services, internal unless annotated internet-facing).",
      severity="high", types=("kubernetes:core/v1:Service",), remediation="Annotate the Service as internal and publish through the global endpoint.",
      frameworks=EXPOSURE)  # CIS Kubernetes has no control for internal load balancers (5.7.4 is the default namespace)
def internal_lb(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "spec.type", "ClusterIP") != "LoadBalancer":
        return
    annotations = raw(need(props, "metadata.annotations", {}) or {})
    scheme = raw(annotations.get(AWS_SCHEME))
    if scheme != "internet-facing" and any(str(raw(annotations.get(key, ""))) in values for key, values in INTERNAL_ANNOTATIONS.items()):
        return
    aws_controller = (raw(annotations.get(AWS_LB_TYPE)) in ("external", "nlb-ip")
                      or need(props, "spec.loadBalancerClass") == AWS_LBC_CLASS)
    if aws_controller and scheme is None:
        legacy = raw(annotations.get(AWS_INTERNAL))
        if is_unknown(legacy):
            raise Unknown(f"metadata.annotations[{AWS_INTERNAL}]")
        if str(legacy).lower() not in ("false", "f", "0"):
            return
    unknown = next((key for key in (*INTERNAL_ANNOTATIONS, AWS_LB_TYPE) if is_unknown(raw(annotations.get(key)))), None)
    if unknown is not None:  # the annotation that would make it internal is not known yet
        raise Unknown(f"metadata.annotations[{unknown}]")
    if scheme == "internet-facing":
        yield f"{AWS_SCHEME} is internet-facing: the load balancer gets a public address"
    else:
        yield "a LoadBalancer Service without an internal annotation gets a public address"


@rule("k8s-no-nodeport-services", "Checks whether Services avoid type NodePort.",
      severity="high", types=("kubernetes:core/v1:Service",),
      remediation="Use a ClusterIP Service behind an Ingress or Gateway, or an internal LoadBalancer Service; "
                  "reach it from a workstation with kubectl port-forward.",
      frameworks=EXPOSURE)
def no_nodeport(props: Any, ctx: Context) -> Iterator[str]:
    # A NodePort Service listens on every node's addresses, so its reach is the nodes' reach (the internet when nodes
    # have public IPs). LoadBalancer Services also get node ports, but `k8s-internal-load-balancer` covers them.
    if need(props, "spec.type", "ClusterIP") == "NodePort":
        yield "a NodePort Service opens its port on every node's address, reachable from wherever the nodes are"
