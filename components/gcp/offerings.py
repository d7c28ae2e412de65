"""What a region offers, asked during `pulumi preview`: Compute Engine machine types (GKE GPU and TPU node pools) and
Cloud TPU accelerator types (TPU VMs and queued resources) per zone, and the versions of GKE's release channels
(`components/spec/gcp.py` pinned_minor_check, signed_modules_problem). A pool, slice or cluster the region cannot serve
stops the run with its config path (`components/spec/offerings.py`) instead of failing at GKE or Cloud TPU midway
through `pulumi up`; `checked_unless_unknown` is the check all of them (and reservations.py) share. The zones the config
names (clouds.gcp.zones, tpu_zones, a pool's zones) are checked first against the region's (`checked_zones`).
Azure has no such lookup in azure-native, so AKS pools are not checked."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

import pulumi
import pulumi_gcp as gcp

from components.spec.gcp import pinned_minor_check, signed_modules_problem
from components.spec.offerings import zone_offering_problem

ByZone = dict[str, set[str]]
T = TypeVar("T")
ZoneSetting = tuple[str, str]
"""(config path, zone) of a zone the config names, e.g. ("platform.clouds.gcp.zones.us-central1[0]", "us-central1-a")."""


def one_zone(zone: pulumi.Input[str]) -> pulumi.Output[list[str]]:
    """The zone list of a resource that lives in one zone (a TPU slice)."""
    return pulumi.Output.from_input(zone).apply(lambda z: [z])


def zone_settings(path: str, zones: Sequence[str]) -> list[ZoneSetting]:
    """The entries of a zone list at config path `path`: (`path[i]`, zone)."""
    return [(f"{path}[{i}]", zone) for i, zone in enumerate(zones)]


def unknown_zones_problem(region: str, settings: Sequence[ZoneSetting], region_zones: Collection[str]) -> str | None:
    """None when every zone of `settings` is one of `region_zones` (Compute Engine's zones.list for `region`), or that
    list is empty (nothing to compare); else the error, a line per zone the region doesn't have, each naming its
    config path, the zone and the region's zones. The config checks only the `<region>-<letter>` shape: which letters
    a region has (us-central1: a, b, c, f; us-east1: b, c, d) only Compute Engine knows."""
    if not region_zones:
        return None
    allowed = ", ".join(sorted(region_zones))
    lines = [f"{path}: zone '{zone}' is not a zone of {region}; allowed: {allowed} (the region's zones, as Compute Engine "
             "lists them)" for path, zone in settings if zone not in region_zones]
    return "\n".join(lines) or None


def checked_zones(region: str, settings: Sequence[ZoneSetting], region_zones: pulumi.Output[list[str]]) -> pulumi.Output[list[str]]:
    """The zones of `settings`, in order, once the region has each of them (`unknown_zones_problem`); else the run
    stops with the error. Whatever takes the result (node locations, the offering checks of the pools and slices in
    those zones, Lustre) waits for the check, so a zone typo is reported as such and not as a type not offered there."""
    zones = [zone for _, zone in settings]
    return checked_unless_unknown(zones, region_zones, lambda names: unknown_zones_problem(region, settings, names))


class ZoneOfferings:
    """The offering lookups of one region: one machineTypes.list per zone for all of `machine_types` (OR-ed names in
    one filter), one acceleratorTypes.list per zone when there are `tpu_types`, with `opts` (the environment's provider,
    after the project's APIs are enabled)."""

    def __init__(self, project: str, region_zones: pulumi.Input[Sequence[str]], opts: pulumi.InvokeOutputOptions,
                 machine_types: Sequence[str] = (), tpu_types: Sequence[str] = ()) -> None:
        self._region_zones = pulumi.Output.from_input(region_zones)
        self._types = {"machine": set(machine_types), "tpu": set(tpu_types)}
        wanted = sorted(self._types["machine"])
        name_filter = " OR ".join(f'(name = "{name}")' for name in wanted)

        def machines(zone: str) -> pulumi.Output[set[str]]:
            found = gcp.compute.get_machine_types_output(project=project, zone=zone, filter=name_filter, opts=opts)
            return found.machine_types.apply(lambda types: {t.name for t in types})

        def accelerators(zone: str) -> pulumi.Output[set[str]]:
            return gcp.tpu.get_v2_accelerator_types_output(project=project, zone=zone, opts=opts).types.apply(set)

        self._by_zone = {"machine": self._lookup(machines) if wanted else None,
                         "tpu": self._lookup(accelerators) if tpu_types else None}

    def _lookup(self, ask: Callable[[str], pulumi.Output[set[str]]]) -> pulumi.Output[ByZone]:
        return self._region_zones.apply(
            lambda names: pulumi.Output.all(*[ask(zone) for zone in names]).apply(lambda found: dict(zip(names, found))))

    def machine_type(self, machine_type: str, zones: pulumi.Input[Sequence[str]], path: str, fix: str) -> pulumi.Output[str]:
        """`machine_type` (one of `machine_types`), once Compute Engine lists it in every zone of `zones`; else the run
        stops with the error for config path `path`, which suggests `fix`."""
        return self._checked("machine", machine_type, zones, path, fix)

    def tpu_type(self, accelerator_type: str, zone: pulumi.Input[str], path: str, fix: str) -> pulumi.Output[str]:
        """`accelerator_type` (one of `tpu_types`, e.g. `v5litepod-8`), once Cloud TPU lists it in `zone`."""
        return self._checked("tpu", accelerator_type, one_zone(zone), path, fix)

    def _checked(self, kind: str, name: str, zones: pulumi.Input[Sequence[str]], path: str, fix: str) -> pulumi.Output[str]:
        by_zone = self._by_zone[kind]
        if by_zone is None or name not in self._types[kind]:
            raise ValueError(f"{name} was not declared to ZoneOfferings as a {kind} type")

        def problem(answers: list) -> str | None:  # noqa: ANN001
            wanted, offers = answers
            offered = [zone for zone, names in offers.items() if name in names]
            return zone_offering_problem(path, name, wanted, offered, list(offers), fix)

        return checked_unless_unknown(name, pulumi.Output.all(zones, by_zone), problem)


def offered_master_version(project: str, region: str, version: str, channel: str, path: str,
                           opts: pulumi.InvokeOutputOptions, signed_modules: bool = False) -> pulumi.Output[str]:
    """`version` (a Kubernetes minor such as 1.33) once the cluster's GKE release channel `channel` (RAPID, REGULAR,
    STABLE) offers it in the region (projects.locations.getServerConfig, asked at preview; `pinned_minor_check`): a
    minor newer than the channel offers stops the run with the error for config path `path` before the cluster is
    created; one it no longer offers (past its end of support) is a warning. `signed_modules` (a region with Managed
    Lustre): the minor's newest patch in the channel, which GKE creates the cluster at, must also be at least
    SIGNED_MODULES_VERSION."""
    # With a prefix the data source keeps each channel's first (newest) valid version of that minor, and only for the
    # channels that have one (terraform-provider-google, data_source_google_container_engine_versions.go).
    of_minor = gcp.container.get_engine_versions_output(project=project, location=region, version_prefix=f"{version}.", opts=opts)
    every = gcp.container.get_engine_versions_output(project=project, location=region, opts=opts)

    def problem(answers: list) -> str | None:  # noqa: ANN001
        newest, in_channel = answers
        error, warning = pinned_minor_check(path, region, version, channel, newest, in_channel)
        if warning:
            pulumi.log.warn(warning)
        if error or not signed_modules:
            return error
        return signed_modules_problem(path, region, channel, version, in_channel, newest)

    return checked_unless_unknown(version, pulumi.Output.all(every.release_channel_latest_version,
                                                             of_minor.release_channel_latest_version), problem)


def signed_modules_channel(project: str, region: str, channel: str, path: str,
                           opts: pulumi.InvokeOutputOptions) -> pulumi.Output[str]:
    """`channel`, for a cluster without kubernetes_version in a region with Managed Lustre, once the channel's default
    version (what GKE creates a cluster at) is at least SIGNED_MODULES_VERSION; else the run stops with the error for
    config path `path` (the unset kubernetes_version) before the cluster is created. Not the auto-upgrade target: GKE
    often publishes a target below the default (a new minor becomes the default first), and a new cluster is never
    taken down to it. An existing cluster below the floor (the target lagging it) is what pinning
    kubernetes_version to 1.34 or later raises (README, Kubernetes versions)."""
    every = gcp.container.get_engine_versions_output(project=project, location=region, opts=opts)

    def problem(answers: list) -> str | None:  # noqa: ANN001
        newest, defaults = answers
        return signed_modules_problem(path, region, channel, None, defaults, newest)

    return checked_unless_unknown(channel, pulumi.Output.all(every.release_channel_latest_version,
                                                             every.release_channel_default_version), problem)


def checked_unless_unknown(value: pulumi.Input[T], answers: pulumi.Output[Any],
                           problem: Callable[[Any], str | None]) -> pulumi.Output[T]:
    """`value` once `problem` finds nothing wrong with the lookups' `answers`; a problem stops the run with its
    message. The lookups wait for the project's APIs: on the preview that enables them the engine answers them unknown,
    and `value` stays known (the policy pack still reads the machine type); the update runs them and the check before
    the resource that takes `value`. The result depends on what `value` and the lookups depend on (the project's API
    services), and is unknown or secret when `value` is."""
    given = pulumi.Output.from_input(value)

    async def checked() -> T | None:
        known = await given.future()
        if await answers.is_known():
            message = problem(await answers.future())
            if message:
                raise pulumi.RunError(message)
        return known

    async def resources() -> set[pulumi.Resource]:
        return await given.resources() | await answers.resources()

    return pulumi.Output(resources(), checked(), given.is_known(), given.is_secret())
