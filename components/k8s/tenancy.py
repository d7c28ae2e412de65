"""Team tenancy on a cluster: Kueue (release, ResourceFlavors), PriorityClasses, and per team of the spec a
namespace under Pod Security `restricted`, a NetworkPolicy (same-namespace ingress; egress to DNS, the API server
and outside the cluster, see `netpol`), a ResourceQuota and LimitRange, a ResourceQuota refusing the PriorityClasses
the team may not use (`restricted_priority_classes`), and a Kueue ClusterQueue and LocalQueue. A team added to the
config gets all of these on the next `pulumi up`. Teams get no RBAC here: who may use a namespace
is the cluster's own access (EKS access entries, GKE IAM, AKS Azure RBAC).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.spec import TeamSpec
from components.spec.common import RESERVED_NAMESPACES, is_reserved_namespace

from . import charts
from .accelerators import CRITICAL_PRIORITY_CLASSES
from .cluster import KUEUE_NAMESPACE, NVIDIA_GPU, TPU_CHIP
from .netpol import ANYWHERE, API_SERVER_PORT, DNS_PORT, ClusterNetwork, outside_cluster
from .objects import PSA_MODES, RESTRICTED_PSA, child_opts, custom_resource, namespace
from .queues import Flavor, admissible, cluster_queue, kueue_resources_config, local_queue, quantity, resource_flavor

# Pod priority for Kueue workloads and pods alike: serving beats training beats batch. Batch never preempts.
PRIORITY_CLASSES = {
    "ai-inference": (100_000, "PreemptLowerPriority", "Online inference: may preempt training and batch pods."),
    "ai-training": (10_000, "PreemptLowerPriority", "Training: may preempt batch pods."),
    "ai-batch": (1_000, "Never", "Batch and experiments: preemptible, never preempts others."),
}
# Requests a container gets when it names none (needed once the namespace has a cpu/memory quota). No default
# limits: a default memory limit below a container's own request makes the API server reject the pod.
DEFAULT_REQUESTS = {"cpu": "250m", "memory": "512Mi"}
INFERENCE_PRIORITY = "ai-inference"
PRIORITY_QUOTA = "restricted-priority-classes"
"""The per-team ResourceQuota (`pods: 0`) over the PriorityClasses a team may not use (`restricted_priority_classes`)."""
TEAM_LABEL = "ai-infra/team"
"""On every team namespace (its value the team): Kueue manages the jobs and pods of namespaces carrying it."""


def kueue_manager_config(flavor_list: Sequence[Flavor] = ()) -> dict[str, Any]:
    """Kueue's Configuration: the chart's default (kubernetes-sigs/kueue v0.19.2, charts/kueue/values.yaml,
    `managerConfig.controllerManagerConfigYaml`; the chart fills in internalCertManagement), plus `resources`
    (`queues.kueue_resources_config`, which depends on the cluster's flavors) and `managedJobsNamespaceSelector`. Without the selector Kueue's webhooks
    (`failurePolicy: Fail`) cover every namespace but kube-system and kueue-system, so while its pod is not ready
    (a new cluster, a drained system node) the other charts' Deployments, Jobs and Pods cannot be created.
    Selecting the team namespaces confines them to the workloads Kueue queues: the chart copies the selector into
    every job, pod and deployment webhook."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {"groupKindConcurrency": {
            "Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10, "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5, "ResourceFlavor.kueue.x-k8s.io": 1}},
        "clientConnection": {"qps": 300, "burst": 500},
        "managedJobsNamespaceSelector": {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]},
        "integrations": {"frameworks": [
            "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster",
            "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob", "pod",
            "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset"]},
        "resources": kueue_resources_config(list(flavor_list)),  # excluded resources, Neuron devices as cores
    }


KUEUE_REPLICAS = 2
"""Kueue's webhooks fail closed (`failurePolicy: Fail`): with one replica, draining its system node stops job and pod
creation in every team namespace until the pod is back. Every replica serves the webhooks (the leader alone runs the
controllers), and the chart's PodDisruptionBudget keeps one of them up through a drain."""


def kueue_values(flavor_list: Sequence[Flavor] = ()) -> dict[str, Any]:
    """The chart's values (kubernetes-sigs/kueue v0.19.2 charts/kueue/values.yaml): the manager config, and
    `controllerManager.replicas` with the chart's `podDisruptionBudget` (minAvailable 1, templates/manager/
    manager-pdb.yaml) and a soft spread over nodes (the Deployment's selector labels, from `kueue.selectorLabels` with
    release and chart named `kueue`)."""
    selector = {"app.kubernetes.io/name": "kueue", "app.kubernetes.io/instance": "kueue",
                "control-plane": "controller-manager"}
    return {
        "controllerManager": {
            "replicas": KUEUE_REPLICAS,
            "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            # ScheduleAnyway: a one-node system pool still runs both replicas.
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                           "whenUnsatisfiable": "ScheduleAnyway",
                                           "labelSelector": {"matchLabels": selector}}],
        },
        # The chart parses this text as YAML (fromYaml); JSON is YAML.
        "managerConfig": {"controllerManagerConfigYaml": json.dumps(kueue_manager_config(flavor_list), indent=2)},
    }


def check_team_names(teams: dict[str, TeamSpec]) -> None:
    """Team namespaces are named after teams; names the platform or Kubernetes uses are refused."""
    for team in teams:
        if is_reserved_namespace(team):
            allowed = "any other lower-case name (not default, kube-*, " + ", ".join(sorted(RESERVED_NAMESPACES - {"default"})) + ")"
            raise ValueError(f"team '{team}' would get namespace '{team}', which the platform or Kubernetes uses; allowed: {allowed}")


def namespace_labels(team: str) -> dict[str, str]:
    """Pod Security Admission `restricted` (enforced, audited and warned, at the cluster's version) and the team."""
    labels = RESTRICTED_PSA | {f"pod-security.kubernetes.io/{mode}-version": "latest" for mode in PSA_MODES}
    return {**labels, TEAM_LABEL: team}


def restricted_priority_classes(team: str, inference_namespace: str | None) -> list[str]:
    """PriorityClasses the team's pods may not use. PriorityClasses are cluster-wide: a pod of any namespace naming
    `ai-inference` or `system-node-critical`/`system-cluster-critical` would preempt other teams' pods (and the
    system ones outrank the platform's own add-ons). A ResourceQuota of `pods: 0` scoped to them refuses such pods at
    creation (kubernetes.io/docs/concepts/policy/resource-quotas, "Resource Quota Per PriorityClass"). `ai-inference`
    stays open in the namespace the cluster's inference Service selects pods in (`inference.service_namespace`)."""
    classes = [INFERENCE_PRIORITY] if team != inference_namespace else []
    return [*classes, *CRITICAL_PRIORITY_CLASSES]


def quota_hard(amounts: dict[str, int]) -> dict[str, str]:
    """ResourceQuota `hard` from admissible amounts (memory in GiB); GPUs and TPU chips always appear (0 where
    the cluster has none), extended resources as `requests.<name>` (the only form quota allows for them). Neuron
    appears twice, in devices and in cores, each counted on its own: pods outside Kueue may use both (see `queues`)."""
    hard = {"requests.cpu": str(amounts["cpu"]), "requests.memory": f"{amounts['memory']}Gi"}
    for resource in sorted({NVIDIA_GPU, TPU_CHIP, *amounts} - {"cpu", "memory"}):
        hard[f"requests.{resource}"] = str(amounts.get(resource, 0))
    return hard


def _ports(protocols: tuple[str, ...], port: int) -> list[k8s.networking.v1.NetworkPolicyPortArgs]:
    return [k8s.networking.v1.NetworkPolicyPortArgs(protocol=protocol, port=port) for protocol in protocols]


def team_policy_spec(net: ClusterNetwork) -> k8s.networking.v1.NetworkPolicySpecArgs:
    """Every pod of the namespace: ingress from the namespace, egress as `netpol`'s module doc says."""
    same_namespace = [k8s.networking.v1.NetworkPolicyPeerArgs(pod_selector=k8s.meta.v1.LabelSelectorArgs())]
    dns = k8s.networking.v1.NetworkPolicyPeerArgs(
        namespace_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"kubernetes.io/metadata.name": "kube-system"}),
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"k8s-app": "kube-dns"}))
    block = lambda cidr, exclude=None: k8s.networking.v1.NetworkPolicyPeerArgs(  # noqa: E731
        ip_block=k8s.networking.v1.IPBlockArgs(cidr=cidr, except_=exclude))
    return k8s.networking.v1.NetworkPolicySpecArgs(
        pod_selector=k8s.meta.v1.LabelSelectorArgs(),
        policy_types=["Ingress", "Egress"],
        ingress=[k8s.networking.v1.NetworkPolicyIngressRuleArgs(from_=same_namespace)],
        egress=[
            k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=same_namespace),
            k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=[dns], ports=_ports(("UDP", "TCP"), DNS_PORT)),
            k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=[block(c) for c in net.api_server],
                                                         ports=_ports(("TCP",), API_SERVER_PORT)),
            k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=[block(ANYWHERE, outside_cluster(net))]),
        ])


@dataclass(frozen=True)
class TenancyArgs:
    environment: str
    """The Kueue cohort every team's ClusterQueue joins."""
    teams: dict[str, TeamSpec]
    """Teams of the spec; each gets a namespace, quotas and queues."""
    flavors: list[Flavor]
    """The cluster's accelerator flavors (see `queues.flavors`)."""
    cluster: pulumi.Resource
    """The cluster component: every object is `deleted_with` it."""
    network: ClusterNetwork
    """The cluster's pod, service and API server ranges, which the teams' NetworkPolicies name (`netpol`)."""
    inference_namespace: str | None = None
    """The namespace of the cluster's inference Service (`inference.service_namespace`), the one team namespace whose
    pods may use the `ai-inference` PriorityClass. Default None: no team may."""
    namespace_aliases: dict[str, Sequence[pulumi.Alias]] = field(default_factory=dict)
    """Per team, where its namespace object was before (the inference Service's namespace of the same name): the
    existing namespace moves to the team instead of being created twice ("already exists"). Default none."""
    retain_namespaces: bool = False
    """Keep a team's namespace (its PVCs and workloads) in the cluster when the team leaves the config or the stack
    is destroyed; Pulumi only forgets it (`retain_on_delete`), and with it what governs the workloads left running in
    it (its NetworkPolicy, ResourceQuotas and LimitRange: without them the pods would lose their isolation and
    limits) and its ClusterQueue and LocalQueue: while the retained workloads stay admitted, Kueue's
    `kueue.x-k8s.io/resource-in-use` finalizer would hold a deleted ClusterQueue Terminating and the provider's delete
    would time out. The ResourceFlavors are retained too: Kueue holds a flavor Terminating with the same finalizer
    while any ClusterQueue names it (pkg/controller/core/resourceflavor_controller.go), retained ones included.
    Default off; the composition turns it on where the platform protects stateful resources."""


class Tenancy(pulumi.ComponentResource):
    """`ai-infra:kubernetes:Tenancy`. Children: `<name>-kueue`, `<name>-priority-<class>`, `<name>-flavor-default`,
    `<name>-flavor-<flavor>` (with `retain_namespaces`, `retain_on_delete`), and a `Team` `<name>-<team>` per team."""

    TYPE = "ai-infra:kubernetes:Tenancy"

    def __init__(self, name: str, args: TenancyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)
        check_team_names(args.teams)
        self.kueue = charts.release(f"{name}-kueue", charts.KUEUE, KUEUE_NAMESPACE, kueue_values(args.flavors),
                                    child_opts(self, args.cluster),
                                    release_name="kueue", create_namespace=True)
        for class_name, (value, preemption, description) in PRIORITY_CLASSES.items():
            k8s.scheduling.v1.PriorityClass(
                f"{name}-priority-{class_name}", metadata=k8s.meta.v1.ObjectMetaArgs(name=class_name),
                value=value, preemption_policy=preemption, global_default=False, description=description,
                opts=child_opts(self, args.cluster))
        flavor_opts = child_opts(self, args.cluster, [self.kueue]).merge(
            pulumi.ResourceOptions(retain_on_delete=args.retain_namespaces))
        flavor_objects = [custom_resource(f"{name}-flavor-default", resource_flavor(None), flavor_opts)]
        flavor_objects += [custom_resource(f"{name}-flavor-{f.name}", resource_flavor(f), flavor_opts)
                           for f in args.flavors]
        self.teams = {
            team: Team(f"{name}-{team}", TeamArgs(team, args, [self.kueue, *flavor_objects]),
                       pulumi.ResourceOptions(parent=self))
            for team in args.teams
        }
        self.register_outputs({"teams": list(self.teams), "flavors": [f.name for f in args.flavors]})


@dataclass(frozen=True)
class TeamArgs:
    team: str
    """The team's name, which is also its namespace and ClusterQueue name."""
    tenancy: TenancyArgs
    """The cohort, all teams (borrowing ceilings need them) and the flavors."""
    kueue_ready: list[pulumi.Resource]
    """Kueue and the flavors, which the queues need."""


class Team(pulumi.ComponentResource):
    """`ai-infra:kubernetes:Team`. Children: `<name>-namespace`, `-network-policy`, `-quota`, `-priority-quota`,
    `-limits`, `-cluster-queue`, `-local-queue`. With `retain_namespaces` all of them are `retain_on_delete`."""

    TYPE = "ai-infra:kubernetes:Team"

    def __init__(self, name: str, args: TeamArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)
        team, tenancy, cluster = args.team, args.tenancy, args.tenancy.cluster
        spec = tenancy.teams[team]
        retain = pulumi.ResourceOptions(retain_on_delete=tenancy.retain_namespaces)
        moved = pulumi.ResourceOptions(aliases=list(tenancy.namespace_aliases.get(team, ())))
        self.namespace = namespace(f"{name}-namespace", team, namespace_labels(team),
                                   pulumi.ResourceOptions.merge(child_opts(self, cluster), retain).merge(moved))
        in_ns = child_opts(self, cluster, [self.namespace]).merge(retain)
        meta = lambda object_name: k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=team)  # noqa: E731
        k8s.networking.v1.NetworkPolicy(
            f"{name}-network-policy", metadata=meta("default-deny"), spec=team_policy_spec(tenancy.network), opts=in_ns)
        k8s.core.v1.ResourceQuota(
            f"{name}-quota", metadata=meta("team-quota"),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(hard=quota_hard(admissible(team, tenancy.teams, tenancy.flavors))),
            opts=in_ns)
        k8s.core.v1.ResourceQuota(
            f"{name}-priority-quota", metadata=meta(PRIORITY_QUOTA),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(
                hard={"pods": quantity(0)},
                scope_selector=k8s.core.v1.ScopeSelectorArgs(match_expressions=[
                    k8s.core.v1.ScopedResourceSelectorRequirementArgs(
                        scope_name="PriorityClass", operator="In",
                        values=restricted_priority_classes(team, tenancy.inference_namespace))])),
            opts=in_ns)
        k8s.core.v1.LimitRange(
            f"{name}-limits", metadata=meta("team-defaults"),
            spec=k8s.core.v1.LimitRangeSpecArgs(limits=[
                k8s.core.v1.LimitRangeItemArgs(type="Container", default_request=DEFAULT_REQUESTS)]),
            opts=in_ns)
        # Where the namespace is retained its workloads keep running, and Kueue keeps its `resource-in-use` finalizer
        # on a ClusterQueue with admitted workloads (a Deployment's pods never finish): deleting the queues would wait
        # until the provider's delete timeout on every `pulumi up`. They are forgotten with the namespace instead.
        # The provider's `pulumi.com/skipAwait` does not help: on delete it is honoured for Namespaces, Pods and
        # workload controllers only (pulumi-kubernetes provider/pkg/metadata/overrides.go, allowsSkipAwaitWithDelete),
        # not for custom resources, so without retention the deletion waits (README, Known limits).
        queue_ready = child_opts(self, cluster, [self.namespace, *args.kueue_ready]).merge(retain)
        self.cluster_queue = custom_resource(
            f"{name}-cluster-queue", cluster_queue(team, spec, tenancy.flavors, tenancy.environment), queue_ready)
        custom_resource(f"{name}-local-queue", local_queue(team),
                        child_opts(self, cluster, [self.namespace, self.cluster_queue]).merge(retain))
        self.register_outputs({"namespace": team})
