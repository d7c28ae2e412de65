"""Semantic checks that need more than one field or the catalog. Pure: each returns (path, message) issues."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network

from components import catalog

from .common import Cloud
from .compute import CapacityType, GpuDriver, SharingMode, TpuMode
from .endpoint import GlobalRouting
from . import aws, azure, gcp
from .cloud import CloudSpec, RegionSpec
from .platform import Platform
from .resolve import resolve_gpu_pool, resolve_lustre, resolve_tpu, spec_field

Path = tuple[str | int, ...]
Issue = tuple[Path, str]

_CLOUD_ONLY_CAPACITY = {
    CapacityType.CAPACITY_BLOCK: Cloud.AWS,
    CapacityType.FLEX_START: Cloud.GCP,
    CapacityType.QUEUED: Cloud.GCP,
}
_CLOUD_NAMES = {"aws": "an AWS", "gcp": "a GCP", "azure": "an Azure"}
_EXTRA_CHECKS = {Cloud.AWS: aws.extra_checks, Cloud.GCP: gcp.extra_checks, Cloud.AZURE: azure.extra_checks}
# Amazon S3 does not transition objects younger than 30 days to STANDARD_IA
# (docs.aws.amazon.com/AmazonS3/latest/userguide/lifecycle-transition-general-considerations.html).
_S3_MIN_IA_DAYS = 30


def check_platform(spec: Platform) -> list[Issue]:
    """Every semantic problem in the spec, in document order."""
    issues: list[Issue] = []
    issues += _check_residency_lists(spec)
    issues += _check_cidrs(spec)
    for cloud, cloud_spec in spec.clouds.items():
        base: Path = ("clouds", cloud.value)
        issues += _check_endpoint(cloud, cloud_spec, base)
        issues += _EXTRA_CHECKS[cloud](spec, cloud_spec)
        for region, region_spec in cloud_spec.regions.items():
            path = (*base, "regions", region)
            issues += _check_region_name(cloud, region, spec.compliance.allowed_regions, path)
            issues += _check_region(cloud, region_spec, path)
            issues += _check_data_zones(spec, region, region_spec, path)
    return issues


def _networks(spec: Platform) -> Iterator[tuple[Path, IPv4Network]]:
    for cloud, cloud_spec in spec.clouds.items():
        for region, region_spec in cloud_spec.regions.items():
            net = region_spec.network
            path = ("clouds", cloud.value, "regions", region, "network")
            yield (*path, "cidr"), net.cidr


def _check_cidrs(spec: Platform) -> list[Issue]:
    issues: list[Issue] = []
    seen: list[tuple[Path, IPv4Network]] = []
    for path, cidr in _networks(spec):
        for other_path, other in seen:
            if cidr.overlaps(other):
                issues.append((path, f"{cidr} overlaps {other} at platform.{'.'.join(map(str, other_path))}; networks must not overlap (they may be peered)"))
        seen.append((path, cidr))
    gcp_pods: list[tuple[Path, IPv4Network]] = []
    for cloud, cloud_spec in spec.clouds.items():
        for region, region_spec in cloud_spec.regions.items():
            net = region_spec.network
            path = ("clouds", cloud.value, "regions", region, "network")
            ranges = [("cidr", net.cidr), ("pod_cidr", net.effective_pod_cidr), ("service_cidr", net.effective_service_cidr)]
            for i, (name, rng) in enumerate(ranges):
                for other_name, other in ranges[:i]:
                    if rng.overlaps(other):
                        explicit = getattr(net, name) is not None
                        how = "" if explicit else f" (derived default; set {name} explicitly)"
                        issues.append(((*path, name), f"{rng} overlaps {other_name} {other} in the same region{how}"))
            if cloud is Cloud.GCP:
                # GKE pod ranges are routable VPC ranges: peered regions must not share them.
                for other_path, other in gcp_pods:
                    if net.effective_pod_cidr.overlaps(other):
                        issues.append(((*path, "pod_cidr"), f"{net.effective_pod_cidr} overlaps the pod range of platform.{'.'.join(map(str, other_path))} ({other}); set pod_cidr explicitly"))
                gcp_pods.append((path, net.effective_pod_cidr))
    return issues


def _check_region_name(cloud: Cloud, region: str, allowed: list[str] | None, path: Path) -> list[Issue]:
    issues: list[Issue] = []
    if catalog.find_region(cloud.value, region) is None:
        issues.append((path, unknown_region(region, cloud)))
    if allowed is not None and region not in allowed:
        issues.append((path, f"region {region!r} is outside the data residency list compliance.allowed_regions: {', '.join(allowed)}"))
    return issues


def _check_residency_lists(spec: Platform) -> list[Issue]:
    """Entries of compliance.allowed_regions and compliance.data_zones must be regions of some cloud."""
    compliance = spec.compliance
    lists: list[tuple[Path, list[str]]] = []
    if compliance.allowed_regions is not None:
        lists.append((("compliance", "allowed_regions"), compliance.allowed_regions))
    lists += [(("compliance", "data_zones", zone), regions) for zone, regions in compliance.data_zones.items()]
    return [((*path, i), unknown_region(region, None)) for path, regions in lists for i, region in enumerate(regions)
            if not catalog.region_clouds(region)]


def unknown_region(region: str, cloud: Cloud | None) -> str:
    """Why `region` is refused (it is not in the catalog's list for `cloud`, or for any cloud when None): the value,
    a close listed name if there is one, and where the full list is."""
    other = catalog.region_clouds(region)
    if cloud is not None and other:
        return (f"{region!r} is {_CLOUD_NAMES[other[0]]} region, not {_CLOUD_NAMES[cloud.value]} region: move it under "
                f"clouds.{other[0]}.regions ({cloud.value} regions are named like {catalog.region_example(cloud.value)})")
    if cloud is None:
        what, where = "region", f"all regions of aws, gcp and azure: {catalog.REGIONS_FILE}"
    else:
        what = f"{cloud.value} region"
        where = f"all {cloud.value} regions: {catalog.REGIONS_FILE}, or the cloud's own list: {catalog.region_doc(cloud.value)}"
    close = catalog.suggest_regions(region, cloud.value if cloud else None)
    if close:
        return f"unknown {what} {region!r}; did you mean {' or '.join(repr(c) for c in close)}? {where[0].upper()}{where[1:]}"
    examples = ", ".join(catalog.region_example(c.value) for c in ([cloud] if cloud else Cloud))
    return f"unknown {what} {region!r} (regions are named like {examples}); {where}"


def _check_region(cloud: Cloud, region: RegionSpec, path: Path) -> list[Issue]:
    issues: list[Issue] = []
    if region.resource_group is not None and cloud is not Cloud.AZURE:
        issues.append(((*path, "resource_group"), f"resource_group is Azure-only; {cloud.value} has no resource groups"))
    for name, pool in region.gpu_pools.items():
        issues += _check_gpu_pool(cloud, region, name, pool, (*path, "gpu_pools", name))
    for name, slice_ in region.tpu_slices.items():
        spath = (*path, "tpu_slices", name)
        if cloud is not Cloud.GCP:
            issues.append((spath, f"TPU slices are GCP-only; {cloud.value} has no TPUs. Move this slice under platform.clouds.gcp.regions.<region>.tpu_slices"))
            continue
        try:
            resolve_tpu(slice_)
        except catalog.CatalogError as err:
            issues.append(((*spath, spec_field(err, "topology")), str(err)))
        if slice_.mode is TpuMode.GKE and region.cluster is None:
            issues.append((spath, "TPU slices in mode 'gke' need a cluster in this region; add `cluster:` or use mode 'tpu_vm' or 'queued_resource'"))
    for name, fs in region.lustre.items():
        fpath = (*path, "lustre", name)
        try:
            resolve_lustre(cloud, fs)
        except catalog.CatalogError as err:
            issues.append(((*fpath, spec_field(err, "size_gib")), str(err)))
        if fs.bucket is not None and fs.bucket not in region.buckets:
            known = ", ".join(region.buckets) or "none"
            issues.append(((*fpath, "bucket"), f"bucket '{fs.bucket}' is not declared in this region's buckets (declared: {known})"))
    for name, bucket in region.buckets.items():
        bpath = (*path, "buckets", name)
        if bucket.autoclass and cloud is not Cloud.GCP:
            issues.append(((*bpath, "autoclass"), f"autoclass is GCP-only; on {cloud.value} use tiering"))
        warm = bucket.tiering.warm_after_days
        if cloud is Cloud.AWS and warm is not None and warm < _S3_MIN_IA_DAYS:
            issues.append(((*bpath, "tiering", "warm_after_days"), f"got {warm}; S3 moves objects to STANDARD_IA only after {_S3_MIN_IA_DAYS} days or more"))
    if region.inference is not None and cloud is Cloud.AWS and not region.inference.certificate:
        issues.append(((*path, "inference", "certificate"), "AWS inference listeners need an ACM certificate ARN (TLS 1.2+ HTTPS listener)"))
    return issues


def _check_data_zones(spec: Platform, region: str, region_spec: RegionSpec, path: Path) -> list[Issue]:
    """Data tagged with a residency zone must be stored in one of that zone's regions."""
    zones = spec.compliance.data_zones
    issues: list[Issue] = []
    stores = [("buckets", n, b.data_zone) for n, b in region_spec.buckets.items()]
    stores += [("lustre", n, f.data_zone) for n, f in region_spec.lustre.items()]
    for kind, name, zone in stores:
        if zone is None:
            continue
        where = (*path, kind, name, "data_zone")
        if zone not in zones:
            issues.append((where, f"data zone '{zone}' is not defined in compliance.data_zones (defined: {', '.join(zones) or 'none'})"))
        elif region not in zones[zone]:
            issues.append((where, f"region '{region}' is outside data zone '{zone}' ({', '.join(zones[zone])}); {zone} data must stay there"))
    return issues


def _check_gpu_pool(cloud: Cloud, region: RegionSpec, name: str, pool, path: Path) -> list[Issue]:  # noqa: ANN001
    issues: list[Issue] = []
    if region.cluster is None:
        issues.append((path, "GPU pools need a cluster in the same region; add `cluster:` to this region"))
    owner = _CLOUD_ONLY_CAPACITY.get(pool.capacity)
    if owner is not None and owner is not cloud:
        issues.append(((*path, "capacity"), f"capacity '{pool.capacity.value}' is {owner.value}-only; {cloud.value} allows on_demand, spot, reserved"))
    try:
        row = resolve_gpu_pool(cloud, pool)
    except catalog.CatalogError as err:
        return [*issues, ((*path, spec_field(err, "instance_type" if pool.instance_type else "accelerator")), str(err))]
    if pool.efa and cloud is not Cloud.AWS:
        issues.append(((*path, "efa"), f"efa is AWS-only; {cloud.value} uses its own RDMA networking"))
    elif pool.efa and not row.efa:
        issues.append(((*path, "efa"), f"instance type {row.instance_type} does not support EFA; EFA types include p4d, p5, p5e, p5en, p6 and trn families"))
    sharing = pool.sharing
    if row.vendor != "nvidia":
        if sharing.mode is not SharingMode.NONE:
            issues.append(((*path, "sharing", "mode"), f"mode '{sharing.mode.value}' is not available: {row.accelerator} is an AWS "
                                                       "Neuron accelerator and GPU sharing applies to NVIDIA GPUs only; allowed: none"))
        if pool.driver is GpuDriver.OPERATOR:
            issues.append(((*path, "driver"), f"driver 'operator' is not available: {row.accelerator} is an AWS Neuron accelerator and "
                                              "the NVIDIA GPU Operator applies to NVIDIA GPUs only; allowed: cloud"))
    if sharing.mode is SharingMode.MIG and sharing.mig_profile not in row.mig_profiles:
        allowed = ", ".join(row.mig_profiles) or "none (this GPU has no MIG)"
        issues.append(((*path, "sharing", "mig_profile"), f"MIG profile '{sharing.mig_profile}' is not offered by {row.accelerator} on {row.instance_type}; allowed: {allowed}"))
    if sharing.mode is SharingMode.MPS and cloud is not Cloud.GCP:
        issues.append(((*path, "sharing", "mode"), f"mode 'mps' is GKE-only; on {cloud.value} use time_slicing or mig"))
    return issues


def _check_endpoint(cloud: Cloud, cloud_spec: CloudSpec, base: Path) -> list[Issue]:
    endpoint = cloud_spec.global_endpoint
    if endpoint is None:
        return []
    path = (*base, "global_endpoint")
    issues: list[Issue] = []
    serving = [r for r, spec in cloud_spec.regions.items() if spec.inference is not None]
    if not serving:
        issues.append((path, "a global endpoint needs at least one region with `inference`; none declares it"))
    if endpoint.routing is GlobalRouting.LATENCY_DNS:
        if cloud is not Cloud.AWS:
            issues.append(((*path, "routing"), f"routing 'latency_dns' is AWS-only (Route 53); {cloud.value} allows anycast"))
        elif not (endpoint.domain and endpoint.hosted_zone_id):
            issues.append(((*path, "routing"), "routing 'latency_dns' needs domain and hosted_zone_id"))
    if cloud is Cloud.GCP and not (endpoint.domain or endpoint.certificate):
        issues.append((path, "the GCP global load balancer needs domain (for a managed certificate) or certificate"))
    return issues
