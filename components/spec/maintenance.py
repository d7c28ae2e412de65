"""When GKE and AKS may upgrade a cluster: one weekly window and dated exclusions per cluster (`cluster.maintenance`),
each cloud's limits on them, and the default windows, staggered so no two regions of a cloud are in maintenance at
once. Pure: imports no cloud SDK and no Pulumi (the components turn `ClusterMaintenance` into each cloud's inputs)."""

from __future__ import annotations

import datetime
import enum
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BeforeValidator, model_validator

from .common import Cloud, FieldError, Name, SpecModel

if TYPE_CHECKING:
    from .cloud import RegionSpec

Path = tuple[str | int, ...]
Issue = tuple[Path, str]

DAY_MINUTES = 24 * 60
WEEK_HOURS = 7 * 24
WEEK_MINUTES = 7 * DAY_MINUTES


class Weekday(str, enum.Enum):
    MONDAY = "monday"
    TUESDAY = "tuesday"
    WEDNESDAY = "wednesday"
    THURSDAY = "thursday"
    FRIDAY = "friday"
    SATURDAY = "saturday"
    SUNDAY = "sunday"

    @property
    def index(self) -> int:
        """0 for Monday ... 6 for Sunday (datetime.date.weekday())."""
        return list(Weekday).index(self)


class ExclusionScope(str, enum.Enum):
    """What an exclusion holds back (GKE's MaintenanceExclusionOptions.Scope)."""

    NO_UPGRADES = "no_upgrades"
    """No automatic upgrade at all, patch or minor, control plane or nodes (default). GKE: NO_UPGRADES, at most 30
    days; AKS: both planned-maintenance schedules (Kubernetes and node image upgrades) refuse the dates."""
    NO_MINOR_UPGRADES = "no_minor_upgrades"
    """GKE only: patch upgrades of the control plane and nodes continue, minor versions wait (NO_MINOR_UPGRADES)."""
    NO_MINOR_OR_NODE_UPGRADES = "no_minor_or_node_upgrades"
    """GKE only: only control-plane patches continue; minor versions and every node pool upgrade wait
    (NO_MINOR_OR_NODE_UPGRADES)."""


_CLOCK = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")


def _clock(value: str) -> str:
    if not _CLOCK.fullmatch(value):
        raise ValueError(f"start_utc {value!r} is not a time of day; write it as HH:MM in UTC, 00:00 to 23:59, e.g. '03:00'")
    return value


# The Pulumi CLI hands an unquoted YAML date (2025-12-20) to the program as Go's time.Time text,
# "2025-12-20 00:00:00 +0000 UTC" (aiinfra/plan/goyaml.py); a quoted one stays as written.
_GO_MIDNIGHT = re.compile(r"(\d{4}-\d{2}-\d{2}) 00:00:00 \+0000 UTC")


def _date(value: Any) -> Any:
    """An exclusion's start or end: a date, written 2025-12-20 (quoted or not)."""
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str):
        text = match.group(1) if (match := _GO_MIDNIGHT.fullmatch(value)) else value
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            try:
                return datetime.date.fromisoformat(text)
            except ValueError:
                raise ValueError(f"{value!r} is not a calendar date; write it as YYYY-MM-DD, e.g. 2025-12-20") from None
    raise ValueError(f"expected a date, got {value!r}; exclusions are whole UTC days (AKS's notAllowedDates take dates): "
                     "write it as YYYY-MM-DD, e.g. 2025-12-20")


Day = Annotated[datetime.date, BeforeValidator(_date)]


class MaintenanceWindow(SpecModel):
    """One weekly window in which the cloud may upgrade the cluster and drain its nodes."""

    day: Weekday
    """Day of the week (UTC) the window opens."""
    start_utc: Annotated[str, AfterValidator(_clock)]
    """Time the window opens, HH:MM in UTC, e.g. "03:00". The window may run on into the next day."""
    duration_hours: int | None = None
    """Length in hours. Azure: 4 to 24 (AKS MaintenanceWindow.durationHours). GCP: 12 to 167, since GKE needs 48 hours
    of maintenance in every 32-day span and a span can hold only four weekly windows. Default: 8 on Azure (long enough
    to drain and reimage large GPU pools node by node), 12 on GCP (GKE's least)."""

    @model_validator(mode="after")
    def _week(self) -> MaintenanceWindow:
        hours = self.duration_hours
        if hours is not None and not 4 <= hours < WEEK_HOURS:
            raise FieldError("duration_hours", f"duration_hours {hours} can't be a weekly maintenance window; allowed: "
                                               f"{AKS_HOURS[0]} to {AKS_HOURS[1]} on Azure (AKS), {GKE_WEEKLY_HOURS} to "
                                               f"{WEEK_HOURS - 1} on GCP (GKE)")
        return self


class MaintenanceExclusion(SpecModel):
    """Whole UTC days, `start` to `end` inclusive, in which the cloud holds back what `scope` names (e.g. a launch or a
    freeze). AKS and GKE may still apply urgent security fixes."""

    name: Name
    """Unique in the cluster; GKE shows it as the exclusion's name."""
    start: Day
    """First day held back, YYYY-MM-DD (UTC)."""
    end: Day
    """Last day held back, YYYY-MM-DD (UTC), inclusive. Remove an exclusion once it has ended."""
    scope: ExclusionScope = ExclusionScope.NO_UPGRADES
    """Default `no_upgrades`: nothing is upgraded on these days. `no_minor_upgrades` and `no_minor_or_node_upgrades` are
    GKE's narrower scopes (refused on Azure: AKS blocks a whole schedule on a date, it cannot tell patch from minor)."""

    @model_validator(mode="after")
    def _order(self) -> MaintenanceExclusion:
        if self.end < self.start:
            raise FieldError("end", f"end {self.end} is before start {self.start}; end is the last day held back (inclusive)")
        return self

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


class MaintenanceSpec(SpecModel):
    """When GKE and AKS may upgrade the cluster. Not on AWS: EKS has no maintenance windows and never upgrades a
    cluster or its node groups on its own (except a control plane past the end of extended support)."""

    window: MaintenanceWindow | None = None
    """The weekly window. Default: staggered across the cloud's regions with a cluster, so no two are in maintenance at
    once (behind the global endpoint at most one region is upgrading): the first in alphabetical order opens Sunday
    03:00 UTC, each next one where the previous closes (8 hours later on Azure, 12 on GCP), wrapping into the next days
    and skipping the windows set explicitly in other regions. Azure Managed Lustre's weekly window opens with its
    region's window (Sunday 03:00 UTC in a region without a cluster)."""
    exclusions: list[MaintenanceExclusion] = []
    """Dated periods without upgrades. GCP: at most 20 per cluster, `no_upgrades` at most 30 days each. Azure: scope
    `no_upgrades` only. Default: none."""

    @model_validator(mode="after")
    def _unique(self) -> MaintenanceSpec:
        names = [e.name for e in self.exclusions]
        if repeated := sorted({n for n in names if names.count(n) > 1}):
            raise FieldError("exclusions", f"exclusion names repeat ({', '.join(repeated)}); give each exclusion its own name")
        return self


# ---- each cloud's limits --------------------------------------------------------------------------------------------

AKS_HOURS = (4, 24)
"""AKS MaintenanceWindow.durationHours: "Length of maintenance window range from 4 to 24 hours" (pulumi-azure-native
3.29.0 containerservice MaintenanceWindowArgs)."""
GKE_AVAILABILITY_HOURS, GKE_SPAN_DAYS, GKE_BLOCK_HOURS = 48, 32, 4
"""GKE: "You must allow at least 48 hours of maintenance availability in a 32-day rolling window. Only contiguous
availability windows of at least four hours are considered." (cloud.google.com/kubernetes-engine/docs/how-to/
maintenance-windows-and-exclusions)."""
GKE_MAX_EXCLUSIONS = 20
"""'A cluster can have up to 20 maintenance exclusions at a time' (pulumi-gcp 10.2.0 ClusterMaintenancePolicyArgs)."""
GKE_NO_UPGRADES_DAYS = 30
"""'NO_UPGRADES exclusions are limited to 30 days' (Google's terraform-docs-samples, gke/standard/.../main.tf)."""


def gke_weekly_availability(hours: int) -> int:
    """The fewest hours of maintenance a weekly window of `hours` (1 to 167) gives GKE in a 32-day span, counting only
    the parts of 4 hours or more. 32 days are 4 weeks and 96 hours, so a span ending where a window opens holds just 4
    whole windows: 4 * hours for windows up to 72 hours.

    Exact for every length: with the windows at [168k, 168k + hours), the hours a span [t, t + 768) counts change
    only at whole hours t (where an edge of the span meets an edge of a window or 4 hours inside one); between two, the
    same windows count and their hours change linearly, so the least value is a limit at a whole hour."""
    span = GKE_SPAN_DAYS * 24

    def inside(t: float, k: int) -> float:
        return max(0.0, min(t + span, WEEK_HOURS * k + hours) - max(t, WEEK_HOURS * k))

    least = float(span)
    for n in range(WEEK_HOURS):
        counted = [k for k in range(span // WEEK_HOURS + 2) if inside(n + 0.5, k) >= GKE_BLOCK_HOURS]
        least = min(least, *(sum(inside(t, k) for k in counted) for t in (n, n + 1)))
    return int(least)


GKE_WEEKLY_HOURS = 12
"""The shortest weekly window GKE accepts (tests/spine/test_spec_maintenance.py checks it against
gke_weekly_availability; a literal, so importing the spec runs no search)."""
DEFAULT_HOURS = {Cloud.AZURE: 8, Cloud.GCP: GKE_WEEKLY_HOURS}
"""A window's length when `duration_hours` is unset."""
DEFAULT_OPENING = (Weekday.SUNDAY, 3 * 60)
"""Where the first default window opens: Sunday 03:00 UTC, early Sunday outside most training runs."""


@dataclass(frozen=True)
class Window:
    """A weekly window, resolved: opening day and minute (UTC) and length."""

    day: Weekday
    start_minute: int
    """Minutes after 00:00 UTC."""
    hours: int

    @property
    def start_utc(self) -> str:
        return f"{self.start_minute // 60:02d}:{self.start_minute % 60:02d}"

    @property
    def week_minute(self) -> int:
        """Minutes from Monday 00:00 UTC to the opening."""
        return self.day.index * DAY_MINUTES + self.start_minute

    @classmethod
    def at(cls, week_minute: int, hours: int) -> Window:
        minute = week_minute % WEEK_MINUTES
        return cls(list(Weekday)[minute // DAY_MINUTES], minute % DAY_MINUTES, hours)

    def overlaps(self, other: Window) -> bool:
        """Whether the two windows are ever open at the same time (every week, so across the week's end too)."""
        gap = (other.week_minute - self.week_minute) % WEEK_MINUTES
        return gap < self.hours * 60 or WEEK_MINUTES - gap < other.hours * 60


@dataclass(frozen=True)
class ClusterMaintenance:
    """What a region's cluster receives: its window (explicit or the staggered default) and exclusions."""

    window: Window
    exclusions: tuple[MaintenanceExclusion, ...] = ()


def staggered(count: int, hours: int, taken: tuple[Window, ...] = ()) -> list[Window]:
    """`count` default windows of `hours`: back to back from Sunday 03:00 UTC around the week, skipping the slots that
    overlap a `taken` (explicit) window. None overlaps another while they fit in a week (168 // hours of them, fewer
    the more slots explicit windows take); past that they wrap around and share slots."""
    opening = DEFAULT_OPENING[0].index * DAY_MINUTES + DEFAULT_OPENING[1]
    slots = [Window.at(opening + k * hours * 60, hours) for k in range(WEEK_HOURS // hours)]
    free = [slot for slot in slots if not any(slot.overlaps(t) for t in taken)] or slots
    return [free[i % len(free)] for i in range(count)]


def resolve(window: MaintenanceWindow, cloud: Cloud) -> Window:
    hours, minutes = map(int, window.start_utc.split(":"))
    return Window(window.day, hours * 60 + minutes, window.duration_hours or DEFAULT_HOURS[cloud])


def cluster_maintenance(cloud: Cloud, clusters: Mapping[str, MaintenanceSpec | None]) -> dict[str, ClusterMaintenance]:
    """Region -> its cluster's maintenance, for the regions of `cloud` with a cluster (`clusters`: region -> the
    cluster's `maintenance`). Regions without a window take the staggered defaults in alphabetical order."""
    explicit = {r: resolve(m.window, cloud) for r, m in clusters.items() if m is not None and m.window is not None}
    defaults = sorted(r for r in clusters if r not in explicit)
    windows = dict(zip(defaults, staggered(len(defaults), DEFAULT_HOURS[cloud], tuple(explicit.values()))))
    chosen = {**explicit, **windows}
    return {r: ClusterMaintenance(chosen[r], tuple(m.exclusions) if m else ()) for r, m in clusters.items()}


def clusters_of(regions: Mapping[str, RegionSpec]) -> dict[str, MaintenanceSpec | None]:
    """Region -> its cluster's `maintenance`, for the regions with a cluster."""
    return {region: spec.cluster.maintenance for region, spec in regions.items() if spec.cluster is not None}


def default_window(cloud: Cloud) -> Window:
    """The window of a region without a cluster (Azure Managed Lustre there): the first default slot."""
    return staggered(1, DEFAULT_HOURS[cloud])[0]


def maintenance_issues(cloud: Cloud, clusters: Mapping[str, MaintenanceSpec | None], base: Path) -> list[Issue]:
    """Each cloud's limits on `cluster.maintenance` (`clusters`: region -> the cluster's `maintenance`)."""
    issues: list[Issue] = []
    for region, spec in clusters.items():
        if spec is not None:
            issues += _check(cloud, spec, (*base, "regions", region, "cluster", "maintenance"))
    return issues


def _check(cloud: Cloud, spec: MaintenanceSpec, path: Path) -> Iterator[Issue]:
    if cloud is Cloud.AWS:
        yield (path, "EKS has no maintenance windows or exclusions: it never upgrades a cluster or its managed node "
                     "groups on its own (kubernetes_version is pinned, an upgrade is a config change you apply), except a "
                     "control plane still on a version past the end of extended support, which no window delays "
                     "(docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html); remove maintenance")
        return
    window = spec.window
    hours = (window.duration_hours if window is not None else None) or DEFAULT_HOURS[cloud]
    where = (*path, "window", "duration_hours")
    if window is not None and cloud is Cloud.AZURE and not AKS_HOURS[0] <= hours <= AKS_HOURS[1]:
        yield (where, f"duration_hours {hours} is longer than AKS allows: a planned-maintenance window lasts "
                      f"{AKS_HOURS[0]} to {AKS_HOURS[1]} hours (MaintenanceWindow.durationHours); allowed on Azure: "
                      f"{AKS_HOURS[0]} to {AKS_HOURS[1]}")
    if window is not None and cloud is Cloud.GCP and (available := gke_weekly_availability(hours)) < GKE_AVAILABILITY_HOURS:
        yield (where, f"duration_hours {hours} leaves GKE {available} hours of maintenance in some {GKE_SPAN_DAYS}-day spans "
                      f"(4 weekly windows of {hours} hours), and GKE needs at least {GKE_AVAILABILITY_HOURS} hours in every "
                      f"{GKE_SPAN_DAYS}-day rolling window, in blocks of {GKE_BLOCK_HOURS} hours or more; allowed on GCP: "
                      f"{GKE_WEEKLY_HOURS} to {WEEK_HOURS - 1}")
    if cloud is Cloud.GCP and len(spec.exclusions) > GKE_MAX_EXCLUSIONS:
        yield ((*path, "exclusions"), f"{len(spec.exclusions)} exclusions; GKE keeps at most {GKE_MAX_EXCLUSIONS} per cluster")
    for i, exclusion in enumerate(spec.exclusions):
        at = (*path, "exclusions", i)
        if cloud is Cloud.AZURE and exclusion.scope is not ExclusionScope.NO_UPGRADES:
            yield ((*at, "scope"), f"scope '{exclusion.scope.value}' is GKE-only: AKS planned maintenance holds back a whole "
                                   "schedule on its notAllowedDates and cannot let patch upgrades through while holding "
                                   "minor ones; allowed on Azure: no_upgrades")
        if cloud is Cloud.GCP and exclusion.scope is ExclusionScope.NO_UPGRADES and exclusion.days > GKE_NO_UPGRADES_DAYS:
            yield ((*at, "end"), f"exclusion '{exclusion.name}' holds back all upgrades for {exclusion.days} days "
                                 f"({exclusion.start} to {exclusion.end}); GKE limits scope no_upgrades to "
                                 f"{GKE_NO_UPGRADES_DAYS} days: shorten it, or use no_minor_upgrades or "
                                 "no_minor_or_node_upgrades, which may last until the minor version's end of support")
