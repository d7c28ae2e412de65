"""GCP composition: project APIs once; per region a KMS key, network, flow logs, buckets, GKE with GPU pools and
TPU slices (or TPU VMs / queued resources), Managed Lustre; one global load balancer in front of the serving regions.

Providers: one `gcp.Provider` for the environment's project, carrying the platform labels as `default_labels`.
Every resource sets its own region, zone or location, so this one provider serves all regions.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import pulumi
import pulumi_gcp as gcp

from components.gcp.cluster import Cluster, ClusterArgs, boot_disk_type, system_machine_type
from components.gcp.context import COMPUTE_AGENT, GKE_AGENT, LUSTRE_AGENT, GcpContext
from components.gcp.flow_logs import FlowLogs, FlowLogsArgs, RequestLogs, RequestLogsArgs
from components.gcp.gpu_pool import GpuPool, GpuPoolArgs
from components.gcp.kms import Kms, KmsArgs
from components.gcp.load_balancer import (
    AUTONEG_NAMESPACE,
    AUTONEG_SERVICE_ACCOUNT,
    GlobalLoadBalancer,
    GlobalLoadBalancerArgs,
    backend_service_name,
    neg_name,
    service_annotations,
    ssl_profile,
)
from components.gcp.lustre import BucketLink, Lustre, LustreArgs
from components.gcp.network import GFE_RANGES, Network, NetworkArgs
from components.gcp.offerings import (
    ZoneOfferings,
    checked_zones,
    offered_master_version,
    one_zone,
    signed_modules_channel,
    zone_settings,
)
from components.gcp.reservations import reserved_machine_type
from components.gcp.project import Project, ProjectArgs, required_apis
from components.gcp.storage import AccessLogBucket, AccessLogBucketArgs, Bucket, BucketArgs
from components.gcp.tpu import TpuQueuedResource, TpuQueuedResourceArgs, TpuSlice, TpuSliceArgs, TpuVm, TpuVmArgs
from components.k8s.block_storage import pd_storage_class
from components.k8s.lustre import gke_mount
from components.spec import (
    CapacityType,
    Cloud,
    GcpCloudSpec,
    MonitoringMode,
    Platform,
    RegionSpec,
    TpuMode,
    endpoint_logs_region,
    region_path,
    resolve_gpu_pool,
    resolve_lustre,
    resolve_tpu,
)
from components.spec.gcp import is_plain_zone
from components.spec.maintenance import cluster_maintenance, clusters_of
from components.spec.loader import config_path

from .types import AutonegBinding, CloudResult, ClusterHandle, InferenceBackend, region_name


class _Project:
    """Project-wide lookups and resources the regions share."""

    def __init__(self, platform: Platform, cloud_spec: GcpCloudSpec, provider: gcp.Provider) -> None:
        invoke = pulumi.InvokeOutputOptions(provider=provider)
        regions = cloud_spec.regions.values()
        # Staggered across the project's regions: behind the global endpoint at most one region upgrades at a time.
        self.maintenance = cluster_maintenance(Cloud.GCP, clusters_of(cloud_spec.regions))
        lustre = any(r.lustre for r in regions)
        tpu_vms = any(s.mode is not TpuMode.GKE for r in regions for s in r.tpu_slices.values())
        admins = dict.fromkeys(a for r in regions if r.cluster is not None for a in r.cluster.admins)
        # The previewers reach the clusters only for the Kubernetes layer's objects (components/k8s/previewers.py).
        layer = platform.addons.enabled and any(r.cluster is not None for r in regions)
        self.component = Project(f"{platform.environment}-gcp-project", ProjectArgs(
            project=cloud_spec.project, apis=required_apis(lustre=lustre, tpu_vms=tpu_vms),
            enable_apis=cloud_spec.enable_apis, lustre_agent=lustre, admins=list(admins),
            previewers=list(dict.fromkeys(cloud_spec.previewers)) if layer else []),
            opts=pulumi.ResourceOptions(provider=provider))
        self.opts = pulumi.ResourceOptions(provider=provider, depends_on=[self.component])
        # Lookups that need an API the platform enables (compute, storage, logging) wait for it.
        self.invoke = pulumi.InvokeOutputOptions(provider=provider, depends_on=[self.component])
        self.number = gcp.organizations.get_project_output(project_id=cloud_spec.project, opts=invoke).number
        self.storage_agent = gcp.storage.get_project_service_account_output(project=cloud_spec.project, opts=self.invoke).member
        self.logging_agent = pulumi.Output.concat("serviceAccount:", gcp.logging.get_project_cmek_settings_output(
            project=cloud_spec.project, opts=self.invoke).service_account_id)


def build(platform: Platform, cloud_spec: GcpCloudSpec) -> CloudResult:
    provider = gcp.Provider(f"{platform.environment}-gcp", gcp.ProviderArgs(project=cloud_spec.project, default_labels=platform.tags()))
    project = _Project(platform, cloud_spec, provider)
    outputs: dict[str, Any] = {}
    clusters: list[ClusterHandle] = []
    serving: dict[str, int] = {}
    for region, spec in cloud_spec.regions.items():
        ctx = GcpContext(environment=platform.environment, region=region, project=cloud_spec.project,
                         project_number=project.number, labels=platform.tags(), protected=platform.protected)
        outputs[region], handle = _region(platform, cloud_spec, project, ctx, spec)
        if handle is not None:
            clusters.append(handle)
        if spec.inference is not None and spec.cluster is not None:
            serving[region] = spec.inference.port
    endpoint = cloud_spec.global_endpoint
    if endpoint is not None and serving:
        first = next(cloud_spec.regions[r].inference for r in serving)
        assert first is not None
        lb = GlobalLoadBalancer(f"{platform.environment}-global", GlobalLoadBalancerArgs(
            GcpContext(environment=platform.environment, region="global", project=cloud_spec.project, project_number=project.number,
                       labels=platform.tags(), protected=platform.protected),
            endpoint, health_check_path=first.health_check_path, ssl_profile=ssl_profile(platform.compliance.profiles),
            clusters=[h.resource.cluster for h in clusters if isinstance(h.resource, Cluster)]),
            opts=project.opts)
        outputs["global_endpoint"] = {"ip_address": lb.address.address, "domain": endpoint.domain, "backend_service": lb.backend.name}
        annotations = {}
        for region, port in serving.items():
            neg = neg_name(platform.environment, region)
            # Applied by the Kubernetes layer to the inference Service; exported for a Service of your own when
            # addons are off.
            annotations[region] = service_annotations(port, neg, backend_service_name(platform.environment))
            outputs[region]["inference"] = {"neg": neg, "service_annotations": annotations[region]}
        # The backend service starts empty: autoneg, on each serving region's cluster, adds that region's NEGs.
        autoneg = AutonegBinding(project=cloud_spec.project, namespace=AUTONEG_NAMESPACE,
                                 service_account=AUTONEG_SERVICE_ACCOUNT, iam=lb)
        # Container-native load balancing: the proxies and health checks reach the pods from Google's front ends.
        clusters = [replace(h, autoneg=autoneg, inference=replace(h.inference, sources=GFE_RANGES,
                                                                   annotations=annotations[h.region]))
                    if h.region in serving and h.inference is not None else h for h in clusters]
        if not platform.addons.enabled:
            pulumi.log.warn("clouds.gcp.global_endpoint: addons.enabled is false, so no autoneg controller is installed and the "
                            "global load balancer gets no backends; install autoneg on the serving clusters yourself")
    return CloudResult(outputs=outputs, clusters=clusters)


def default_zones(region: str, names: list[str], count: int) -> list[str]:
    """The first `count` general-purpose zones of `names` (the region's zones, sorted), for a region without a
    `clouds.gcp.zones` entry. How many zones a region has only Compute Engine says (us-east1 has three, us-central1
    four), so `network.zones` above that is a config error raised as the program runs, not a smaller network; an empty
    list (nothing looked up) passes."""
    plain = [n for n in names if is_plain_zone(n)]
    if plain and len(plain) < count:
        allowed = "2" if len(plain) == 2 else f"2 to {len(plain)}"
        raise pulumi.RunError(f"{config_path(('clouds', 'gcp', 'regions', region, 'network', 'zones'))}: {count}, but {region} "
                              f"has {len(plain)} zones ({', '.join(plain)}); allowed: {allowed}")
    return plain[:count]


def _region(platform: Platform, cloud_spec: GcpCloudSpec, project: _Project, ctx: GcpContext,
            spec: RegionSpec) -> tuple[dict[str, Any], ClusterHandle | None]:
    name = region_name(platform, ctx.region)
    opts = project.opts
    region_zones = gcp.compute.get_zones_output(project=ctx.project, region=ctx.region, opts=project.invoke).names.apply(sorted)
    # Listed zones are checked against the region's before anything placed in them (and before the offering checks,
    # which would otherwise report a mistyped zone as one that lacks the pool's machine type).
    listed = cloud_spec.zones.get(ctx.region)
    zones = (checked_zones(ctx.region, zone_settings(config_path(("clouds", "gcp", "zones", ctx.region)), listed), region_zones)
             if listed else region_zones.apply(lambda names: default_zones(ctx.region, names, spec.network.zones)))
    offerings = _offerings(ctx, spec, region_zones, project.invoke)
    first_zone = zones.apply(lambda z: z[0])
    users: dict[str, pulumi.Input[str]] = {
        "gke": ctx.service_agent(GKE_AGENT), "compute": ctx.service_agent(COMPUTE_AGENT), "logging": project.logging_agent}
    if spec.buckets:
        users["storage"] = project.storage_agent
    # The agent's e-mail follows the documented pattern (known at preview); the Project component, which every
    # component here depends on, generates the agent first.
    lustre_agent = ctx.service_agent(LUSTRE_AGENT)
    if spec.lustre:
        users["lustre"] = lustre_agent
    kms = Kms(name, KmsArgs(ctx, users), opts)
    key = kms.key_id
    network = Network(name, NetworkArgs(ctx, spec.network, inference_port=spec.inference.port if spec.inference else None,
                                        lustre=bool(spec.lustre)), opts)
    FlowLogs(name, FlowLogsArgs(ctx, network.subnet.name, spec.network.flow_log_retention_days, key), opts)
    if ctx.region == _request_logs_region(platform, cloud_spec):
        RequestLogs(name, RequestLogsArgs(ctx, spec.network.flow_log_retention_days, key), opts)
    out: dict[str, Any] = {"network": network.vpc.name, "subnet": network.subnet.name, "kms_key": key}
    buckets: dict[str, Bucket] = {}
    if spec.buckets:
        logs = AccessLogBucket(f"{name}-access-logs", AccessLogBucketArgs(ctx, key, spec.network.flow_log_retention_days), opts)
        buckets = {b: Bucket(f"{name}-{b}", BucketArgs(ctx, b, bucket, key, logs.bucket.name), opts) for b, bucket in spec.buckets.items()}
        out["buckets"] = {b: storage.bucket.name for b, storage in buckets.items()}
    lustre: dict[str, Lustre] = {}
    if spec.lustre:
        assert network.peering is not None  # made for every region with Lustre
        lustre = {
            fs_name: Lustre(f"{name}-{fs_name}", LustreArgs(
                ctx, fs_name, fs, resolve_lustre(Cloud.GCP, fs), first_zone, network.vpc.id, network.peering, key, lustre_agent,
                bucket=BucketLink(buckets[fs.bucket].bucket.name, fs.bucket_prefix) if fs.bucket else None), opts)
            for fs_name, fs in spec.lustre.items()}
        out["lustre"] = {fs_name: fs.outputs for fs_name, fs in lustre.items()}
    handle = None
    if spec.cluster is not None:
        handle = _cluster(platform, cloud_spec, ctx, spec, name, network, _Zones(zones, first_zone, region_zones), offerings,
                          project, key, opts, out)
        handle.lustre = tuple(
            gke_mount(fs_name, spec.lustre[fs_name].size_gib, ctx.project, fs.instance.location, fs.outputs["instance_id"],
                      fs.instance.mount_point, fs.instance.filesystem, fs)
            for fs_name, fs in lustre.items())
    for slice_name, slice_ in spec.tpu_slices.items():
        if slice_.mode is TpuMode.GKE:
            continue
        zone = _tpu_zone(cloud_spec, ctx.region, slice_name, first_zone, region_zones)
        plan = resolve_tpu(slice_)
        accelerator = offerings.tpu_type(plan.tpu_vm_accelerator_type, zone, *_tpu_fix(ctx.region, slice_name))
        if slice_.mode is TpuMode.TPU_VM:
            vm = TpuVm(f"{name}-{slice_name}", TpuVmArgs(ctx, slice_name, slice_, plan, zone, network.vpc.id,
                                                         network.subnet.id, checked_accelerator_type=accelerator), opts)
            out.setdefault("tpu_vms", {})[slice_name] = [v.name for v in vm.vms]
        else:
            queued = TpuQueuedResource(f"{name}-{slice_name}", TpuQueuedResourceArgs(
                ctx, slice_name, slice_, plan, zone, network.vpc.id, network.subnet.id, checked_accelerator_type=accelerator), opts)
            out.setdefault("tpu_queued_resources", {})[slice_name] = [q.name for q in queued.queued_resources]
    return out, handle


def _offerings(ctx: GcpContext, spec: RegionSpec, region_zones: pulumi.Output[list[str]],
               invoke: pulumi.InvokeOutputOptions) -> ZoneOfferings:
    """The region's offering lookups, for the machine types of its GKE GPU pools and TPU slices and the accelerator
    types of its TPU VMs and queued resources."""
    gke = [resolve_tpu(s) for s in spec.tpu_slices.values() if s.mode is TpuMode.GKE]
    machines = [resolve_gpu_pool(Cloud.GCP, pool).instance_type for pool in spec.gpu_pools.values()] + [p.machine_type for p in gke]
    tpus = [resolve_tpu(s).tpu_vm_accelerator_type for s in spec.tpu_slices.values() if s.mode is not TpuMode.GKE]
    return ZoneOfferings(ctx.project, region_zones, invoke, machine_types=machines, tpu_types=tpus)


def _request_logs_region(platform: Platform, cloud_spec: GcpCloudSpec) -> str | None:
    """The region that keeps the global load balancer's request logs: the first of `global_endpoint.logs_data_zone`
    (the spec checks made sure it has one); None without an endpoint, a zone or a serving region (`_Default` keeps them)."""
    serving = any(s.inference is not None and s.cluster is not None for s in cloud_spec.regions.values())
    return endpoint_logs_region(platform, Cloud.GCP, cloud_spec) if serving else None


class _Zones(NamedTuple):
    """A region's zones: the cluster's (checked when listed), the first of them, and all of the region's."""

    cluster: pulumi.Output[list[str]]
    first: pulumi.Output[str]
    region: pulumi.Output[list[str]]


def _tpu_zone(cloud_spec: GcpCloudSpec, region: str, slice_name: str, first_zone: pulumi.Output[str],
              region_zones: pulumi.Output[list[str]]) -> pulumi.Output[str]:
    """The zone of a TPU slice: its clouds.gcp.tpu_zones entry, once the region has it, else the region's first zone."""
    zone = cloud_spec.tpu_zones.get(region, {}).get(slice_name)
    if zone is None:
        return first_zone
    path = config_path(("clouds", "gcp", "tpu_zones", region, slice_name))
    return checked_zones(region, [(path, zone)], region_zones).apply(lambda z: z[0])


def _pool_zones(region: str, pool_name: str, pool_zones: list[str], zones: _Zones) -> pulumi.Output[list[str]]:
    """A GPU pool's zones: its own `zones`, once the region has each of them, else the cluster's."""
    if not pool_zones:
        return zones.cluster
    path = config_path(("clouds", "gcp", "regions", region, "gpu_pools", pool_name, "zones"))
    return checked_zones(region, zone_settings(path, pool_zones), zones.region)


def _tpu_fix(region: str, slice_name: str) -> tuple[str, str]:
    """The config path of a TPU slice, and where to pick another zone for it."""
    return (f"{region_path('gcp', region)}.tpu_slices.{slice_name}",
            f"set clouds.gcp.tpu_zones.{region}.{slice_name} to a zone that offers it")


def _cluster(platform: Platform, cloud_spec: GcpCloudSpec, ctx: GcpContext, spec: RegionSpec, name: str, network: Network,
             zones: _Zones, offerings: ZoneOfferings, project: _Project, key: pulumi.Output[str],
             opts: pulumi.ResourceOptions, out: dict[str, Any]) -> ClusterHandle:
    assert spec.cluster is not None
    invoke = project.invoke
    version, channel = spec.cluster.kubernetes_version, spec.cluster.upgrade_channel.value.upper()
    version_path = f"{region_path('gcp', ctx.region)}.cluster.kubernetes_version"
    # With Lustre, CPU and TPU pools load signed kernel modules (cluster.py node_config), which need a floor version
    # of GKE: checked for the version the cluster will get, pinned or the channel's default.
    signed_modules = bool(spec.lustre)
    cluster = Cluster(name, ClusterArgs(
        ctx, spec.cluster, cluster_name=name, network_id=network.vpc.id, subnet_id=network.subnet.id, vpc_cidr=spec.network.cidr,
        node_locations=zones.cluster, zone_count=spec.network.zones, kms_key_id=key,
        lustre_csi=bool(spec.lustre), gcs_fuse_csi=bool(spec.buckets), gateway_api=spec.inference is not None,
        managed_prometheus=platform.addons.monitoring is MonitoringMode.MANAGED,
        master_version=offered_master_version(ctx.project, ctx.region, version, channel, version_path, invoke,
                                              signed_modules=signed_modules) if version else None,
        release_channel=signed_modules_channel(ctx.project, ctx.region, channel, version_path, invoke)
        if signed_modules and not version else None, maintenance=project.maintenance[ctx.region]), opts)
    pools: list[pulumi.Resource] = []
    for pool_name, pool in spec.gpu_pools.items():
        row = resolve_gpu_pool(Cloud.GCP, pool)
        path = f"{region_path('gcp', ctx.region)}.gpu_pools.{pool_name}"
        pool_zones = _pool_zones(ctx.region, pool_name, pool.zones, zones)
        machine_type = offerings.machine_type(
            row.instance_type, pool_zones, path,
            f"set gpu_pools.{pool_name}.zones (or clouds.gcp.zones.{ctx.region}) to zones that offer it")
        if pool.capacity is CapacityType.RESERVED and pool.reservation:
            machine_type = reserved_machine_type(ctx.project, pool.reservation, pool_zones, machine_type, path,
                                                 f"set gpu_pools.{pool_name}.zones to the reservation's zones", invoke)
        pools.append(GpuPool(f"{name}-{pool_name}", GpuPoolArgs(
            pool_name, pool, row, cluster.cluster.id, ctx.region, ctx.project, cluster.identity,
            zone_count=spec.network.zones, gpu_operator=platform.addons.gpu_operator_on_gke, checked_machine_type=machine_type), opts))
    tpu_pools: dict[str, Any] = {}
    for slice_name, slice_ in spec.tpu_slices.items():
        if slice_.mode is not TpuMode.GKE:
            continue
        plan = resolve_tpu(slice_)
        zone = _tpu_zone(cloud_spec, ctx.region, slice_name, zones.first, zones.region)
        path, fix = _tpu_fix(ctx.region, slice_name)
        machine_type = offerings.machine_type(plan.machine_type, one_zone(zone), path, fix)
        if slice_.capacity is CapacityType.RESERVED and slice_.reservation:
            machine_type = reserved_machine_type(ctx.project, slice_.reservation, one_zone(zone), machine_type, path,
                                                 f"set clouds.gcp.tpu_zones.{ctx.region}.{slice_name} to the reservation's zone",
                                                 invoke)
        tpu = TpuSlice(f"{name}-{slice_name}", TpuSliceArgs(
            slice_name, slice_, plan, cluster.cluster.id, ctx.region, zone, ctx.project, cluster.identity,
            checked_machine_type=machine_type), opts)
        pools.append(tpu)
        tpu_pools[slice_name] = [p.name for p in tpu.node_pools]
    out["cluster"] = {"name": cluster.cluster.name, "endpoint": cluster.cluster.endpoint, "gpu_pools": list(spec.gpu_pools),
                      "tpu_node_pools": tpu_pools}
    # Without a global endpoint nothing outside the cluster reaches the Service: no sources to admit.
    inference = InferenceBackend(spec.inference, sources=()) if spec.inference is not None else None
    # Prometheus's and Alertmanager's volumes (on the system pool) under the region's key: a balanced disk of the kind
    # the system pool's machine series attaches, as its boot disk.
    storage = pd_storage_class(key, boot_disk_type(system_machine_type(spec.cluster.system_pool)))
    return ClusterHandle(cloud=Cloud.GCP, region=ctx.region, spec=spec, name=name, kubeconfig=cluster.kubeconfig,
                         resource=cluster, node_pools=pools, inference=inference, storage_class=storage)
