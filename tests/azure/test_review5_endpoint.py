"""Front Door: `global_endpoint.waf: false` is honoured as on GCP and AWS, and each tier's origin hop is the one its
docs describe (Premium: plain HTTP inside Private Link; Standard: HTTPS to the pods' port, certificate checked against
`domain`, which is what the pods must then serve)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from aiinfra.plan.runtime import PlanResult

CDN = "azure-native:cdn:"
WAF_POLICY = "azure-native:frontdoor:Policy"


def _slim(config: dict[str, Any], **endpoint: Any) -> dict[str, Any]:
    """The production regions with only what Front Door needs (a cluster and `inference`), and the endpoint stated in
    full: the session's config is shared, and other modules change it."""
    config = copy.deepcopy(config)
    for region in config["regions"].values():
        for key in ("lustre", "buckets", "gpu_pools"):
            region.pop(key, None)
    config["global_endpoint"] = {"domain": "infer.example.com", "azure_tier": "premium", "waf": True, **endpoint}
    return config


@pytest.fixture(scope="module")
def premium(prod_config: dict[str, Any], plan_azure: Callable[..., PlanResult]) -> PlanResult:
    return plan_azure(_slim(prod_config), environment="prod")


@pytest.fixture(scope="module")
def standard(prod_config: dict[str, Any], plan_azure: Callable[..., PlanResult]) -> PlanResult:
    return plan_azure(_slim(prod_config, azure_tier="standard"), environment="staging")


def test_waf_is_on_by_default_and_covers_every_domain(premium: PlanResult) -> None:
    policy = premium.one(WAF_POLICY, "prod-frontdoor-waf").inputs
    assert policy["policySettings"] == {"enabledState": "Enabled", "mode": "Prevention", "requestBodyCheck": "Enabled"}
    link = premium.one(f"{CDN}SecurityPolicy", "prod-frontdoor-waf-link").inputs["parameters"]
    assert link["wafPolicy"] == {"id": "prod-frontdoor-waf-id"}
    [association] = link["associations"]
    assert association["domains"] == [{"id": "prod-frontdoor-endpoint-id"}, {"id": "prod-frontdoor-domain-id"}]


@pytest.mark.parametrize("tier", ["premium", "standard"])
def test_waf_false_creates_no_waf_policy_and_no_security_policy(tier: str, prod_config: dict[str, Any],
                                                               plan_azure: Callable[..., PlanResult]) -> None:
    plan = plan_azure(_slim(prod_config, waf=False, azure_tier=tier), environment="prod")
    assert not plan.of_type(WAF_POLICY)
    assert not plan.of_type(f"{CDN}SecurityPolicy")
    # The rest of the endpoint is unchanged: HTTPS-only route over the origins, logs.
    route = plan.one(f"{CDN}Route", "prod-frontdoor-route").inputs
    assert route["httpsRedirect"] == "Enabled" and route["originGroup"] == {"id": "prod-frontdoor-origin-group-id"}
    assert plan.one("azure-native:monitor:DiagnosticSetting", "prod-frontdoor-logs")
    assert len(plan.of_type(f"{CDN}AFDOrigin")) == 2


def test_standard_speaks_https_to_the_pods_port_and_checks_the_certificate_against_the_domain(standard: PlanResult) -> None:
    """What the pods must serve behind Standard: TLS on `inference.port` (8080 here) for requests and probes, with a
    certificate for `domain`, the host header Front Door sends."""
    for region in ("eastus2", "swedencentral"):
        origin = standard.one(f"{CDN}AFDOrigin", f"staging-frontdoor-origin-{region}").inputs
        assert (origin["httpPort"], origin["httpsPort"]) == (8080, 8080)
        assert origin["originHostHeader"] == "infer.example.com" and origin["enforceCertificateNameCheck"] is True
        assert "sharedPrivateLinkResource" not in origin
    probe = standard.one(f"{CDN}AFDOriginGroup", "staging-frontdoor-origin-group").inputs["healthProbeSettings"]
    assert (probe["probeProtocol"], probe["probePath"]) == ("Https", "/healthz")
    assert standard.one(f"{CDN}Route", "staging-frontdoor-route").inputs["forwardingProtocol"] == "HttpsOnly"


def test_premium_speaks_plain_http_to_the_pods_inside_private_link(premium: PlanResult) -> None:
    origin = premium.one(f"{CDN}AFDOrigin", "prod-frontdoor-origin-eastus2").inputs
    assert origin["httpPort"] == 8080 and "privateLink" in origin["sharedPrivateLinkResource"]
    probe = premium.one(f"{CDN}AFDOriginGroup", "prod-frontdoor-origin-group").inputs["healthProbeSettings"]
    assert probe["probeProtocol"] == "Http"
    assert premium.one(f"{CDN}Route", "prod-frontdoor-route").inputs["forwardingProtocol"] == "HttpOnly"
