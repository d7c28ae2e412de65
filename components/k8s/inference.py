"""The inference Service of a serving region's cluster, and the way in for the region's load balancer.

In the Service's namespace (created here, under Pod Security `restricted`, unless a team owns it):
- the Service, selecting the inference pods by `inference.pod_selector`. AWS and GCP: ClusterIP, and the load
  balancer reaches the pods directly (AWS: the TargetGroupBinding registers their IPs in the target group; GCP:
  standalone zonal NEGs, which autoneg adds to the global backend service). Azure: type LoadBalancer, whose
  annotations make AKS's cloud provider build an internal load balancer on a fixed address and the Private Link
  service Front Door Premium connects to (or, with Front Door Standard, a load balancer on the pre-made public
  address, where Front Door speaks HTTPS: the pods terminate TLS themselves, see `InferenceSpec.port`), with
  `externalTrafficPolicy: Local` (see `LOCAL_TRAFFIC`);
- a NetworkPolicy admitting the load balancer's source ranges on the port: team namespaces deny ingress by default;
- AWS: the TargetGroupBinding, which the AWS Load Balancer Controller serves. The Service and the binding wait for
  the controller's release: its Service mutator and the binding's CRD and webhooks must answer first.
- GCP: the Service depends on the autoneg controller and its IAM grant (`finalizers`): autoneg puts the finalizer
  `controller.autoneg.dev/neg` on it and removes it only while it runs and may call the backend service, so on
  deletion the Service goes first.

Readiness: Pulumi's default await for a Service waits for endpoints of running pods, which exist only once the
application is deployed, after the platform. AWS and GCP skip the await (nothing waits on the Service). On Azure the
Service is ready when it has a load balancer address: the cloud provider reconciles the Private Link service before it
publishes the address (cloud-provider-azure, EnsureLoadBalancer), so Front Door's origins, which depend on the
Service, find their Private Link service on the first `pulumi up`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.compose.types import InferenceBackend, InferenceTarget

from .eks import target_group_binding
from .objects import MANAGED_BY, RESTRICTED_PSA, child_opts, custom_resource

# pulumi-kubernetes await annotations (v4.18+; since 4.18.4 they take precedence over the default await logic).
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}
WAIT_FOR_ADDRESS = {"pulumi.com/waitFor": "jsonpath={.status.loadBalancer.ingress[0].ip}"}
POLICY_NAME = "ai-infra-from-load-balancer"
LOCAL_TRAFFIC = "Local"
"""`externalTrafficPolicy` of a load-balancer Service (Azure). With the default `Cluster` a node forwards the load
balancer's traffic and probes to pods on other nodes, from its own address; Cilium, AKS's default policy engine,
never matches node addresses against a NetworkPolicy ipBlock (learn.microsoft.com/azure/aks/
azure-cni-powered-by-cilium, Limitations), so those packets are dropped. `Local` delivers to the node's own pods
only, keeping the source address (the Private Link service's NAT address, or Front Door's), which the ipBlock
admits; the load balancer probes the Service's `healthCheckNodePort` (HTTP /healthz, answered by kube-proxy or
Cilium on the node itself, outside any NetworkPolicy: learn.microsoft.com/azure/aks/configure-load-balancer-standard,
"Default health probe behavior"), so only nodes running an inference pod receive traffic. AWS and GCP need no such
setting: their load balancers reach the pods' own addresses (IP target groups, GCE_VM_IP_PORT NEGs) and the Service is
ClusterIP."""


@dataclass(frozen=True)
class PreviousParent:
    """Where the namespace, the NetworkPolicy and the TargetGroupBinding were registered before this component held
    them (the AWS Load Balancer Controller component, as `<name>-namespace`, `<name>-from-load-balancer` and
    `<name>-binding`): aliases keep them from being replaced."""

    name: str
    type_: str

    def alias(self, suffix: str) -> pulumi.Alias:
        """The alias of the child `<this component's name>-<suffix>` as it was registered here."""
        return pulumi.Alias(name=f"{self.name}-{suffix}", parent=pulumi.create_urn(self.name, self.type_))


@dataclass(frozen=True)
class InferenceServiceArgs:
    backend: InferenceBackend
    cluster: pulumi.Resource
    """The cluster component: every object is `deleted_with` it."""
    team_namespaces: dict[str, pulumi.Resource]
    """Namespaces the tenancy layer owns; the Service's namespace is created only if it is not one of them."""
    retain_namespace: bool = False
    """Keep the namespace (and what users deployed into it) when it leaves the stack. Default off."""
    previous_parent: PreviousParent | None = None
    """Where the namespace, NetworkPolicy and binding were before (aliases). Default None (no aliases)."""
    namespace_aliases: tuple[pulumi.Alias, ...] = ()
    """Other places the namespace object may have been: the team of the same name's namespace, when the team left the
    config but the Service stays (in a protected environment the retained namespace still exists, and creating it
    again fails with "already exists"). Default none."""
    admission: tuple[pulumi.Resource, ...] = ()
    """Releases whose admission webhooks must answer before the Service and the binding are created (EKS: the Load
    Balancer Controller). Default none."""
    finalizers: tuple[pulumi.Resource, ...] = ()
    """What removes a finalizer it puts on the Service, and what that controller needs to do so (GKE: the autoneg
    controller, whose `controller.autoneg.dev/neg` finalizer stays until it has taken the NEGs out of the backend
    service, and the load balancer's IAM grant): the Service depends on them, so they are created first and deleted
    after it. Default none."""


class InferenceService(pulumi.ComponentResource):
    """`ai-infra:kubernetes:InferenceService`. Children: `<name>-namespace` (unless a team owns the namespace),
    `<name>-service`, `<name>-from-load-balancer` (NetworkPolicy; not when the backend names no source) and
    `<name>-binding` (TargetGroupBinding; AWS)."""

    TYPE = "ai-infra:kubernetes:InferenceService"

    def __init__(self, name: str, args: InferenceServiceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)
        backend, cluster, spec = args.backend, args.cluster, args.backend.spec
        self.spec = spec
        self.namespace = args.team_namespaces.get(spec.service_namespace)
        if self.namespace is None:
            self.namespace = k8s.core.v1.Namespace(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=spec.service_namespace, labels={**MANAGED_BY, **RESTRICTED_PSA}),
                opts=child_opts(self, cluster).merge(pulumi.ResourceOptions(
                    retain_on_delete=args.retain_namespace,
                    aliases=[*self._moved(args, "namespace"), *args.namespace_aliases])))
        in_namespace = child_opts(self, cluster, [self.namespace, *args.admission])
        self.service = k8s.core.v1.Service(
            f"{name}-service",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=spec.service_name, namespace=spec.service_namespace, labels=MANAGED_BY,
                annotations={**backend.annotations, **(WAIT_FOR_ADDRESS if backend.load_balancer else SKIP_AWAIT)}),
            spec=k8s.core.v1.ServiceSpecArgs(
                type="LoadBalancer" if backend.load_balancer else "ClusterIP",
                # The field exists for NodePort and LoadBalancer Services only (the API server refuses it elsewhere).
                external_traffic_policy=LOCAL_TRAFFIC if backend.load_balancer else None,
                selector=spec.selector,
                ports=[k8s.core.v1.ServicePortArgs(name="http", protocol="TCP", port=spec.port, target_port=spec.port)]),
            # Deleted before whatever must remove its finalizers (autoneg): else it would stay Terminating.
            opts=in_namespace.merge(pulumi.ResourceOptions(depends_on=list(args.finalizers))))
        if backend.sources:
            k8s.networking.v1.NetworkPolicy(
                f"{name}-from-load-balancer",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=POLICY_NAME, namespace=spec.service_namespace, labels=MANAGED_BY),
                spec=network_policy_spec(backend),
                opts=in_namespace.merge(pulumi.ResourceOptions(aliases=self._moved(args, "from-load-balancer"))))
        self.outputs = {"service": f"{spec.service_namespace}/{spec.service_name}", "port": spec.port,
                        "selector": spec.selector, "admitted": list(backend.sources)}
        if backend.target is not None:
            self.outputs["target_group_binding"] = self._bind(name, args, backend.target, in_namespace)
        self.register_outputs(self.outputs)

    def _bind(self, name: str, args: InferenceServiceArgs, target: InferenceTarget, opts: pulumi.ResourceOptions) -> str:
        spec = self.spec
        body = target_group_binding(spec.service_name, spec.service_namespace, spec.port, target.target_group_arn,
                                    target.load_balancer_security_group_id)
        # The controller's webhook refuses to change a binding's target group ("TargetGroupBinding update may not change
        # these immutable fields: spec.targetGroupARN"), and the endpoint's target group is replaced when the port
        # changes: the binding is replaced with it (deleted first: its name is fixed).
        custom_resource(f"{name}-binding", body, opts.merge(pulumi.ResourceOptions(
            depends_on=[self.service, target.endpoint], aliases=self._moved(args, "binding"),
            replace_on_changes=["spec.targetGroupARN"])))
        return f"{spec.service_namespace}/{spec.service_name}"

    @staticmethod
    def _moved(args: InferenceServiceArgs, suffix: str) -> list[pulumi.Alias]:
        return [args.previous_parent.alias(suffix)] if args.previous_parent is not None else []


def network_policy_spec(backend: InferenceBackend) -> k8s.networking.v1.NetworkPolicySpecArgs:
    """Ingress to the selected pods from the load balancer's source ranges, on the service port only."""
    return k8s.networking.v1.NetworkPolicySpecArgs(
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=backend.spec.selector), policy_types=["Ingress"],
        ingress=[k8s.networking.v1.NetworkPolicyIngressRuleArgs(
            from_=[k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr=cidr))
                   for cidr in backend.sources],
            ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=backend.spec.port)])])
