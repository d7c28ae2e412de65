"""Pins behaviour of the GCP, Azure, Cloud TPU and cross-cloud rules (gcp.py, gcp_network.py, azure.py, tpu.py,
crosscloud.py) that the other policy tests left free to change. Each case came from a mutation review: a small edit
to the rule (an allowed value dropped, a default changed, a type token or property name misspelt) that no test caught.
Props are in the wire form the engine sends (camelCase, as the provider SDKs name them)."""

from __future__ import annotations

import pytest
from policy_helpers import UNKNOWN, resource, run_resource, run_stack

SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp-firewall-no-open-admin-ingress"
STORAGE = "azure-native:storage:StorageAccount"
AKS = "azure-native:containerservice:ManagedCluster"


# --- gcp_network.py ---

@pytest.mark.parametrize("purpose", ["REGIONAL_MANAGED_PROXY", "GLOBAL_MANAGED_PROXY", "INTERNAL_HTTPS_LOAD_BALANCER",
                                     "PRIVATE_SERVICE_CONNECT"])
def test_proxy_and_private_service_connect_subnets_need_no_flow_logs(purpose: str) -> None:
    assert run_resource("gcp-subnet-flow-logs", SUBNET, {"purpose": purpose, "ipCidrRange": "10.9.0.0/23"}) == []


def test_a_vm_subnet_without_flow_logs_or_private_google_access_is_reported() -> None:
    expected = ["flow logs are off", "Private Google Access is off: nodes need NAT to reach Google APIs"]
    assert run_resource("gcp-subnet-flow-logs", SUBNET, {"ipCidrRange": "10.0.0.0/20"}) == expected
    assert run_resource("gcp-subnet-flow-logs", SUBNET, {"purpose": "PRIVATE", "ipCidrRange": "10.0.0.0/20"}) == expected


@pytest.mark.parametrize("purpose", ["PRIVATE_NAT", "PEER_MIGRATION"])
def test_private_nat_and_peer_migration_subnets_still_need_flow_logs(purpose: str) -> None:
    """No documentation exempts these two from flow logs (only proxy-only subnets), so they are checked like VM subnets."""
    props = {"purpose": purpose, "ipCidrRange": "10.9.0.0/23", "privateIpGoogleAccess": True}
    assert run_resource("gcp-subnet-flow-logs", SUBNET, props) == ["flow logs are off"]


@pytest.mark.parametrize("type_", ["gcp:compute/firewallPolicyRule:FirewallPolicyRule",
                                   "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule",
                                   "gcp:compute/regionNetworkFirewallPolicyRule:RegionNetworkFirewallPolicyRule"])
@pytest.mark.parametrize(("key", "value", "expected"), [
    ("srcNetworkContext", "VPC_NETWORKS", []), ("srcNetworkScope", "VPC_NETWORKS", []),
    ("srcNetworkScope", "NON_INTERNET", []), ("srcNetworkContext", "INTRA_VPC", []),
    ("srcNetworkContext", "INTERNET", ["ingress from 0.0.0.0/0 to port 22"]),
])
def test_a_policy_rule_matching_only_non_internet_sources_opens_nothing(type_: str, key: str, value: str,
                                                                         expected: list[str]) -> None:
    """srcIpRanges 0.0.0.0/0 narrowed by a network scope that leaves the internet out (VPC_NETWORKS: the srcNetworks
    named) admits no internet traffic."""
    match = {"srcIpRanges": ["0.0.0.0/0"], key: value, "layer4Configs": [{"ipProtocol": "tcp", "ports": ["22"]}]}
    assert run_resource(FIREWALL, type_, {"action": "allow", "direction": "INGRESS", "priority": 1000, "match": match}) == expected


# --- azure.py ---

@pytest.mark.parametrize(("version", "expected"), [
    ("TLS1_2", []), ("TLS1_3", []), ("TLS1_1", ["minimum TLS version is TLS1_1"]), (None, ["minimum TLS version is TLS1_0"]),
])
def test_storage_accounts_accept_tls_1_2_and_1_3(version: str | None, expected: list[str]) -> None:
    props = {"enableHttpsTrafficOnly": True, "allowBlobPublicAccess": False}
    if version is not None:
        props["minimumTlsVersion"] = version
    assert run_resource("azure-storage-secure-transfer", STORAGE, props) == expected


@pytest.mark.parametrize("engine", ["Azure", "Calico", "CILIUM"])
def test_aks_network_policy_engines_are_matched_in_any_case(engine: str) -> None:
    """The enum values are lower case (azure-native NetworkPolicy), but the props take any string: the rule lowercases."""
    assert run_resource("azure-aks-network-policy", AKS, {"networkProfile": {"networkPolicy": engine}}) == []
    assert run_resource("azure-aks-network-policy", AKS, {"networkProfile": {"networkPolicy": "None"}}) == [
        "networkProfile.networkPolicy is None: NetworkPolicies are not enforced"]


@pytest.mark.parametrize(("type_", "wrap"), [
    ("azure-native:network:SecurityRule", lambda r: r),
    ("azure-native:network:NetworkSecurityGroup", lambda r: {"securityRules": [r]}),
])
def test_nsg_rules_listing_several_port_ranges_are_each_checked(type_: str, wrap) -> None:
    rule = {"name": "web-and-admin", "direction": "Inbound", "access": "Allow", "protocol": "Tcp", "priority": 100,
            "sourceAddressPrefix": "Internet", "sourcePortRange": "*", "destinationAddressPrefix": "*",
            "destinationPortRanges": ["443", "3380-3390", "20-22"]}
    assert run_resource("azure-nsg-no-open-admin-ingress", type_, wrap(rule)) == [
        "rule web-and-admin allows the internet to port 3389", "rule web-and-admin allows the internet to port 22"]
    assert run_resource("azure-nsg-no-open-admin-ingress", type_, wrap({**rule, "destinationPortRanges": ["443", "8080"]})) == []


# --- crosscloud.py ---

def test_residency_reads_a_resource_zone_before_its_provider_region() -> None:
    """A zonal resource (a Compute Engine VM, a TPU VM) names its zone; the provider's region says nothing about it."""
    abroad = resource("gcp:compute/instance:Instance", {"zone": "us-central1-a", "machineType": "n2-standard-4"}, "abroad",
                      provider={"region": "europe-west4"})
    home = resource("gcp:tpu/v2Vm:V2Vm", {"zone": "europe-west4-b", "acceleratorType": "v5litepod-8"}, "home",
                    provider={"region": "us-central1"})
    assert run_stack("data-residency", [abroad, home], {"allowedRegions": ["europe-west4"]}) == [
        (abroad.urn, "region us-central1-a is outside the allowed regions europe-west4")]


def test_residency_checks_secret_manager_user_managed_replicas() -> None:
    replicas = {"userManaged": {"replicas": [{"location": "europe-west4"}, {"location": "us-east1"}]}}
    secret = resource("gcp:secretmanager/secret:Secret", {"secretId": "token", "replication": replicas}, "token",
                      provider={"region": "europe-west4"})
    assert run_stack("data-residency", [secret], {"allowedRegions": ["europe-west4"]}) == [
        (secret.urn, "replica region us-east1 (replication.userManaged.replicas[].location) is outside the allowed "
                     "regions europe-west4")]


@pytest.mark.parametrize("type_", ["azure-native:keyvault:Key", "azure-native:keyvault:Secret"])
def test_residency_leaves_key_vault_keys_and_secrets_to_their_vault(type_: str) -> None:
    """They live in their vault (whose location is checked) and report a location only after creation: in a preview
    it is unknown, which must not stop the rule."""
    item = resource(type_, {"vaultName": "kv", "resourceGroupName": "rg", "location": UNKNOWN}, "item")
    vault = resource("azure-native:keyvault:Vault", {"vaultName": "kv", "location": "eastus"}, "kv")
    assert run_stack("data-residency", [item, vault], {"allowedRegions": ["westeurope"]}) == [
        (vault.urn, "region eastus is outside the allowed regions westeurope")]


def test_a_global_location_is_no_region() -> None:
    """Azure Front Door profiles and other global services take location Global: no region to keep data in."""
    profile = resource("azure-native:cdn:Profile", {"location": "Global", "sku": {"name": "Premium_AzureFrontDoor"}}, "fd")
    assert run_stack("data-residency", [profile], {"allowedRegions": ["westeurope"]}) == []


def test_data_zone_reads_a_gke_clusters_resource_labels() -> None:
    cluster = resource("gcp:container/cluster:Cluster", {"location": "us-central1", "resourceLabels": {"data-zone": "eu"}}, "gke")
    assert run_stack("data-zone-residency", [cluster], {"dataZones": {"eu": ["europe-west4"]}}) == [
        (cluster.urn, "data-zone eu data is in us-central1; allowed: europe-west4")]


def test_data_zone_reads_the_providers_merged_effective_labels() -> None:
    """effectiveLabels: the resource's labels merged with the provider's defaultLabels, as a preview reports them."""
    bucket = resource("gcp:storage/bucket:Bucket", {"location": "US-EAST1", "effectiveLabels": {"data-zone": "eu"}}, "b")
    assert run_stack("data-zone-residency", [bucket], {"dataZones": {"eu": ["europe-west4"]}}) == [
        (bucket.urn, "data-zone eu data is in us-east1; allowed: europe-west4")]
