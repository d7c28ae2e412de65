"""`addons.monitoring: managed` on Azure: the AKS metrics add-on, an Azure Monitor workspace, the data collection
endpoint and rule for `Microsoft-PrometheusMetrics`, the rule's association with the cluster and the GPU alert rule
group, as Azure would receive them; nothing of it in `self_managed`."""

from __future__ import annotations

from typing import Any

import pytest

from aiinfra.plan.runtime import PlanResult
from components.azure.prometheus import iso_duration

NAME = "prod-eastus2"
REGION: dict[str, Any] = {"regions": {"eastus2": {"network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}, "cluster": {}}}}
AKS = "azure-native:containerservice:ManagedCluster"
TAGS = {"environment", "team", "cost-center", "managed-by"}
DCR = "azure-native:monitor:DataCollectionRule"


@pytest.fixture(scope="module")
def managed(plan_azure) -> PlanResult:  # noqa: ANN001
    return plan_azure(REGION, environment="prod", addons={"enabled": False, "monitoring": "managed"})


@pytest.fixture(scope="module")
def self_managed(plan_azure) -> PlanResult:  # noqa: ANN001
    return plan_azure(REGION, environment="prod")


def depends(plan: PlanResult, type_: str, name: str, on: str) -> bool:
    return any(d.endswith(f"::{on}") for d in plan.one(type_, name).dependencies)


def test_aks_runs_the_metrics_add_on(managed: PlanResult, self_managed: PlanResult) -> None:
    metrics = managed.one(AKS, f"{NAME}-aks").inputs["azureMonitorProfile"]["metrics"]
    assert metrics["enabled"] is True
    assert metrics["kubeStateMetrics"]["metricLabelsAllowlist"] == "nodes=[ai-infra/pool,ai-infra/accelerator,ai-infra/capacity]"
    assert "azureMonitorProfile" not in self_managed.one(AKS, f"{NAME}-aks").inputs


def test_workspace_endpoint_and_rule_live_in_the_cluster_region_with_tags(managed: PlanResult) -> None:
    workspace = managed.one("azure-native:monitor:AzureMonitorWorkspace", f"{NAME}-prom-workspace")
    assert workspace.inputs["azureMonitorWorkspaceName"] == f"amw-{NAME}" and workspace.protect
    endpoint = managed.one("azure-native:monitor:DataCollectionEndpoint", f"{NAME}-prom-dce").inputs
    assert endpoint["kind"] == "Linux" and endpoint["dataCollectionEndpointName"] == f"msprom-{NAME}"
    for resource in (workspace.inputs, endpoint, managed.one(DCR, f"{NAME}-prom-dcr").inputs):
        assert resource["location"] == "eastus2"
        assert TAGS <= set(resource["tags"])


def test_rule_sends_the_prometheus_stream_into_the_workspace(managed: PlanResult) -> None:
    rule = managed.one(DCR, f"{NAME}-prom-dcr").inputs
    assert rule["kind"] == "Linux"
    assert rule["dataCollectionEndpointId"] == f"{NAME}-prom-dce-id"
    assert rule["dataSources"] == {"prometheusForwarder": [
        {"name": "PrometheusDataSource", "streams": ["Microsoft-PrometheusMetrics"], "labelIncludeFilter": {}}]}
    assert rule["destinations"] == {"monitoringAccounts": [
        {"name": "MonitoringAccount1", "accountResourceId": f"{NAME}-prom-workspace-id"}]}
    assert rule["dataFlows"] == [{"streams": ["Microsoft-PrometheusMetrics"], "destinations": ["MonitoringAccount1"]}]


def test_rule_is_associated_with_the_cluster(managed: PlanResult) -> None:
    link = managed.one("azure-native:monitor:DataCollectionRuleAssociation", f"{NAME}-prom-link").inputs
    assert link["resourceUri"] == f"{NAME}-aks-id"
    assert link["dataCollectionRuleId"] == f"{NAME}-prom-dcr-id"
    assert link["associationName"] == f"msprom-{NAME}"
    # The Container Insights association stays, under its own name.
    insights = managed.one("azure-native:monitor:DataCollectionRuleAssociation", f"{NAME}-aks-insights-link").inputs
    assert insights["associationName"] != link["associationName"]


def test_gpu_alerts_are_a_rule_group_for_this_cluster(managed: PlanResult) -> None:
    group = managed.one("azure-native:alertsmanagement:PrometheusRuleGroup", f"{NAME}-prom-rules")
    assert group.inputs["scopes"] == [f"{NAME}-prom-workspace-id"] and group.inputs["interval"] == "PT1M"
    assert depends(managed, "azure-native:alertsmanagement:PrometheusRuleGroup", f"{NAME}-prom-rules", f"{NAME}-aks")
    rules = {r["alert"]: r for r in group.inputs["rules"]}
    assert rules["GpuAllocatedButIdle"]["for"] == "PT1H" and rules["GpuAllocatedButIdle"]["severity"] == 2
    assert rules["GpuXidError"]["severity"] == 0 and "for" not in rules["GpuXidError"]
    assert 'namespace' in rules["GpuAllocatedButIdle"]["expression"]  # honor_labels keeps the team's namespace
    assert TAGS <= set(group.inputs["tags"])


def test_durations_become_iso_8601() -> None:
    assert (iso_duration("1h"), iso_duration("10m"), iso_duration("30s")) == ("PT1H", "PT10M", "PT30S")
    with pytest.raises(ValueError, match="unsupported duration '1d'"):
        iso_duration("1d")


def test_self_managed_builds_no_cloud_prometheus(self_managed: PlanResult) -> None:
    assert not [r for r in self_managed.resources if "-prom-" in r.name]
    assert not self_managed.of_type("azure-native:alertsmanagement:PrometheusRuleGroup")
