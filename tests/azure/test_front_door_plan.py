"""Front Door in front of the inference regions: Premium (default, Private Link) and Standard (public origins)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pulumi
from helpers import platform_dict

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

CDN = "azure-native:cdn:"


def test_route_is_https_only_and_redirects_http(prod_plan: PlanResult) -> None:
    route = prod_plan.one(f"{CDN}Route", "prod-frontdoor-route")
    assert route.inputs["httpsRedirect"] == "Enabled"
    assert route.inputs["supportedProtocols"] == ["Http", "Https"]
    assert route.inputs["customDomains"] == [{"id": "prod-frontdoor-domain-id"}]
    assert route.inputs["originGroup"] == {"id": "prod-frontdoor-origin-group-id"}
    for origin in prod_plan.of_type(f"{CDN}AFDOrigin"):
        assert origin.urn in route.dependencies


def test_waf_policy_in_prevention_mode_is_attached_to_every_domain(prod_plan: PlanResult) -> None:
    waf = prod_plan.one("azure-native:frontdoor:Policy", "prod-frontdoor-waf").inputs
    assert waf["policySettings"]["mode"] == "Prevention" and waf["policySettings"]["enabledState"] == "Enabled"
    assert waf["sku"] == {"name": "Premium_AzureFrontDoor"}
    assert {s["ruleSetType"] for s in waf["managedRules"]["managedRuleSets"]} == {"Microsoft_DefaultRuleSet", "Microsoft_BotManagerRuleSet"}
    link = prod_plan.one(f"{CDN}SecurityPolicy", "prod-frontdoor-waf-link").inputs["parameters"]
    assert link["type"] == "WebApplicationFirewall" and link["wafPolicy"] == {"id": "prod-frontdoor-waf-id"}
    assert link["associations"][0]["domains"] == [{"id": "prod-frontdoor-endpoint-id"}, {"id": "prod-frontdoor-domain-id"}]


def test_custom_domain_requires_tls_1_2(prod_plan: PlanResult) -> None:
    domain = prod_plan.one(f"{CDN}AFDCustomDomain", "prod-frontdoor-domain").inputs
    assert domain["hostName"] == "infer.example.com"
    assert domain["tlsSettings"] == {"certificateType": "ManagedCertificate", "minimumTlsVersion": "TLS12"}


def test_one_private_origin_per_region_with_health_probes(prod_plan: PlanResult) -> None:
    group = prod_plan.one(f"{CDN}AFDOriginGroup", "prod-frontdoor-origin-group").inputs
    assert group["healthProbeSettings"]["probePath"] == "/healthz"
    origins = {o.name: o.inputs for o in prod_plan.of_type(f"{CDN}AFDOrigin")}
    assert set(origins) == {"prod-frontdoor-origin-eastus2", "prod-frontdoor-origin-swedencentral"}
    east = origins["prod-frontdoor-origin-eastus2"]
    assert east["hostName"] == "10.40.224.10"  # the fixed internal load-balancer address in the lb subnet
    link = east["sharedPrivateLinkResource"]
    assert link["privateLinkLocation"] == "eastus2"
    assert link["privateLink"]["id"].endswith("/resourceGroups/rg-prod-eastus2-nodes/providers/Microsoft.Network/privateLinkServices/pls-prod-eastus2-inference")
    assert origins["prod-frontdoor-origin-swedencentral"]["weight"] == 50


def test_origin_and_private_endpoint_names_fit_azure_for_long_environment_and_region_names(prod_plan: PlanResult,
                                                                                           prod_config: dict[str, Any],
                                                                                           plan_azure: Callable[..., PlanResult]) -> None:
    # Short names keep azure-native's auto-name (name + 8 random hex), as before: nothing deployed is replaced.
    assert [o.inputs.get("originName") for o in prod_plan.of_type(f"{CDN}AFDOrigin")] == [None, None]
    assert all("privateEndpointName" not in e.inputs for e in prod_plan.of_type("azure-native:network:PrivateEndpoint"))
    # A 16-character environment and germanywestcentral: the origin's auto-name would be 52 + 8 characters, Front Door
    # takes 50; with a 24-character bucket name the private endpoint's would be 63 + 8, Azure takes 64.
    config = copy.deepcopy(prod_config)
    config["regions"]["germanywestcentral"] = config["regions"].pop("swedencentral")
    config["regions"]["germanywestcentral"]["buckets"] = {"b" * 24: {}}
    plan = plan_azure(config, environment="preproduction-eu")
    origin = plan.one(f"{CDN}AFDOrigin", "preproduction-eu-frontdoor-origin-germanywestcentral").inputs
    assert len(origin["originName"]) == 50 and origin["originName"].startswith("preproduction-eu-frontdoor-origin-germany-")
    assert "originName" not in plan.one(f"{CDN}AFDOrigin", "preproduction-eu-frontdoor-origin-eastus2").inputs
    endpoints = {e.name: e.inputs.get("privateEndpointName") for e in plan.of_type("azure-native:network:PrivateEndpoint")}
    long_one = endpoints[f"preproduction-eu-germanywestcentral-{'b' * 24}-pe"]
    assert long_one is not None and len(long_one) == 64 and long_one.startswith("preproduction-eu-germanywestcentral-bbb")
    assert endpoints["preproduction-eu-eastus2-datasets-pe"] is None


def test_profile_is_premium_and_logs_to_a_workspace(prod_plan: PlanResult) -> None:
    profile = prod_plan.one(f"{CDN}Profile", "prod-frontdoor-profile").inputs
    assert profile["sku"] == {"name": "Premium_AzureFrontDoor"} and profile["location"] == "Global"
    logs = prod_plan.one("azure-native:monitor:DiagnosticSetting", "prod-frontdoor-logs").inputs
    assert logs["resourceUri"] == "prod-frontdoor-profile-id" and logs["logs"] == [{"categoryGroup": "allLogs", "enabled": True}]


def test_standard_tier_uses_public_origins_only_front_door_can_reach(standard_plan: PlanResult) -> None:
    origin = standard_plan.one(f"{CDN}AFDOrigin", "staging-frontdoor-origin-eastus2").inputs
    assert "sharedPrivateLinkResource" not in origin
    assert origin["originHostHeader"] == "infer.example.com" and origin["enforceCertificateNameCheck"] is True
    route = standard_plan.one(f"{CDN}Route", "staging-frontdoor-route").inputs
    assert route["forwardingProtocol"] == "HttpsOnly" and route["httpsRedirect"] == "Enabled"
    waf = standard_plan.one("azure-native:frontdoor:Policy", "staging-frontdoor-waf").inputs
    assert waf["policySettings"]["mode"] == "Prevention" and "managedRules" not in waf
    nsg = standard_plan.one("azure-native:network:NetworkSecurityGroup", "staging-eastus2-nsg").inputs
    [allow] = [r for r in nsg["securityRules"] if r["access"] == "Allow"]
    assert allow["sourceAddressPrefix"] == "AzureFrontDoor.Backend" and allow["destinationPortRange"] == "8080"
    ip = standard_plan.one("azure-native:network:PublicIPAddress", "staging-eastus2-inference-ip").inputs
    assert ip["sku"]["name"] == "Standard" and ip["dnsSettings"]["domainNameLabel"].startswith("infstagingeastus2")


VAULT = "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/rg-certs/providers/Microsoft.KeyVault/vaults/kv-tls"


def test_a_customer_certificate_is_read_by_the_profiles_own_identity(prod_config: dict[str, Any],
                                                                      plan_azure: Callable[..., PlanResult]) -> None:
    """Front Door reads a Key Vault certificate with a managed identity (Microsoft's recommended way; the shared app
    registration would need a tenant-wide registration and is being retired): the Secret waits for the grant."""
    config = copy.deepcopy(prod_config)
    config["global_endpoint"]["certificate"] = f"{VAULT}/secrets/infer-tls"
    plan = plan_azure(config, environment="prod")
    assert plan.one(f"{CDN}Profile", "prod-frontdoor-profile").inputs["identity"] == {"type": "SystemAssigned"}
    access = plan.one("azure-native:authorization:RoleAssignment", "prod-frontdoor-certificate-access")
    assert access.inputs["scope"] == VAULT
    assert access.inputs["roleDefinitionId"].endswith("/roleDefinitions/4633458b-17de-408a-b874-0445c86b69e6")  # Key Vault Secrets User
    assert access.inputs["principalType"] == "ServicePrincipal"
    secret = plan.one(f"{CDN}Secret", "prod-frontdoor-certificate")
    assert secret.inputs["parameters"]["secretSource"] == {"id": f"{VAULT}/secrets/infer-tls"}
    assert access.urn in secret.dependencies
    domain = plan.one(f"{CDN}AFDCustomDomain", "prod-frontdoor-domain").inputs
    assert domain["tlsSettings"]["certificateType"] == "CustomerCertificate"


def test_a_managed_certificate_gives_the_profile_no_identity(prod_plan: PlanResult) -> None:
    assert "identity" not in prod_plan.one(f"{CDN}Profile", "prod-frontdoor-profile").inputs
    assert not [r for r in prod_plan.of_type("azure-native:authorization:RoleAssignment") if "certificate" in r.name]


FRONT_DOOR_ID = "8c2f3a6e-1b7d-4e9a-9f00-0123456789ab"
VALIDATION_TOKEN = "_x2k9dq4mz7bv1c8ytr0hw6nplj5sefa"


class FrontDoorMocks(PlanMocks):
    """What Azure reports once the resources exist: the profile's Front Door ID (`frontDoorId`) and the custom domain's
    TXT validation token (`validationProperties`, output only)."""

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = super().answer(type_, name, outputs)
        if type_ == f"{CDN}Profile":
            outputs = {**outputs, "frontDoorId": FRONT_DOOR_ID}
        if type_ == f"{CDN}AFDCustomDomain":
            outputs = {**outputs, "validationProperties": {"validationToken": VALIDATION_TOKEN,
                                                           "expirationDate": "2025-01-08T00:00:00Z"}}
        return resource_id, outputs


def exported_front_door(config: dict[str, Any], environment: str) -> dict[str, Any]:
    """The `azure.front_door` stack output of an Azure-only platform, as `pulumi stack output` would show it."""
    spec = load_platform(platform_dict({"azure": config}, addons={"enabled": False}, environment=environment))

    def program() -> None:
        for key, value in build_platform(spec).items():
            pulumi.export(key, value)

    plan = run_program(program, project="ai-infra", stack=environment, mocks_=FrontDoorMocks())
    return plan.outputs["azure"]["front_door"]


def test_the_stack_exports_the_front_door_id_public_origins_must_check(prod_config: dict[str, Any]) -> None:
    # Front Door Standard's origins admit the AzureFrontDoor.Backend service tag, which every Front Door profile (any
    # customer's) sends from; only the X-Azure-FDID header, checked by the ingress against this ID, tells them apart.
    config = copy.deepcopy(prod_config)
    config["global_endpoint"]["azure_tier"] = "standard"
    exported = exported_front_door(config, "staging")
    assert exported["front_door_id"] == FRONT_DOOR_ID
    assert set(exported) == {"host_name", "domain", "front_door_id", "domain_validation"}
    assert exported["domain"] == "infer.example.com"


def test_the_stack_exports_the_txt_record_that_validates_the_custom_domain(prod_config: dict[str, Any]) -> None:
    # Front Door serves a custom domain only once a TXT record `_dnsauth.<subdomain>` in its zone holds the token
    # Azure issued for it (learn.microsoft.com/azure/frontdoor/domain); the DNS owner reads both from the stack.
    exported = exported_front_door(copy.deepcopy(prod_config), "prod")
    assert exported["domain_validation"] == {"txt_name": "_dnsauth.infer.example.com", "txt_value": VALIDATION_TOKEN}


def test_without_a_custom_domain_there_is_nothing_to_validate(prod_config: dict[str, Any]) -> None:
    # Premium with only the azurefd.net host name: no AFDCustomDomain, so no TXT record to publish.
    config = copy.deepcopy(prod_config)
    del config["global_endpoint"]["domain"]
    exported = exported_front_door(config, "prod")
    assert exported["domain"] is None and "domain_validation" not in exported
