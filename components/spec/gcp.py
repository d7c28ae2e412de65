"""GCP-specific platform settings, the GCP-only semantic checks, and the pure GCP rules they share with the
GCP components (zones, node pool names, the Lustre address range, TPU VM runtimes). No cloud SDK imports here."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from ipaddress import IPv4Network
from typing import Annotated

from pydantic import Field

from components import catalog

from .cloud import CloudSpec, RegionSpec
from .common import GCP_PROJECT_PATTERN, GCP_REGION_SHAPE, GCP_ZONE_PATTERN, GCP_ZONE_SUFFIX, Cloud, Name
from .compute import CapacityType, GpuDriver, GpuPoolSpec, Placement, TpuMode, TpuSliceSpec
from .offerings import GKE_CHANNELS, channel_version_problem, gke_version_key, minor
from .resolve import resolve_gpu_pool, resolve_tpu

Path = tuple[str | int, ...]
Issue = tuple[Path, str]

GcpZone = Annotated[str, Field(pattern=GCP_ZONE_PATTERN)]


class GcpCloudSpec(CloudSpec):
    """GCP regions of the platform, all in one project. Credentials come from Application Default Credentials
    (`gcloud auth application-default login`, a workload identity, or `GOOGLE_CREDENTIALS`)."""

    project: Annotated[str, Field(pattern=GCP_PROJECT_PATTERN)]
    """GCP project ID to deploy into (required)."""
    zones: dict[str, list[GcpZone]] = {}
    """Zones per region, in order: the cluster's node locations, and the first one hosts the region's zonal
    services (Managed Lustre, TPU slices without a `tpu_zones` entry). A list must have `network.zones` entries.
    Default: the region's first `network.zones` zones in name order, looked up at deploy time; a zone added to the
    region later could change that choice, so list the zones of a region with Lustre or TPU slices to pin them. GPU
    pools without `zones` of their own run in all of them, so each must offer their machine types (`pulumi preview`
    checks, and names the zones that do)."""
    tpu_zones: dict[str, dict[Name, GcpZone]] = {}
    """Per region, the zone of a TPU slice when it is not the region's first zone (TPU generations and
    reservations exist only in some zones; `pulumi preview` checks that the zone offers the slice's type). Default:
    none."""
    enable_apis: bool = True
    """Enable the Google APIs the platform calls (compute, container, cloudkms, ...) on the project; they are
    never disabled on destroy. Default on; turn off where a project factory owns the API list."""
    previewers: list[str] = []
    """The pull-request preview identities (`pulumi preview --refresh`): `serviceAccount:<email>` or `user:<email>`.
    With the Kubernetes layer on, each gets roles/container.clusterViewer on the project (to reach the clusters), and
    every cluster lets its email read the stack's kinds and the Secrets of the Helm release namespaces (Kubernetes
    RBAC). Not `group:`: GKE's RBAC sees groups only with Google Groups for RBAC, which the clusters don't use.
    Default none: nothing is created."""


# --- Pure GCP rules shared with components/gcp -------------------------------------------------------------

SYSTEM_POOL = "system"
"""GKE node pool name of the cluster's CPU pool for add-ons."""
MAX_CLUSTER_NAME = 40
"""GKE cluster names (`<environment>-<region>`) are at most 40 characters."""
MAX_LOG_RETENTION_DAYS = 3650
"""Longest retention of a Cloud Logging bucket."""
LUSTRE_RANGE_MAX_PREFIX = 23
"""Managed Lustre needs a private services access range of /23 or larger per instance (Managed Lustre docs,
"Configure a VPC network")."""
# Cloud TPU software versions for JAX and PyTorch (cloud.google.com/tpu/docs/runtimes).
TPU_VM_RUNTIMES = {"v4": "tpu-ubuntu2204-base", "v5e": "v2-alpha-tpuv5-lite", "v5p": "v2-alpha-tpuv5", "v6e": "v2-alpha-tpuv6e"}
TPU_VM_CAPACITY = (CapacityType.ON_DEMAND, CapacityType.SPOT, CapacityType.RESERVED)
"""Capacity a TPU VM (mode `tpu_vm`) takes: the TPU VM API has no Dynamic Workload Scheduler settings."""
QUEUED_RESOURCE_CAPACITY = (CapacityType.ON_DEMAND,)
"""Capacity a queued resource (mode `queued_resource`) takes: pulumi-gcp 10.2.0's `tpu.V2QueuedResource` has no
spot, guaranteed/reservation or queueing-policy fields, so only the default (on-demand) request can be expressed."""
SIGNED_MODULES_VERSION = "1.34.1-gke.2364000"
"""GKE loads Google-signed out-of-tree kernel modules (the Managed Lustre client) on Secure Boot CPU and TPU nodes
under secure kernel module loading (ENFORCE_SIGNED_MODULES) from this version (cloud.google.com/kubernetes-engine/
security/secure-modules-cos, "Requirements and limitations"); below it the Lustre CSI driver needs Secure Boot off
(GoogleCloudPlatform/lustre-csi-driver docs/installation.md)."""
# Flex-start node pools may use compact placement only on these machine series (cluster-toolkit gke-node-pool).
DWS_COMPACT_MACHINES = ("a3-ultragpu-", "a4-")
FLEX_START_TPU_GENERATIONS = ("v5e", "v5p", "v6e")
"""TPU generations GKE provisions with flex-start, from GKE 1.33.0-gke.1712000 ("TPU v3 and v4 are not supported":
cloud.google.com/kubernetes-engine/docs/concepts/dws, Requirements)."""
FLEX_START_TPU_MINOR = "1.33"
_ZONE = re.compile(rf"^(?P<region>{GCP_REGION_SHAPE})-(?P<suffix>{GCP_ZONE_SUFFIX})$")
_SSL_CERTIFICATE = re.compile(
    r"^(https://www\.googleapis\.com/compute/v1/)?projects/[a-z][a-z0-9-]+/global/sslCertificates/[a-z]([-a-z0-9]*[a-z0-9])?$")
_IAM_MEMBER = re.compile(r"^(user|group|serviceAccount|domain):[^\s]+$|^principal(Set)?://iam\.googleapis\.com/\S+$")
# Service account emails a TPU VM can run as: a user-managed account, <account ID>@<project ID>.iam.gserviceaccount.com,
# the account ID matching [a-z]([-a-z0-9]*[a-z0-9]) (IAM CreateServiceAccountRequest.account_id, which IAM creates with
# 6 to 30 characters; the check takes 1 to 30, so it never refuses an existing account over its length; a domain-scoped
# project example.com:p gives p.example.com), or a default account: Compute Engine's
# <project number>-compute@developer.gserviceaccount.com and App Engine's <project ID>@appspot.gserviceaccount.com.
_SERVICE_ACCOUNT_EMAIL = re.compile(
    r"^[a-z]([-a-z0-9]{0,28}[a-z0-9])?@[a-z][-a-z0-9]{4,28}[a-z0-9](\.[a-z0-9][-a-z0-9]*)*\.iam\.gserviceaccount\.com$"
    r"|^[0-9]+-compute@developer\.gserviceaccount\.com$|^[a-z][-a-z0-9]{4,28}[a-z0-9]@appspot\.gserviceaccount\.com$")
SERVICE_ACCOUNT_FORMS = ("<account-id>@<project>.iam.gserviceaccount.com, <project-number>-compute@developer.gserviceaccount.com "
                         "(the Compute Engine default) or <project>@appspot.gserviceaccount.com")

# A Compute Engine reservation: its name (1 to 63 characters, RFC 1035, as every Compute Engine resource name), or
# projects/<owner>/reservations/<name> for one shared from another project, as GKE's reservation affinity takes it.
_RESERVATION = re.compile(rf"^(?:projects/(?P<project>{GCP_PROJECT_PATTERN[1:-1]})/reservations/)?"
                          r"(?P<name>[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)$")
RESERVATION_FORMS = ("a reservation name (1 to 63 lower-case letters, digits and '-', starting with a letter, not ending "
                     "with '-') or projects/<project>/reservations/<name> for one shared from another project")


def reservation_parts(reservation: str) -> tuple[str | None, str]:
    """(owner project, or None when it is the platform's own, name) of a reservation the config's checks accepted."""
    found = _RESERVATION.match(reservation)
    if found is None:
        raise ValueError(_not_a_reservation(reservation))
    return found["project"], found["name"]


def _not_a_reservation(reservation: str) -> str:
    return f"'{reservation}' is not a Compute Engine reservation; allowed: {RESERVATION_FORMS}"


def tpu_node_pool_names(slice_name: str, slices: int) -> list[str]:
    """GKE node pool names of a slice set: one per slice, `<slice>-<index>` (appending slices never renames one)."""
    return [f"{slice_name}-{index}" for index in range(slices)]


def lustre_range(cidr: IPv4Network) -> IPv4Network:
    """The private services access range for Managed Lustre: the network's third quarter, which the CIDR plan
    keeps for public subnets; GCP nodes have no public subnets, so the block is free."""
    return list(cidr.subnets(prefixlen_diff=2))[2]


def is_plain_zone(zone: str) -> bool:
    """`<region>-<letter>`: a general-purpose zone, not an AI zone (us-central1-ai1a), which Google reserves for ML
    workloads and lists only to projects that enable them: never a default zone."""
    match = _ZONE.match(zone)
    return match is not None and len(match["suffix"]) == 1


def zone_region(zone: str) -> str | None:
    match = _ZONE.match(zone)
    return match.group("region") if match else None


def pinned_minor_check(path: str, region: str, version: str, channel: str, newest: Mapping[str, str],
                       of_minor: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(error, warning) for a cluster in GKE release channel `channel` pinned to Kubernetes minor `version`.

    `newest`: each channel's newest version in `region`; `of_minor`: each channel's newest version of `version`, for
    the channels that offer it (getServerConfig `channels[].validVersions`: a cluster in a channel is created only at
    a version of its channel, "Master version must be one of "STABLE" channel supported versions"; the project-wide
    validMasterVersions also lists versions of no channel). An empty `newest` (the offline plan) has nothing to compare.
    A minor newer than the channel offers is refused: GKE creates no cluster there. One older than the channel offers
    is a warning: kubernetes_version is the cluster's minimum, GKE upgrades an existing cluster past a minor at its end
    of support and drops the minor from the channel; a new cluster at it GKE refuses itself."""
    latest = newest.get(channel)
    if not latest or channel in of_minor:
        return None, None
    if error := channel_version_problem(path, region, version, channel, newest):  # newer than the channel's newest
        return error, None
    return None, (f"{path}: GKE's {channel.lower()} release channel in {region} no longer offers Kubernetes {version} (it "
                  f"offers up to {minor(latest)}): GKE upgrades an existing cluster past it at its end of support and creates "
                  f"no new one at it; set kubernetes_version to the cluster's current minor (up to {minor(latest)}), or "
                  "remove it to follow the channel")


def signed_modules_problem(path: str, region: str, channel: str, version: str | None, gets: Mapping[str, str],
                           newest: Mapping[str, str]) -> str | None:
    """None when the version a cluster with Managed Lustre gets in GKE release channel `channel` is at least
    SIGNED_MODULES_VERSION, or is not reported; else the error for the cluster at config path `path`.

    `gets`: per channel, the version a cluster gets there in `region`: its pinned minor `version`'s newest patch in the
    channel (the GKE API's version alias "1.X" "picks the highest valid patch+gke.N patch in the 1.X version"), or
    with `version` unset the channel's default (a new cluster's). `newest`: each channel's newest version there, for a
    newer minor to set instead."""
    floor = gke_version_key(SIGNED_MODULES_VERSION)
    got = gets.get(channel, "")
    if not got or gke_version_key(got) >= floor:
        return None
    if version:
        what = f"Kubernetes {version} is at most {got} in GKE's {channel.lower()} release channel in {region}"
    else:
        what = f"unset, so the cluster takes the default of GKE's {channel.lower()} release channel in {region}, {got}"
    fixes = []
    latest = newest.get(channel, "")
    if latest and gke_version_key(latest) >= floor and minor(latest) != version:
        fixes.append(f"set kubernetes_version to {minor(latest)} ({latest} in the channel)")
    channels = [c.lower() for c in GKE_CHANNELS if c != channel and gke_version_key(gets.get(c, "")) >= floor]
    if channels:
        fixes.append(f"set upgrade_channel to {' or '.join(channels)}")
    fix = " or ".join(fixes) or f"wait until the channel offers {SIGNED_MODULES_VERSION} or later, or move Lustre to another region"
    return (f"{path}: {what}; with Managed Lustre in the region the CPU and TPU nodes load the Lustre client under secure "
            f"kernel module loading (ENFORCE_SIGNED_MODULES), which GKE allows from {SIGNED_MODULES_VERSION}: {fix}")


def initial_nodes_per_zone(min_nodes: int, zones: int) -> int:
    """GKE's `initial_node_count` is per zone: the fewest nodes per zone that meet a total minimum."""
    return math.ceil(min_nodes / zones) if min_nodes else 0


# --- Checks -------------------------------------------------------------------------------------------------


def extra_checks(platform, cloud_spec: GcpCloudSpec) -> list[Issue]:  # noqa: ANN001
    """GCP-only semantic checks: (path relative to platform, message) issues."""
    base: Path = ("clouds", Cloud.GCP.value)
    issues: list[Issue] = list(_check_zone_settings(cloud_spec, base))
    for region, spec in cloud_spec.regions.items():
        path = (*base, "regions", region)
        issues += list(_check_region(platform, region, spec, path))
    issues += list(_check_endpoint(cloud_spec, base))
    for i, member in enumerate(cloud_spec.previewers):
        if problem := previewer_problem(member):
            issues.append(((*base, "previewers", i), problem))
    return issues


_PREVIEWER = re.compile(r"^(serviceAccount|user):[^\s@:]+@[^\s@:]+$")


def previewer_problem(member: str) -> str | None:
    """Why `member` can't be a previewer, or None: GKE's RBAC names it by its email (a User subject)."""
    if _PREVIEWER.match(member):
        return None
    allowed = "allowed: serviceAccount:<email>, user:<email>"
    if member.startswith("group:"):
        return (f"`{member}` is not allowed in previewers: GKE's Kubernetes RBAC sees a group only with Google Groups for "
                f"RBAC; {allowed}")
    return f"'{member}' is not an IAM member the clusters' Kubernetes RBAC can name; {allowed}"


def _check_zone_settings(cloud_spec: GcpCloudSpec, base: Path) -> Iterator[Issue]:
    for key, values in (("zones", cloud_spec.zones), ("tpu_zones", cloud_spec.tpu_zones)):
        for region in values:
            if region not in cloud_spec.regions:
                yield ((*base, key, region), f"region '{region}' is not declared in clouds.gcp.regions ({', '.join(cloud_spec.regions)})")
    for region, zones in cloud_spec.zones.items():
        spec = cloud_spec.regions.get(region)
        for i, zone in enumerate(zones):
            if zone_region(zone) != region:
                yield ((*base, "zones", region, i), f"zone '{zone}' is not in region {region}; allowed: {region}-<letter>, e.g. {region}-a")
        if len(set(zones)) != len(zones):
            yield ((*base, "zones", region), f"zones {', '.join(zones)} repeat a zone; list each zone once")
        if spec is not None and len(zones) != spec.network.zones:
            yield ((*base, "zones", region),
                   f"lists {len(zones)} zones but network.zones of {region} is {spec.network.zones}; list exactly that many")
    for region, slices in cloud_spec.tpu_zones.items():
        spec = cloud_spec.regions.get(region)
        for name, zone in slices.items():
            if spec is not None and name not in spec.tpu_slices:
                known = ", ".join(spec.tpu_slices) or "none"
                yield ((*base, "tpu_zones", region, name), f"'{name}' is not a TPU slice of {region} (slices: {known})")
            if zone_region(zone) != region:
                yield ((*base, "tpu_zones", region, name), f"zone '{zone}' is not in region {region}")


def _check_region(platform, region: str, spec: RegionSpec, path: Path) -> Iterator[Issue]:  # noqa: ANN001
    if spec.lustre and spec.network.cidr.prefixlen + 2 > LUSTRE_RANGE_MAX_PREFIX:
        block = lustre_range(spec.network.cidr)
        yield ((*path, "network", "cidr"), f"Managed Lustre needs a /{LUSTRE_RANGE_MAX_PREFIX} private services access range; "
                                           f"this network's free block is {block}; use a /21 network or larger")
    if spec.network.flow_log_retention_days > MAX_LOG_RETENTION_DAYS:
        yield ((*path, "network", "flow_log_retention_days"),
               f"got {spec.network.flow_log_retention_days}; Cloud Logging buckets keep logs 1 to {MAX_LOG_RETENTION_DAYS} days")
    if spec.inference is not None and spec.cluster is None:
        yield ((*path, "inference"), "inference on GCP is served from the region's GKE cluster (NEGs); add `cluster:` to this region")
    if spec.cluster is not None:
        cluster_name = f"{platform.environment}-{region}"
        if len(cluster_name) > MAX_CLUSTER_NAME:
            yield ((*path, "cluster"), f"the GKE cluster name '{cluster_name}' has {len(cluster_name)} characters; GKE allows "
                                       f"{MAX_CLUSTER_NAME}: use a shorter environment name")
        for i, admin in enumerate(spec.cluster.admins):
            if not _IAM_MEMBER.match(admin):
                yield ((*path, "cluster", "admins", i), f"'{admin}' is not an IAM member; allowed: user:<email>, group:<email>, "
                                                        "serviceAccount:<email>, domain:<domain>, principal://... or principalSet://...")
        version = spec.cluster.kubernetes_version
        # The floor's minor: what the config checks can refuse before any lookup.
        minimum = minor(SIGNED_MODULES_VERSION)
        if spec.lustre and version and gke_version_key(version) < gke_version_key(minimum):
            yield ((*path, "cluster", "kubernetes_version"),
                   f"got {version}; with Managed Lustre in the region, the nodes load the Lustre client module with Secure Boot "
                   f"on, which GKE allows from {minimum} (secure kernel module loading); set {minimum} or later, or leave it "
                   "unset for the release channel's")
        nodes = spec.network.zones
        if spec.cluster.system_pool.max_nodes < nodes:
            yield ((*path, "cluster", "system_pool", "max_nodes"),
                   f"got {spec.cluster.system_pool.max_nodes}; a regional GKE pool starts with a node in each of the {nodes} "
                   f"zones, so max_nodes must be at least {nodes}")
    used = {SYSTEM_POOL: "the system pool"}
    for name, pool in spec.gpu_pools.items():
        yield from _check_gpu_pool(platform, region, name, pool, used, (*path, "gpu_pools", name))
        yield from _check_gpu_pool_size(pool, spec.network.zones, (*path, "gpu_pools", name))
    version = spec.cluster.kubernetes_version if spec.cluster is not None else None
    for name, slice_ in spec.tpu_slices.items():
        yield from _check_tpu_slice(name, slice_, used, (*path, "tpu_slices", name), version)


def _claim(used: dict[str, str], pool_name: str, owner: str, path: Path) -> Iterator[Issue]:
    if pool_name in used:
        yield (path, f"GKE node pool name '{pool_name}' of {owner} is already used by {used[pool_name]}; rename one of them")
    used[pool_name] = owner


def _check_gpu_pool(platform, region: str, name: str, pool: GpuPoolSpec, used: dict[str, str], path: Path) -> Iterator[Issue]:  # noqa: ANN001
    yield from _claim(used, name, f"GPU pool '{name}'", path)
    yield from _check_reservation(pool.reservation, path)
    for i, zone in enumerate(pool.zones):
        if zone_region(zone) != region:
            yield ((*path, "zones", i), f"zone '{zone}' is not in region {region}; allowed: {region}-<letter>")
    if pool.driver is GpuDriver.OPERATOR and not platform.addons.gpu_operator_on_gke:
        yield ((*path, "driver"), "driver 'operator' on GKE needs addons.gpu_operator_on_gke: true (otherwise GKE's device plugin "
                                  "runs and nothing installs the driver); allowed without it: cloud")
    dws = pool.capacity in (CapacityType.FLEX_START, CapacityType.QUEUED)
    if dws and pool.min_nodes:
        yield ((*path, "min_nodes"),
               f"got {pool.min_nodes}; Dynamic Workload Scheduler pools ({pool.capacity.value}) start empty and need min_nodes 0")
    if pool.placement is not Placement.COMPACT or pool.capacity is CapacityType.RESERVED:
        return
    if len(pool.zones) != 1:
        yield ((*path, "zones"), f"placement 'compact' puts a GKE pool in one zone; list exactly one zone (got {len(pool.zones)})")
    try:
        machine = resolve_gpu_pool(Cloud.GCP, pool).instance_type
    except catalog.CatalogError:  # the shared checks report it
        return
    if pool.capacity is CapacityType.QUEUED or (pool.capacity is CapacityType.FLEX_START and not machine.startswith(DWS_COMPACT_MACHINES)):
        yield ((*path, "placement"), f"GKE does not combine compact placement with capacity '{pool.capacity.value}' on {machine} "
                                     f"(flex-start allows it only on {', '.join(p.rstrip('-') for p in DWS_COMPACT_MACHINES)}); allowed: none")


def _check_gpu_pool_size(pool: GpuPoolSpec, network_zones: int, path: Path) -> Iterator[Issue]:
    """A new GKE pool starts with `initial_node_count` nodes in each of its zones (the count is per zone; a pool without
    `zones` has all of the network's): with min_nodes above 0 that is at least one per zone, which may be more than the
    pool's total max_nodes. The autoscaler's total limits alone take fewer nodes than zones; the first nodes cannot."""
    if pool.capacity in (CapacityType.FLEX_START, CapacityType.QUEUED) or pool.min_nodes > pool.max_nodes:
        return  # DWS pools start empty; min above max is the shared checks' error
    zones = len(pool.zones) or network_zones
    first = initial_nodes_per_zone(pool.min_nodes, zones) * zones
    if first > pool.max_nodes:
        where = "its zones" if pool.zones else "the network's zones (the pool has no zones of its own)"
        yield ((*path, "max_nodes"),
               f"got {pool.max_nodes}; GKE starts the pool with the same number of nodes in each of {where}, "
               f"{first // zones} in each of {zones} for min_nodes {pool.min_nodes}, {first} in all: set max_nodes to at least "
               f"{first}, or min_nodes to 0 or a multiple of {zones}")


def _check_reservation(reservation: str | None, path: Path) -> Iterator[Issue]:
    if reservation is not None and not _RESERVATION.match(reservation):
        yield ((*path, "reservation"), _not_a_reservation(reservation))


def _check_tpu_slice(name: str, slice_: TpuSliceSpec, used: dict[str, str], path: Path,
                     version: str | None = None) -> Iterator[Issue]:
    """`version`: the region cluster's pinned kubernetes_version, if any."""
    yield from _check_reservation(slice_.reservation, path)
    mode = slice_.mode
    account = slice_.service_account
    if mode is TpuMode.GKE:
        for pool_name in tpu_node_pool_names(name, slice_.slices):
            yield from _claim(used, pool_name, f"TPU slice '{name}'", path)
        if account:
            yield ((*path, "service_account"), f"service_account '{account}' is only used by mode 'tpu_vm'; GKE TPU node pools "
                                               "run as the cluster's node service account; allowed with mode 'gke': unset")
        if slice_.capacity is CapacityType.FLEX_START:
            yield from _check_flex_start_tpu(slice_, path, version)
        return
    if mode is TpuMode.TPU_VM and account and not _SERVICE_ACCOUNT_EMAIL.match(account):
        hint = "; drop the 'serviceAccount:' prefix (that is the IAM member form)" if account.startswith("serviceAccount:") else ""
        yield ((*path, "service_account"), f"'{account}' is not a service account email; allowed: {SERVICE_ACCOUNT_FORMS}{hint}")
    if mode is TpuMode.TPU_VM and slice_.capacity not in TPU_VM_CAPACITY:
        allowed = ", ".join(c.value for c in TPU_VM_CAPACITY)
        yield ((*path, "capacity"), f"capacity '{slice_.capacity.value}' needs GKE (mode 'gke'): TPU VMs take {allowed}")
    if mode is TpuMode.QUEUED_RESOURCE:
        # What pulumi-gcp 10.2.0's V2QueuedResource cannot express is refused, never silently dropped.
        if slice_.capacity not in QUEUED_RESOURCE_CAPACITY:
            yield ((*path, "capacity"), f"capacity '{slice_.capacity.value}' is not available with mode 'queued_resource': "
                                        "pulumi-gcp 10.2.0's tpu.V2QueuedResource takes no spot, reservation or Dynamic Workload "
                                        "Scheduler setting; allowed: on_demand. Use mode 'tpu_vm' (on_demand, spot, reserved) "
                                        "or mode 'gke' (every capacity)")
        if account:
            yield ((*path, "service_account"), f"service_account '{account}' cannot be set with mode 'queued_resource': "
                                               "pulumi-gcp 10.2.0's queued-resource node spec takes no service account, so its "
                                               "TPU VMs run as the project's Compute Engine default service account; allowed: "
                                               "unset. Use mode 'tpu_vm' for TPU VMs with an explicit service account")
    try:
        plan = resolve_tpu(slice_)
    except catalog.CatalogError:  # the shared checks report it
        return
    if plan.generation not in TPU_VM_RUNTIMES:
        yield ((*path, "generation"), f"no TPU VM software version is known for {plan.generation}; mode '{mode.value}' "
                                      f"supports {', '.join(TPU_VM_RUNTIMES)}; use mode 'gke'")


def _check_flex_start_tpu(slice_: TpuSliceSpec, path: Path, version: str | None) -> Iterator[Issue]:
    try:
        generation = resolve_tpu(slice_).generation
    except catalog.CatalogError:  # the shared checks report it
        return
    if generation not in FLEX_START_TPU_GENERATIONS:
        *first, last = FLEX_START_TPU_GENERATIONS
        generations = f"{', '.join(first)} or {last}"
        yield ((*path, "capacity"), f"capacity 'flex_start' is not available for TPU {generation}: GKE provisions flex-start TPUs of "
                                    f"{generations} only; allowed for {generation}: capacity on_demand, spot or reserved (or "
                                    f"generation {generations} with flex_start)")
    if version and gke_version_key(version) < gke_version_key(FLEX_START_TPU_MINOR):
        yield ((*path, "capacity"), f"capacity 'flex_start' on TPUs needs GKE {FLEX_START_TPU_MINOR} or later (1.33.0-gke.1712000), "
                                    f"and the cluster's kubernetes_version is {version}: set cluster.kubernetes_version to "
                                    f"{FLEX_START_TPU_MINOR} or later, or leave it unset for the release channel's")


def _check_endpoint(cloud_spec: GcpCloudSpec, base: Path) -> Iterator[Issue]:
    endpoint = cloud_spec.global_endpoint
    if endpoint is None:
        return
    path = (*base, "global_endpoint")
    serving = {r: s.inference for r, s in cloud_spec.regions.items() if s.inference is not None}
    paths = {r: i.health_check_path for r, i in serving.items()}
    if len(set(paths.values())) > 1:
        listed = ", ".join(f"{r}: {p}" for r, p in paths.items())
        yield (path, "the global load balancer's backend service has one health check; "
                     f"the regions' inference.health_check_path differ ({listed})")
    for region, inference in serving.items():
        if inference.traffic_percent != 100:
            yield ((*base, "regions", region, "inference", "traffic_percent"),
                   f"got {inference.traffic_percent}; the GCP global load balancer sends each client to the nearest healthy region "
                   "and has no per-region traffic dial; allowed on GCP: 100")
    cert = endpoint.certificate
    if cert and not _SSL_CERTIFICATE.match(cert):
        yield ((*path, "certificate"),
               f"'{cert}' is not a global SSL certificate resource; allowed: projects/<project>/global/sslCertificates/<name>")
