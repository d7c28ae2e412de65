"""Resource rules on what a protocol or policy name means: ELB security policies by their minimum TLS version,
firewall and NSG rules for protocols without ports, and GKE control planes with IP endpoints turned off."""

from __future__ import annotations

import pytest
from policy_helpers import UNKNOWN, run_resource, unknown_reported

LISTENER = "aws:lb/listener:Listener"
FIREWALL = "gcp:compute/firewall:Firewall"
NSG, NSG_RULE = "azure-native:network:NetworkSecurityGroup", "azure-native:network:SecurityRule"
GKE = "gcp:container/cluster:Cluster"


@pytest.mark.parametrize("policy", [
    "ELBSecurityPolicy-TLS13-1-2-Res-PQ-2025-09", "ELBSecurityPolicy-TLS13-1-2-PQ-2025-09", "ELBSecurityPolicy-TLS13-1-3-PQ-2025-09",
    "ELBSecurityPolicy-TLS13-1-2-Ext0-FIPS-PQ-2025-09", "ELBSecurityPolicy-TLS13-1-2-Res-FIPS-2023-04",
    "ELBSecurityPolicy-TLS13-1-2-Ext0-FIPS-2023-04", "ELBSecurityPolicy-TLS13-1-2-RFC9151-INTEROP1-FIPS-2023-07",
    "ELBSecurityPolicy-TLS13-1-3-RFC9151-FIPS-2023-07", "ELBSecurityPolicy-TLS13-1-2-2021-06", "ELBSecurityPolicy-TLS-1-2-Ext-2018-06",
    "ELBSecurityPolicy-FS-1-2-Res-2020-10",
])
def test_elb_policies_with_a_tls12_or_tls13_minimum_pass(policy: str) -> None:
    assert run_resource("aws-lb-listener-tls", LISTENER, {"protocol": "HTTPS", "sslPolicy": policy}) == []


@pytest.mark.parametrize("policy", [
    "ELBSecurityPolicy-2016-08", "ELBSecurityPolicy-2015-05", "ELBSecurityPolicy-FS-2018-06", "ELBSecurityPolicy-TLS-1-0-2015-04",
    "ELBSecurityPolicy-TLS-1-1-2017-01", "ELBSecurityPolicy-FS-1-1-2019-08", "ELBSecurityPolicy-TLS13-1-1-2021-06",
    "ELBSecurityPolicy-TLS13-1-0-2021-06", "ELBSecurityPolicy-TLS13-1-0-PQ-2025-09", "ELBSecurityPolicy-TLS13-1-1-FIPS-2023-04",
    "ELBSecurityPolicy-TLS13-1-0-FIPS-PQ-2025-09",
])
def test_elb_policies_that_allow_tls10_or_tls11_fail(policy: str) -> None:
    assert run_resource("aws-lb-listener-tls", LISTENER, {"protocol": "TLS", "sslPolicy": policy}) == [
        f"ssl policy {policy} allows TLS below 1.2; use one whose name sets the minimum to 1.2 or 1.3, such as "
        "ELBSecurityPolicy-TLS13-1-2-Res-PQ-2025-09 or ELBSecurityPolicy-TLS13-1-2-FIPS-2023-04"]


def test_an_https_listener_without_a_policy_gets_the_api_default_which_allows_tls10() -> None:
    assert run_resource("aws-lb-listener-tls", LISTENER, {"protocol": "HTTPS"})[0].startswith(
        "ssl policy ELBSecurityPolicy-2016-08 allows TLS below 1.2")


@pytest.mark.parametrize(("allows", "expected"), [
    ([{"protocol": "icmp"}], []),
    ([{"protocol": "esp"}, {"protocol": "ah"}], []),
    ([{"protocol": "icmp"}, {"protocol": "tcp", "ports": ["22"]}], ["ingress from 0.0.0.0/0 to port 22"]),
    ([{"protocol": "udp"}], ["ingress from 0.0.0.0/0 to all ports"]),
    ([{"protocol": "all"}], ["ingress from 0.0.0.0/0 to all ports"]),
    ([{"protocol": "6", "ports": ["3000-4000"]}], ["ingress from 0.0.0.0/0 to port 3389"]),
])
def test_gcp_firewall_rules_for_portless_protocols_open_no_port(allows: list, expected: list) -> None:
    props = {"direction": "INGRESS", "sourceRanges": ["0.0.0.0/0"], "allows": allows}
    assert run_resource("gcp-firewall-no-open-admin-ingress", FIREWALL, props) == expected


def nsg_rule(protocol: str, name: str = "r") -> dict:
    return {"name": name, "direction": "Inbound", "access": "Allow", "protocol": protocol, "priority": 100,
            "sourceAddressPrefix": "*", "sourcePortRange": "*", "destinationAddressPrefix": "*", "destinationPortRange": "*"}


def test_azure_nsg_rules_for_portless_protocols_open_no_port() -> None:
    rules = [nsg_rule("Icmp", "ping"), nsg_rule("Esp", "ipsec"), nsg_rule("Tcp", "web"), nsg_rule("*", "any")]
    assert run_resource("azure-nsg-no-open-admin-ingress", NSG, {"securityRules": rules}) == [
        "rule web allows the internet to all ports", "rule any allows the internet to all ports"]
    assert run_resource("azure-nsg-no-open-admin-ingress", NSG_RULE, nsg_rule("Icmp", "ping")) == []
    assert "protocol" in unknown_reported("azure-nsg-no-open-admin-ingress", NSG_RULE, nsg_rule(UNKNOWN))


def test_aws_icmp_ingress_opens_no_port() -> None:
    icmp = {"ingress": [{"protocol": "icmp", "fromPort": 0, "toPort": 65535, "cidrBlocks": ["0.0.0.0/0"]}]}
    assert run_resource("aws-security-group-no-open-admin-ingress", "aws:ec2/securityGroup:SecurityGroup", icmp) == []


PRIVATE_NODES = {"privateClusterConfig": {"enablePrivateNodes": True}}
PUBLIC_ENDPOINT = "the control plane endpoint is public without an authorized-networks allowlist"


@pytest.mark.parametrize(("ip_endpoints", "expected"), [
    ({"enabled": False}, []),  # only the DNS endpoint, which IAM gates
    ({"enabled": True}, [PUBLIC_ENDPOINT]),
    ({}, [PUBLIC_ENDPOINT]),  # IP access defaults to on
])
def test_gke_control_plane_with_ip_endpoints_off_is_not_public(ip_endpoints: dict, expected: list) -> None:
    props = {**PRIVATE_NODES, "controlPlaneEndpointsConfig": {
        "ipEndpointsConfig": ip_endpoints, "dnsEndpointConfig": {"allowExternalTraffic": True}}}
    assert run_resource("gcp-gke-private-cluster", GKE, props) == expected


def test_gke_ip_endpoints_unknown_in_preview_is_not_passed() -> None:
    props = {**PRIVATE_NODES, "controlPlaneEndpointsConfig": {"ipEndpointsConfig": {"enabled": UNKNOWN}}}
    assert "controlPlaneEndpointsConfig.ipEndpointsConfig.enabled" in unknown_reported("gcp-gke-private-cluster", GKE, props)


@pytest.mark.parametrize(("blocks", "expected"), [
    (["0.0.0.0/0"], [PUBLIC_ENDPOINT]),
    (["203.0.113.0/24", "::/0"], [PUBLIC_ENDPOINT]),
    ([], [PUBLIC_ENDPOINT]),
    (["203.0.113.0/24"], []),
])
def test_gke_authorized_networks_open_to_the_internet_are_no_allowlist(blocks: list, expected: list) -> None:
    props = {"privateClusterConfig": {"enablePrivateNodes": True, "enablePrivateEndpoint": False},
             "masterAuthorizedNetworksConfig": {"cidrBlocks": [{"cidrBlock": b} for b in blocks]}}
    assert run_resource("gcp-gke-private-cluster", GKE, props) == expected


def test_azure_nsg_deny_rules_open_nothing() -> None:
    deny = {**nsg_rule("*", "deny-all"), "access": "Deny", "priority": 4096}
    assert run_resource("azure-nsg-no-open-admin-ingress", NSG, {"securityRules": [deny]}) == []
    assert run_resource("azure-nsg-no-open-admin-ingress", NSG_RULE, {**deny, "sourceAddressPrefix": "Internet"}) == []
    ssh = {**nsg_rule("Tcp", "ssh"), "destinationPortRange": "22"}
    assert run_resource("azure-nsg-no-open-admin-ingress", NSG, {"securityRules": [deny, ssh]}) == [
        "rule ssh allows the internet to port 22"]
