"""GKE maintenance policy: release-channel upgrades wait for one weekly window (staggered across the regions, so behind
the global load balancer at most one region is upgrading) and skip the spec's exclusions, with inputs that stay the
same from one `up` to the next."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from gcp.support import DEV_GCP, PROJECT, by_name

from aiinfra.plan.runtime import PlanResult
from components.spec.maintenance import GKE_AVAILABILITY_HOURS, Weekday, Window, gke_weekly_availability

GKE = "gcp:container/cluster:Cluster"
BYDAY = {"MO": Weekday.MONDAY, "TU": Weekday.TUESDAY, "WE": Weekday.WEDNESDAY, "TH": Weekday.THURSDAY,
         "FR": Weekday.FRIDAY, "SA": Weekday.SATURDAY, "SU": Weekday.SUNDAY}


def parse(recurring: dict[str, str]) -> Window:
    """The weekly window GKE reads from a recurring window: its start's day and time, its length, its BYDAY."""
    start = datetime.datetime.strptime(recurring["startTime"], "%Y-%m-%dT%H:%M:%SZ")
    end = datetime.datetime.strptime(recurring["endTime"], "%Y-%m-%dT%H:%M:%SZ")
    freq, byday = recurring["recurrence"].split(";")
    assert freq == "FREQ=WEEKLY"
    day = BYDAY[byday.removeprefix("BYDAY=")]
    assert start.weekday() == day.index  # the anchor date falls on the day the rule names
    return Window(day, start.hour * 60 + start.minute, int((end - start).total_seconds() // 3600))


# Three serving regions behind the global load balancer, listed out of alphabetical order.
FLEET: dict[str, Any] = {"project": PROJECT, "global_endpoint": {"domain": "infer.example.com"}, "regions": {
    region: {"network": {"cidr": cidr}, "cluster": {}, "inference": {"port": 8000, "health_check_path": "/health"}}
    for region, cidr in (("us-central1", "10.20.0.0/16"), ("europe-west4", "10.21.0.0/16"), ("asia-east1", "10.22.0.0/16"))}}


def test_every_cluster_gets_a_weekly_window_and_the_defaults_are_staggered(plan_gcp: Callable[..., PlanResult]) -> None:
    policies = {c.name: c.inputs["maintenancePolicy"] for c in plan_gcp(FLEET, environment="prod").of_type(GKE)}
    # alphabetical: asia-east1 first, Sunday 03:00 UTC for 12 hours; europe-west4 where it closes, into Monday 03:00;
    # us-central1 from there (each recurrence starts on its day of the anchor week, Monday 2024-01-01)
    assert policies == {
        "prod-asia-east1-gke": {"recurringWindow": {
            "startTime": "2024-01-07T03:00:00Z", "endTime": "2024-01-07T15:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SU"}},
        "prod-europe-west4-gke": {"recurringWindow": {
            "startTime": "2024-01-07T15:00:00Z", "endTime": "2024-01-08T03:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SU"}},
        "prod-us-central1-gke": {"recurringWindow": {
            "startTime": "2024-01-01T03:00:00Z", "endTime": "2024-01-01T15:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=MO"}},
    }
    windows = [parse(p["recurringWindow"]) for p in policies.values()]
    assert not any(a.overlaps(b) for i, a in enumerate(windows) for b in windows[i + 1:])
    assert all(gke_weekly_availability(w.hours) >= GKE_AVAILABILITY_HOURS for w in windows)


def test_the_window_and_exclusions_of_the_spec(plan_gcp: Callable[..., PlanResult]) -> None:
    config: dict[str, Any] = {**DEV_GCP, "regions": {"us-central1": {
        **DEV_GCP["regions"]["us-central1"],
        "cluster": {"maintenance": {
            "window": {"day": "saturday", "start_utc": "20:30", "duration_hours": 14},
            "exclusions": [
                {"name": "launch", "start": "2026-11-26", "end": "2026-11-30"},
                {"name": "freeze", "start": "2026-12-01", "end": "2027-02-28", "scope": "no_minor_or_node_upgrades"},
                {"name": "minors", "start": "2026-12-01", "end": "2026-12-01", "scope": "no_minor_upgrades"},
            ]}}}}}
    policy = by_name(plan_gcp(config, environment="dev"), "dev-us-central1-gke")["maintenancePolicy"]
    assert policy["recurringWindow"] == {
        "startTime": "2024-01-06T20:30:00Z", "endTime": "2024-01-07T10:30:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA"}
    # whole UTC days: an exclusion ends as the day after its last day begins; every scope named, NO_UPGRADES too
    assert policy["maintenanceExclusions"] == [
        {"exclusionName": "launch", "startTime": "2026-11-26T00:00:00Z", "endTime": "2026-12-01T00:00:00Z",
         "exclusionOptions": {"scope": "NO_UPGRADES"}},
        {"exclusionName": "freeze", "startTime": "2026-12-01T00:00:00Z", "endTime": "2027-03-01T00:00:00Z",
         "exclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES"}},
        {"exclusionName": "minors", "startTime": "2026-12-01T00:00:00Z", "endTime": "2026-12-02T00:00:00Z",
         "exclusionOptions": {"scope": "NO_MINOR_UPGRADES"}},
    ]


def test_a_second_plan_sends_the_same_policy(dev_plan: PlanResult, plan_gcp: Callable[..., PlanResult]) -> None:
    """The recurrence starts on a fixed date, not on the day of the run, and times are UTC with seconds, as GKE returns
    them: a second `up` has nothing to change."""
    again = by_name(plan_gcp(DEV_GCP, environment="dev"), "dev-us-central1-gke")["maintenancePolicy"]
    assert again == by_name(dev_plan, "dev-us-central1-gke")["maintenancePolicy"]
    assert again["recurringWindow"]["startTime"].endswith(":00Z")
