"""GCP network rules: subnets (flow logs, Private Google Access), firewall rules and firewall policies (no admin ports
open to the internet), SSL policies and the TLS proxies that need one.

CIS IDs: CIS Google Cloud Platform Foundation Benchmark ("GCP x.y")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .aws import EXPOSURE, LOGGING
from .common import OPEN_CIDRS, port_range_hits
from .props import get, items, need
from .registry import Context, rule


_NO_FLOW_LOGS = ("REGIONAL_MANAGED_PROXY", "GLOBAL_MANAGED_PROXY", "INTERNAL_HTTPS_LOAD_BALANCER", "PRIVATE_SERVICE_CONNECT")
"""Subnet purposes that carry no VM traffic, so the rule does not ask them for flow logs. Compute API reference,
Subnetwork.enableFlowLogs: "isn't supported if the subnet purpose field is set to REGIONAL_MANAGED_PROXY";
INTERNAL_HTTPS_LOAD_BALANCER is its deprecated name, with the same note in the API's older reference, and
GLOBAL_MANAGED_PROXY its cross-region twin. A PRIVATE_SERVICE_CONNECT subnet holds a published service's NAT addresses.
PRIVATE_NAT and PEER_MIGRATION subnets are still checked: no documentation found here exempts them."""


@rule("gcp-subnet-flow-logs", "Checks whether subnets have VPC flow logs and Private Google Access.",
      severity="medium", types=("gcp:compute/subnetwork:Subnetwork",), remediation="Set logConfig and privateIpGoogleAccess true.",
      frameworks={**LOGGING, "CIS": ("GCP 3.8",)})
def subnet_logs(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "purpose", "PRIVATE") in _NO_FLOW_LOGS:
        return
    if not get(props, "logConfig"):
        yield "flow logs are off"
    if need(props, "privateIpGoogleAccess") is not True:
        yield "Private Google Access is off: nodes need NAT to reach Google APIs"


FIREWALL_POLICY_RULES = ("gcp:compute/firewallPolicyRule:FirewallPolicyRule",
                         "gcp:compute/networkFirewallPolicyRule:NetworkFirewallPolicyRule",
                         "gcp:compute/regionNetworkFirewallPolicyRule:RegionNetworkFirewallPolicyRule")
FIREWALL_POLICIES_WITH_RULES = ("gcp:compute/firewallPolicyWithRules:FirewallPolicyWithRules",
                                "gcp:compute/networkFirewallPolicyWithRules:NetworkFirewallPolicyWithRules",
                                "gcp:compute/regionNetworkFirewallPolicyWithRules:RegionNetworkFirewallPolicyWithRules")
"""Hierarchical, global and regional network firewall policies: one rule per resource, or a policy with `rules[]`."""
_NOT_FROM_INTERNET = {"INTRA_VPC", "NON_INTERNET", "VPC_NETWORKS"}
"""Source network contexts (scopes) that exclude internet sources; a rule must match one of them as well as a range."""


def _admin_hits(protocol: Any, ports: list[Any]) -> Iterator[str]:
    """SSH, RDP or all ports of one protocol with its ports: none given covers every port of the protocol (ICMP, ESP,
    AH and the like have none, and port_range_hits finds nothing for them)."""
    for span in [str(p).split("-") for p in ports] or [["0", "65535"]]:
        yield from port_range_hits(int(span[0]), int(span[-1]), protocol)


def _policy_rule_hits(rule: Any) -> Iterator[str]:
    """What a firewall policy rule opens to the internet: an enabled INGRESS rule that allows (or allows after
    inspection, apply_security_profile_group) traffic from 0.0.0.0/0 or ::/0 in match.srcIpRanges. Ingress rules must
    name a source, so there is no implicit 0.0.0.0/0 as with VPC firewall rules."""
    action = need(rule, "action")
    if need(rule, "direction", "INGRESS") != "INGRESS" or need(rule, "disabled") is True or action not in (
            "allow", "apply_security_profile_group"):
        return
    match = get(rule, "match") or {}
    open_ranges = " and ".join(sorted(set(items(match, "srcIpRanges")) & OPEN_CIDRS))
    if not open_ranges or {need(match, "srcNetworkContext"), need(match, "srcNetworkScope")} & _NOT_FROM_INTERNET:
        return
    how = "" if action == "allow" else " (inspected by a security profile group, but allowed)"
    for layer4 in list(items(match, "layer4Configs")) or [{"ipProtocol": "all"}]:
        for hit in _admin_hits(need(layer4, "ipProtocol"), list(items(layer4, "ports"))):
            yield f"ingress from {open_ranges} to {hit}{how}"


@rule("gcp-firewall-no-open-admin-ingress",
      "Checks whether firewall rules and firewall policy rules keep SSH, RDP and all ports closed to the internet.",
      severity="critical", types=("gcp:compute/firewall:Firewall",) + FIREWALL_POLICY_RULES + FIREWALL_POLICIES_WITH_RULES,
      remediation="Limit sourceRanges (firewall policy rules: match.srcIpRanges) to known ranges; use IAP for SSH.",
      frameworks={**EXPOSURE, "CIS": ("GCP 3.6", "GCP 3.7")})
def firewall(props: Any, ctx: Context) -> Iterator[str]:
    if ctx.type in FIREWALL_POLICY_RULES:
        yield from _policy_rule_hits(props)
        return
    if ctx.type in FIREWALL_POLICIES_WITH_RULES:
        for index, entry in enumerate(items(props, "rules")):
            label = f"rule {get(entry, 'ruleName') or get(entry, 'priority', index)}: "
            yield from (label + hit for hit in _policy_rule_hits(entry))
        return
    if need(props, "direction", "INGRESS") != "INGRESS":
        return
    sources = list(need(props, "sourceRanges", []) or [])
    if not sources and not need(props, "sourceTags") and not need(props, "sourceServiceAccounts"):
        sources = ["0.0.0.0/0"]  # an ingress rule with no source applies to every address (the API's default source)
    open_ranges = " and ".join(sorted(set(sources) & OPEN_CIDRS))  # 0.0.0.0/0 sorts before ::/0
    # A disabled rule is not enforced: "the network behaves as if it did not exist" (pulumi-gcp 10.2.0).
    if not open_ranges or need(props, "disabled") is True:
        return
    for allow in items(props, "allows"):
        for hit in _admin_hits(need(allow, "protocol"), list(items(allow, "ports"))):
            yield f"ingress from {open_ranges} to {hit}"


SSL_POLICIES = ("gcp:compute/sSLPolicy:SSLPolicy", "gcp:compute/regionSslPolicy:RegionSslPolicy")
TLS_PROXIES = ("gcp:compute/targetHttpsProxy:TargetHttpsProxy", "gcp:compute/regionTargetHttpsProxy:RegionTargetHttpsProxy",
               "gcp:compute/targetSSLProxy:TargetSSLProxy")
WEAK_CUSTOM_FEATURES = ("TLS_RSA_", "_3DES_")
"""CUSTOM profile features CIS GCP 3.9 rules out: RSA key exchange (TLS_RSA_WITH_AES_128_GCM_SHA256 and the like) and 3DES."""


@rule("gcp-ssl-policy-tls12",
      "Checks whether SSL policies require TLS 1.2 or newer with a modern profile, and HTTPS and SSL proxies use one.",
      severity="high", types=SSL_POLICIES + TLS_PROXIES,
      remediation="Set minTlsVersion TLS_1_2 and profile MODERN or RESTRICTED (or CUSTOM without RSA key exchange or 3DES); "
                  "set sslPolicy on every target HTTPS and SSL proxy.",
      frameworks={"HIPAA": ("164.312(e)(1)",), "SOC2": ("CC6.7",), "PCI-DSS-v4": ("4.2.1",), "NIST-800-53": ("SC-8",), "CIS": ("GCP 3.9",)})
def ssl_policy(props: Any, ctx: Context) -> Iterator[str]:
    if ctx.type in TLS_PROXIES:
        # A policy created in the same program is unknown during preview: it is set, which is what is checked here.
        if not get(props, "sslPolicy"):
            yield "no sslPolicy: the proxy uses Google Cloud's default SSL policy (minimum TLS 1.0, profile COMPATIBLE)"
        return
    if need(props, "minTlsVersion", "TLS_1_0") not in ("TLS_1_2", "TLS_1_3"):
        yield f"minimum TLS version is {get(props, 'minTlsVersion', 'TLS_1_0')}; allowed: TLS_1_2, TLS_1_3"
    profile = need(props, "profile", "COMPATIBLE")
    if profile == "COMPATIBLE":
        yield "profile COMPATIBLE allows weak ciphers"
    elif profile == "CUSTOM":
        if weak := sorted(f for f in items(props, "customFeatures") if any(w in str(f) for w in WEAK_CUSTOM_FEATURES)):
            yield f"profile CUSTOM enables weak cipher suites {', '.join(weak)}; use ECDHE suites only"
