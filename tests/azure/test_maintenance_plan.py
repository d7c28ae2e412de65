"""Planned maintenance: each AKS cluster upgrades (and drains nodes) in one weekly window, staggered across the regions
so that behind Front Door at most one region is in maintenance, with Azure Managed Lustre's window opening with its
region's, instead of whenever its channels have something new; excluded dates hold both schedules back."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from aiinfra.plan.runtime import PlanResult
from components.spec.maintenance import Weekday, Window

MAINTENANCE = "azure-native:containerservice:MaintenanceConfiguration"
AKS = "azure-native:containerservice:ManagedCluster"
AMLFS = "azure-native:storagecache:AmlFilesystem"
# AKS acts on these two configuration names only (learn.microsoft.com/azure/aks/planned-maintenance).
AKS_NAMES = {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}


def configs_of(plan: PlanResult, cluster_name: str) -> list[Any]:
    cluster = plan.one(AKS, cluster_name)
    return [c for c in plan.of_type(MAINTENANCE) if cluster.urn in c.propertyDependencies.get("resourceName", [])]


def windows(plan: PlanResult) -> dict[str, dict[str, Any]]:
    """Cluster name -> the one maintenance window both of its schedules have."""
    found = {}
    for cluster in plan.of_type(AKS):
        mine = {repr(c.inputs["maintenanceWindow"]) for c in configs_of(plan, cluster.name)}
        assert len(mine) == 1, mine  # both schedules: the same window
        found[cluster.name] = configs_of(plan, cluster.name)[0].inputs["maintenanceWindow"]
    return found


def as_window(inputs: dict[str, Any]) -> Window:
    hours, minutes = map(int, inputs["startTime"].split(":"))
    return Window(Weekday(inputs["schedule"]["weekly"]["dayOfWeek"].lower()), hours * 60 + minutes, inputs["durationHours"])


@pytest.mark.parametrize("plan_name", ["prod_plan", "dev_plan"])
def test_every_cluster_has_both_aks_managed_schedules(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan: PlanResult = request.getfixturevalue(plan_name)
    clusters = plan.of_type(AKS)
    configs = plan.of_type(MAINTENANCE)
    assert clusters and len(configs) == 2 * len(clusters)
    for cluster in clusters:
        mine = configs_of(plan, cluster.name)
        assert {c.inputs["configName"] for c in mine} == AKS_NAMES, cluster.name
        assert {c.name for c in mine} == {cluster.name + "-maintenance-upgrade", cluster.name + "-maintenance-nodeos"}
        assert all(c.parent == cluster.parent for c in mine)  # children of the Cluster component
        # not stateful: nothing protects a schedule, and dropping one only returns AKS to "any time"
        assert not any(c.protect or c.retainOnDelete for c in mine)


def test_default_windows_are_staggered_across_regions_and_lustre_opens_with_its_region(prod_plan: PlanResult) -> None:
    found = windows(prod_plan)
    # alphabetical: eastus2 first, Sunday 03:00 UTC (where the one fixed window used to be), swedencentral 8 hours later
    assert found == {
        "prod-eastus2-aks": {"schedule": {"weekly": {"dayOfWeek": "Sunday", "intervalWeeks": 1}}, "startTime": "03:00",
                             "durationHours": 8, "utcOffset": "+00:00"},
        "prod-swedencentral-aks": {"schedule": {"weekly": {"dayOfWeek": "Sunday", "intervalWeeks": 1}}, "startTime": "11:00",
                                   "durationHours": 8, "utcOffset": "+00:00"},
    }
    east, sweden = (as_window(w) for w in found.values())
    assert not east.overlaps(sweden)
    assert prod_plan.one(AMLFS).inputs["maintenanceWindow"] == {"dayOfWeek": "Sunday", "timeOfDayUTC": "03:00"}
    for config in prod_plan.of_type(MAINTENANCE):
        window = config.inputs["maintenanceWindow"]
        assert 4 <= window["durationHours"] <= 24  # MaintenanceWindow.durationHours: 4 to 24 hours
        # one window for the whole week: no daily or monthly schedule beside the weekly one, no legacy timeInWeek,
        # and no notAllowedDates without exclusions
        assert set(config.inputs) == {"resourceGroupName", "resourceName", "configName", "maintenanceWindow"}
        assert set(window) == {"schedule", "startTime", "durationHours", "utcOffset"}


def test_a_window_and_exclusions_from_the_spec_reach_both_schedules_and_lustre(
        prod_config: dict[str, Any], plan_azure: Callable[..., PlanResult]) -> None:
    config = copy.deepcopy(prod_config)
    config["regions"]["eastus2"]["cluster"]["maintenance"] = {
        "window": {"day": "wednesday", "start_utc": "22:30", "duration_hours": 6},
        "exclusions": [{"name": "launch", "start": "2026-11-26", "end": "2026-11-30"},
                       {"name": "year-end", "start": "2026-12-20 00:00:00 +0000 UTC", "end": "2027-01-03"}],
    }
    plan = plan_azure(config, environment="prod")
    found = windows(plan)
    assert found["prod-eastus2-aks"] == {
        "schedule": {"weekly": {"dayOfWeek": "Wednesday", "intervalWeeks": 1}}, "startTime": "22:30", "durationHours": 6,
        "utcOffset": "+00:00",
        # DateSpan: whole days, both ends held back
        "notAllowedDates": [{"start": "2026-11-26", "end": "2026-11-30"}, {"start": "2026-12-20", "end": "2027-01-03"}]}
    assert plan.one(AMLFS).inputs["maintenanceWindow"] == {"dayOfWeek": "Wednesday", "timeOfDayUTC": "22:30"}
    # the other region keeps the first default slot, which the explicit window does not overlap
    sweden = found["prod-swedencentral-aks"]
    assert (sweden["startTime"], sweden["durationHours"], "notAllowedDates" in sweden) == ("03:00", 8, False)


def test_a_default_window_moves_off_an_explicit_one_in_another_region(
        prod_config: dict[str, Any], plan_azure: Callable[..., PlanResult]) -> None:
    config = copy.deepcopy(prod_config)
    config["regions"]["swedencentral"]["cluster"]["maintenance"] = {
        "window": {"day": "sunday", "start_utc": "05:00", "duration_hours": 4}}
    found = {name.split("-")[1]: as_window(w) for name, w in windows(plan_azure(config, environment="prod")).items()}
    assert found["swedencentral"] == Window(Weekday.SUNDAY, 300, 4)
    # Sunday 03:00-11:00 overlaps 05:00-09:00: eastus2 takes the next free slot, and Lustre there follows it
    assert found["eastus2"] == Window(Weekday.SUNDAY, 660, 8)
    assert not found["eastus2"].overlaps(found["swedencentral"])


def test_a_lustre_region_without_a_cluster_keeps_sunday_0300(plan_azure: Callable[..., PlanResult]) -> None:
    plan = plan_azure({"regions": {"eastus2": {"network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"},
                                               "lustre": {"scratch": {"size_gib": 16384}}}}})
    assert plan.one(AMLFS).inputs["maintenanceWindow"] == {"dayOfWeek": "Sunday", "timeOfDayUTC": "03:00"}
    assert not plan.of_type(MAINTENANCE)


def test_planning_twice_gives_the_same_window(prod_plan: PlanResult, prod_config: dict[str, Any],
                                              plan_azure: Callable[..., PlanResult]) -> None:
    """Nothing in the window depends on when the plan runs: a second `up` has nothing to change."""
    again = plan_azure(prod_config, environment="prod")
    assert windows(again) == windows(prod_plan)
