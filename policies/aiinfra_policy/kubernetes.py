"""Kubernetes workload rules: privileged or host-network pods (also in patches and ML operators' pod templates), GPU
limits, internal load balancers (Services and Ingresses), NodePort Services, RBAC roles that read Secrets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .aws import EXPOSURE
from .props import Unknown, get, is_unknown, items, need, raw
from .registry import Context, rule

TEMPLATE = "spec.template.spec"
WORKLOADS = {
    "kubernetes:core/v1:Pod": ("spec",),
    "kubernetes:core/v1:PodTemplate": ("template.spec",),
    "kubernetes:core/v1:ReplicationController": (TEMPLATE,),
    "kubernetes:apps/v1:Deployment": (TEMPLATE,),
    "kubernetes:apps/v1:StatefulSet": (TEMPLATE,),
    "kubernetes:apps/v1:DaemonSet": (TEMPLATE,),
    "kubernetes:apps/v1:ReplicaSet": (TEMPLATE,),
    "kubernetes:batch/v1:Job": (TEMPLATE,),
    "kubernetes:batch/v1:CronJob": ("spec.jobTemplate.spec.template.spec",),
}
"""Workload kinds -> where their pod specs are."""
PATCHES = {f"{type_}Patch": paths for type_, paths in WORKLOADS.items()}
"""Server-side apply patches of the workload kinds (kubernetes:apps/v1:DeploymentPatch): what they set is applied."""
CUSTOM_WORKLOADS = {
    "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet": ("spec.replicatedJobs[].template.spec.template.spec",),
    "kubernetes:kubeflow.org/v1:PyTorchJob": ("spec.pytorchReplicaSpecs.*.template.spec",),
    "kubernetes:kubeflow.org/v1:TFJob": ("spec.tfReplicaSpecs.*.template.spec",),
    "kubernetes:kubeflow.org/v2beta1:MPIJob": ("spec.mpiReplicaSpecs.*.template.spec",),
    "kubernetes:ray.io/v1:RayCluster": ("spec.headGroupSpec.template.spec", "spec.workerGroupSpecs[].template.spec"),
    "kubernetes:ray.io/v1:RayJob": ("spec.rayClusterSpec.headGroupSpec.template.spec",
                                    "spec.rayClusterSpec.workerGroupSpecs[].template.spec", "spec.submitterPodTemplate.spec"),
    "kubernetes:ray.io/v1:RayService": ("spec.rayClusterConfig.headGroupSpec.template.spec",
                                        "spec.rayClusterConfig.workerGroupSpecs[].template.spec"),
    "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet": ("spec.leaderWorkerTemplate.leaderTemplate.spec",
                                                               "spec.leaderWorkerTemplate.workerTemplate.spec"),
}
"""Custom resources of the ML operators that run pods from templates (JobSet, Kubeflow training jobs, KubeRay,
LeaderWorkerSet): `[]` is each element of a list (labelled by its name), `*` each value of a map (by its key)."""
POD_SPECS = {**WORKLOADS, **PATCHES, **CUSTOM_WORKLOADS}
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


def _walk(node: Any, parts: list[str], label: str) -> Iterator[tuple[str, Any]]:
    """(label, value) at the rest of a POD_SPECS path; unknown lists and maps on the way raise Unknown."""
    if not parts:
        yield label, node
        return
    part, rest = parts[0], parts[1:]
    if part == "*":
        if is_unknown(raw(node)):
            raise Unknown(f"{label}replica specs")
        mapping = raw(node) if isinstance(raw(node), dict) else {}
        for key in sorted(mapping):
            yield from _walk(raw(mapping[key]), rest, f"{label}{key}: ")
    elif part.endswith("[]"):
        for index, element in enumerate(items(node, part[:-2])):
            name = get(element, "name") or get(element, "groupName") or index
            yield from _walk(element, rest, f"{label}{part[:-2]} {name}: ")
    elif (value := need(node, part)) is not None:
        yield from _walk(value, rest, label)


def pod_specs(props: Any, type_: str) -> Iterator[tuple[str, Any]]:
    """(label for messages, pod spec) of each pod template of a workload: none for a single template."""
    for path in POD_SPECS[type_]:
        yield from _walk(props, path.split("."), "")


def _containers(pod: Any) -> list[Any]:
    return list(items(pod, "containers")) + list(items(pod, "initContainers"))


PRIVILEGED_WORKLOADS = {"privilegedWorkloads": {
    "type": "array", "items": {"type": "string", "pattern": "^[^/]+/[^/]+/[^/]+$"}, "default": [],
    "description": "Workloads allowed privileged containers (privileged, SYS_ADMIN or ALL capabilities, privilege "
                   "escalation), the host network and the host's root filesystem, as `namespace/kind/name` (e.g. "
                   "`kube-system/DaemonSet/csi-azurelustre-node-jammy`), each matched exactly against the object's "
                   "explicit metadata.namespace, its kind (a patch's kind without `Patch`) and metadata.name. hostPID "
                   "and hostIPC stay flagged for them. Default empty: no workload is exempt."}}
ADMIN_CAPABILITIES = {"SYS_ADMIN", "ALL"}
"""Capabilities that amount to a privileged container: CAP_SYS_ADMIN (mount, namespaces, most of root), and ALL."""


def _exempt(props: Any, ctx: Context) -> bool:
    """Whether the workload is named in `privilegedWorkloads`. Only read when the rule would flag it; a name or
    namespace unknown during preview raises `Unknown`, like any other value the rule needs."""
    allowed = set(ctx.config.get("privilegedWorkloads") or [])
    if not allowed:
        return False
    namespace, name = need(props, "metadata.namespace"), need(props, "metadata.name")
    kind = ctx.type.rsplit(":", 1)[-1].removesuffix("Patch")
    # No namespace: the provider's default decides where it lands, so nothing the entry names can be verified.
    return bool(namespace and name) and f"{namespace}/{kind}/{name}" in allowed


def _privileged_container(c: Any) -> Iterator[str]:
    """What makes a container privileged or as good as: privileged, SYS_ADMIN or ALL added, privilege escalation."""
    name = get(c, "name", "?")
    if need(c, "securityContext.privileged") is True:
        yield f"container {name} is privileged"
    added = {str(a).upper().removeprefix("CAP_") for a in items(c, "securityContext.capabilities.add")}
    for capability in sorted(added & ADMIN_CAPABILITIES):
        yield f"container {name} adds capability {capability}, as good as privileged"
    if need(c, "securityContext.allowPrivilegeEscalation") is True:
        yield f"container {name} sets allowPrivilegeEscalation true: its processes can gain more privileges than it started with"


def _host_root(pod: Any) -> Iterator[str]:
    for volume in items(pod, "volumes"):
        path = need(volume, "hostPath.path")
        if isinstance(path, str) and path and not path.strip("/"):
            yield f"volume {get(volume, 'name', '?')} mounts the host's root filesystem (hostPath {path})"


# CIS Kubernetes Benchmark v1.8.0: 5.2.2 privileged, 5.2.3 hostPID, 5.2.4 hostIPC, 5.2.5 hostNetwork, 5.2.6
# allowPrivilegeEscalation. Added capabilities (5.2.9) and hostPath volumes (5.2.12) are checked only in part
# (SYS_ADMIN/ALL, a hostPath of /), so not cited.
@rule("k8s-no-privileged-pods", "Checks whether workloads (and their patches, and the pod templates of JobSets, Kubeflow "
      "training jobs, KubeRay and LeaderWorkerSets) avoid privileged containers, the host's namespaces and its root filesystem.",
      severity="high", types=tuple(POD_SPECS),
      remediation="Drop securityContext.privileged, SYS_ADMIN/ALL capabilities, allowPrivilegeEscalation, hostNetwork/hostPID/hostIPC "
                  "and hostPath /; use device plugins for GPUs.",
      frameworks={"SOC2": ("CC6.8",), "PCI-DSS-v4": ("2.2.5",), "NIST-800-53": ("AC-6",),
                  "CIS": ("K8s 5.2.2", "K8s 5.2.3", "K8s 5.2.4", "K8s 5.2.5", "K8s 5.2.6")},
      config=PRIVILEGED_WORKLOADS)
def privileged(props: Any, ctx: Context) -> Iterator[str]:
    # (message, whether `privilegedWorkloads` may allow it): node agents such as CSI node plugins mount on the host.
    found: list[tuple[str, bool]] = []
    for label, pod in pod_specs(props, ctx.type):
        found += [(f"{label}{host} is on", host == "hostNetwork") for host in ("hostNetwork", "hostPID", "hostIPC")
                  if need(pod, host) is True]
        found += [(f"{label}{message}", True) for c in _containers(pod) for message in _privileged_container(c)]
        found += [(f"{label}{message}", True) for message in _host_root(pod)]
    exempt = any(allowable for _, allowable in found) and _exempt(props, ctx)
    for message, allowable in found:
        if not (allowable and exempt):
            yield message


@rule("k8s-gpu-limits", "Checks whether containers that use accelerators set them as limits.",
      severity="medium", types=(*WORKLOADS, *CUSTOM_WORKLOADS),
      remediation="Set resources.limits for nvidia.com/gpu (or neuron/TPU); extended resources are scheduled from limits.",
      frameworks={"SOC2": ("A1.1",), "NIST-800-53": ("SC-6",)})
def gpu_limits(props: Any, ctx: Context) -> Iterator[str]:
    # Not patches: what a patch leaves out (a limit, a request) is whatever the object already has.
    for label, pod in pod_specs(props, ctx.type):
        tolerates = any(get(t, "key") in ACCELERATORS for t in items(pod, "tolerations"))
        wants = False
        for c in _containers(pod):
            requests, limits = get(c, "resources.requests", {}) or {}, get(c, "resources.limits", {}) or {}
            for resource in ACCELERATORS:
                if resource in requests and resource not in limits:
                    yield f"{label}container {get(c, 'name', '?')} requests {resource} without a limit"
                wants = wants or resource in limits
        if tolerates and not wants:
            yield f"{label}tolerates the accelerator taint but requests no accelerator: it would squat on GPU nodes"


INGRESSES = ("kubernetes:networking.k8s.io/v1:Ingress", "kubernetes:networking.k8s.io/v1beta1:Ingress",
             "kubernetes:extensions/v1beta1:Ingress")
INGRESS_CLASS, ALB_SCHEME = "kubernetes.io/ingress.class", "alb.ingress.kubernetes.io/scheme"
"""GKE's Ingress controller takes an Ingress of the gce class (or of none, when the cluster has no default
IngressClass) and gives it an external Application Load Balancer; class gce-internal gets an internal one (GKE docs,
Ingress troubleshooting: "To deploy an internal Application Load Balancer, use the kubernetes.io/ingress.class:
gce-internal annotation"). The AWS Load Balancer Controller's ALB is internal unless alb.ingress.kubernetes.io/scheme is
internet-facing (its default is internal). Other classes (ingress-nginx, AKS application routing) publish through their
controller's own Service, which this rule checks as a Service. An Ingress that names no class gets the cluster's
default IngressClass when it is created (the IngressClass marked ingressclass.kubernetes.io/is-default-class), which
the pack cannot see: on EKS and AKS that is often an internal controller's (ingress-nginx, application routing), and
third-party charts leave the class empty, so such an Ingress is not flagged; on GKE without a default IngressClass it
is an external ALB (see the rule's remediation)."""


def _ingress(props: Any) -> Iterator[str]:
    annotations = raw(need(props, "metadata.annotations", {}) or {})
    class_ = raw(annotations.get(INGRESS_CLASS)) or need(props, "spec.ingressClassName")
    scheme = raw(annotations.get(ALB_SCHEME))
    for key, value in ((INGRESS_CLASS, class_), (ALB_SCHEME, scheme)):
        if is_unknown(value):
            raise Unknown(f"metadata.annotations[{key}]")
    if scheme == "internet-facing":
        yield f"{ALB_SCHEME} is internet-facing: the AWS Load Balancer Controller gives the Ingress a public ALB"
    elif class_ == "gce":
        yield f"{INGRESS_CLASS} gce: GKE gives the Ingress an external Application Load Balancer; use gce-internal"


@rule("k8s-internal-load-balancer", "Checks whether LoadBalancer Services carry a cloud's internal annotation "
      "(or are AWS Load Balancer Controller Services, internal unless annotated internet-facing), and whether Ingresses "
      "avoid a class that makes them public (GKE gce, an ALB with scheme internet-facing). An Ingress that names no "
      "class takes the cluster's default IngressClass, which the pack cannot see: it is not flagged.",
      severity="high", types=("kubernetes:core/v1:Service", *INGRESSES),
      remediation="Annotate the Service as internal (the Ingress with kubernetes.io/ingress.class: gce-internal, or the "
                  "class of an internal controller) and publish through the global endpoint. An Ingress without a class "
                  "takes the cluster's default IngressClass; on GKE, where a cluster without a default IngressClass "
                  "gives such an Ingress an external Application Load Balancer, name gce-internal (or make an internal "
                  "class the default).",
      frameworks=EXPOSURE)  # CIS Kubernetes has no control for internal load balancers (5.7.4 is the default namespace)
def internal_lb(props: Any, ctx: Context) -> Iterator[str]:
    if ctx.type in INGRESSES:
        yield from _ingress(props)
        return
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


RBAC_ROLES = ("kubernetes:rbac.authorization.k8s.io/v1:Role", "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
SECRET_READS = ("get", "list", "watch")


@rule("k8s-rbac-secrets-read", "Checks whether Roles and ClusterRoles grant reading Secrets (get, list or watch on "
      "secrets in the core API group, by name or by a wildcard).",
      severity="medium", types=RBAC_ROLES,
      remediation="Grant get on the Secrets a subject needs by resourceNames; read Secrets through a workload's mounted "
                  "volume instead of the API. ai-infra's own such Roles come with `clouds.<cloud>.previewers` (Helm "
                  "release Secrets, for the pull-request preview's refresh): an explicit opt-in this rule reports.",
      # "Minimize access to secrets": 5.1.2 of the CIS Kubernetes Benchmark (v1.6.1 to v1.24), 4.1.2 of the EKS, GKE
      # and AKS benchmarks.
      frameworks={"SOC2": ("CC6.1",), "NIST-800-53": ("AC-6",), "CIS": ("Kubernetes 5.1.2",)})
def rbac_secrets_read(props: Any, ctx: Context) -> Iterator[str]:
    # A rule with resourceNames reads only the Secrets it names (list and watch too: the client must then select one
    # by name), which is the least privilege this rule asks for, so it is not reported.
    for index, grant in enumerate(items(props, "rules")):
        groups, resources, verbs = (need(grant, key, []) for key in ("apiGroups", "resources", "verbs"))
        if not ({"", "*"} & set(groups) and {"secrets", "secrets/*", "*"} & set(resources)):
            continue
        reads = sorted(set(SECRET_READS) & set(verbs)) if "*" not in verbs else list(SECRET_READS)
        if reads and not need(grant, "resourceNames", []):
            scope = "the cluster" if ctx.type.endswith(":ClusterRole") else "its namespace"
            yield f"rules[{index}] grants {', '.join(reads)} on secrets: whoever it is bound to reads every Secret of {scope}"
