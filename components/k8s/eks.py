"""The EKS controllers: the Cluster Autoscaler, which scales the managed node groups (GPU pools start at zero; GKE and
AKS bring their own autoscalers, EKS does not), and the AWS Load Balancer Controller, which fills the inference
endpoint's `ip` target group with the inference Service's pods through a TargetGroupBinding (the inference Service's
component declares the binding).

Both run on the system pool (`ai-infra/pool=system`: the autoscaler must not run on nodes it may remove), as non-root
with read-only root file systems, under the service accounts their IRSA roles trust (components.aws.controllers). The
nodes' IMDSv2 hop limit of 1 keeps pods away from the instance metadata, so region and VPC are passed explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.compose.types import EksControllers
from components.spec.aws import autoscaler_minor_problem

from . import charts
from .cluster import GPU_NAMESPACE, KUEUE_NAMESPACE, MONITORING_NAMESPACE
from .objects import MANAGED_BY, child_opts

SYSTEM_POOL = {"ai-infra/pool": "system"}
ROLE_ANNOTATION = "eks.amazonaws.com/role-arn"
AUTOSCALER_TAG = "k8s.io/cluster-autoscaler"
TARGET_GROUP_BINDING = ("elbv2.k8s.aws/v1beta1", "TargetGroupBinding")
# Where the platform's charts and operators create their (ClusterIP) Services. The controller's Service mutator
# (`failurePolicy: Fail`) leaves them alone, so they don't fail while its pods are not ready: on a new cluster, or
# while the system pool is replaced.
PLATFORM_NAMESPACES = ("kube-system", KUEUE_NAMESPACE, MONITORING_NAMESPACE, GPU_NAMESPACE)
NONROOT = 65532  # distroless static:nonroot, the autoscaler image's base (cluster-autoscaler/Dockerfile)
_SECCOMP = {"type": "RuntimeDefault"}
CONTAINER_SECURITY = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "runAsNonRoot": True,
                      "capabilities": {"drop": ["ALL"]}, "seccompProfile": _SECCOMP}


def autoscaler_chart(minor: str, path: str) -> charts.Chart:
    """The chart whose autoscaler minor is the cluster's; otherwise the spec's error (which the loader reports first
    for a platform config), naming the config path."""
    problem = autoscaler_minor_problem(minor)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    return charts.CLUSTER_AUTOSCALER[minor]


def _tag(cluster_name: pulumi.Input[str]) -> pulumi.Input[str]:
    if isinstance(cluster_name, str):
        return f"{AUTOSCALER_TAG}/{cluster_name}"
    return pulumi.Output.concat(AUTOSCALER_TAG, "/", cluster_name)


def autoscaler_values(cluster_name: pulumi.Input[str], region: str, role_arn: pulumi.Input[str],
                      service_account: str) -> dict[str, Any]:
    """Chart values (cluster-autoscaler 9.46 to 9.59 accept the same keys used here). Plain values in, plain values
    out; with outputs in, only those leaves are outputs."""
    return {
        "cloudProvider": "aws",
        "awsRegion": region,
        # The tags EKS puts on every managed node group's Auto Scaling group (components.aws.node_group.autoscaler_tags).
        "autoDiscovery": {"clusterName": cluster_name,
                          "tags": [f"{AUTOSCALER_TAG}/enabled", _tag(cluster_name)]},
        "fullnameOverride": "cluster-autoscaler",
        "rbac": {"serviceAccount": {"create": True, "name": service_account, "annotations": {ROLE_ANNOTATION: role_arn}}},
        # Two replicas, one active (leader election is on by default): scale-ups keep working through a node drain.
        "replicaCount": 2,
        "podDisruptionBudget": {"maxUnavailable": 1},
        "extraArgs": {
            # Spot pools list several instance types in one group: the least idle CPU/memory after scale-up wins.
            "expander": "least-waste",
            # Similar groups across zones grow together (EKS node groups span the zones of their subnets).
            "balance-similar-node-groups": True,
            # GPU jobs keep scratch data in emptyDir; without this a node running one would never scale down.
            "skip-nodes-with-local-storage": False,
            # GPU nodes carry many DaemonSets (device plugin, DCGM, operator validators): judge them by workloads.
            "ignore-daemonsets-utilization": True,
            "scale-down-unneeded-time": "10m",
            "scale-down-delay-after-add": "10m",
            # GPU nodes boot slowly (driver, large images, capacity blocks); a group is marked failed after this.
            "max-node-provision-time": "20m",
            "logtostderr": True, "stderrthreshold": "info", "v": 2,
        },
        "nodeSelector": SYSTEM_POOL,
        "priorityClassName": "system-cluster-critical",
        "securityContext": {"runAsNonRoot": True, "runAsUser": NONROOT, "runAsGroup": NONROOT, "fsGroup": NONROOT,
                            "seccompProfile": _SECCOMP},
        "containerSecurityContext": CONTAINER_SECURITY,
        # Holds every node and pod of the cluster in memory; no CPU limit (throttling delays scale-ups).
        "resources": {"requests": {"cpu": "100m", "memory": "300Mi"}, "limits": {"memory": "1Gi"}},
    }


def lb_controller_values(cluster_name: pulumi.Input[str], region: str, vpc_id: pulumi.Input[str], role_arn: pulumi.Input[str],
                         service_account: str) -> dict[str, Any]:
    """Chart values (aws-load-balancer-controller 3.5.0)."""
    return {
        "clusterName": cluster_name,
        "region": region,
        "vpcId": vpc_id,
        "serviceAccount": {"create": True, "name": service_account, "annotations": {ROLE_ANNOTATION: role_arn}},
        "replicaCount": 2,
        "podDisruptionBudget": {"maxUnavailable": 1},
        # Load balancers it creates for Services and Ingresses are internal unless their manifest says otherwise.
        "defaultLoadBalancerScheme": "internal",
        # Its Service mutator hands every new LoadBalancer Service to the controller (an NLB, internal by default);
        # it stays on everywhere users create Services, but not in the platform's namespaces. Helm merges this map
        # into the chart's (failurePolicy Fail, operations [CREATE] stay).
        "serviceMutatorWebhookConfig": {"namespaceSelectors": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(PLATFORM_NAMESPACES)}]},
        "nodeSelector": SYSTEM_POOL,
        "podSecurityContext": {"fsGroup": 65534, "runAsNonRoot": True, "seccompProfile": _SECCOMP},
        "securityContext": CONTAINER_SECURITY,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
    }


def target_group_binding(service: str, namespace: str, port: int, target_group_arn: pulumi.Input[str],
                         security_group_id: pulumi.Input[str] | None) -> dict[str, Any]:
    """The TargetGroupBinding: the controller registers the ready pod IPs of Service `namespace/service` in the
    existing target group. With the load balancer's security group, `networking` makes the controller admit it to the
    pods on `port` (the endpoint's own rule on the cluster security group already does; the controller sees it and
    adds nothing)."""
    api_version, kind = TARGET_GROUP_BINDING
    spec: dict[str, Any] = {
        "serviceRef": {"name": service, "port": port},
        "targetGroupARN": target_group_arn,
        "targetType": "ip",
    }
    if security_group_id is not None:
        spec["networking"] = {"ingress": [{"from": [{"securityGroup": {"groupID": security_group_id}}],
                                           "ports": [{"protocol": "TCP", "port": port}]}]}
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": service, "namespace": namespace, "labels": dict(MANAGED_BY)}, "spec": spec}


@dataclass(frozen=True)
class EksControllersArgs:
    eks: EksControllers
    cluster: pulumi.Resource
    """The cluster component: every object is `deleted_with` it."""


class ClusterAutoscaler(pulumi.ComponentResource):
    """`ai-infra:kubernetes:ClusterAutoscaler`. Children: `<name>-release` (cluster-autoscaler in kube-system)."""

    def __init__(self, name: str, args: EksControllersArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:kubernetes:ClusterAutoscaler", name, None, opts)
        eks, account = args.eks, args.eks.autoscaler
        try:
            chart = autoscaler_chart(eks.kubernetes_version, eks.version_path)
        except ValueError as err:
            raise pulumi.RunError(str(err)) from None
        values = autoscaler_values(eks.cluster_name, eks.region, account.role_arn, account.name)
        self.release = charts.release(f"{name}-release", chart, account.namespace, values,
                                      child_opts(self, args.cluster, [eks.iam]), release_name="cluster-autoscaler")
        self.outputs = {"chart_version": chart.version, "service_account": f"{account.namespace}/{account.name}"}
        self.register_outputs(self.outputs)


class LoadBalancerController(pulumi.ComponentResource):
    """`ai-infra:kubernetes:LoadBalancerController`. Children: `<name>-release` (aws-load-balancer-controller in
    kube-system). `release` is what objects its webhooks admit (Services in users' namespaces, TargetGroupBindings)
    wait for."""

    TYPE = "ai-infra:kubernetes:LoadBalancerController"

    def __init__(self, name: str, args: EksControllersArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)
        eks, account = args.eks, args.eks.lb_controller
        values = lb_controller_values(eks.cluster_name, eks.region, eks.vpc_id, account.role_arn, account.name)
        # The chart's crds/ (TargetGroupBinding, IngressClassParams) are installed with the release; Helm never
        # upgrades CRDs, so a chart bump applies the new CRDs first (the chart README's upgrade step).
        self.release = charts.release(f"{name}-release", charts.AWS_LOAD_BALANCER_CONTROLLER, account.namespace,
                                      values, child_opts(self, args.cluster, [eks.iam]),
                                      release_name="aws-load-balancer-controller")
        self.outputs: dict[str, Any] = {"chart_version": charts.AWS_LOAD_BALANCER_CONTROLLER.version,
                                        "service_account": f"{account.namespace}/{account.name}"}
        self.register_outputs(self.outputs)
