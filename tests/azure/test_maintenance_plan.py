"""Planned maintenance: each AKS cluster upgrades (and drains nodes) in one weekly window, the one Azure Managed Lustre
uses, instead of whenever its channels have something new."""

from __future__ import annotations

import pytest

from aiinfra.plan.runtime import PlanResult

MAINTENANCE = "azure-native:containerservice:MaintenanceConfiguration"
AKS = "azure-native:containerservice:ManagedCluster"
AMLFS = "azure-native:storagecache:AmlFilesystem"
# AKS acts on these two configuration names only (learn.microsoft.com/azure/aks/planned-maintenance).
AKS_NAMES = {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}


@pytest.mark.parametrize("plan_name", ["prod_plan", "dev_plan"])
def test_every_cluster_has_both_aks_managed_schedules(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan: PlanResult = request.getfixturevalue(plan_name)
    clusters = plan.of_type(AKS)
    configs = plan.of_type(MAINTENANCE)
    assert clusters and len(configs) == 2 * len(clusters)
    for cluster in clusters:
        mine = [c for c in configs if cluster.urn in c.propertyDependencies.get("resourceName", [])]
        assert {c.inputs["configName"] for c in mine} == AKS_NAMES, cluster.name
        assert {c.name for c in mine} == {cluster.name + "-maintenance-upgrade", cluster.name + "-maintenance-nodeos"}
        assert all(c.parent == cluster.parent for c in mine)  # children of the Cluster component
        # not stateful: nothing protects a schedule, and dropping one only returns AKS to "any time"
        assert not any(c.protect or c.retainOnDelete for c in mine)


def test_the_window_is_weekly_opens_with_lustres_and_is_long_enough_for_aks(prod_plan: PlanResult) -> None:
    lustre = prod_plan.one(AMLFS).inputs["maintenanceWindow"]
    for config in prod_plan.of_type(MAINTENANCE):
        window = config.inputs["maintenanceWindow"]
        assert window["schedule"] == {"weekly": {"dayOfWeek": lustre["dayOfWeek"], "intervalWeeks": 1}}, config.name
        assert (window["startTime"], window["utcOffset"]) == (lustre["timeOfDayUTC"], "+00:00")
        assert 4 <= window["durationHours"] <= 24  # MaintenanceWindow.durationHours: 4 to 24 hours
        assert window == {"schedule": {"weekly": {"dayOfWeek": "Sunday", "intervalWeeks": 1}}, "startTime": "03:00",
                          "durationHours": 8, "utcOffset": "+00:00"}
        # one window for the whole week: no daily or monthly schedule beside the weekly one, no legacy timeInWeek
        assert set(config.inputs) == {"resourceGroupName", "resourceName", "configName", "maintenanceWindow"}
