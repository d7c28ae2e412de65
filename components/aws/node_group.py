"""EKS managed node groups: the launch template every pool shares (encrypted gp3 root volume with the region's
KMS key, IMDSv2 with hop limit 1, tagged instances) and the GPU/accelerator pool component: AMI type by vendor,
capacity type, spot diversification, taints and labels, EFA interfaces and cluster placement groups."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components import catalog
from components.k8s.sharing import sharing_node_labels
from components.spec import (
    CapacityType,
    Cloud,
    GpuDriver,
    GpuPoolSpec,
    MigStrategy,
    SharingMode,
    accelerator_node_labels,
    accelerator_taint,
    region_path,
)
from components.spec.aws import NODE_GROUP_SUFFIX, RESERVED_CAPACITY, placement_group, reservation_kind, single_subnet
from components.spec.offerings import (
    launch_terms_problem,
    reservation_problem,
    types_offered_everywhere,
    zone_offering_problem,
)

from .context import AwsContext
from .transit import encrypting_in_transit

ROOT_DEVICE = "/dev/xvda"  # root device of the EKS AL2023 AMIs
MAX_SPOT_TYPES = 4  # the resolved type plus up to 3 alternatives of the same size (catalog.spot_alternatives)
DESIRED_SIZE = "scalingConfig.desiredSize"  # owned by the cluster autoscaler after creation
_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
_CAPACITY = {CapacityType.ON_DEMAND: "ON_DEMAND", CapacityType.SPOT: "SPOT", CapacityType.RESERVED: "ON_DEMAND",
             CapacityType.CAPACITY_BLOCK: "CAPACITY_BLOCK"}
_AUTOSCALER = "k8s.io/cluster-autoscaler"
# The Cluster Autoscaler's GPU label on AWS (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws
# aws_cloud_provider.go, GPULabel): a Ready node carrying it with no nvidia.com/gpu allocatable yet (device plugin
# still starting) counts as unready (GpuCustomResourcesProcessor), instead of as a node whose GPUs are gone, which
# would make the autoscaler scale the pool up again for the same pending pods.
AUTOSCALER_GPU_LABEL = "k8s.amazonaws.com/accelerator"
_GRAVITON = re.compile(r"^(a1|[a-z]+\d+g[a-z]*)\.")
# EFA devices per instance type (= network cards carrying an EFA interface), from the `vpc.amazonaws.com/efa`
# resource in aws/karpenter-provider-aws@1d927085 website/content/en/preview/reference/instance-types.md
# (generated from EC2 DescribeInstanceTypes). Types with EFA not listed here get one interface.
EFA_INTERFACES = {
    "p5.48xlarge": 32, "p5e.48xlarge": 32, "p5en.48xlarge": 16, "p4d.24xlarge": 4, "p4de.24xlarge": 4,
    "p6-b200.48xlarge": 8, "trn1.32xlarge": 8, "trn2.48xlarge": 16, "g6e.24xlarge": 2, "g6e.48xlarge": 4,
}


def ami_type(row: catalog.GpuInstance, pool: GpuPoolSpec) -> str:
    """EKS AMI type: AL2023 Neuron for Trainium/Inferentia; AL2023 NVIDIA (driver preinstalled) for GPUs, or
    the standard AL2023 AMI when the NVIDIA GPU Operator installs the driver."""
    if row.vendor == "aws-neuron":
        return "AL2023_x86_64_NEURON"
    return "AL2023_x86_64_STANDARD" if pool.driver is GpuDriver.OPERATOR else "AL2023_x86_64_NVIDIA"


def system_ami_type(instance_type: str) -> str:
    """AL2023 AMI type for a CPU instance type: ARM64 for Graviton families (a1, and a `g` after the generation:
    m7g, c7gn, r8g, t4g, m6gd), x86_64 otherwise."""
    return "AL2023_ARM_64_STANDARD" if _GRAVITON.match(instance_type) else "AL2023_x86_64_STANDARD"


def capacity_type(pool: GpuPoolSpec) -> str:
    """EKS capacity type. Reservations (ODCR) are on-demand capacity targeted by the launch template."""
    return _CAPACITY[pool.capacity]


def efa_interfaces(row: catalog.GpuInstance) -> int:
    return EFA_INTERFACES.get(row.instance_type, 1) if row.efa else 0


def instance_types(row: catalog.GpuInstance, pool: GpuPoolSpec) -> list[str]:
    """The resolved type; for spot also up to MAX_SPOT_TYPES - 1 types with the same accelerator model and count, vCPUs
    and memory (more spot pools to draw from; the Cluster Autoscaler needs equal sizes within a group). With EFA, only
    alternatives with the same EFA interface count (the launch template's interfaces must fit every type)."""
    types = [row.instance_type]
    if pool.capacity is CapacityType.SPOT:
        alternatives = [alt for alt in catalog.spot_alternatives(row) if not pool.efa or efa_interfaces(alt) == efa_interfaces(row)]
        types += [alt.instance_type for alt in alternatives][: MAX_SPOT_TYPES - 1]
    return types


def node_taints(row: catalog.GpuInstance, pool: GpuPoolSpec) -> list[aws.eks.NodeGroupTaintArgs]:
    """The accelerator taint first, then the pool's own; one taint per key and effect (EKS rejects duplicates)."""
    key, value, effect = accelerator_taint(row)
    seen: dict[tuple[str, str], aws.eks.NodeGroupTaintArgs] = {}
    for k, v, e in [(key, value, effect), *((t.key, t.value, t.effect) for t in pool.taints)]:
        seen.setdefault((k, e), aws.eks.NodeGroupTaintArgs(key=k, value=v or None, effect=_EFFECT[e]))
    return list(seen.values())


def autoscaler_gpu_labels(row: catalog.GpuInstance, pool: GpuPoolSpec, mig_strategy: MigStrategy) -> dict[str, str]:
    """AUTOSCALER_GPU_LABEL on NVIDIA pools, valued `nvidia-<model>` as the autoscaler's GPU types are (nvidia-l4).
    Not on Neuron pools (no nvidia.com/gpu), nor on MIG pools under the mixed strategy, whose GPUs are advertised as
    nvidia.com/mig-<profile> only: with the label their nodes would count as unready for good."""
    if row.vendor != "nvidia" or (pool.sharing.mode is SharingMode.MIG and mig_strategy is MigStrategy.MIXED):
        return {}
    return {AUTOSCALER_GPU_LABEL: f"nvidia-{row.accelerator}"}


def autoscaler_tags(cluster_name: str) -> dict[str, str]:
    """Cluster Autoscaler auto-discovery tags. EKS puts them on the node group's Auto Scaling group itself; on the
    node group they let inventory and cost tooling see which groups the autoscaler owns."""
    return {f"{_AUTOSCALER}/enabled": "true", f"{_AUTOSCALER}/{cluster_name}": "owned"}


def scale_from_zero_resources(row: catalog.GpuInstance, pool: GpuPoolSpec) -> dict[str, int]:
    """Extended resources the Cluster Autoscaler can't derive from the instance type when the group is empty.
    (It reads labels and taints from the EKS node group and knows NVIDIA GPU counts per type.)"""
    resources = {"aws.amazon.com/neuron": row.accelerator_count} if row.vendor == "aws-neuron" else {}
    if pool.efa:
        resources["vpc.amazonaws.com/efa"] = efa_interfaces(row)
    return resources


@dataclass(frozen=True)
class LaunchTemplateSettings:
    disk_size_gib: int
    """Encrypted gp3 root volume size."""
    network_interfaces: Sequence[aws.ec2.LaunchTemplateNetworkInterfaceArgs] = ()
    """EFA interfaces. Default none: the node group's default interface with the cluster security group."""
    placement_group_name: pulumi.Input[str] | None = None
    """Cluster placement group. Default: none."""
    market_type: str | None = None
    """`capacity-block` for Capacity Blocks. Default: none (on-demand; spot is the node group's capacity type)."""
    reservation_id: str | None = None
    """Capacity reservation or Capacity Block to launch into. Default: none."""


def launch_template(name: str, parent: pulumi.Resource, ctx: AwsContext, kms_key_arn: pulumi.Input[str],
                    settings: LaunchTemplateSettings) -> aws.ec2.LaunchTemplate:
    """`<name>-lt`: encrypted root volume, IMDSv2 only and unreachable from pods (hop limit 1: pods use IRSA),
    platform tags on instances, volumes and interfaces (provider default tags stop at the template)."""
    tags = {**ctx.labels, "Name": name}
    return aws.ec2.LaunchTemplate(f"{name}-lt", aws.ec2.LaunchTemplateArgs(
        description=f"ai-infra node group {name}",
        block_device_mappings=[aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
            device_name=ROOT_DEVICE,
            ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                volume_size=settings.disk_size_gib, volume_type="gp3", encrypted="true", kms_key_id=kms_key_arn,
                delete_on_termination="true"))],
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=1, instance_metadata_tags="disabled"),
        network_interfaces=list(settings.network_interfaces) or None,
        placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=settings.placement_group_name) if settings.placement_group_name else None,
        instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type=settings.market_type) if settings.market_type else None,
        capacity_reservation_specification=aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=settings.reservation_id)) if settings.reservation_id else None,
        tag_specifications=[aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
                            for kind in ("instance", "volume", "network-interface")],
        update_default_version=True,
        region=ctx.region,
    ), opts=pulumi.ResourceOptions(parent=parent))


@dataclass(frozen=True)
class NodeGroupSettings:
    cluster_name: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    instance_types: pulumi.Input[Sequence[str]]
    ami_type: str
    capacity_type: str
    min_nodes: int
    max_nodes: int
    labels: Mapping[str, str]
    taints: Sequence[aws.eks.NodeGroupTaintArgs] = ()
    """Default: no taints."""
    tags: pulumi.Input[Mapping[str, str]] | None = None
    """Tags of the node group resource besides the provider's default tags. Default: none."""
    update_strategy: str | None = None
    """How EKS replaces nodes on a version update: None is EKS's DEFAULT (new instances first, then the old ones go);
    MINIMAL terminates first, for capacity that has no room for extra instances (a full reservation or Capacity
    Block: NodegroupUpdateConfig.updateStrategy, EKS API reference)."""
    kubernetes_version: pulumi.Input[str] | None = None
    """The cluster's Kubernetes version (its output): the group is updated to it after the control plane. Default: none,
    EKS takes the cluster's at creation and the group never follows an upgrade (no drift detection without a value)."""
    depends_on: Sequence[pulumi.Resource] = ()
    """Resources the nodes need first. Default: none."""


def node_group(name: str, parent: pulumi.Resource, ctx: AwsContext, template: aws.ec2.LaunchTemplate,
               settings: NodeGroupSettings) -> aws.eks.NodeGroup:
    """`<name>-nodegroup`, starting at min size; the desired size then belongs to the autoscaler (ignore_changes)."""
    return aws.eks.NodeGroup(f"{name}{NODE_GROUP_SUFFIX}", aws.eks.NodeGroupArgs(
        cluster_name=settings.cluster_name, node_role_arn=settings.node_role_arn, subnet_ids=settings.subnet_ids,
        instance_types=settings.instance_types, ami_type=settings.ami_type, capacity_type=settings.capacity_type,
        version=settings.kubernetes_version,
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(
            min_size=settings.min_nodes, max_size=settings.max_nodes, desired_size=settings.min_nodes),
        update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1, update_strategy=settings.update_strategy),
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=template.id, version=template.latest_version.apply(str)),
        labels=dict(settings.labels), taints=list(settings.taints) or None, tags=settings.tags,
        region=ctx.region,
    ), opts=pulumi.ResourceOptions(parent=parent, ignore_changes=[DESIRED_SIZE], depends_on=list(settings.depends_on)))


@dataclass(frozen=True)
class GpuNodePoolArgs:
    context: AwsContext
    pool_name: str
    pool: GpuPoolSpec
    instance: catalog.GpuInstance
    """Catalog row of the pool's instance type (resolved and validated by the spec checks)."""
    cluster_name: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    cluster_security_group_id: pulumi.Input[str]
    """EKS cluster security group; EFA interfaces carry it (all traffic within the group is allowed, as EFA needs)."""
    zone_names: pulumi.Output[list[str]]
    subnet_ids: Sequence[pulumi.Output[str]]
    """Private node subnets, in zone order."""
    kms_key_arn: pulumi.Input[str]
    kubernetes_version: pulumi.Input[str]
    """The cluster's Kubernetes version (`Cluster.kubernetes_version`), which the node group follows."""
    enforce_transit_encryption: bool = False
    """The VPC enforces encryption in transit (`network.transit_encryption: enforce`): the pool's resolved instance type
    must encrypt in transit (checked at preview), and spot alternatives that do not are left out. Default off."""
    mig_strategy: MigStrategy = MigStrategy.SINGLE
    """The Kubernetes layer's MIG strategy (`addons.mig_strategy`), for the autoscaler's GPU label. Default `single`."""
    depends_on: Sequence[pulumi.Resource] = ()
    """Resources the nodes need first (the VPC CNI add-on)."""


class GpuNodePool(pulumi.ComponentResource):
    """`ai-infra:aws:GpuNodePool`. Children: `<name>-lt`, `<name>-nodegroup`, `<name>-placement` (compact
    placement, not on reservations), `<name>-asg-<resource>` scale-from-zero hints for the Cluster Autoscaler."""

    node_group: aws.eks.NodeGroup

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:GpuNodePool", name, None, opts)
        ctx, pool, row = args.context, args.pool, args.instance
        group = None
        if placement_group(pool):
            group = aws.ec2.PlacementGroup(f"{name}-placement", aws.ec2.PlacementGroupArgs(
                strategy="cluster", region=ctx.region), opts=pulumi.ResourceOptions(parent=self))
        interfaces = [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                network_card_index=card, device_index=0 if card == 0 else 1, interface_type="efa",
                security_groups=[args.cluster_security_group_id], delete_on_termination="true")
            for card in range(efa_interfaces(row) if pool.efa else 0)
        ]
        reserved = pool.capacity in RESERVED_CAPACITY
        # The instance type stays on the node group, Capacity Blocks too (EKS refuses it in both places), as eksctl's
        # capacity-block support (eksctl-io/eksctl#8207) and AWS's ai-on-eks `cbr` group pass it to CreateNodegroup.
        template = launch_template(name, self, ctx, args.kms_key_arn, LaunchTemplateSettings(
            disk_size_gib=pool.disk_size_gib, network_interfaces=interfaces,
            placement_group_name=group.name if group else None,
            market_type="capacity-block" if pool.capacity is CapacityType.CAPACITY_BLOCK else None,
            reservation_id=pool.reservation if reserved else None))
        # The GPU Operator applies MIG layouts and time-slicing on EKS, selected per pool by node label.
        labels = {**accelerator_node_labels(args.pool_name, pool, row), **autoscaler_gpu_labels(row, pool, args.mig_strategy),
                  **sharing_node_labels(Cloud.AWS, row.accelerator, pool.sharing, False)}
        path = f"{region_path('aws', ctx.region)}.gpu_pools.{args.pool_name}"
        zones = args.zone_names.apply(lambda names: _pool_zones(pool, names, path))
        types = instance_types(row, pool)
        subnets = _pool_subnets(args.zone_names, zones, args.subnet_ids)
        if reserved:
            subnets = reserved_subnets(self, ctx, pool, types[0], path, subnets)
        offered = offered_instance_types(self, ctx, types, args.zone_names, zones, path,
                                         f"set gpu_pools.{args.pool_name}.zones to zones that offer it")
        if args.enforce_transit_encryption:
            offered = encrypting_in_transit(self, ctx, types, offered, f"{path}.instance_type",
                                            f"{region_path('aws', ctx.region)}.network")
        self.node_group = node_group(name, self, ctx, template, NodeGroupSettings(
            cluster_name=args.cluster_name, node_role_arn=args.node_role_arn, subnet_ids=subnets,
            instance_types=offered,
            ami_type=ami_type(row, pool), capacity_type=capacity_type(pool),
            min_nodes=pool.min_nodes, max_nodes=pool.max_nodes, labels=labels, taints=node_taints(row, pool),
            tags=pulumi.Output.from_input(args.cluster_name).apply(autoscaler_tags),
            update_strategy="MINIMAL" if reserved else None,
            kubernetes_version=args.kubernetes_version, depends_on=args.depends_on))
        asg_name = self.node_group.resources.apply(lambda resources: resources[0].autoscaling_groups[0].name)
        for resource, count in scale_from_zero_resources(row, pool).items():
            aws.autoscaling.Tag(f"{name}-asg-{resource.split('/')[-1]}", aws.autoscaling.TagArgs(
                autoscaling_group_name=asg_name,
                tag=aws.autoscaling.TagTagArgs(key=f"{_AUTOSCALER}/node-template/resources/{resource}", value=str(count),
                                               propagate_at_launch=False),
                region=ctx.region), opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"node_group_arn": self.node_group.arn})


def _pool_zones(pool: GpuPoolSpec, names: Sequence[str], path: str) -> list[str]:
    """The pool's zones: its own `zones` (reserved capacity always gives its one zone); else the first zone for
    EFA/compact pools; else every zone of the network. `path`: the pool's config path, for the error when a zone is
    not the network's (known only once zones are looked up)."""
    if pool.zones:
        missing = [z for z in pool.zones if z not in names]
        if missing:
            raise pulumi.RunError(f"{path}.zones: {', '.join(missing)} not among the network's zones; "
                                  f"allowed: {', '.join(names)} (the first network.zones of the region, by name)")
        return [zone for zone in names if zone in pool.zones]
    if single_subnet(pool):
        return list(names[:1])
    return list(names)


def _pool_subnets(zone_names: pulumi.Output[list[str]], pool_zones: pulumi.Output[list[str]],
                  subnet_ids: Sequence[pulumi.Output[str]]) -> pulumi.Output[list[str]]:
    """The private subnets of the pool's zones (`_pool_zones`), in zone order; `subnet_ids` follow `zone_names`."""
    def select(values: list) -> list[str]:  # noqa: ANN001
        names, zones, ids = values[0], values[1], values[2:]
        return [subnet for zone, subnet in zip(names, ids) if zone in zones]

    return pulumi.Output.all(zone_names, pool_zones, *subnet_ids).apply(select)


@dataclass(frozen=True)
class ReservedCapacity:
    """What EC2 reports for a reservation; empty values (the offline plan cannot read the account) compare nothing."""

    zone: str
    instance_type: str
    terms: Mapping[str, str]
    """The other attributes a launch must match (`NODE_LAUNCH_TERMS` keys)."""


ODCR_TYPE = "AWS::EC2::CapacityReservation"
"""The Cloud Control type of an On-Demand Capacity Reservation. pulumi-aws has no data source of its own for it; Cloud
Control's read (the one aws-native's getCapacityReservation uses) returns its CloudFormation model as JSON."""
NODE_LAUNCH_TERMS = {"platform": "Linux/UNIX", "tenancy": "default"}
"""How the pools' nodes launch: EKS's AL2023 AMIs (`ami_type`) are Linux/UNIX, and the launch template sets no
tenancy. EC2 launches into a reservation only when these match it, with zone and type."""


def odcr_capacity(properties: str) -> ReservedCapacity:
    """An On-Demand Capacity Reservation from its Cloud Control model (AvailabilityZone, InstanceType, InstancePlatform,
    Tenancy: docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-ec2-capacityreservation.html)."""
    model = json.loads(properties or "{}")
    return ReservedCapacity(model.get("AvailabilityZone", ""), model.get("InstanceType", ""),
                            {"platform": model.get("InstancePlatform", ""), "tenancy": model.get("Tenancy", "")})


def _reserved_capacity(parent: pulumi.Resource, ctx: AwsContext, pool: GpuPoolSpec) -> pulumi.Output[ReservedCapacity]:
    """What EC2 reports for the pool's reservation, asked at preview: DescribeCapacityReservations for a Capacity Block,
    Cloud Control's GetResource for an On-Demand Capacity Reservation."""
    opts = pulumi.InvokeOutputOptions(parent=parent)
    if pool.capacity is CapacityType.CAPACITY_BLOCK:
        block = aws.ec2.get_capacity_block_reservation_output(id=pool.reservation, region=ctx.region, opts=opts)
        return block.apply(lambda b: ReservedCapacity(b.availability_zone, b.instance_type, {}))
    found = aws.cloudcontrol.get_resource_output(type_name=ODCR_TYPE, identifier=pool.reservation, region=ctx.region, opts=opts)
    return found.properties.apply(odcr_capacity)


def reserved_subnets(parent: pulumi.Resource, ctx: AwsContext, pool: GpuPoolSpec, instance_type: str, path: str,
                     subnets: pulumi.Output[list[str]]) -> pulumi.Output[list[str]]:
    """`subnets`, once EC2 reports the pool's reservation (Capacity Block or ODCR) in the pool's zone, for its instance
    type, and (ODCR) for the platform and tenancy its nodes launch with; else the run stops with the pool's config path
    before the node group exists (EKS would create it, and every launch would then fail)."""
    kind, reservation = reservation_kind(pool), str(pool.reservation)

    def check(values: list) -> list[str]:  # noqa: ANN001
        found, ids = values
        problem = (reservation_problem(path, kind, reservation, pool.zones[0], instance_type, found.zone, found.instance_type)
                   or launch_terms_problem(path, kind, reservation, found.terms, NODE_LAUNCH_TERMS))
        if problem:
            raise pulumi.RunError(problem)
        return ids

    return pulumi.Output.all(_reserved_capacity(parent, ctx, pool), subnets).apply(check)


def offered_instance_types(parent: pulumi.Resource, ctx: AwsContext, types: Sequence[str], zone_names: pulumi.Output[list[str]],
                           pool_zones: pulumi.Output[list[str]], path: str, fix: str) -> pulumi.Output[list[str]]:
    """`types` as EC2 offers them in the pool's zones (DescribeInstanceTypeOfferings, asked at preview): the first
    (the resolved type) must be offered in every zone, or the run stops with the pool's config path and `fix` (EKS
    would refuse the node group); spot alternatives not offered in every zone are left out. A later offering in a missing zone
    adds its alternative, and EKS replaces a node group whose instance types change."""
    offerings = aws.ec2.get_instance_type_offerings_output(
        filters=[aws.ec2.GetInstanceTypeOfferingsFilterArgs(name="instance-type", values=list(types))],
        location_type="availability-zone", region=ctx.region, opts=pulumi.InvokeOutputOptions(parent=parent))

    def check(values: list) -> list[str]:  # noqa: ANN001
        names, zones, found = values
        offers: dict[str, set[str]] = {}
        for instance_type, zone in zip(found.instance_types, found.locations):
            offers.setdefault(instance_type, set()).add(zone)
        problem = zone_offering_problem(path, types[0], zones, offers.get(types[0], set()), names, fix)
        if problem:
            raise pulumi.RunError(problem)
        return types_offered_everywhere(types, zones, offers)

    return pulumi.Output.all(zone_names, pool_zones, offerings).apply(check)
