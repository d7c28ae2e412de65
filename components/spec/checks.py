"""Semantic checks that need more than one field or the catalog. Pure: each returns (path, message) issues."""

from __future__ import annotations

from ipaddress import IPv4Network

from components import catalog
from components.catalog.errors import CLOUD_NAMES, with_article
from components.planning import ranges

from .common import (
    CLOUD_TAG_LIMIT, GCP_LABEL_LIMIT, MAX_EXTRA_LABELS, MAX_GCP_EXTRA_LABELS, MOST_GCP_RESOURCE_LABELS, MOST_RESOURCE_TAGS,
    PLATFORM_TAG_KEYS, TOOLKIT_TAG_KEYS, Cloud,
)
from .compute import CapacityType, GpuDriver, SharingMode, TpuMode, instance_type_problem
from .endpoint import GlobalRouting, logs_region
from .hostnames import HOST_NAME_RULE, bare_host, host_name_problem
from .maintenance import clusters_of, maintenance_issues
from . import aws, azure, consistency, gcp
from .cloud import CloudSpec, RegionSpec
from .network import NetworkSpec
from .platform import Platform
from .resolve import resolve_gpu_pool, resolve_lustre, resolve_tpu, spec_field
from .storage import linked_archive_issues

Path = tuple[str | int, ...]
Issue = tuple[Path, str]

_CLOUD_ONLY_CAPACITY = {
    CapacityType.CAPACITY_BLOCK: Cloud.AWS,
    CapacityType.FLEX_START: Cloud.GCP,
    CapacityType.QUEUED: Cloud.GCP,
}
_EXTRA_CHECKS = {Cloud.AWS: aws.extra_checks, Cloud.GCP: gcp.extra_checks, Cloud.AZURE: azure.extra_checks}


def check_platform(spec: Platform) -> list[Issue]:
    """Every semantic problem in the spec, in document order."""
    issues: list[Issue] = []
    issues += _check_extra_labels(spec)
    issues += _check_residency_lists(spec)
    issues += _check_cidrs(spec)
    for cloud, cloud_spec in spec.clouds.items():
        base: Path = ("clouds", cloud.value)
        issues += _check_endpoint(cloud, cloud_spec, base)
        issues += _check_endpoint_logs(spec, cloud, cloud_spec, base)
        issues += consistency.endpoint_issues(cloud, cloud_spec, base)
        issues += _EXTRA_CHECKS[cloud](spec, cloud_spec)
        issues += maintenance_issues(cloud, clusters_of(cloud_spec.regions), base)
        for region, region_spec in cloud_spec.regions.items():
            path = (*base, "regions", region)
            issues += _check_region_name(cloud, region, spec.compliance.allowed_regions, path)
            issues += _check_cluster_ranges(cloud, region_spec, path)
            issues += _check_region(cloud, region_spec, path)
            issues += consistency.region_issues(cloud, region_spec, path)
            issues += _check_data_zones(spec, region, region_spec, path)
    return issues


def _check_cidrs(spec: Platform) -> list[Issue]:
    issues: list[Issue] = []
    seen: list[tuple[Path, NetworkSpec, str, IPv4Network]] = []
    for cloud, cloud_spec in spec.clouds.items():
        for region, region_spec in cloud_spec.regions.items():
            net = region_spec.network
            path: Path = ("clouds", cloud.value, "regions", region, "network")
            used = [("cidr", net.cidr), ("pod_cidr", net.effective_pod_cidr), ("service_cidr", net.service_range(cloud))]
            if cloud is Cloud.AWS:
                used.pop(1)  # EKS's VPC CNI gives pods VPC addresses: AWS has no pod range (see _check_cluster_ranges)
            for i, (name, rng) in enumerate(used):
                for other_name, other in used[:i]:
                    if rng.overlaps(other):
                        issues.append(((*path, name), f"{rng} overlaps {other_name} {other} in the same region{_derived(net, name)}"))
            # What takes addresses of a peered or connected network: the network itself and, on GCP, its subnet's
            # secondary ranges for GKE pods and services (components/gcp/network.py makes them with or without a
            # cluster). Pod addresses are routed in the VPC (cloud.google.com/kubernetes-engine/docs/learn/
            # learn-gke-net-architecture), and GCP refuses a secondary range, the services one too, that overlaps a
            # peered network ("Invalid IPCidrRange: ... conflicts with peer network", github.com/legion-platform/legion/
            # issues/989). Not EKS or AKS ranges: EKS pods take VPC addresses, AKS overlay pods are NATed to their
            # node's address so the pod CIDR "can be reused in different AKS clusters" (learn.microsoft.com/en-us/azure/
            # aks/azure-cni-overlay), and both clusters' service ranges stay inside the cluster.
            routed = used if cloud is Cloud.GCP else used[:1]
            for name, rng in routed:
                for other_path, other_net, other_name, other in seen:
                    if rng.overlaps(other):
                        issues.append(_peer_overlap((path, net, name, rng), (other_path, other_net, other_name, other)))
            seen += [(path, net, name, rng) for name, rng in routed]
    return issues


def _peer_overlap(later: tuple[Path, NetworkSpec, str, IPv4Network], earlier: tuple[Path, NetworkSpec, str, IPv4Network]) -> Issue:
    """The issue for two overlapping ranges of different regions, at the one to change: the later one, unless only
    the earlier one is a derived default (the user did not write it, and setting it is the fix)."""
    at, other = later, earlier
    if getattr(earlier[1], earlier[2]) is None and getattr(later[1], later[2]) is not None:
        at, other = earlier, later
    path, net, name, rng = at
    other_path, _, other_name, other_rng = other
    where = f"platform.{'.'.join(map(str, (*other_path, other_name)))}"
    if name == other_name == "cidr":
        return (*path, name), f"{rng} overlaps {other_rng} at {where}; networks must not overlap (they may be peered)"
    return (*path, name), (f"{rng} overlaps {other_rng} at {where}; networks and the GKE pod and services ranges in them "
                           f"(secondary ranges of a GCP subnet) must not overlap (they may be peered){_derived(net, name)}")


def _derived(net: NetworkSpec, name: str) -> str:
    """The note for a message about a range the spec derived (the user did not set it)."""
    return f" (derived default; set {name} explicitly)" if getattr(net, name) is None else ""


def _check_cluster_ranges(cloud: Cloud, region: RegionSpec, path: Path) -> list[Issue]:
    """Pod and service ranges each cloud's Kubernetes service accepts, and pod ranges large enough for every node the
    region's pools can scale to. The rules and their sources are in components/planning/ranges.py."""
    net = region.network
    where: Path = (*path, "network")
    issues: list[Issue] = []
    if cloud is Cloud.AWS and net.pod_cidr is not None:
        issues.append(((*where, "pod_cidr"), f"pod_cidr {net.pod_cidr} has no effect on AWS: EKS's VPC CNI gives pods addresses "
                                            f"from the node subnets of network cidr {net.cidr}; remove pod_cidr"))
    if region.cluster is None:
        return issues  # only the cluster uses the ranges (GKE's secondary ranges are made anyway, and any size suits them)
    service = net.service_range(cloud)
    if cloud is Cloud.AWS:
        issues += _eks_service_range(net, service, (*where, "service_cidr"))
    elif cloud is Cloud.AZURE:
        issues += _aks_ranges(net, service, where)
    elif service.prefixlen < ranges.GKE_SERVICE_LARGEST:  # cloud.google.com/kubernetes-engine/docs/concepts/alias-ips
        issues.append(((*where, "service_cidr"), f"service_cidr {service} has prefix /{service.prefixlen}; GKE takes a services range "
                                                f"of /{ranges.GKE_SERVICE_LARGEST} or smaller (a longer prefix){_derived(net, 'service_cidr')}"))
    if cloud is not Cloud.AWS:
        block = ranges.AKS_OVERLAY_NODE_BLOCK if cloud is Cloud.AZURE else ranges.gke_node_block_prefix()
        issues += _pod_capacity(cloud, region, block, (*where, "pod_cidr"))
    return issues


def _eks_service_range(net: NetworkSpec, service: IPv4Network, where: Path) -> list[Issue]:
    """EKS serviceIpv4Cidr: inside RFC 1918, /12 to /24
    (docs.aws.amazon.com/eks/latest/APIReference/API_KubernetesNetworkConfigRequest.html); its "doesn't overlap
    the VPC" is _check_cidrs' same-region overlap rule."""
    low, high = ranges.EKS_SERVICE_PREFIXES
    allowed = f"/{low} to /{high} inside {', '.join(map(str, ranges.EKS_SERVICE_BLOCKS[:-1]))} or {ranges.EKS_SERVICE_BLOCKS[-1]}"
    if not any(service.subnet_of(block) for block in ranges.EKS_SERVICE_BLOCKS):
        return [(where, f"service_cidr {service} is outside the blocks EKS takes service ranges from; allowed: {allowed}"
                        f"{_derived(net, 'service_cidr')}")]
    if not low <= service.prefixlen <= high:
        return [(where, f"service_cidr {service} has prefix /{service.prefixlen}; EKS allows {allowed}{_derived(net, 'service_cidr')}")]
    return []


def _aks_ranges(net: NetworkSpec, service: IPv4Network, where: Path) -> list[Issue]:
    """AKS reserved ranges (learn.microsoft.com/en-us/azure/aks/concepts-network-cni-overview) and the Azure CNI Overlay
    service range size (learn.microsoft.com/en-us/azure/aks/concepts-network-azure-cni-overlay)."""
    issues: list[Issue] = []
    reserved = ", ".join(map(str, ranges.AKS_RESERVED[:-1])) + f" or {ranges.AKS_RESERVED[-1]}"
    for name, rng in (("cidr", net.cidr), ("pod_cidr", net.effective_pod_cidr), ("service_cidr", service)):
        hits = ranges.overlapping(rng, ranges.AKS_RESERVED)
        if hits:
            label = "network cidr" if name == "cidr" else name
            verb = "lies in" if all(rng.subnet_of(hit) for hit in hits) else "overlaps"
            note = "" if name == "cidr" else _derived(net, name)
            issues.append(((*where, name), f"{label} {rng} {verb} {' and '.join(map(str, hits))}, which AKS reserves; AKS refuses network, "
                                           f"pod and service ranges that overlap {reserved}{note}"))
    low, high = ranges.AKS_SERVICE_PREFIXES
    if not low <= service.prefixlen <= high:
        issues.append(((*where, "service_cidr"), f"service_cidr {service} has prefix /{service.prefixlen}; allowed on Azure: /{low} to /{high} "
                                                f"(AKS takes service ranges smaller than /12, and the cluster DNS service gets the 11th "
                                                f"address){_derived(net, 'service_cidr')}"))
    return issues


def _pod_capacity(cloud: Cloud, region: RegionSpec, block: int, where: Path) -> list[Issue]:
    """GKE and AKS overlay give every node a /`block` of the pod range (GKE: /24 for its default 110 pods per node,
    cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr; AKS: a fixed /24,
    learn.microsoft.com/en-us/azure/aks/concepts-network-azure-cni-overlay): it must hold one for each node the region
    can reach, the system pool's maximum plus every GPU pool's and (GKE) every GKE-mode TPU slice's node count."""
    assert region.cluster is not None
    pools = [("system", region.cluster.system_pool.max_nodes), *((name, pool.max_nodes) for name, pool in region.gpu_pools.items())]
    if cloud is Cloud.GCP:
        for name, slice_ in region.tpu_slices.items():
            if slice_.mode is not TpuMode.GKE:
                continue  # TPU VMs and queued resources take node-subnet addresses, not pod blocks
            try:
                plan = resolve_tpu(slice_)
            except catalog.CatalogError:
                continue  # reported at the slice
            pools.append((name, plan.node_count * slice_.slices))
    net = region.network
    pod_range = net.effective_pod_cidr
    short = ranges.pod_shortfall(pod_range, block, pools)
    if short is None:
        return []
    counts = " + ".join(f"{name} {count}" for name, count in pools)
    return [(where, f"pod_cidr {pod_range} holds {short.blocks} node blocks of /{block}, but the pools of this region scale to "
                    f"{short.nodes} nodes ({counts}); use a /{short.needed_prefix} or larger{_derived(net, 'pod_cidr')}")]


def _check_region_name(cloud: Cloud, region: str, allowed: list[str] | None, path: Path) -> list[Issue]:
    issues: list[Issue] = []
    if catalog.find_region(cloud.value, region) is None:
        issues.append((path, unknown_region(region, cloud)))
    if allowed and region not in allowed:  # an empty list is reported once, at compliance.allowed_regions
        issues.append((path, f"region {region!r} is outside the data residency list compliance.allowed_regions: {', '.join(allowed)}"))
    return issues


def _check_extra_labels(spec: Platform) -> list[Issue]:
    """`labels.extra` becomes default tags and labels on every resource: it may not take a key the toolkit sets (it
    would replace the platform's own tag everywhere), and must leave room in the 50 tags an AWS or Azure resource takes
    (64 labels on GCP, when the platform uses GCP only) for the platform's tags and those a resource adds."""
    extra = spec.labels.extra
    path: Path = ("labels", "extra")
    issues: list[Issue] = [((*path, key), f"label key {key!r} is a tag the toolkit sets itself ({TOOLKIT_TAG_KEYS[key]}); an extra "
                                          f"label may not replace it. Keys the toolkit sets: {', '.join(TOOLKIT_TAG_KEYS)}")
                           for key in extra if key in TOOLKIT_TAG_KEYS]
    own = f"the platform sets {len(PLATFORM_TAG_KEYS)} of its own ({', '.join(PLATFORM_TAG_KEYS)})"
    if any(cloud in (Cloud.AWS, Cloud.AZURE) for cloud, _ in spec.clouds.items()) and len(extra) > MAX_EXTRA_LABELS:
        issues.append((path, f"got {len(extra)} extra labels; at most {MAX_EXTRA_LABELS} are allowed: AWS and Azure allow "
                             f"{CLOUD_TAG_LIMIT} tags per resource, {own} and a resource carries up to {MOST_RESOURCE_TAGS} "
                             f"more (an EKS cluster's EBS volume: the {MOST_RESOURCE_TAGS} tags of the EBS CSI driver)"))
    elif len(extra) > MAX_GCP_EXTRA_LABELS:
        issues.append((path, f"got {len(extra)} extra labels; at most {MAX_GCP_EXTRA_LABELS} are allowed: GCP allows "
                             f"{GCP_LABEL_LIMIT} labels per resource, {own} and a resource carries up to "
                             f"{MOST_GCP_RESOURCE_LABELS} more (a TPU VM's slice, slice-index and reservation)"))
    return issues


def _check_residency_lists(spec: Platform) -> list[Issue]:
    """Entries of compliance.allowed_regions and compliance.data_zones must be regions of some cloud, and a list must
    name one at least: an empty one would refuse every region (leave allowed_regions out for no restriction)."""
    compliance = spec.compliance
    issues: list[Issue] = []
    lists: list[tuple[Path, list[str]]] = []
    if compliance.allowed_regions is not None:
        lists.append((("compliance", "allowed_regions"), compliance.allowed_regions))
    lists += [(("compliance", "data_zones", zone), regions) for zone, regions in compliance.data_zones.items()]
    for path, regions in lists:
        if not regions and path[-1] == "allowed_regions":
            issues.append((path, "allowed_regions is empty, so no region would be allowed; list the regions resources may be "
                                 "placed in, or leave allowed_regions out for no restriction"))
        elif not regions:
            issues.append((path, f"data zone '{path[-1]}' lists no regions, so data of this zone could be stored nowhere; "
                                 "list the regions it may live in"))
        issues += [((*path, i), unknown_region(region, None)) for i, region in enumerate(regions) if not catalog.region_clouds(region)]
    return issues


def unknown_region(region: str, cloud: Cloud | None) -> str:
    """Why `region` is refused (it is not in the catalog's list for `cloud`, or for any cloud when None): the value,
    a close listed name if there is one, and where the full list is."""
    # Listed names are lower-case; a name in another case is refused (the toolkit uses the name as written in resource
    # names, outputs and the residency check) with the listed one suggested.
    listed = region.strip().lower()
    name = region if catalog.region_clouds(region) else listed
    other = catalog.region_clouds(name)
    if cloud is not None and other and other[0] != cloud.value:
        written = "" if name == region else f" as {name!r}"
        return (f"{region!r} is {with_article(CLOUD_NAMES[other[0]])} region, not {with_article(CLOUD_NAMES[cloud.value])} region: move it under "
                f"clouds.{other[0]}.regions{written} ({cloud.value} regions are named like {catalog.region_example(cloud.value)})")
    if cloud is None:
        what, where = "region", f"all regions of aws, gcp and azure: {catalog.REGIONS_FILE}"
    else:
        what = f"{cloud.value} region"
        where = f"all {cloud.value} regions: {catalog.REGIONS_FILE}, or the cloud's own list: {catalog.region_doc(cloud.value)}"
    close = catalog.suggest_regions(region, cloud.value if cloud else None)
    if close:
        case = " Region names are written in lower case." if close == [listed] else ""
        return f"unknown {what} {region!r}; did you mean {' or '.join(repr(c) for c in close)}?{case} {where[0].upper()}{where[1:]}"
    examples = ", ".join(catalog.region_example(c.value) for c in ([cloud] if cloud else Cloud))
    return f"unknown {what} {region!r} (regions are named like {examples}); {where}"


_GLOBAL_TLS = {
    Cloud.GCP: ("a GCP region has no regional listener (the global load balancer reaches the GKE Service through "
                "NEGs)", "domain (a Google-managed certificate) or global_endpoint.certificate "
                "(projects/<project>/global/sslCertificates/<name>)"),
    Cloud.AZURE: ("Front Door reaches the region's AKS Service through its load balancer",
                  "certificate (a Key Vault secret ID) or global_endpoint.domain (a Front Door managed certificate)"),
}
"""Where a region's `inference.certificate` would go unused (only AWS has a regional TLS listener): why, and what to
set instead."""


def _check_region(cloud: Cloud, region: RegionSpec, path: Path) -> list[Issue]:
    issues: list[Issue] = []
    if region.resource_group is not None and cloud is not Cloud.AZURE:
        issues.append(((*path, "resource_group"), f"resource_group is Azure-only; {cloud.value} has no resource groups"))
    certificate = region.inference.certificate if region.inference is not None else None
    if certificate and cloud in _GLOBAL_TLS:
        how, instead = _GLOBAL_TLS[cloud]
        issues.append(((*path, "inference", "certificate"),
                       f"'{certificate}' is not used on {CLOUD_NAMES[cloud.value]}: {how}, so TLS ends at the global endpoint; "
                       f"remove it and set platform.clouds.{cloud.value}.global_endpoint.{instead}"))
    system_type = region.cluster.system_pool.instance_type if region.cluster is not None else None
    if system_type is not None and (problem := instance_type_problem(cloud, system_type)):
        issues.append(((*path, "cluster", "system_pool", "instance_type"), problem))
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
    issues += [((*path, *where), message) for where, message in linked_archive_issues(cloud, region.lustre, region.buckets)]
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
        elif zones[zone] and region not in zones[zone]:  # an empty zone is reported once, at compliance.data_zones
            issues.append((where, f"region '{region}' is outside data zone '{zone}' ({', '.join(zones[zone])}); {zone} data must stay there"))
    return issues


def _check_gpu_pool(cloud: Cloud, region: RegionSpec, name: str, pool, path: Path) -> list[Issue]:  # noqa: ANN001
    issues: list[Issue] = []
    if region.cluster is None:
        issues.append((path, "GPU pools need a cluster in the same region; add `cluster:` to this region"))
    owner = _CLOUD_ONLY_CAPACITY.get(pool.capacity)
    if owner is not None and owner is not cloud:
        allowed = ", ".join(c.value for c in CapacityType if _CLOUD_ONLY_CAPACITY.get(c, cloud) is cloud)
        issues.append(((*path, "capacity"), f"capacity '{pool.capacity.value}' is {owner.value}-only; {cloud.value} allows {allowed}"))
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


def endpoint_log_stores(cloud: Cloud, cloud_spec: CloudSpec) -> list[str]:
    """The regions of `cloud_spec` that have a log store for a global endpoint's request logs: on AWS those with a log
    archive bucket; on GCP and Azure every region (a region's KMS key for a log bucket; its Log Analytics workspace)."""
    if cloud is Cloud.AWS:
        return [r for r, s in cloud_spec.regions.items() if aws.has_log_bucket(cloud_spec, s)]  # type: ignore[arg-type]
    return list(cloud_spec.regions)


def endpoint_logs_region(spec: Platform, cloud: Cloud, cloud_spec: CloudSpec) -> str | None:
    """The region of `cloud_spec` that keeps its global endpoint's request logs: the first (in config order) of the
    endpoint's `logs_data_zone` with a log store; None without an endpoint or a zone, or when the zone has no store."""
    endpoint = cloud_spec.global_endpoint
    if endpoint is None or endpoint.logs_data_zone is None:
        return None
    zone = spec.compliance.data_zones.get(endpoint.logs_data_zone, [])
    return logs_region(zone, endpoint_log_stores(cloud, cloud_spec), list(cloud_spec.regions))


def _check_endpoint_logs(spec: Platform, cloud: Cloud, cloud_spec: CloudSpec, base: Path) -> list[Issue]:
    endpoint = cloud_spec.global_endpoint
    if endpoint is None or endpoint.logs_data_zone is None:
        return []
    path, zone, zones = (*base, "global_endpoint", "logs_data_zone"), endpoint.logs_data_zone, spec.compliance.data_zones
    if zone not in zones:
        return [(path, f"data zone '{zone}' is not defined in compliance.data_zones (defined: {', '.join(zones) or 'none'})")]
    if cloud is Cloud.AWS and endpoint.routing is GlobalRouting.LATENCY_DNS:
        return [(path, "routing 'latency_dns' has no global log stream to place (Route 53 latency records, no Global "
                       "Accelerator): each serving region's ALB keeps its own access logs; remove logs_data_zone, or use "
                       "routing anycast")]
    if endpoint_logs_region(spec, cloud, cloud_spec) is None:
        stores = endpoint_log_stores(cloud, cloud_spec)
        where = ("with a log archive bucket (one with buckets, inference or S3 flow logs) " if cloud is Cloud.AWS else "")
        return [(path, f"no {cloud.value} region {where}is in data zone '{zone}' ({', '.join(zones[zone]) or 'none'}); "
                       f"{cloud.value} regions with a log store: {', '.join(stores) or 'none'}")]
    return []


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
    if endpoint.hosted_zone_id and cloud is not Cloud.AWS:
        issues.append(((*path, "hosted_zone_id"), f"hosted_zone_id is AWS-only (a Route 53 hosted zone); on {cloud.value} the "
                                                  "endpoint creates no DNS record: leave it out and point your DNS at the "
                                                  "exported global_endpoint.dns_name"))
    if cloud is Cloud.GCP and not (endpoint.domain or endpoint.certificate):
        issues.append((path, "the GCP global load balancer needs domain (for a managed certificate) or certificate"))
    # Route 53 takes a record name in its absolute form too (a trailing '.'); managed certificates do not.
    domain = endpoint.domain.removesuffix(".") if endpoint.domain and cloud is Cloud.AWS else endpoint.domain
    if domain is not None and (problem := host_name_problem(domain)):
        bare = bare_host(endpoint.domain)
        use = _DOMAIN_USE[cloud] + ("" if endpoint.certificate or cloud is Cloud.AWS else _MANAGED_CERTIFICATE[cloud])
        issues.append(((*path, "domain"), f"'{endpoint.domain}' is not a host name ({problem}); domain is the global endpoint's "
                                          f"public host name{use}; allowed: {HOST_NAME_RULE}"
                                          + (f"; did you mean '{bare}'?" if bare else "")))
    return issues


_DOMAIN_USE = {Cloud.AWS: "", Cloud.GCP: "", Cloud.AZURE: ", Front Door's custom domain"}
"""What each cloud makes of `global_endpoint.domain`, for the message of a domain that is not a host name."""
_MANAGED_CERTIFICATE = {Cloud.GCP: ", for which the load balancer's Google-managed certificate is issued",
                        Cloud.AZURE: ", for which Front Door's managed certificate is issued"}
