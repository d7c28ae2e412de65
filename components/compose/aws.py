"""AWS composition: per region a KMS key, log bucket, network, buckets, EKS with GPU pools (and, with
`addons.monitoring: managed`, Amazon Managed Prometheus), Lustre and an inference load balancer; one global endpoint
in front of the serving regions.

Providers: one `aws.Provider` for the environment, carrying the platform tags as `default_tags`. Every regional
resource sets its own `region` (pulumi-aws v7), so this one provider serves all regions; the provider's own
region (`aws:region`, else the first region of the spec) only matters for global services (IAM, Route 53).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from components.aws.cluster import Cluster, ClusterArgs
from components.aws.context import AwsContext
from components.aws.controllers import (
    AUTOSCALER_NAMESPACE,
    AUTOSCALER_SERVICE_ACCOUNT,
    LB_CONTROLLER_NAMESPACE,
    LB_CONTROLLER_SERVICE_ACCOUNT,
    ControllerRoles,
    ControllerRolesArgs,
)
from components.aws.endpoint import GlobalEndpoint, GlobalEndpointArgs, InferenceEndpoint, InferenceEndpointArgs, Origin
from components.aws.kms import KmsKey, KmsKeyArgs
from components.aws.lustre import BucketLink, Lustre, LustreArgs
from components.aws.network import Network, NetworkArgs
from components.aws.node_group import GpuNodePool, GpuNodePoolArgs
from components.aws.prometheus import ManagedPrometheus, ManagedPrometheusArgs
from components.aws.storage import Bucket, BucketArgs, LogBucket, LogBucketArgs, LogTarget
from components.k8s.block_storage import ebs_storage_class
from components.k8s.lustre import fsx_mount
from components.spec import (
    AwsCloudSpec,
    Cloud,
    GlobalRouting,
    MonitoringMode,
    Platform,
    RegionSpec,
    TransitEncryption,
    endpoint_logs_region,
    region_path,
    resolve_gpu_pool,
    resolve_lustre,
)
from components.spec.aws import EKS_KUBERNETES_VERSION, LoadBalancerKind, has_log_bucket, lustre_zone_index
from components.spec.storage import linked_buckets

from .types import CloudResult, ClusterHandle, EksControllers, InferenceBackend, InferenceTarget, IrsaAccount, region_name


def build(platform: Platform, cloud_spec: AwsCloudSpec) -> CloudResult:
    first_region = next(iter(cloud_spec.regions))
    provider = aws.Provider(f"{platform.environment}-aws", aws.ProviderArgs(
        region=pulumi.Config("aws").get("region") or first_region,
        default_tags=aws.ProviderDefaultTagsArgs(tags=platform.tags())))
    invoke = pulumi.InvokeOutputOptions(provider=provider)
    identity = aws.get_caller_identity_output(opts=invoke)
    partition = aws.get_partition_output(opts=invoke)
    endpoint = cloud_spec.global_endpoint
    outputs: dict[str, Any] = {}
    clusters: list[ClusterHandle] = []
    origins: list[Origin] = []
    flow_logs: LogTarget | None = None
    log_buckets: dict[str, LogTarget] = {}
    deployers = _deployers(cloud_spec, provider) if any(s.cluster for s in cloud_spec.regions.values()) else ()
    for region, spec in cloud_spec.regions.items():
        ctx = AwsContext(
            environment=platform.environment, region=region, labels=platform.tags(), account_id=identity.account_id,
            partition=partition.partition, dns_suffix=partition.dns_suffix, dns_prefix=partition.reverse_dns_prefix,
            protected=platform.protected)
        region_out, handle, origin, logs = _region(platform, cloud_spec, region, spec, ctx, deployers,
                                                   pulumi.ResourceOptions(provider=provider))
        outputs[region] = region_out
        if handle is not None:
            clusters.append(handle)
        if logs is not None:
            log_buckets[region] = logs
        if origin is not None:
            origins.append(origin)
            flow_logs = flow_logs or logs
    if endpoint is not None and origins:
        if endpoint.logs_data_zone:  # the spec checks made sure the zone has a region with a log bucket
            zone_regions = platform.compliance.data_zones[endpoint.logs_data_zone]
            keeper = endpoint_logs_region(platform, Cloud.AWS, cloud_spec)
            flow_logs = log_buckets[keeper] if keeper else flow_logs
            outside = [o.region for o in origins if o.region not in zone_regions]
            if outside:
                pulumi.log.warn(f"clouds.aws.global_endpoint.logs_data_zone: the Global Accelerator's flow logs are kept in "
                                f"{keeper}, but the ALB access and WAF logs of {', '.join(outside)} (client IP addresses) stay "
                                f"there: an ALB logs only to a bucket of its own Region. Serve traffic that must stay in "
                                f"'{endpoint.logs_data_zone}' from its regions only")
        name = f"{platform.environment}-global"
        global_endpoint = GlobalEndpoint(name, GlobalEndpointArgs(endpoint, origins, flow_logs=flow_logs),
                                         opts=pulumi.ResourceOptions(provider=provider))
        outputs["global_endpoint"] = {"dns_name": global_endpoint.dns_name, "routing": endpoint.routing.value}
    return CloudResult(outputs=outputs, clusters=clusters)


def _deployers(cloud_spec: AwsCloudSpec, provider: aws.Provider) -> tuple[str, ...]:
    """`clouds.aws.deployers` when set (always with previewers: a preview runs as the previewer, see
    components/spec/aws.py); else the IAM role or user running this deployment. EKS access entries take the
    role's ARN (with its path), not the caller's STS session ARN, which the session context resolves. Plain values, not
    Outputs: the access entries' names are derived from them, and one principal must not get two entries (a deployer
    may also be in `admins`)."""
    if cloud_spec.deployers is not None:
        return tuple(cloud_spec.deployers)
    opts = pulumi.InvokeOptions(provider=provider)
    return (aws.iam.get_session_context(arn=aws.get_caller_identity(opts=opts).arn, opts=opts).issuer_arn,)


def _load_balancer_sources(spec: RegionSpec, internet_facing: bool) -> tuple[str, ...]:
    """Where the inference load balancer reaches the pods from: its own addresses in the subnets it sits in. With IP
    targets an ALB, and an NLB's TCP target group (client IP preservation is off by default for IP targets over
    TCP/TLS: docs.aws.amazon.com/elasticloadbalancing/latest/network/edit-target-group-attributes.html), connect and
    health-check from their nodes' private addresses. Internet-facing: the public subnets, where no pod has an address.
    Internal: the private subnets, which are also the node and pod subnets (the VPC CNI gives pods addresses there), so
    there the rule admits every pod of the cluster on the port (team pods are still held back by their own egress
    policy, components.k8s.netpol; pods of the platform's namespaces are not)."""
    plan = spec.network.subnet_plan()
    return tuple(str(cidr) for cidr in (plan.public if internet_facing else plan.private))


def _lustre_subnet(spec: RegionSpec, network: Network) -> pulumi.Output[str]:
    """The private subnet for the region's Lustre file systems: in the zone of its zone-pinned training pools when they
    share one, else the first (`lustre_zone_index`); both are the first subnet unless a pinned pool names another zone."""
    return pulumi.Output.all(network.zone_names, *network.private_subnet_ids).apply(
        lambda values: values[1 + lustre_zone_index(spec, values[0])])


def _region(platform: Platform, cloud_spec: AwsCloudSpec, region: str, spec: RegionSpec, ctx: AwsContext,
            deployers: tuple[str, ...], opts: pulumi.ResourceOptions) -> tuple[dict[str, Any], ClusterHandle | None, Origin | None, LogTarget | None]:
    name = region_name(platform, region)
    endpoint = cloud_spec.global_endpoint
    serving = spec.inference is not None and spec.cluster is not None
    latency_dns = endpoint is not None and endpoint.routing is GlobalRouting.LATENCY_DNS
    retention = spec.network.flow_log_retention_days
    out: dict[str, Any] = {}
    managed_prometheus = spec.cluster is not None and platform.addons.monitoring is MonitoringMode.MANAGED
    key = KmsKey(name, KmsKeyArgs(ctx, prometheus=managed_prometheus), opts=opts)
    out["kms_key_arn"] = key.arn
    logs = None
    if has_log_bucket(cloud_spec, spec):
        logs = LogBucket(f"{name}-log-archive", LogBucketArgs(
            ctx, retention, load_balancer=cloud_spec.inference_load_balancer if serving else None), opts=opts).target
        out["log_bucket"] = logs.bucket
    network = Network(name, NetworkArgs(
        ctx, spec.network, key.arn, cloud_spec.flow_log_destination, logs=logs,
        public_load_balancer=serving and latency_dns, internet_gateway=serving and endpoint is not None,
        eks=spec.cluster is not None), opts=opts)
    out["vpc_id"] = network.vpc.id
    linked = linked_buckets(spec.lustre)  # FSx cannot read DEEP_ARCHIVE objects: a linked bucket gets no archive step
    buckets = {} if logs is None else {  # a region with buckets always has its log bucket
        bucket_name: Bucket(f"{name}-{bucket_name}", BucketArgs(
            ctx, bucket_name, bucket, key.arn, logs, cloud_spec.warm_storage_class, lustre_link=bucket_name in linked),
            opts=opts)
        for bucket_name, bucket in spec.buckets.items()
    }
    out["buckets"] = {b: storage.bucket.bucket for b, storage in buckets.items()}
    cluster = handle = origin = None
    if spec.cluster is not None:
        enforced = spec.network.transit_encryption is TransitEncryption.ENFORCE
        cluster = Cluster(name, ClusterArgs(
            ctx, spec.cluster, network.private_subnet_ids, key.arn, spec.network.service_range(Cloud.AWS), spec.network.cidr, retention,
            fsx_csi=bool(spec.lustre), enforce_transit_encryption=enforced, deployers=deployers,
            # Their access entries only serve the layer's RBAC (components/k8s/previewers.py).
            previewers=cloud_spec.previewers if platform.addons.enabled else ()), opts=opts)
        pools = [
            GpuNodePool(f"{name}-{pool_name}", GpuNodePoolArgs(
                ctx, pool_name, pool, resolve_gpu_pool(Cloud.AWS, pool), cluster.cluster_name, cluster.node_role_arn,
                cluster.security_group_id, network.zone_names, network.private_subnet_ids, key.arn, cluster.kubernetes_version,
                enforce_transit_encryption=enforced, mig_strategy=platform.addons.mig_strategy,
                depends_on=cluster.node_prerequisites),
                opts=opts)
            for pool_name, pool in spec.gpu_pools.items()
        ]
        roles = ControllerRoles(name, ControllerRolesArgs(ctx, cluster.cluster_name, cluster.oidc_provider_arn, cluster.oidc_issuer),
                                opts=opts)
        handle = ClusterHandle(cloud=Cloud.AWS, region=region, spec=spec, name=name, kubeconfig=cluster.kubeconfig,
                               resource=cluster, node_pools=list(pools),
                               storage_class=ebs_storage_class(key.arn, cluster.ebs_csi), eks=EksControllers(
                                   region=region, cluster_name=cluster.cluster_name,
                                   kubernetes_version=spec.cluster.kubernetes_version or EKS_KUBERNETES_VERSION,
                                   version_path=f"{region_path('aws', region)}.cluster.kubernetes_version",
                                   vpc_id=network.vpc.id, iam=roles,
                                   autoscaler=IrsaAccount(AUTOSCALER_NAMESPACE, AUTOSCALER_SERVICE_ACCOUNT, roles.autoscaler_role_arn),
                                   lb_controller=IrsaAccount(LB_CONTROLLER_NAMESPACE, LB_CONTROLLER_SERVICE_ACCOUNT,
                                                             roles.lb_controller_role_arn)))
        out["cluster"] = {"name": cluster.cluster_name, "endpoint": cluster.cluster.endpoint,
                          "security_group_id": cluster.security_group_id, "oidc_provider_arn": cluster.oidc_provider_arn,
                          "node_role_arn": cluster.node_role_arn, "autoscaler_role_arn": roles.autoscaler_role_arn,
                          "lb_controller_role_arn": roles.lb_controller_role_arn}
        if managed_prometheus:
            out["monitoring"] = ManagedPrometheus(name, ManagedPrometheusArgs(
                ctx, cluster.cluster.arn, network.private_subnet_ids, cluster.security_group_id, key.arn, retention,
                sns_topic_arn=platform.addons.alerts.sns_topic_arn), opts=opts).outputs
    out["lustre"] = {}
    for fs_name, fs in spec.lustre.items():
        link = BucketLink(buckets[fs.bucket].bucket.bucket, fs.bucket_prefix) if fs.bucket else None
        lustre = Lustre(f"{name}-{fs_name}", LustreArgs(
            ctx, fs, resolve_lustre(Cloud.AWS, fs), network.vpc.id, _lustre_subnet(spec, network), key.arn, retention,
            client_security_group_id=cluster.security_group_id if cluster else None,
            client_cidrs=[] if cluster else [str(c) for c in spec.network.subnet_plan().private], link=link), opts=opts)
        out["lustre"][fs_name] = {"id": lustre.filesystem.id, "dns_name": lustre.filesystem.dns_name,
                                  "mount_name": lustre.filesystem.mount_name}
        if handle is not None:
            handle.lustre += (fsx_mount(fs_name, fs.size_gib, lustre.filesystem.id, lustre.filesystem.dns_name,
                                        lustre.filesystem.mount_name, lustre),)
    if serving and cluster is not None and spec.inference is not None and logs is not None:
        inference = InferenceEndpoint(f"{name}-inference", InferenceEndpointArgs(
            ctx, spec.inference, network.vpc.id, str(spec.network.cidr),
            network.public_subnet_ids if latency_dns else network.private_subnet_ids,
            cluster.security_group_id, logs, kind=cloud_spec.inference_load_balancer,
            internet_facing=latency_dns, open_to_internet=endpoint is not None,
            # WAF stays on unless global_endpoint.waf says otherwise; AWS WAF attaches to ALBs only.
            waf=(endpoint.waf if endpoint else True) and cloud_spec.inference_load_balancer is LoadBalancerKind.APPLICATION,
            kms_key_arn=key.arn, log_retention_days=retention), opts=opts)
        out["inference"] = {"load_balancer_dns_name": inference.load_balancer.dns_name,
                            "target_group_arn": inference.target_group.arn}
        if handle is not None and handle.eks is not None:
            handle.inference = InferenceBackend(spec.inference, sources=_load_balancer_sources(spec, latency_dns),
                                                target=InferenceTarget(inference.target_group.arn,
                                                                       inference.security_group.id, inference))
        # The endpoint group waits for the internet gateway, which Global Accelerator needs, and goes first.
        gateway = (network.internet_gateway,) if network.internet_gateway is not None else ()
        origin = Origin(region, inference.load_balancer, spec.inference.traffic_percent, spec.inference.health_check_path,
                        kind=cloud_spec.inference_load_balancer, vpc=gateway)
    return out, handle, origin, logs
