"""`global-endpoint-waf`: an internet-facing or globally fronted HTTP endpoint without a web application firewall, on
every cloud (the platform's `global_endpoint.waf: false` opt-in, and team-written endpoints). Cases plan the typed SDK
classes on the mock runtime and hand the stack rule what a preview reports (outputs, dependencies, property
dependencies), or hand it wire-form outputs after `pulumi up`; the plan-level cases run the pack over whole
platforms through the engine's Analyzer protocol."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pulumi_aws as aws
import pulumi_azure_native as azure
import pulumi_gcp as gcp
import pytest
import yaml
from helpers import run_platform
from policy_helpers import RULES, UNKNOWN, preview_stack, resource, run_stack
from pulumi_policy import PolicyResource
from pulumi_policy.proxy import UnknownValueError

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.policy_eval import evaluate_pack
from components.spec import load_platform

ROOT = Path(__file__).resolve().parents[2]
WAF = "global-endpoint-waf"
SUBNETS = ["subnet-1", "subnet-2"]
ALB = "aws:lb/loadBalancer:LoadBalancer"
PROFILE, SECURITY_POLICY = "azure-native:cdn:Profile", "azure-native:cdn:SecurityPolicy"
NO_ACL = ("has no AWS WAF web ACL: no aws.wafv2.WebAclAssociation names its ARN (global_endpoint.waf: false creates "
          "none); associate a REGIONAL web ACL with managed rules")
NO_ARMOR = ("has no Cloud Armor security policy (securityPolicy unset); global_endpoint.waf: false creates none; set "
            "securityPolicy to a CLOUD_ARMOR policy with preconfigured WAF rules")
NO_FD_WAF = ("Front Door profile (Premium_AzureFrontDoor) has no WAF: no azure-native:cdn:SecurityPolicy of type "
             "WebApplicationFirewall links a Front Door WAF policy to its domains (global_endpoint.waf: false creates "
             "none); add one covering every endpoint and custom domain")


def findings(stack: list[PolicyResource], found: list | None = None) -> list[tuple[str, str]]:
    """(resource name, message) of each violation."""
    return [((urn or "").split("::")[-1], message) for urn, message in run_stack(WAF, stack, found=found)]


def unknown_with(stack: list[PolicyResource]) -> tuple[str, list[tuple[str, str]]]:
    """The Unknown the rule raises (the SDK's "can't run during preview" advisory), and what it reported before."""
    found: list = []
    with pytest.raises(UnknownValueError) as caught:
        run_stack(WAF, stack, found=found)
    return caught.value.message, [((urn or "").split("::")[-1], message) for urn, message in found]


def web_acl() -> aws.wafv2.WebAcl:
    visibility = {"cloudwatch_metrics_enabled": True, "metric_name": "m", "sampled_requests_enabled": True}
    return aws.wafv2.WebAcl("acl", scope="REGIONAL", default_action={"allow": {}}, visibility_config=visibility)


# --- AWS: application load balancers and CloudFront ---

def test_an_internet_facing_alb_without_a_web_acl_is_reported() -> None:
    def build() -> None:
        aws.alb.LoadBalancer("public", subnets=SUBNETS, internal=False, load_balancer_type="application")
        aws.lb.LoadBalancer("private", subnets=SUBNETS, internal=True)

    assert findings(preview_stack(build)) == [("public", f"application load balancer internet-facing (internal false) {NO_ACL}")]


def test_an_alb_leaving_internal_unset_is_unknown_in_preview_and_internet_facing_after_up() -> None:
    """Unset, `internal` is computed: unknown in a preview (the rule can't run for it), false after `pulumi up`
    (AWS's default scheme is internet-facing)."""
    def build() -> None:
        aws.lb.LoadBalancer("unset", subnets=SUBNETS)
        aws.lb.LoadBalancer("public", subnets=SUBNETS, internal=False)

    message, found = unknown_with(preview_stack(build))
    assert "internal" in message and [name for name, _ in found] == ["public"]
    after_up = resource(ALB, {"internal": False, "loadBalancerType": "application", "arn": "arn:aws:elasticloadbalancing:x"}, "unset")
    assert findings([after_up]) == [("unset", f"application load balancer internet-facing (internal false) {NO_ACL}")]
    assert findings([resource(ALB, {}, "bare")]) == [("bare", f"application load balancer internet-facing (internal unset) {NO_ACL}")]


@pytest.mark.parametrize("association", ["wafv2", "wafregional"])
def test_an_alb_with_a_web_acl_association_passes(association: str) -> None:
    def build() -> None:
        lb = aws.lb.LoadBalancer("public", subnets=SUBNETS, internal=False)
        aws.lb.LoadBalancer("other", subnets=SUBNETS, internal=False)  # an association covers only the one it names
        if association == "wafv2":
            aws.wafv2.WebAclAssociation("assoc", resource_arn=lb.arn, web_acl_arn=web_acl().arn)
        else:  # WAF Classic (regional) takes the ACL's ID
            aws.wafregional.WebAclAssociation("assoc", resource_arn=lb.arn, web_acl_id="acl-1")

    assert [name for name, _ in findings(preview_stack(build))] == ["other"]


def test_an_internal_alb_fronted_by_global_accelerator_is_reported_unless_associated() -> None:
    def build(associate: bool) -> None:
        lb = aws.lb.LoadBalancer("alb", subnets=SUBNETS, internal=True, load_balancer_type="application")
        accelerator = aws.globalaccelerator.Accelerator("ga", name="ga", ip_address_type="IPV4", enabled=True)
        listener = aws.globalaccelerator.Listener("ga-443", accelerator_arn=accelerator.arn, protocol="TCP",
                                                  port_ranges=[{"from_port": 443, "to_port": 443}])
        aws.globalaccelerator.EndpointGroup("ga-us-east-1", listener_arn=listener.arn,
                                            endpoint_configurations=[{"endpoint_id": lb.arn, "weight": 100}])
        if associate:
            aws.wafv2.WebAclAssociation("assoc", resource_arn=lb.arn, web_acl_arn=web_acl().arn)

    assert findings(preview_stack(lambda: build(False))) == [("alb", (
        "application load balancer fronted by Global Accelerator (endpoint group ga-us-east-1), so reachable from the "
        f"Internet {NO_ACL}"))]
    assert findings(preview_stack(lambda: build(True))) == []


def test_network_and_gateway_load_balancers_cannot_take_aws_waf_and_are_exempt() -> None:
    def build() -> None:
        nlb = aws.lb.LoadBalancer("nlb", subnets=SUBNETS, internal=False, load_balancer_type="network")
        aws.lb.LoadBalancer("gwlb", subnets=SUBNETS, load_balancer_type="gateway")
        listener = aws.globalaccelerator.Listener("ga-443", accelerator_arn="arn:aws:globalaccelerator::1:accelerator/a",
                                                  protocol="TCP", port_ranges=[{"from_port": 443, "to_port": 443}])
        aws.globalaccelerator.EndpointGroup("ga-eu", listener_arn=listener.arn, endpoint_configurations=[{"endpoint_id": nlb.arn}])

    assert findings(preview_stack(build)) == []


def test_after_up_associations_and_endpoint_groups_are_matched_by_arn() -> None:
    arn = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/Inference/50dc6c495c0c9188"
    lb = resource(ALB, {"arn": arn, "id": arn, "internal": True, "loadBalancerType": "application"}, "alb")
    group = resource("aws:globalaccelerator/endpointGroup:EndpointGroup", {"endpointConfigurations": [{"endpointId": arn}]}, "eg")
    assert [name for name, _ in findings([lb, group])] == ["alb"]
    associated = resource("aws:wafv2/webAclAssociation:WebAclAssociation", {"resourceArn": arn, "webAclArn": "arn:acl"}, "a")
    elsewhere = resource("aws:wafv2/webAclAssociation:WebAclAssociation", {"resourceArn": arn + "0", "webAclArn": "arn:acl"}, "b")
    assert findings([lb, group, associated]) == []
    assert [name for name, _ in findings([lb, group, elsewhere])] == ["alb"]


def test_a_cloudfront_distribution_without_a_web_acl_is_reported() -> None:
    def build(acl: bool) -> None:
        aws.cloudfront.Distribution(
            "cdn", enabled=True, origins=[{"domain_name": "origin.example.com", "origin_id": "o",
                                           "custom_origin_config": {"http_port": 80, "https_port": 443, "origin_protocol_policy": "https-only",
                                                                    "origin_ssl_protocols": ["TLSv1.2"]}}],
            default_cache_behavior={"allowed_methods": ["GET", "HEAD"], "cached_methods": ["GET", "HEAD"], "target_origin_id": "o",
                                    "viewer_protocol_policy": "redirect-to-https", "cache_policy_id": "658327ea-f89d-4fab-a63d-7e88639e58f6"},
            restrictions={"geo_restriction": {"restriction_type": "none"}}, viewer_certificate={"cloudfront_default_certificate": True},
            web_acl_id=aws.wafv2.WebAcl("edge", scope="CLOUDFRONT", default_action={"allow": {}}, visibility_config={
                "cloudwatch_metrics_enabled": True, "metric_name": "m", "sampled_requests_enabled": True}).arn if acl else None)

    assert findings(preview_stack(lambda: build(False))) == [("cdn", (
        "CloudFront distribution has no AWS WAF web ACL (webAclId unset); set webAclId to the ARN of a CLOUDFRONT-scope web ACL"))]
    assert findings(preview_stack(lambda: build(True))) == []
    # After `pulumi up` CloudFront reports an empty webAclId for a distribution without one.
    assert [n for n, _ in findings([resource("aws:cloudfront/distribution:Distribution", {"webAclId": ""}, "cdn")])] == ["cdn"]


def test_an_alb_setting_decided_by_an_output_not_known_yet_is_unknown_but_the_others_are_checked() -> None:
    def build() -> None:
        flag = aws.ssm.Parameter("flag", type="String", value="x")
        aws.lb.LoadBalancer("by-output", subnets=SUBNETS, internal=flag.version.apply(lambda v: v > 1))
        aws.lb.LoadBalancer("public", subnets=SUBNETS, internal=False)

    message, found = unknown_with(preview_stack(build))
    assert "internal" in message and [name for name, _ in found] == ["public"]
    # The same load balancer with a web ACL, or fronted by Global Accelerator, is decided without it.
    lb = resource(ALB, {"internal": UNKNOWN, "arn": UNKNOWN}, "alb")
    lb.property_dependencies = {"internal": [resource("aws:ssm/parameter:Parameter", {}, "flag")]}
    association = resource("aws:wafv2/webAclAssociation:WebAclAssociation", {"resourceArn": UNKNOWN}, "a", deps=[lb])
    association.property_dependencies = {"resourceArn": [lb]}
    assert findings([lb, association]) == []


def test_an_endpoint_group_naming_an_unknown_endpoint_with_no_dependency_is_unknown() -> None:
    lb = resource(ALB, {"internal": True, "arn": UNKNOWN}, "alb")
    group = resource("aws:globalaccelerator/endpointGroup:EndpointGroup", {"endpointConfigurations": [{"endpointId": UNKNOWN}]}, "eg")
    message, found = unknown_with([lb, group])
    assert "endpointConfigurations" in message and found == []
    # An unknown endpoint that is another resource (an Elastic IP made in the same update) names no load balancer.
    group.property_dependencies = {"endpointConfigurations": [resource("aws:ec2/eip:Eip", {}, "eip")]}
    assert findings([lb, group]) == []


# --- GCP: backend services of external load balancers ---

def armor() -> gcp.compute.SecurityPolicy:
    return gcp.compute.SecurityPolicy("armor", type="CLOUD_ARMOR", rules=[{
        "action": "deny(403)", "priority": 1000, "match": {"expr": {"expression": "evaluatePreconfiguredWaf('sqli-v33-stable')"}}}])


def test_an_external_http_backend_service_without_cloud_armor_is_reported() -> None:
    def build() -> None:
        gcp.compute.BackendService("managed", load_balancing_scheme="EXTERNAL_MANAGED", protocol="HTTP")
        gcp.compute.BackendService("classic", load_balancing_scheme="EXTERNAL", protocol="HTTPS")
        gcp.compute.BackendService("default-scheme", protocol="HTTP")  # EXTERNAL_MANAGED
        gcp.compute.RegionBackendService("regional", region="us-central1", load_balancing_scheme="EXTERNAL_MANAGED", protocol="HTTP2")
        gcp.compute.BackendService("armored", load_balancing_scheme="EXTERNAL_MANAGED", security_policy=armor().id)
        gcp.compute.BackendService("internal", load_balancing_scheme="INTERNAL_MANAGED", protocol="HTTP")
        gcp.compute.RegionBackendService("regional-default", region="us-central1", protocol="TCP")  # INTERNAL
        gcp.compute.BackendService("tcp-proxy", load_balancing_scheme="EXTERNAL_MANAGED", protocol="TCP")
        gcp.compute.RegionBackendService("passthrough", region="us-central1", load_balancing_scheme="EXTERNAL", protocol="UDP")

    assert findings(preview_stack(build)) == [  # in the plan's order: by type, then name
        ("classic", f"backend service of an external load balancer (loadBalancingScheme EXTERNAL, protocol HTTPS) {NO_ARMOR}"),
        ("default-scheme", f"backend service of an external load balancer (loadBalancingScheme EXTERNAL_MANAGED, protocol HTTP) {NO_ARMOR}"),
        ("managed", f"backend service of an external load balancer (loadBalancingScheme EXTERNAL_MANAGED, protocol HTTP) {NO_ARMOR}"),
        ("regional", f"backend service of an external load balancer (loadBalancingScheme EXTERNAL_MANAGED, protocol HTTP2) {NO_ARMOR}")]


def test_an_edge_policy_alone_is_no_waf_and_unknowns_follow_the_conventions() -> None:
    edge = resource("gcp:compute/backendService:BackendService", {"loadBalancingScheme": "EXTERNAL_MANAGED", "protocol": "HTTP",
                                                                    "securityPolicy": "", "edgeSecurityPolicy": "edge-1"}, "cdn")
    assert findings([edge]) == [("cdn", (
        "backend service of an external load balancer (loadBalancingScheme EXTERNAL_MANAGED, protocol HTTP) has no Cloud "
        "Armor security policy (securityPolicy unset) (its edgeSecurityPolicy filters only Cloud CDN's cache, with no WAF "
        "rules); global_endpoint.waf: false creates none; set securityPolicy to a CLOUD_ARMOR policy with preconfigured WAF rules"))]
    # Left unset, the protocol is computed (unknown in preview): the rule can't run for that backend service until
    # `pulumi up` (HTTP then), unless it has a security policy anyway; the others are still checked.
    def build() -> None:
        gcp.compute.BackendService("unset-protocol", load_balancing_scheme="EXTERNAL_MANAGED")
        gcp.compute.BackendService("armored", load_balancing_scheme="EXTERNAL_MANAGED", security_policy=armor().id)

    message, found = unknown_with([*preview_stack(build), edge])
    assert "protocol" in message and [name for name, _ in found] == ["cdn"]


# --- Azure: Front Door Standard/Premium, Front Door (classic), Application Gateway ---

def front_door(link: str | None, sku: str = "Premium_AzureFrontDoor") -> Callable[[], None]:
    """A Front Door profile with an endpoint and a custom domain, and a WAF security policy linked to `link`'s domains
    ("all", "domain": only the custom domain, None: no security policy)."""
    def build() -> None:
        profile = azure.cdn.Profile("fd", resource_group_name="rg", location="Global", sku={"name": sku})
        endpoint = azure.cdn.AFDEndpoint("ep", resource_group_name="rg", profile_name=profile.name, location="Global")
        domain = azure.cdn.AFDCustomDomain("www", resource_group_name="rg", profile_name=profile.name, host_name="infer.example.com",
                                           tls_settings={"certificate_type": "ManagedCertificate", "minimum_tls_version": "TLS12"})
        if link is None:
            return
        waf = azure.frontdoor.Policy("waf", resource_group_name="rg", location="Global", sku={"name": sku},
                                     policy_settings={"enabled_state": "Enabled", "mode": "Prevention"})
        domains = [{"id": domain.id}] if link == "domain" else [{"id": endpoint.id}, {"id": domain.id}]
        azure.cdn.SecurityPolicy("waf-link", resource_group_name="rg", profile_name=profile.name, parameters={
            "type": "WebApplicationFirewall", "waf_policy": {"id": waf.id},
            "associations": [{"domains": domains, "patterns_to_match": ["/*"]}]})

    return build


def test_a_front_door_profile_without_a_waf_security_policy_is_reported() -> None:
    assert findings(preview_stack(front_door(None))) == [("fd", NO_FD_WAF)]
    assert findings(preview_stack(front_door("all"))) == []
    assert findings(preview_stack(front_door(None, sku="Standard_Microsoft"))) == []  # Azure CDN (classic): not Front Door


def test_a_waf_security_policy_leaving_out_an_endpoint_is_reported() -> None:
    assert findings(preview_stack(front_door("domain"))) == [("fd", (
        "Front Door profile (Premium_AzureFrontDoor): its WAF security policies (waf-link) leave out endpoint ep, served "
        "without the WAF; add them to a WebApplicationFirewall security policy's associations"))]


def test_after_up_front_door_domains_are_matched_by_id_in_any_case() -> None:
    base = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Cdn/profiles/fd1"
    profile = resource(PROFILE, {"name": "fd1", "profileName": "fd1", "sku": {"name": "Standard_AzureFrontDoor"}, "id": base}, "fd")
    endpoint = resource("azure-native:cdn:AFDEndpoint", {"profileName": "fd1", "id": base + "/afdEndpoints/ep1"}, "ep")
    policy = resource(SECURITY_POLICY, {"profileName": "fd1", "parameters": {"type": "WebApplicationFirewall", "associations": [
        {"domains": [{"id": (base + "/afdendpoints/ep1").upper()}]}]}}, "waf-link")
    assert findings([profile, endpoint, policy]) == []
    assert [n for n, _ in findings([profile, endpoint, resource("azure-native:cdn:AFDEndpoint", {"profileName": "fd1"}, "ep2"), policy])] == ["fd"]


def test_a_security_policy_of_unknown_type_leaves_its_profile_undecided() -> None:
    profile = resource(PROFILE, {"name": "fd1", "sku": {"name": "Premium_AzureFrontDoor"}}, "fd")
    policy = resource(SECURITY_POLICY, {"profileName": "fd1", "parameters": {"type": UNKNOWN}}, "link")
    bare = resource(PROFILE, {"name": "fd2", "sku": {"name": "Premium_AzureFrontDoor"}}, "bare")
    message, found = unknown_with([profile, policy, bare])
    assert "parameters.type" in message and [name for name, _ in found] == ["bare"]


def test_front_door_classic_and_public_application_gateways_without_waf_are_reported() -> None:
    def gateway(name: str, tier: str, public: bool = True, listeners: list | None = None, **waf: object) -> None:
        frontend = {"name": "fe", **({"public_ip_address": {"id": "/pip"}} if public else {"subnet": {"id": "/s"}})}
        azure.network.ApplicationGateway(name, resource_group_name="rg", sku={"name": tier, "tier": tier, "capacity": 2},
                                         frontend_ip_configurations=[frontend], http_listeners=listeners or [{"name": "l"}], **waf)

    def build() -> None:
        azure.frontdoor.FrontDoor("classic", resource_group_name="rg", enabled_state="Enabled", frontend_endpoints=[
            {"name": "linked", "host_name": "a.azurefd.net", "web_application_firewall_policy_link": {"id": "/p/waf"}},
            {"name": "bare", "host_name": "b.example.com"}])
        gateway("std", "Standard_v2")
        gateway("waf-no-policy", "WAF_v2")
        gateway("waf", "WAF_v2", firewall_policy={"id": "/p/agw-waf"})
        gateway("private", "Standard_v2", public=False)
        gateway("per-listener", "WAF_v2", listeners=[{"name": "a", "firewall_policy": {"id": "/p/a"}},
                                                     {"name": "b", "firewall_policy": {"id": "/p/b"}}])
        gateway("one-listener", "WAF_v2", listeners=[{"name": "a", "firewall_policy": {"id": "/p/a"}}, {"name": "b"}])
        gateway("legacy", "WAF_v2", web_application_firewall_configuration={
            "enabled": True, "firewall_mode": "Prevention", "rule_set_type": "OWASP", "rule_set_version": "3.2"})

    assert findings(preview_stack(build)) == [  # in the plan's order: by type, then name
        ("classic", "Front Door (classic) frontend endpoints bare have no webApplicationFirewallPolicyLink; link a Front Door WAF policy to each"),
        ("one-listener", "Application Gateway with a public frontend IP (fe) has no WAF: no WAF policy (firewallPolicy) on it or "
                         "on every listener; use tier WAF_v2 with a firewallPolicy (an ApplicationGatewayWebApplicationFirewallPolicy)"),
        ("std", "Application Gateway with a public frontend IP (fe) has no WAF: sku tier Standard_v2; use tier WAF_v2 with a "
                "firewallPolicy (an ApplicationGatewayWebApplicationFirewallPolicy)"),
        ("waf-no-policy", "Application Gateway with a public frontend IP (fe) has no WAF: no WAF policy (firewallPolicy) on it or "
                          "on every listener; use tier WAF_v2 with a firewallPolicy (an ApplicationGatewayWebApplicationFirewallPolicy)")]


# --- metadata and configs ---

def test_the_rule_is_a_baseline_stack_rule_advisory_in_every_config() -> None:
    rule = RULES[WAF]
    assert rule.stack and rule.in_profiles == ("baseline", "soc2", "pci")
    assert rule.frameworks == {"SOC2": ("CC6.6",), "PCI-DSS-v4": ("6.4.2",), "NIST-800-53": ("SC-7",)}
    for path in sorted((ROOT / "policies" / "config").glob("*.json")):
        assert json.loads(path.read_text())[WAF] == "advisory", path.name


# --- whole platforms through the pack ---

def waf_findings(records: list[dict], env: str) -> list[tuple[str, str, str]]:
    config = json.loads((ROOT / "policies" / "config" / f"{env}.json").read_text())
    report = evaluate_pack(ROOT / "policies", records, config=config, project="ai-infra", stack=env)
    return sorted((v.urn.split("::")[-1], v.enforcementLevel, v.message.splitlines()[-1]) for v in report.violations if v.policy == WAF)


@pytest.mark.parametrize("env", ["dev", "staging", "prod"])
def test_the_reference_stacks_keep_their_waf_and_get_no_finding(env: str) -> None:
    assert waf_findings([r.to_json() for r in plan_stack(load_project(ROOT), env).resources], env) == []


def staging_platform(**aws_endpoint: object) -> dict:
    """The staging stack's platform (an endpoint on each cloud) with `global_endpoint.waf: false` on every cloud."""
    data = copy.deepcopy(yaml.safe_load((ROOT / "stacks" / "Pulumi.staging.yaml").read_text())["config"]["ai-infra:platform"])
    for cloud in data["clouds"].values():
        cloud["global_endpoint"]["waf"] = False
    data["clouds"]["aws"]["global_endpoint"].update(aws_endpoint)
    return data


def test_waf_false_on_every_cloud_gets_the_advisory_on_each_endpoint() -> None:
    records = [r.to_json() for r in run_platform(load_platform(staging_platform()), stack="staging").resources]
    assert waf_findings(records, "staging") == [
        ("staging-frontdoor-profile", "advisory", NO_FD_WAF),
        ("staging-global-backend", "advisory", f"backend service of an external load balancer (loadBalancingScheme "
                                               f"EXTERNAL_MANAGED, protocol HTTP) {NO_ARMOR}"),
        ("staging-us-east-1-inference-lb", "advisory", "application load balancer fronted by Global Accelerator (endpoint "
                                                       f"group staging-global-us-east-1), so reachable from the Internet {NO_ACL}")]


def test_waf_false_with_latency_dns_reports_the_internet_facing_alb() -> None:
    platform = staging_platform(routing="latency_dns", domain="infer.staging.example.com", hosted_zone_id="Z0123456789ABCDEFGHIJ")
    records = [r.to_json() for r in run_platform(load_platform(platform), stack="staging").resources]
    assert [f for f in waf_findings(records, "staging") if f[0].startswith("staging-us-east-1")] == [
        ("staging-us-east-1-inference-lb", "advisory", f"application load balancer internet-facing (internal false) {NO_ACL}")]



def test_a_network_load_balancer_behind_global_accelerator_with_a_tls_listener_is_reported_as_unfilterable() -> None:
    def build(tls: bool) -> None:
        nlb = aws.lb.LoadBalancer("nlb", subnets=SUBNETS, internal=True, load_balancer_type="network")
        aws.lb.Listener("nlb-443", load_balancer_arn=nlb.arn, port=443, protocol="TLS" if tls else "TCP",
                        default_actions=[{"type": "forward", "target_group_arn": "arn:tg"}])
        listener = aws.globalaccelerator.Listener("ga-443", accelerator_arn="arn:aws:globalaccelerator::1:accelerator/a",
                                                  protocol="TCP", port_ranges=[{"from_port": 443, "to_port": 443}])
        aws.globalaccelerator.EndpointGroup("ga-eu", listener_arn=listener.arn, endpoint_configurations=[{"endpoint_id": nlb.arn}])

    [(name, message)] = findings(preview_stack(lambda: build(True)))
    assert name == "nlb" and "AWS WAF does not attach to network load balancers" in message
    assert findings(preview_stack(lambda: build(False))) == []  # plain TCP: nothing for a WAF to inspect
