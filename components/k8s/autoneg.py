"""The autoneg controller (GoogleCloudPlatform/gke-autoneg-controller) on a GKE cluster behind the GCP global load
balancer: it adds the zonal NEGs GKE creates for an annotated Service to the global backend service
(components.gcp.load_balancer), and removes them when the Service goes.

Installed as the controller's own objects, typed (the upstream manifest deploy/autoneg.yaml at the pinned tag), not
its Helm chart: chart 1.0.3 renders a GMP PodMonitoring by default (fails where that CRD is absent) and a metrics
Service whose targetPort names no container port; typed objects are also schema-checked in the tests.

Identity: Workload Identity Federation for GKE. The load balancer grants its custom role to the principal of this
Kubernetes service account directly (`principal://.../subject/ns/<namespace>/sa/<name>`), so the service account
carries no `iam.gke.io/gcp-service-account` annotation: with one, the metadata server would impersonate that Google
service account instead, and there is none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from .objects import MANAGED_BY, RESTRICTED_PSA, child_opts

VERSION = "v2.0.0"
IMAGE = f"ghcr.io/googlecloudplatform/gke-autoneg-controller/gke-autoneg-controller:{VERSION}"
SOURCE = ("GoogleCloudPlatform/gke-autoneg-controller tag v2.0.0 (e310e6845a6eacf76d8d91577e405599920336fc): deploy/autoneg.yaml "
          "image, RBAC, args and security context; the same commit is chart autoneg-controller-manager 1.0.3 "
          "(appVersion 2.0.0) in the gh-pages index.yaml. Tag v2.0.1 exists but its manifests, chart and user agent "
          "still say 2.0.0. No digest could be read offline: the pin is the tag.")
RBAC_GROUP = "rbac.authorization.k8s.io"
HEALTH_PORT = 8081
METRICS_PORT = 8443
RUN_AS = 65532  # the image's user (distroless static:nonroot, `USER 65532:65532` in its Dockerfile)
SELECTOR = {"app": "autoneg", "control-plane": "controller-manager"}
LABELS = {**MANAGED_BY, **SELECTOR, "app.kubernetes.io/name": "autoneg", "app.kubernetes.io/version": VERSION}
# Upstream asks for 20Mi and caps at 30Mi; the informer cache holds every Service and ServiceNetworkEndpointGroup of
# the cluster, so memory gets headroom. No CPU limit: throttling would delay leader-lease renewals.
RESOURCES = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}
# deploy/autoneg.yaml's ClusterRole: Services (with their finalizer and status) and GKE's ServiceNetworkEndpointGroups.
MANAGER_RULES = [
    ("", ["events"], ["create", "patch"]),
    ("", ["services"], ["get", "list", "patch", "update", "watch"]),
    ("", ["services/finalizers"], ["update"]),
    ("", ["services/status"], ["get", "patch", "update"]),
    ("networking.gke.io", ["servicenetworkendpointgroups"], ["get", "list", "watch"]),
]
# The metrics endpoint authenticates and authorizes its callers (controller-runtime's filter, on by default).
METRICS_AUTH_RULES = [
    ("authentication.k8s.io", ["tokenreviews"], ["create"]),
    ("authorization.k8s.io", ["subjectaccessreviews"], ["create"]),
]
# Leader election: controller-runtime v0.20 (autoneg's go.mod) locks with Leases only, so the upstream Role's
# ConfigMap verbs are left out.
LEADER_RULES = [
    ("coordination.k8s.io", ["leases"], ["get", "list", "watch", "create", "update", "patch", "delete"]),
    ("", ["events"], ["create", "patch"]),
]


def controller_args(project: str) -> list[str]:
    """The controller's flags, every one that decides behaviour stated (v2.0.0 main.go defaults otherwise)."""
    return [
        f"--health-probe-bind-address=:{HEALTH_PORT}",
        f"--metrics-bind-address=:{METRICS_PORT}",
        "--zap-encoder=json",
        # Not read from the metadata server: the backend service lives in the platform's project.
        f"--project-id={project}",
        # Two replicas, one active.
        "--leader-elect=true",
        # The Service annotations name the backend service (`<environment>-inference`), which no name template can
        # produce; a Service without a name falls back to the template. Any annotated Service may name any backend
        # service (upstream README, "Security considerations"): the IAM grant's condition
        # (components.gcp.load_balancer.autoneg_condition) lets the controller update this environment's one only.
        "--enable-custom-service-names=true",
        "--default-backendservice-name={name}-{port}",
    ]


def _rules(rules: list[tuple[str, list[str], list[str]]]) -> list[k8s.rbac.v1.PolicyRuleArgs]:
    return [k8s.rbac.v1.PolicyRuleArgs(api_groups=[group], resources=resources, verbs=verbs) for group, resources, verbs in rules]


@dataclass(frozen=True)
class AutonegArgs:
    project: str
    """GCP project of the global backend service (`--project-id`)."""
    namespace: str
    service_account: str
    """Namespace and Kubernetes service account the load balancer's IAM binding names (AUTONEG_NAMESPACE,
    AUTONEG_SERVICE_ACCOUNT in components.gcp.load_balancer): any other name gets no GCP permissions."""
    cluster: pulumi.Resource
    """The cluster component: every object is `deleted_with` it."""
    iam: Sequence[pulumi.Resource] = ()
    """What grants the controller its GCP permissions (the global load balancer component); the Deployment waits
    for it. Default none."""


class Autoneg(pulumi.ComponentResource):
    """`ai-infra:kubernetes:Autoneg`. Children: `<name>-namespace`, `<name>-service-account`, `<name>-manager-role`,
    `<name>-manager-binding`, `<name>-metrics-auth-role`, `<name>-metrics-auth-binding`, `<name>-leader-role`,
    `<name>-leader-binding`, `<name>-controller` (Deployment), `<name>-pdb`."""

    def __init__(self, name: str, args: AutonegArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:kubernetes:Autoneg", name, None, opts)
        cluster, ns_name, sa_name = args.cluster, args.namespace, args.service_account
        ns = k8s.core.v1.Namespace(f"{name}-namespace", metadata=k8s.meta.v1.ObjectMetaArgs(
            name=ns_name, labels={**LABELS, **RESTRICTED_PSA}), opts=child_opts(self, cluster))
        in_ns = child_opts(self, cluster, [ns])
        account = k8s.core.v1.ServiceAccount(
            f"{name}-service-account", metadata=k8s.meta.v1.ObjectMetaArgs(name=sa_name, namespace=ns_name, labels=LABELS),
            # Only the controller's pod mounts a token (it sets it itself).
            automount_service_account_token=False, opts=in_ns)
        subject = k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=sa_name, namespace=ns_name)
        bindings: list[pulumi.Resource] = []
        for suffix, role_name, rules in (("manager", "autoneg-manager-role", MANAGER_RULES),
                                         ("metrics-auth", "autoneg-proxy-role", METRICS_AUTH_RULES)):
            role = k8s.rbac.v1.ClusterRole(f"{name}-{suffix}-role", metadata=k8s.meta.v1.ObjectMetaArgs(
                name=role_name, labels=LABELS), rules=_rules(rules), opts=child_opts(self, cluster))
            bindings.append(k8s.rbac.v1.ClusterRoleBinding(
                f"{name}-{suffix}-binding", metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{role_name}binding", labels=LABELS),
                role_ref=k8s.rbac.v1.RoleRefArgs(api_group=RBAC_GROUP, kind="ClusterRole", name=role_name),
                subjects=[subject], opts=child_opts(self, cluster, [role, account])))
        leader = k8s.rbac.v1.Role(f"{name}-leader-role", metadata=k8s.meta.v1.ObjectMetaArgs(
            name="autoneg-leader-election-role", namespace=ns_name, labels=LABELS), rules=_rules(LEADER_RULES), opts=in_ns)
        bindings.append(k8s.rbac.v1.RoleBinding(
            f"{name}-leader-binding", metadata=k8s.meta.v1.ObjectMetaArgs(
                name="autoneg-leader-election-rolebinding", namespace=ns_name, labels=LABELS),
            role_ref=k8s.rbac.v1.RoleRefArgs(api_group=RBAC_GROUP, kind="Role", name="autoneg-leader-election-role"),
            subjects=[subject], opts=child_opts(self, cluster, [leader, account])))
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-controller",
            metadata=k8s.meta.v1.ObjectMetaArgs(name="autoneg-controller-manager", namespace=ns_name, labels=LABELS),
            spec=self._spec(args.project, sa_name),
            opts=child_opts(self, cluster, [ns, account, *bindings, *args.iam]))
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb", metadata=k8s.meta.v1.ObjectMetaArgs(name="autoneg-controller-manager", namespace=ns_name, labels=LABELS),
            spec=k8s.policy.v1.PodDisruptionBudgetSpecArgs(
                min_available=1, selector=k8s.meta.v1.LabelSelectorArgs(match_labels=SELECTOR)), opts=in_ns)
        self.outputs = {"namespace": ns_name, "service_account": sa_name, "image": IMAGE}
        self.register_outputs(self.outputs)

    @staticmethod
    def _spec(project: str, service_account: str) -> k8s.apps.v1.DeploymentSpecArgs:
        seccomp = k8s.core.v1.SeccompProfileArgs(type="RuntimeDefault")
        container = k8s.core.v1.ContainerArgs(
            name="manager", image=IMAGE, command=["/manager"], args=controller_args(project),
            ports=[k8s.core.v1.ContainerPortArgs(name="health", container_port=HEALTH_PORT),
                   k8s.core.v1.ContainerPortArgs(name="metrics", container_port=METRICS_PORT)],
            liveness_probe=k8s.core.v1.ProbeArgs(http_get=k8s.core.v1.HTTPGetActionArgs(path="/healthz", port=HEALTH_PORT),
                                                 initial_delay_seconds=15, period_seconds=20),
            readiness_probe=k8s.core.v1.ProbeArgs(http_get=k8s.core.v1.HTTPGetActionArgs(path="/readyz", port=HEALTH_PORT),
                                                  initial_delay_seconds=5, period_seconds=10),
            resources=k8s.core.v1.ResourceRequirementsArgs(**RESOURCES),
            security_context=k8s.core.v1.SecurityContextArgs(
                allow_privilege_escalation=False, privileged=False, read_only_root_filesystem=True,
                capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
                run_as_non_root=True, run_as_user=RUN_AS, run_as_group=RUN_AS, seccomp_profile=seccomp))
        # Spread the two replicas over nodes; the active one holds the lease, the other takes over.
        anti_affinity = k8s.core.v1.PodAntiAffinityArgs(preferred_during_scheduling_ignored_during_execution=[
            k8s.core.v1.WeightedPodAffinityTermArgs(weight=100, pod_affinity_term=k8s.core.v1.PodAffinityTermArgs(
                topology_key="kubernetes.io/hostname", label_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=SELECTOR)))])
        return k8s.apps.v1.DeploymentSpecArgs(
            replicas=2,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=SELECTOR),
            strategy=k8s.apps.v1.DeploymentStrategyArgs(
                type="RollingUpdate", rolling_update=k8s.apps.v1.RollingUpdateDeploymentArgs(max_unavailable=1)),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels=LABELS),
                spec=k8s.core.v1.PodSpecArgs(
                    service_account_name=service_account,
                    # The controller talks to the API server with its service account token.
                    automount_service_account_token=True,
                    security_context=k8s.core.v1.PodSecurityContextArgs(
                        run_as_non_root=True, run_as_user=RUN_AS, run_as_group=RUN_AS, seccomp_profile=seccomp),
                    # Workload Identity tokens come from the GKE metadata server; the image is built for amd64 only.
                    node_selector={"iam.gke.io/gke-metadata-server-enabled": "true", "kubernetes.io/arch": "amd64",
                                   "kubernetes.io/os": "linux"},
                    affinity=k8s.core.v1.AffinityArgs(pod_anti_affinity=anti_affinity),
                    termination_grace_period_seconds=10,
                    containers=[container])))
