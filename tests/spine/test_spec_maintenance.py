"""`cluster.maintenance`: each cloud's limits refused at load time with the config path, the value and what is allowed;
the default windows staggered so no two regions of a cloud are in maintenance at once, and valid on GKE and AKS."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from helpers import platform_dict
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.goyaml import go_json, parse
from components.spec import Cloud, SpecError, load_platform
from components.spec.maintenance import (
    AKS_HOURS,
    DEFAULT_HOURS,
    GKE_AVAILABILITY_HOURS,
    GKE_BLOCK_HOURS,
    GKE_WEEKLY_HOURS,
    WEEK_HOURS,
    WEEK_MINUTES,
    ExclusionScope,
    MaintenanceSpec,
    MaintenanceWindow,
    Weekday,
    Window,
    cluster_maintenance,
    gke_weekly_availability,
    staggered,
)

NETWORK = {"cidr": "10.40.0.0/16"}
AZURE_NETWORK = {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}
CLUSTERS = {"aws": ("us-east-1", NETWORK), "gcp": ("us-central1", NETWORK), "azure": ("eastus2", AZURE_NETWORK)}


def platform(cloud: str, maintenance: Any) -> dict[str, Any]:
    region, network = CLUSTERS[cloud]
    config: dict[str, Any] = {"regions": {region: {"network": network, "cluster": {"maintenance": maintenance}}}}
    if cloud == "gcp":
        config["project"] = "acme-ml-test"
    return platform_dict({cloud: config})


def problems(cloud: str, maintenance: Any) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as raised:
        load_platform(platform(cloud, maintenance))
    return raised.value.issues


def window(**fields: Any) -> dict[str, Any]:
    return {"window": {"day": "saturday", "start_utc": "22:00", **fields}}


def exclusion(name: str = "freeze", start: Any = "2026-12-20", end: Any = "2027-01-02", **fields: Any) -> dict[str, Any]:
    return {"name": name, "start": start, "end": end, **fields}


AT = {cloud: f"platform.clouds.{cloud}.regions.{region}.cluster.maintenance" for cloud, (region, _) in CLUSTERS.items()}

# (id, cloud, maintenance, path under cluster.maintenance, fragments of the message)
CASES = [
    ("aws-refused", "aws", {}, "", ["EKS has no maintenance windows or exclusions", "never upgrades a cluster or its managed node groups",
                                    "end of extended support", "remove maintenance"]),
    ("aws-refused-with-a-window", "aws", window(), "", ["EKS has no maintenance windows"]),
    ("clock-without-leading-zero", "azure", window(start_utc="3:00"), ".window.start_utc",
     ["start_utc '3:00' is not a time of day", "HH:MM in UTC, 00:00 to 23:59", "'03:00'"]),
    ("clock-past-midnight", "gcp", window(start_utc="24:00"), ".window.start_utc", ["'24:00'", "00:00 to 23:59"]),
    ("weekday-as-azure-writes-it", "azure", window(day="Saturday"), ".window.day", ["'Saturday'", "did you mean 'saturday'"]),
    ("window-shorter-than-any-cloud-takes", "azure", window(duration_hours=2), ".window.duration_hours",
     ["duration_hours 2", "allowed: 4 to 24 on Azure (AKS), 12 to 167 on GCP (GKE)"]),
    ("window-longer-than-a-week", "gcp", window(duration_hours=168), ".window.duration_hours", ["duration_hours 168", "12 to 167 on GCP"]),
    ("aks-window-over-24-hours", "azure", window(duration_hours=30), ".window.duration_hours",
     ["duration_hours 30 is longer than AKS allows", "MaintenanceWindow.durationHours", "allowed on Azure: 4 to 24"]),
    ("gke-window-below-48-hours-in-32-days", "gcp", window(duration_hours=8), ".window.duration_hours",
     ["duration_hours 8 leaves GKE 32 hours", "at least 48 hours in every 32-day rolling window", "blocks of 4 hours or more",
      "allowed on GCP: 12 to 167"]),
    ("gke-window-of-11-hours", "gcp", window(duration_hours=11), ".window.duration_hours", ["leaves GKE 44 hours"]),
    ("narrow-scope-on-aks", "azure", {"exclusions": [exclusion(scope="no_minor_upgrades")]}, ".exclusions[0].scope",
     ["scope 'no_minor_upgrades' is GKE-only", "notAllowedDates", "allowed on Azure: no_upgrades"]),
    ("gke-no-upgrades-over-30-days", "gcp", {"exclusions": [exclusion(start="2026-12-01", end="2027-01-02")]}, ".exclusions[0].end",
     ["'freeze' holds back all upgrades for 33 days (2026-12-01 to 2027-01-02)", "GKE limits scope no_upgrades to 30 days",
      "no_minor_upgrades"]),
    ("gke-too-many-exclusions", "gcp", {"exclusions": [exclusion(f"x{i}", "2026-12-01", "2026-12-01") for i in range(21)]},
     ".exclusions", ["21 exclusions", "at most 20 per cluster"]),
    ("end-before-start", "gcp", {"exclusions": [exclusion(start="2026-12-20", end="2026-12-19")]}, ".exclusions[0].end",
     ["end 2026-12-19 is before start 2026-12-20", "inclusive"]),
    ("names-repeat", "azure", {"exclusions": [exclusion(), exclusion()]}, ".exclusions", ["exclusion names repeat (freeze)"]),
    ("a-time-is-not-a-day", "gcp", {"exclusions": [exclusion(start="2026-12-20T10:00:00Z")]}, ".exclusions[0].start",
     ["'2026-12-20T10:00:00Z'", "whole UTC days", "YYYY-MM-DD"]),
    ("unquoted-yaml-timestamp-with-a-time", "gcp", {"exclusions": [exclusion(start="2026-12-20 10:00:00 +0000 UTC")]},
     ".exclusions[0].start", ["whole UTC days"]),
    ("no-such-day", "azure", {"exclusions": [exclusion(start="2026-02-30")]}, ".exclusions[0].start",
     ["'2026-02-30' is not a calendar date"]),
    ("a-number-is-not-a-date", "azure", {"exclusions": [exclusion(start=20261220)]}, ".exclusions[0].start",
     ["expected a date, got 20261220"]),
    ("unknown-scope", "gcp", {"exclusions": [exclusion(scope="no_patches")]}, ".exclusions[0].scope",
     ["'no_patches'", "'no_upgrades'", "'no_minor_or_node_upgrades'"]),
]


@pytest.mark.parametrize(("cloud", "maintenance", "where", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_maintenance_names_the_path_the_value_and_what_is_allowed(cloud: str, maintenance: Any, where: str,
                                                                      fragments: list[str]) -> None:
    found = problems(cloud, maintenance)
    assert [path for path, _ in found] == [AT[cloud] + where], found
    for fragment in fragments:
        assert fragment in found[0][1], found[0][1]


@pytest.mark.parametrize("cloud", ["gcp", "azure"])
def test_what_each_cloud_takes_loads(cloud: str) -> None:
    hours = {"gcp": [GKE_WEEKLY_HOURS, 36, WEEK_HOURS - 1], "azure": [AKS_HOURS[0], 8, AKS_HOURS[1]]}[cloud]
    for duration in hours:
        load_platform(platform(cloud, window(duration_hours=duration)))
    scopes = list(ExclusionScope) if cloud == "gcp" else [ExclusionScope.NO_UPGRADES]
    load_platform(platform(cloud, {"exclusions": [exclusion(f"e{i}", scope=s.value) for i, s in enumerate(scopes)]}))
    # a no_upgrades exclusion of exactly 30 days, and the narrower scopes for longer on GKE
    long = [exclusion("month", "2026-12-01", "2026-12-30")]
    if cloud == "gcp":
        long.append(exclusion("quarter", "2026-12-01", "2027-03-31", scope="no_minor_upgrades"))
    load_platform(platform(cloud, {"exclusions": long}))


def test_an_unquoted_yaml_date_loads_as_the_cli_passes_it() -> None:
    """The Pulumi CLI hands an unquoted 2026-12-20 to the program as Go's time text, '2026-12-20 00:00:00 +0000 UTC'
    (aiinfra/plan/goyaml.py reads stack files the same way); quoted, it stays as written."""
    text = ("maintenance:\n  exclusions:\n    - name: freeze\n      start: 2026-12-20\n      end: '2027-01-02'\n")
    maintenance = json.loads(go_json(parse(text)))["maintenance"]
    assert maintenance["exclusions"][0]["start"] == "2026-12-20 00:00:00 +0000 UTC"
    spec = load_platform(platform("azure", maintenance)).clouds.azure.regions["eastus2"].cluster.maintenance
    assert (spec.exclusions[0].start, spec.exclusions[0].end) == (datetime.date(2026, 12, 20), datetime.date(2027, 1, 2))


def test_unset_fields_take_the_documented_defaults() -> None:
    spec = MaintenanceSpec(window=MaintenanceWindow(day=Weekday.MONDAY, start_utc="01:30"))
    assert spec.exclusions == []
    both = cluster_maintenance(Cloud.GCP, {"us-central1": spec, "europe-west4": None})
    assert both["us-central1"].window == Window(Weekday.MONDAY, 90, GKE_WEEKLY_HOURS)
    assert cluster_maintenance(Cloud.AZURE, {"eastus2": spec})["eastus2"].window.hours == 8
    # the region without a window: the first default slot, Sunday 03:00 UTC
    assert both["europe-west4"].window == Window(Weekday.SUNDAY, 180, GKE_WEEKLY_HOURS)


def test_default_windows_go_round_the_regions_in_alphabetical_order() -> None:
    windows = cluster_maintenance(Cloud.AZURE, dict.fromkeys(["westeurope", "eastus2", "swedencentral"]))
    assert {r: (m.window.day, m.window.start_utc, m.window.hours) for r, m in windows.items()} == {
        "eastus2": (Weekday.SUNDAY, "03:00", 8), "swedencentral": (Weekday.SUNDAY, "11:00", 8),
        "westeurope": (Weekday.SUNDAY, "19:00", 8)}  # the third runs on into Monday 03:00
    assert staggered(4, 12)[3] == Window(Weekday.MONDAY, 15 * 60, 12)


def test_default_windows_skip_a_window_set_in_another_region() -> None:
    explicit = MaintenanceSpec(window=MaintenanceWindow(day=Weekday.SUNDAY, start_utc="10:00", duration_hours=4))
    windows = cluster_maintenance(Cloud.AZURE, {"eastus2": None, "swedencentral": None, "westeurope": explicit})
    assert windows["westeurope"].window == Window(Weekday.SUNDAY, 600, 4)
    # Sunday 03:00-11:00 and 11:00-19:00 overlap 10:00-14:00: the defaults take the next free slots
    assert [windows[r].window.start_utc for r in ("eastus2", "swedencentral")] == ["19:00", "03:00"]
    assert [windows[r].window.day for r in ("eastus2", "swedencentral")] == [Weekday.SUNDAY, Weekday.MONDAY]


# ---- properties of the pure stagger logic -----------------------------------------------------------------------

def minutes_open(w: Window) -> set[int]:
    return {(w.week_minute + m) % WEEK_MINUTES for m in range(0, w.hours * 60, 30)}


windows_st = st.builds(Window, st.sampled_from(list(Weekday)), st.integers(0, 1439), st.integers(4, 24))


@given(windows_st, windows_st)
def test_overlap_is_being_open_at_the_same_time(a: Window, b: Window) -> None:
    half_hours = a.start_minute % 30 == 0 and b.start_minute % 30 == 0
    if half_hours:  # sampled every half hour, exact when both open on a half hour
        assert a.overlaps(b) == bool(minutes_open(a) & minutes_open(b))
    assert a.overlaps(b) == b.overlaps(a)


@given(st.sampled_from(sorted(DEFAULT_HOURS.items())), st.data())
def test_no_two_default_windows_of_a_cloud_overlap(cloud_hours: tuple[Cloud, int], data: st.DataObject) -> None:
    cloud, hours = cloud_hours
    count = data.draw(st.integers(1, WEEK_HOURS // hours), label="regions")
    regions = data.draw(st.lists(st.from_regex(r"[a-z]{3,12}[0-9]?", fullmatch=True), min_size=count, max_size=count,
                                 unique=True), label="region names")
    windows = [m.window for m in cluster_maintenance(cloud, dict.fromkeys(regions)).values()]
    assert all(not a.overlaps(b) for i, a in enumerate(windows) for b in windows[i + 1:])
    assert all(w.hours == hours for w in windows)
    # every default is valid on both clouds that schedule maintenance
    assert gke_weekly_availability(DEFAULT_HOURS[Cloud.GCP]) >= GKE_AVAILABILITY_HOURS
    assert all(AKS_HOURS[0] <= h <= AKS_HOURS[1] for h in (DEFAULT_HOURS[Cloud.AZURE],))


@given(st.integers(4, 24), st.lists(windows_st, max_size=3), st.data())
def test_default_windows_avoid_explicit_ones_while_slots_are_free(hours: int, taken: list[Window], data: st.DataObject) -> None:
    slots = staggered(WEEK_HOURS // hours, hours)
    free = [s for s in slots if not any(s.overlaps(t) for t in taken)]
    count = data.draw(st.integers(1, max(1, len(free))), label="regions")
    defaults = staggered(count, hours, tuple(taken))
    if free:
        assert not any(d.overlaps(t) for d in defaults for t in taken)
        assert all(not a.overlaps(b) for i, a in enumerate(defaults) for b in defaults[i + 1:])


@pytest.mark.parametrize("hours", [8, 12])
def test_with_every_slot_taken_the_defaults_still_spread_around_the_week(hours: int) -> None:
    """Explicit windows that touch every slot leave no free one: the defaults then share the week's slots in turn
    rather than all opening at the first one (found by a mutation review)."""
    taken = tuple(Window.at(day * 24 * 60, 24) for day in range(7))
    slots = staggered(WEEK_HOURS // hours, hours)
    assert staggered(3, hours, taken) == slots[:3]
    assert len(set(staggered(3, hours, taken))) == 3


def counted(hours: int, span_start: float) -> float:
    """GKE's count, straight from its rule: the hours of the windows [168k, 168k + hours) inside the 32-day span from
    `span_start`, each contiguous part counted only when it lasts 4 hours or more."""
    span = 32 * 24
    total = 0.0
    for k in range(-1, 7):
        part = min(span_start + span, WEEK_HOURS * k + hours) - max(span_start, WEEK_HOURS * k)
        total += part if part >= GKE_BLOCK_HOURS else 0.0
    return total


@given(st.integers(1, WEEK_HOURS - 1), st.floats(0, WEEK_HOURS, allow_nan=False))
def test_gke_availability_is_the_least_any_32_day_span_counts(hours: int, span_start: float) -> None:
    least = gke_weekly_availability(hours)
    assert counted(hours, span_start) >= least - 1e-9
    # and some span counts no more: the one ending as a window opens, or one with its edges just inside windows
    starts = [n + e for n in range(WEEK_HOURS) for e in (1e-6, 1 - 1e-6)]
    assert min(counted(hours, s) for s in starts) == pytest.approx(least, abs=1e-4)


def test_gke_needs_a_weekly_window_of_12_hours() -> None:
    """48 hours in any 32 days, and a 32-day span holds only 4 whole weekly windows."""
    assert [gke_weekly_availability(h) for h in (8, 11, 12, 24)] == [32, 44, 48, 96]
    assert GKE_WEEKLY_HOURS == DEFAULT_HOURS[Cloud.GCP] == 12


def test_the_shortest_gke_window_is_the_least_that_meets_gkes_availability_rule() -> None:
    meets = [h for h in range(GKE_BLOCK_HOURS, WEEK_HOURS) if gke_weekly_availability(h) >= GKE_AVAILABILITY_HOURS]
    assert GKE_WEEKLY_HOURS == meets[0] == 12
