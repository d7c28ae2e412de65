"""autoneg's project-wide grant is conditioned to this environment's backend service: with
`--enable-custom-service-names`, an annotated Service on any cluster of the project may name any backend service
(gke-autoneg-controller README, "Security considerations"), so IAM, not the controller, keeps it to this one."""

from __future__ import annotations

import re
from typing import Any

import pytest
from gcp.support import PROJECT, by_name, gcp_platform, plan_platform

from aiinfra.plan.runtime import PlanResult
from components.gcp.load_balancer import BACKEND_SERVICE_TYPE, autoneg_condition

SERVING: dict[str, Any] = {
    "project": PROJECT,
    "regions": {
        "us-central1": {"network": {"cidr": "10.40.0.0/20"}, "cluster": {}, "inference": {"port": 8000}},
        "europe-west4": {"network": {"cidr": "10.41.0.0/20"}, "cluster": {}, "inference": {"port": 8000}},
    },
    "global_endpoint": {"domain": "infer.example.com"},
}


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return plan_platform(gcp_platform(SERVING, environment="staging"), stack="staging")


def _allows(expression: str, resource_type: str, resource_name: str) -> bool:
    """Evaluates the condition's CEL subset (`!=`, `||`, `endsWith`) for one request's resource attributes."""
    match = re.fullmatch(r'resource\.type != "([^"]+)" \|\| resource\.name\.endsWith\("([^"]+)"\)', expression)
    assert match, expression
    return resource_type != match[1] or resource_name.endswith(match[2])


def test_the_grant_carries_the_backend_service_condition(plan: PlanResult) -> None:
    member = by_name(plan, "staging-global-autoneg")
    assert member["role"] == f"projects/{PROJECT}/roles/aiInfraAutoneg_staging"
    backend = by_name(plan, "staging-global-backend")["name"]
    assert backend == "staging-inference"
    condition = member["condition"]
    assert condition["expression"] == autoneg_condition(backend)
    assert len(condition["title"]) <= 100 and backend in condition["description"]  # IAM: titles of 100 characters at most


def test_the_condition_admits_only_this_backend_service_and_leaves_negs_and_health_checks_alone(plan: PlanResult) -> None:
    expression = by_name(plan, "staging-global-autoneg")["condition"]["expression"]
    own = f"projects/{PROJECT}/global/backendServices/staging-inference"
    assert _allows(expression, BACKEND_SERVICE_TYPE, own)
    for other in ("prod-inference", "staging-inference-2", "x-staging-inference", "payments"):
        assert not _allows(expression, BACKEND_SERVICE_TYPE, f"projects/{PROJECT}/global/backendServices/{other}"), other
    # The NEGs GKE names itself and the health check the backend service uses stay usable.
    zone_neg = f"projects/{PROJECT}/zones/us-central1-a/networkEndpointGroups/staging-us-central1-inference"
    assert _allows(expression, "compute.googleapis.com/NetworkEndpointGroup", zone_neg)
    assert _allows(expression, "compute.googleapis.com/HealthCheck", f"projects/{PROJECT}/global/healthChecks/h")
    assert _allows(expression, "", "")  # a type IAM Conditions does not describe


def test_the_expression_is_quoted_for_any_environment_name() -> None:
    expression = autoneg_condition("a-b-c-inference")
    assert expression == ('resource.type != "compute.googleapis.com/BackendService" || '
                          'resource.name.endsWith("/global/backendServices/a-b-c-inference")')
