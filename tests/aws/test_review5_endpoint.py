"""Global Accelerator endpoints as AWS documents them: client IP preservation only where GA supports it (ALBs, not an
NLB with a TLS listener), the VPC's internet gateway outliving the endpoint group, and an ALB idle timeout below GA's
fixed 340 s."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from aiinfra.plan.runtime import PlanResult
from components.aws.endpoint import ALB_IDLE_TIMEOUT_SECONDS

EAST = "prod-us-east-1"
WEST = "prod-eu-west-1"
LB = "aws:lb/loadBalancer:LoadBalancer"
GROUP = "aws:globalaccelerator/endpointGroup:EndpointGroup"
GA_TCP_IDLE_TIMEOUT = 340  # docs.aws.amazon.com/global-accelerator/latest/dg/introduction-how-it-works.html


def _nlb_plan(plan_aws: Callable[..., PlanResult], prod_config: dict[str, Any]) -> PlanResult:
    config = copy.deepcopy(prod_config)
    config["inference_load_balancer"] = "network"
    config["global_endpoint"]["waf"] = False  # AWS WAF can't attach to an NLB (a spec check)
    return plan_aws(config, environment="prod")


def _endpoint(group: dict[str, Any]) -> dict[str, Any]:
    [config] = group["endpointConfigurations"]
    return config


def test_alb_endpoints_preserve_client_ips(prod_plan: PlanResult) -> None:
    groups = {g.inputs["endpointGroupRegion"]: g.inputs for g in prod_plan.of_type(GROUP)}
    assert sorted(groups) == ["eu-west-1", "us-east-1"]
    for region, group in groups.items():
        assert _endpoint(group)["clientIpPreservationEnabled"] is True, region


def test_nlb_endpoints_turn_client_ip_preservation_off_explicitly(plan_aws: Callable[..., PlanResult],
                                                                 prod_config: dict[str, Any]) -> None:
    """GA refuses client IP preservation for an NLB with a TLS listener: the flag is sent as false, not left out."""
    plan = _nlb_plan(plan_aws, prod_config)
    assert plan.one(LB, f"{EAST}-inference-lb").inputs["loadBalancerType"] == "network"
    for group in plan.of_type(GROUP):
        assert "clientIpPreservationEnabled" in _endpoint(group.inputs)
        assert _endpoint(group.inputs)["clientIpPreservationEnabled"] is False, group.name


def test_each_endpoint_group_waits_for_its_own_vpcs_internet_gateway(prod_plan: PlanResult) -> None:
    """Created after the gateway and, by the same dependency, deleted before it."""
    for prefix, region in ((EAST, "us-east-1"), (WEST, "eu-west-1")):
        group = prod_plan.one(GROUP, f"prod-global-{region}")
        assert prod_plan.one("aws:ec2/internetGateway:InternetGateway", f"{prefix}-igw").urn in group.dependencies
        other = WEST if prefix == EAST else EAST
        assert prod_plan.one("aws:ec2/internetGateway:InternetGateway", f"{other}-igw").urn not in group.dependencies


def test_alb_idle_timeout_is_long_but_below_global_accelerators(prod_plan: PlanResult, plan_aws: Callable[..., PlanResult],
                                                                prod_config: dict[str, Any]) -> None:
    assert 60 < ALB_IDLE_TIMEOUT_SECONDS < GA_TCP_IDLE_TIMEOUT
    for prefix in (EAST, WEST):
        assert prod_plan.one(LB, f"{prefix}-inference-lb").inputs["idleTimeout"] == ALB_IDLE_TIMEOUT_SECONDS
    # Only valid for ALBs (pulumi-aws LoadBalancer.idle_timeout): an NLB gets none.
    assert "idleTimeout" not in _nlb_plan(plan_aws, prod_config).one(LB, f"{EAST}-inference-lb").inputs


def test_latency_dns_albs_get_the_same_idle_timeout(plan_aws: Callable[..., PlanResult], prod_config: dict[str, Any]) -> None:
    config = copy.deepcopy(prod_config)
    config["global_endpoint"] = {"routing": "latency_dns", "domain": "infer.example.com", "hosted_zone_id": "Z0123456789ABCDEFGHIJ"}
    plan = plan_aws(config, environment="prod")
    assert not plan.of_type(GROUP)
    assert plan.one(LB, f"{EAST}-inference-lb").inputs["idleTimeout"] == ALB_IDLE_TIMEOUT_SECONDS
