"""`addons.alerts.action_group_id` on Azure: every GPU alert rule of every AKS cluster's Prometheus rule group notifies
the action group (`actions[].actionGroupId`); without one, no rule has actions. The spec refuses a malformed ID and an
action group with no AKS cluster to serve."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import platform_dict, spec_issues

from aiinfra.plan.runtime import PlanResult
from components.spec import load_platform

RULE_GROUP = "azure-native:alertsmanagement:PrometheusRuleGroup"
NAME = "prod-eastus2"
ACTION_GROUP = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-ops/providers/"
                "Microsoft.Insights/actionGroups/gpu-oncall")
REGION: dict[str, Any] = {"regions": {"eastus2": {"network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"},
                                                  "cluster": {}}}}


@pytest.fixture(scope="module")
def alerted(plan_azure) -> PlanResult:  # noqa: ANN001
    return plan_azure(REGION, environment="prod", addons={"enabled": False, "monitoring": "managed",
                                                          "alerts": {"action_group_id": ACTION_GROUP}})


@pytest.fixture(scope="module")
def silent(plan_azure) -> PlanResult:  # noqa: ANN001
    return plan_azure(REGION, environment="prod", addons={"enabled": False, "monitoring": "managed"})


def test_every_rule_notifies_the_action_group(alerted: PlanResult) -> None:
    rules = alerted.one(RULE_GROUP, f"{NAME}-prom-rules").inputs["rules"]
    assert {rule["alert"] for rule in rules} == {"GpuAllocatedButIdle", "GpuXidError"}
    for rule in rules:
        assert rule["actions"] == [{"actionGroupId": ACTION_GROUP}]


def test_without_an_action_group_no_rule_has_actions_and_nothing_else_changes(alerted: PlanResult, silent: PlanResult) -> None:
    quiet = silent.one(RULE_GROUP, f"{NAME}-prom-rules").inputs
    assert all("actions" not in rule for rule in quiet["rules"])
    loud = alerted.one(RULE_GROUP, f"{NAME}-prom-rules").inputs
    assert [{k: v for k, v in rule.items() if k != "actions"} for rule in loud["rules"]] == quiet["rules"]
    assert {r.urn for r in alerted.resources} == {r.urn for r in silent.resources}


def issues(azure: dict[str, Any], alerts: dict[str, Any]) -> list[tuple[str, str]]:
    return spec_issues(platform_dict({"azure": copy.deepcopy(azure)},
                                     addons={"enabled": False, "monitoring": "managed", "alerts": alerts}))


@pytest.mark.parametrize("value", [
    "gpu-oncall",
    "/subscriptions/not-a-guid/resourceGroups/rg-ops/providers/Microsoft.Insights/actionGroups/gpu-oncall",
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-ops/providers/Microsoft.Insights/"
    "scheduledQueryRules/gpu-oncall",  # another Azure Monitor type
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg./providers/Microsoft.Insights/"
    "actionGroups/gpu-oncall",  # a resource group name does not end in '.'
])
def test_a_malformed_action_group_id_is_refused(value: str) -> None:
    assert issues(REGION, {"action_group_id": value}) == [(
        "platform.addons.alerts.action_group_id",
        f"'{value}' is not an Azure Monitor action group's resource ID, /subscriptions/<subscription GUID>/"
        "resourceGroups/<group>/providers/Microsoft.Insights/actionGroups/<name>")]


def test_arm_casing_is_accepted() -> None:
    lower = ACTION_GROUP.replace("Microsoft.Insights", "microsoft.insights").replace("actionGroups", "actiongroups")
    data = platform_dict({"azure": copy.deepcopy(REGION)}, addons={"monitoring": "managed", "alerts": {"action_group_id": lower}})
    assert load_platform(data).addons.alerts.action_group_id == lower


def test_an_action_group_without_an_aks_cluster_is_refused() -> None:
    no_cluster = {"regions": {"eastus2": {"network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}}}}
    assert issues(no_cluster, {"action_group_id": ACTION_GROUP}) == [(
        "platform.addons.alerts.action_group_id",
        f"'{ACTION_GROUP}' has no effect: it is the receiver of the AKS clusters' managed Prometheus, and no region of "
        "clouds.azure has a cluster; add one or remove addons.alerts.action_group_id")]
