"""The NetworkPolicy of a team namespace: what its pods may reach, per cloud, and the ranges it names (pure; the
policy object is `tenancy.team_policy_spec`).

Ingress: from pods of the same namespace only (the inference namespace adds the load balancer, `inference`).
Egress, allowed:
- pods of the same namespace;
- cluster DNS: the `k8s-app: kube-dns` pods in kube-system (CoreDNS on EKS and AKS, kube-dns on GKE), UDP/TCP 53.
  No cloud here runs NodeLocal DNSCache; were it turned on, its link-local listener (169.254.20.10) is outside every
  range excepted below, so the last rule already admits it;
- the Kubernetes API server on 443 (Ray, Kueue-integrated frameworks and operators in team pods call it) through the
  `kubernetes` Service, as in-cluster clients do (KUBERNETES_SERVICE_HOST): its ClusterIP, for engines that match
  egress before the Service is translated to its endpoints. The VPC CNI's network policy agent does (its eBPF
  programs sit on the pod's veth, before kube-proxy's DNAT: aws/amazon-network-policy-controller-k8s
  pkg/resolvers/endpoints.go `getMatchingServiceClusterIPs`), so on EKS the ClusterIP is the whole allowance. A client
  in a team pod that dials the EKS endpoint's hostname instead (a kubeconfig copied into the pod) is refused: the
  private endpoint resolves to the control plane's ENIs in the node subnets, which are excepted below and not opened on
  443 because every pod and node of the VPC has an address there. Engines that match after translation (Cilium's
  socket-level load balancing, Calico's iptables policy after kube-proxy) see the API server's own address, which the
  last rule admits unless it is excepted: only AKS with Calico excepts it, see there;
- everything outside the cluster: object storage (S3 and GCS endpoints, Blob private endpoints in the network's
  endpoint subnets), package and model registries, cloud APIs: `0.0.0.0/0` except
  - the ranges other pods have addresses in: EKS's VPC CNI gives pods addresses of the node subnets (so those go,
    which also keeps nodes' host-network ports out of reach); GKE (VPC-native) and AKS (CNI overlay) the pod range.
    Cilium (AKS's default, and GKE Dataplane V2, which is built on it) does not apply CIDR rules to cluster pods or
    nodes anyway (Cilium docs, "IP/CIDR based" policies); the VPC CNI agent matches plain addresses, so there the
    except is what denies;
  - with Calico on AKS (`clouds.azure.network_policy: calico`), the node subnet too: Calico matches ipBlocks against
    node addresses as well (projectcalico/calico#6634), so `0.0.0.0/0` would admit every node's host-network ports
    (kubelet 10250, node-exporter 9100). A private cluster's API server then sits in that subnet ("a private endpoint
    exposed on the subnet of your AKS cluster", learn.microsoft.com/azure/aks/private-clusters), so the node subnet is
    opened on TCP 443 only, unless the cluster runs API Server VNet Integration (`etcd_encryption: customer_key`),
    whose API server is an internal load balancer in the `apiserver` subnet (learn.microsoft.com/azure/aks/
    api-server-vnet-integration), outside the except; a public cluster's API server is a public address;
  - the service range: another namespace's Services (a pre-translation match would otherwise admit them);
  - the instance metadata address 169.254.169.254 on EKS and AKS, which hands out the node's credentials (pods use
    IRSA and Azure Workload Identity instead). Not on GKE: with `GKE_METADATA` nodes that address is the GKE metadata
    server, which serves only the pod's own Workload Identity, and Workload Identity needs it. The clusters are IPv4
    only, so EC2's IPv6 metadata address (fd00:ec2::254) needs no rule.
Denied: everything else, in particular pods and Services of other teams' and the platform's namespaces.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.spec import Cloud
from components.spec.azure import aks_node_subnet
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
    node_ranges: tuple[str, ...] = ()
    """Node addresses excepted besides `pod_ranges`, where the policy engine matches ipBlocks against nodes (Calico
    on AKS). Default none."""


def cluster_network(cloud: Cloud, network: NetworkSpec, *, calico: bool = False,
                    api_server_in_nodes: bool = False) -> ClusterNetwork:
    """The ranges of a region's cluster, as its cloud composition sets them (EKS `service_ipv4_cidr`; GKE secondary
    ranges; AKS overlay `pod_cidr` and `service_cidr`). `calico`: the AKS cluster's policy engine is Calico, so the
    node subnet is excepted; `api_server_in_nodes`: its API server's private endpoint is in that subnet (a private
    cluster without API Server VNet Integration), which is then opened on 443. Defaults off."""
    service = network.service_range(cloud)
    kubernetes_service = f"{service[1]}/32"  # the API server allocates the range's first address to `kubernetes`
    if cloud is Cloud.AWS:
        nodes = tuple(str(s) for s in network.subnet_plan().private)
        return ClusterNetwork(pod_ranges=nodes, service_range=str(service), api_server=(kubernetes_service,),
                              metadata_blocked=True)
    node_ranges: tuple[str, ...] = ()
    api_server: tuple[str, ...] = (kubernetes_service,)
    if cloud is Cloud.AZURE and calico:
        node_ranges = (str(aks_node_subnet(network.cidr)),)
        if api_server_in_nodes:
            api_server += node_ranges
    return ClusterNetwork(pod_ranges=(str(network.effective_pod_cidr),), service_range=str(service),
                          api_server=api_server, metadata_blocked=cloud is not Cloud.GCP, node_ranges=node_ranges)


def outside_cluster(net: ClusterNetwork) -> list[str]:
    """The `except` list of the rule that admits everything outside the cluster."""
    return [*net.pod_ranges, *net.node_ranges, net.service_range, *([METADATA] if net.metadata_blocked else [])]
