"""The NetworkPolicy of a team namespace (pure): what its pods may reach, per cloud.

Ingress: from pods of the same namespace only (the inference namespace adds the load balancer, `inference`).
Egress, allowed:
- pods of the same namespace;
- cluster DNS: the `k8s-app: kube-dns` pods in kube-system (CoreDNS on EKS and AKS, kube-dns on GKE), UDP/TCP 53.
  No cloud here runs NodeLocal DNSCache; were it turned on, its link-local listener (169.254.20.10) is outside every
  range excepted below, so the last rule already admits it;
- the Kubernetes API server on 443 (Ray, Kueue-integrated frameworks and operators in team pods call it): the
  `kubernetes` Service's ClusterIP, for CNIs that match egress before the Service is translated to its endpoints (the
  VPC CNI's network policy agent: aws/aws-network-policy-agent, open-telemetry/opentelemetry-operator#5621), and on
  EKS the node subnets, where EKS puts the control plane's ENIs (the cluster's subnets are the node subnets);
- everything outside the cluster: object storage (S3 and GCS endpoints, Blob private endpoints in the network's
  endpoint subnets), package and model registries, cloud APIs: `0.0.0.0/0` except
  - the ranges other pods have addresses in: EKS's VPC CNI gives pods addresses of the node subnets (so those go,
    which also keeps nodes' host-network ports out of reach); GKE (VPC-native) and AKS (CNI overlay) the pod range.
    Cilium (AKS, and GKE Dataplane V2, which is built on it) does not apply CIDR rules to cluster pods or nodes
    anyway (Cilium docs, "IP/CIDR based" policies); the VPC CNI agent matches plain addresses, so there the except
    is what denies;
  - the service range: another namespace's Services (a pre-translation match would otherwise admit them);
  - the instance metadata address 169.254.169.254 on EKS and AKS, which hands out the node's credentials (pods use
    IRSA and Azure Workload Identity instead). Not on GKE: with `GKE_METADATA` nodes that address is the GKE metadata
    server, which serves only the pod's own Workload Identity, and Workload Identity needs it. The clusters are IPv4
    only, so EC2's IPv6 metadata address (fd00:ec2::254) needs no rule.
Denied: everything else, in particular pods and Services of other teams' and the platform's namespaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi_kubernetes as k8s

from components.spec import Cloud
from components.spec.network import NetworkSpec

DNS_PORT = 53
API_SERVER_PORT = 443
METADATA = "169.254.169.254/32"
ANYWHERE = "0.0.0.0/0"


@dataclass(frozen=True)
class ClusterNetwork:
    """The address ranges a team's NetworkPolicy names (from the region's `network` spec)."""

    pod_ranges: tuple[str, ...]
    """Where pods (and on EKS nodes) have addresses."""
    service_range: str
    api_server: tuple[str, ...]
    """Where the API server is reached on 443 inside the excepted ranges."""
    metadata_blocked: bool


def cluster_network(cloud: Cloud, network: NetworkSpec) -> ClusterNetwork:
    """The ranges of a region's cluster, as its cloud composition sets them (EKS `service_ipv4_cidr`; GKE secondary
    ranges; AKS overlay `pod_cidr` and `service_cidr`)."""
    service = network.service_range(cloud)
    kubernetes_service = f"{service[1]}/32"  # the API server allocates the range's first address to `kubernetes`
    if cloud is Cloud.AWS:
        nodes = tuple(str(s) for s in network.subnet_plan().private)
        return ClusterNetwork(pod_ranges=nodes, service_range=str(service),
                              api_server=(kubernetes_service, *nodes), metadata_blocked=True)
    return ClusterNetwork(pod_ranges=(str(network.effective_pod_cidr),), service_range=str(service),
                          api_server=(kubernetes_service,), metadata_blocked=cloud is not Cloud.GCP)


def outside_cluster(net: ClusterNetwork) -> list[str]:
    """The `except` list of the rule that admits everything outside the cluster."""
    return [*net.pod_ranges, net.service_range, *([METADATA] if net.metadata_blocked else [])]


def _ports(protocols: tuple[str, ...], port: int) -> list[k8s.networking.v1.NetworkPolicyPortArgs]:
    return [k8s.networking.v1.NetworkPolicyPortArgs(protocol=protocol, port=port) for protocol in protocols]


def team_policy_spec(net: ClusterNetwork) -> k8s.networking.v1.NetworkPolicySpecArgs:
    """Every pod of the namespace: ingress from the namespace, egress as the module doc says."""
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
