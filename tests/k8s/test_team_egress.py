"""A team namespace's egress: DNS, its own namespace, the API server and everything outside the cluster (object
storage, registries, cloud APIs), and nothing of the other namespaces: the pod, node (EKS, and AKS with Calico) and
service ranges of each cloud, and the metadata address where it hands out node credentials."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, ip_network
from typing import Any

import pytest
from k8s.layer import NETWORK, make_spec, plan_layer
from k8s.validation import validate

from aiinfra.plan.runtime import PlanResult
from components.azure.network import subnet_layout
from components.k8s.netpol import cluster_network
from components.spec import Cloud
from components.spec.azure import aks_apiserver_subnet, aks_node_subnet

POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
CLUSTERS = {"aws": "test-us-east-1", "gcp": "test-us-central1", "azure": "test-eastus2"}
REGIONS = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus2"}


def egress(plan: PlanResult, cloud: str, team: str = "research") -> list[dict[str, Any]]:
    policy = plan.one(POLICY, f"{CLUSTERS[cloud]}-{team}-network-policy").inputs
    return policy["spec"]["egress"]


def allowed(rules: list[dict[str, Any]], address: str, port: int, protocol: str = "TCP") -> bool:
    """Whether an ipBlock rule admits `address:port` (the rules' pod/namespace selectors are left to the callers)."""
    ip = IPv4Address(address)
    for rule in rules:
        ports = rule.get("ports")
        if ports and not any(p["port"] == port and p["protocol"] == protocol for p in ports):
            continue
        for peer in rule.get("to", []):
            block = peer.get("ipBlock")
            if block and ip in ip_network(block["cidr"]) and not any(ip in ip_network(e) for e in block.get("except", [])):
                return True
    return False


def network(cloud: str):
    spec = make_spec()
    region = getattr(spec.clouds, cloud).regions[REGIONS[cloud]]
    return region.network


def test_egress_rules_per_cloud(three_cloud_plan: PlanResult) -> None:
    for cloud in ("aws", "gcp", "azure"):
        rules = egress(three_cloud_plan, cloud)
        assert rules[0] == {"to": [{"podSelector": {}}]}  # own namespace
        assert rules[1]["to"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                                   "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}]
        assert rules[1]["ports"] == [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
        # No other namespace is selected: other teams' and the platform's pods are reached by no selector rule.
        assert not [p for r in rules for p in r.get("to", []) if "namespaceSelector" in p and p is not rules[1]["to"][0]]
        net = network(cloud)
        service = net.service_range(Cloud(cloud))
        # The API server through the `kubernetes` Service's ClusterIP (its range's first address), on 443 only.
        assert allowed(rules, str(service[1]), 443) and not allowed(rules, str(service[1]), 80)
        # Another namespace's Service, pods and (EKS) nodes: denied on any port.
        assert not allowed(rules, str(service[100]), 8080)
        if cloud == "aws":
            node_subnets = [IPv4Network(s) for s in ("10.10.0.0/20", "10.10.16.0/20", "10.10.32.0/20")]
            assert [str(s) for s in net.subnet_plan().private] == [str(s) for s in node_subnets]
            pod = str(node_subnets[1][50])  # VPC CNI: pods and nodes share the node subnets
            assert not allowed(rules, pod, 8080) and not allowed(rules, pod, 10250)
            # Not even 443: every pod and node of the VPC has an address there. The API server through the
            # `kubernetes` ClusterIP is enough, the agent matching before kube-proxy's DNAT; the control plane's ENIs
            # (what the endpoint's hostname resolves to in the VPC) are in these subnets and stay denied.
            assert not allowed(rules, pod, 443)
            assert [r for r in rules if r.get("ports") == [{"protocol": "TCP", "port": 443}]][0]["to"] == [
                {"ipBlock": {"cidr": f"{service[1]}/32"}}]
            assert not allowed(rules, "169.254.169.254", 80)  # IMDS: the node role's credentials
            endpoint = str(net.subnet_plan().endpoints[0][10])  # interface endpoints (S3, STS, ECR) stay reachable
            assert allowed(rules, endpoint, 443)
        else:
            pod = str(net.effective_pod_cidr[70000])
            assert not allowed(rules, pod, 8080) and not allowed(rules, pod, 443)
            node = str(net.subnet_plan().private[0][10])
            assert allowed(rules, node, 443)  # GKE's PSC / AKS's private API endpoint live in the node network
            # Cilium (AKS's default, GKE Dataplane V2) applies no CIDR rule to nodes; no node range is excepted, so the
            # private API endpoint in the node subnet stays reachable on any port the policy names.
            excepted = [e for r in rules for p in r.get("to", []) for e in p.get("ipBlock", {}).get("except", [])]
            assert not [e for e in excepted if ip_network(e).overlaps(ip_network(str(net.cidr)))]
            # GKE's metadata address is the GKE metadata server (Workload Identity); Azure's IMDS is blocked.
            assert allowed(rules, "169.254.169.254", 80) == (cloud == "gcp")
        assert allowed(rules, "52.216.0.10", 443) and allowed(rules, "142.250.1.1", 443)  # S3, Google APIs, registries
        assert allowed(rules, "169.254.20.10", 53, "UDP")  # NodeLocal DNSCache's address, were it turned on


def test_the_policy_is_valid(three_cloud_plan: PlanResult) -> None:
    for cloud in ("aws", "gcp", "azure"):
        policy = three_cloud_plan.one(POLICY, f"{CLUSTERS[cloud]}-serving-network-policy").inputs
        validate({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", **policy})
        [block] = [p["ipBlock"] for r in policy["spec"]["egress"] for p in r.get("to", [])
                   if "ipBlock" in p and p["ipBlock"]["cidr"] == "0.0.0.0/0"]
        # The API server refuses an except outside the cidr; every entry is a proper subnet of it.
        assert all(ip_network(e).subnet_of(ip_network("0.0.0.0/0")) and ip_network(e).prefixlen > 0 for e in block["except"])


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_custom_ranges_are_followed(cloud: str) -> None:
    pools = {c: {"gpu_pools": {}} for c in ("aws", "gcp", "azure")}
    net: dict[str, Any] = {"cidr": NETWORK[cloud], "service_cidr": "172.20.0.0/16"}
    if cloud != "aws":
        net["pod_cidr"] = "100.96.0.0/14"
    if cloud == "azure":
        net["transit_encryption"] = "monitor"
    spec = make_spec(clouds=(cloud,), pools=pools)
    region = getattr(spec.clouds, cloud).regions[REGIONS[cloud]]
    region = region.model_copy(update={"network": region.network.model_copy(update={
        k: IPv4Network(v) for k, v in net.items() if k.endswith("cidr")})})
    ranges = cluster_network(Cloud(cloud), region.network)
    assert ranges.service_range == "172.20.0.0/16" and ranges.api_server[0] == "172.20.0.1/32"
    if cloud != "aws":
        assert ranges.pod_ranges == ("100.96.0.0/14",)


def test_a_plan_with_custom_ranges_names_them() -> None:
    """Through the layer: the policy follows the region's `network` (here EKS's service range)."""
    spec = make_spec(clouds=("aws",))
    data = spec.model_dump(mode="json", exclude_defaults=True)  # as written: no nulls, no other-cloud defaults
    data["clouds"]["aws"]["regions"]["us-east-1"]["network"]["service_cidr"] = "172.20.0.0/16"
    from components.spec import load_platform
    plan = plan_layer(load_platform(data))
    rules = egress(plan, "aws")
    assert allowed(rules, "172.20.0.1", 443) and not allowed(rules, "172.20.0.10", 53, "UDP")


# --- AKS with Calico ----------------------------------------------------------------------------------------------


def calico_plan(**cluster: Any) -> tuple[PlanResult, Any]:
    """An AKS cluster under `clouds.azure.network_policy: calico` (and `cluster` settings), planned through the layer."""
    spec = make_spec(clouds=("azure",))
    data = spec.model_dump(mode="json", exclude_defaults=True)  # as written: no nulls, no other-cloud defaults
    data["clouds"]["azure"]["network_policy"] = "calico"
    data["clouds"]["azure"].update(cluster.pop("cloud", {}))
    data["clouds"]["azure"]["regions"]["eastus2"]["cluster"].update(cluster)
    from components.spec import load_platform
    platform = load_platform(data)
    return plan_layer(platform), platform.clouds.azure.regions["eastus2"].network


def test_calico_keeps_team_pods_off_every_nodes_host_ports() -> None:
    """Calico matches ipBlocks against node addresses too (projectcalico/calico#6634): the node subnet is excepted,
    and opened on 443 alone, where a private cluster's API server endpoint is (learn.microsoft.com/azure/aks/
    private-clusters: "a private endpoint exposed on the subnet of your AKS cluster")."""
    plan, net = calico_plan()
    rules = egress(plan, "azure")
    nodes = aks_node_subnet(net.cidr)
    assert nodes == subnet_layout(net.cidr, [])["nodes"]  # the subnet the Azure network component gives the node pools
    node = str(nodes[4])
    for port in (10250, 9100, 22, 8080):  # kubelet, node-exporter, ssh, anything host-network
        assert not allowed(rules, node, port), port
    assert allowed(rules, node, 443)  # the private API server endpoint; nodes listen on no host port 443
    assert not allowed(rules, str(net.effective_pod_cidr[70000]), 443)  # other pods, still
    layout = subnet_layout(net.cidr, [])
    assert allowed(rules, str(layout["endpoints"][10]), 443)  # Blob and Key Vault private endpoints
    assert not allowed(rules, "169.254.169.254", 80)
    validate({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              **plan.one(POLICY, f"{CLUSTERS['azure']}-research-network-policy").inputs})


@pytest.mark.parametrize("case", ["customer_key", "public"])
def test_calico_opens_no_node_port_where_the_api_server_is_elsewhere(case: str) -> None:
    """API Server VNet Integration (`etcd_encryption: customer_key`) puts the API server behind an internal load
    balancer in the `apiserver` subnet, outside the node subnet; a public cluster's is a public address."""
    if case == "customer_key":
        plan, net = calico_plan(cloud={"etcd_encryption": "customer_key"})
    else:
        plan, net = calico_plan(api_access="public_restricted", authorized_cidrs=["203.0.113.0/24"])
    rules = egress(plan, "azure")
    node = str(aks_node_subnet(net.cidr)[4])
    assert not allowed(rules, node, 443) and not allowed(rules, node, 10250)
    if case == "customer_key":
        assert allowed(rules, str(aks_apiserver_subnet(net.cidr)[4]), 443)
    else:
        assert allowed(rules, "20.40.1.1", 443)  # a public API server address
