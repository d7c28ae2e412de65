"""An encrypted VPC in one region: private node subnets per zone, public subnets only for NAT and public load
balancers, NAT per zone or single, flow logs of all traffic, S3 gateway and ECR/STS interface endpoints, the
default security group stripped, and VPC encryption controls in the spec's transit encryption mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.spec import NatMode, NetworkSpec, TransitEncryption, region_path
from components.spec.aws import FlowLogDestination

from .context import AwsContext, render
from .policies import FLOW_LOG_PREFIX, assume_role, flow_log_delivery
from .storage import LogTarget

# Interface endpoints every network gets: nodes pull images (ECR API + registry) and exchange IRSA tokens
# (STS) without NAT. S3 (image layers, datasets) goes through the free gateway endpoint.
ENDPOINT_SERVICES = ("ecr.api", "ecr.dkr", "sts")
# Without NAT, nodes reach nothing else: EKS nodes also need these (EKS private cluster requirements).
AIRGAPPED_ENDPOINT_SERVICES = ("ec2", "eks", "eks-auth", "logs", "elasticloadbalancing", "autoscaling")
HTTPS = 443
# Zone IDs where EKS refuses cluster subnets (UnsupportedAvailabilityZoneException): "The subnets can't reside in the
# following Availability Zones" (EKS user guide, "View Amazon EKS networking requirements for VPC and subnets",
# docs.aws.amazon.com/eks/latest/userguide/network-reqs.html#cluster-subnets). IDs, not names: which zone a name like
# us-east-1c is differs per account.
EKS_UNSUPPORTED_ZONE_IDS = {"us-east-1": ("use1-az3",), "us-west-1": ("usw1-az2",), "ca-central-1": ("cac1-az3",)}
# The default flow log record (the version 2 fields, in their order: docs.aws.amazon.com/vpc/latest/userguide/
# flow-log-records.html) plus `encryption-status`, which VPC encryption controls add so that monitor mode shows which
# flows are unencrypted ("configure your VPC flow logs to emit the enriched field - encryption-status":
# docs.aws.amazon.com/vpc/latest/userguide/vpc-encryption-controls.html). The default format lacks it.
FLOW_LOG_FORMAT = " ".join(f"${{{field}}}" for field in (
    "version", "account-id", "interface-id", "srcaddr", "dstaddr", "srcport", "dstport", "protocol", "packets", "bytes",
    "start", "end", "action", "log-status", "encryption-status"))


@dataclass(frozen=True)
class NetworkArgs:
    context: AwsContext
    spec: NetworkSpec
    kms_key_arn: pulumi.Input[str]
    """Encrypts the flow log group."""
    flow_log_destination: FlowLogDestination = FlowLogDestination.CLOUDWATCH
    """Default: a KMS-encrypted CloudWatch log group."""
    logs: LogTarget | None = None
    """The region's log bucket; required for flow logs to S3."""
    public_load_balancer: bool = False
    """An internet-facing load balancer needs public subnets. Default: none (public subnets only for NAT)."""
    internet_gateway: bool = False
    """Attach an internet gateway even without NAT or public subnets (Global Accelerator reaching internal load
    balancers needs one). Default: only when NAT or a public load balancer needs it."""
    eks: bool = False
    """The region runs an EKS cluster, whose interfaces go in every private subnet: the subnets leave out the zone IDs
    EKS refuses (EKS_UNSUPPORTED_ZONE_IDS). Default off: a network without a cluster keeps the zones it has, since
    leaving one out would move its subnets (a replacement that the same CIDR refuses)."""


class Network(pulumi.ComponentResource):
    """`ai-infra:aws:Network`. Children: `<name>-vpc`, `<name>-{private,public,endpoints}-<i>` subnets,
    `<name>-igw`, `<name>-nat-<i>` (+ `-eip-<i>`), route tables, `<name>-default-sg`, `<name>-encryption`,
    `<name>-flow-logs` (+ log group and role for CloudWatch), `<name>-endpoint-<service>`."""

    vpc: aws.ec2.Vpc
    zone_names: pulumi.Output[list[str]]
    """The availability zones the subnets use, in zone order."""
    private_subnet_ids: list[pulumi.Output[str]]
    public_subnet_ids: list[pulumi.Output[str]]
    endpoint_subnet_ids: list[pulumi.Output[str]]
    private_route_table_ids: list[pulumi.Output[str]]
    internet_gateway: aws.ec2.InternetGateway | None
    """The VPC's internet gateway (NAT, public load balancers, or `internet_gateway=True`); None without one."""

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:Network", name, None, opts)
        ctx, spec = args.context, args.spec
        self._ctx, self._name = ctx, name
        plan = spec.subnet_plan()
        child = pulumi.ResourceOptions(parent=self)
        self.vpc = aws.ec2.Vpc(f"{name}-vpc", aws.ec2.VpcArgs(
            cidr_block=str(spec.cidr), enable_dns_support=True, enable_dns_hostnames=True,
            tags={"Name": name}, region=ctx.region), opts=child)
        # Only the region's own zones: Local and Wavelength Zones lack most instance types and endpoints. No
        # `state` filter, and sorted: a zone that is impaired for a while (or a different API order) must not shift
        # the subnets to other zones, which would replace them and everything in them. With a cluster, not the zones
        # EKS refuses: its interfaces go in every private subnet.
        excluded = EKS_UNSUPPORTED_ZONE_IDS.get(ctx.region) if args.eks else None
        zones = aws.get_availability_zones_output(
            region=ctx.region,
            filters=[aws.GetAvailabilityZonesFilterArgs(name="opt-in-status", values=["opt-in-not-required"])],
            exclude_zone_ids=list(excluded) if excluded else None,
            opts=pulumi.InvokeOutputOptions(parent=self))
        self.zone_names = zones.names.apply(lambda names: _first_zones(sorted(names), spec.zones, ctx.region))
        nat = spec.nat is not NatMode.NONE
        public = nat or args.public_load_balancer
        has_igw = public or args.internet_gateway
        # Subnets, NAT gateways and interface endpoints (and, through the subnets, EKS and FSx ENIs) wait for the
        # control: the provider switches it to enforce after creating it, and ENIs made meanwhile would miss the mode.
        self._after_encryption = [self._encryption(spec.transit_encryption, internet_gateway=has_igw, nat=nat)]
        aws.ec2.DefaultSecurityGroup(f"{name}-default-sg", aws.ec2.DefaultSecurityGroupArgs(
            vpc_id=self.vpc.id, ingress=[], egress=[], tags={"Name": f"{name}-default-unused"}, region=ctx.region), opts=child)

        self.private_subnet_ids = self._subnets("private", plan.private, {"kubernetes.io/role/internal-elb": "1"})
        self.endpoint_subnet_ids = self._subnets("endpoints", plan.endpoints, {})
        self.public_subnet_ids = self._subnets("public", plan.public, {"kubernetes.io/role/elb": "1"}) if public else []
        igw = aws.ec2.InternetGateway(f"{name}-igw", aws.ec2.InternetGatewayArgs(
            vpc_id=self.vpc.id, tags={"Name": name}, region=ctx.region), opts=child) if has_igw else None
        self.internet_gateway = igw
        if public:
            assert igw is not None
            self._public_routes(igw)
        nat_ids = self._nat_gateways(spec.nat, igw)
        self.private_route_table_ids = self._private_routes(nat_ids)
        self._endpoints(spec, nat)
        self._flow_logs(args, spec.flow_log_retention_days)
        self.register_outputs({"vpc_id": self.vpc.id, "private_subnet_ids": self.private_subnet_ids,
                               "public_subnet_ids": self.public_subnet_ids})

    def _opts(self, **extra: object) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **extra)

    def _encryption(self, mode: TransitEncryption, *, internet_gateway: bool, nat: bool) -> aws.ec2.VpcEncryptionControl:
        # Traffic leaving AWS through the internet or NAT gateway can't be encrypted by the VPC: enforce mode
        # needs those gateways named as exclusions. Everything inside the VPC stays enforced.
        enforce = mode is TransitEncryption.ENFORCE
        return aws.ec2.VpcEncryptionControl(f"{self._name}-encryption", aws.ec2.VpcEncryptionControlArgs(
            vpc_id=self.vpc.id, mode=mode.value,
            internet_gateway_exclusion="enable" if enforce and internet_gateway else None,
            nat_gateway_exclusion="enable" if enforce and nat else None,
            region=self._ctx.region), opts=self._opts())

    def _subnets(self, kind: str, cidrs: Sequence[object], tags: dict[str, str]) -> list[pulumi.Output[str]]:
        ids = []
        for i, cidr in enumerate(cidrs):
            subnet = aws.ec2.Subnet(f"{self._name}-{kind}-{i}", aws.ec2.SubnetArgs(
                vpc_id=self.vpc.id, cidr_block=str(cidr), availability_zone=self.zone_names[i],
                map_public_ip_on_launch=False, tags={"Name": f"{self._name}-{kind}-{i}", **tags},
                region=self._ctx.region), opts=self._opts(depends_on=self._after_encryption))
            ids.append(subnet.id)
        return ids

    def _public_routes(self, igw: aws.ec2.InternetGateway) -> None:
        table = aws.ec2.RouteTable(f"{self._name}-public-rt", aws.ec2.RouteTableArgs(
            vpc_id=self.vpc.id, tags={"Name": f"{self._name}-public"}, region=self._ctx.region), opts=self._opts())
        aws.ec2.Route(f"{self._name}-public-default", aws.ec2.RouteArgs(
            route_table_id=table.id, destination_cidr_block="0.0.0.0/0", gateway_id=igw.id, region=self._ctx.region),
            opts=self._opts())
        for i, subnet_id in enumerate(self.public_subnet_ids):
            aws.ec2.RouteTableAssociation(f"{self._name}-public-{i}", aws.ec2.RouteTableAssociationArgs(
                route_table_id=table.id, subnet_id=subnet_id, region=self._ctx.region), opts=self._opts())

    def _nat_gateways(self, mode: NatMode, igw: aws.ec2.InternetGateway | None) -> list[pulumi.Output[str]]:
        count = {NatMode.PER_ZONE: len(self.public_subnet_ids), NatMode.SINGLE: 1, NatMode.NONE: 0}[mode]
        after_igw = [igw] if igw is not None else []  # a public NAT gateway needs the VPC's internet gateway first
        ids = []
        for i in range(count):
            eip = aws.ec2.Eip(f"{self._name}-nat-eip-{i}", aws.ec2.EipArgs(
                domain="vpc", tags={"Name": f"{self._name}-nat-{i}"}, region=self._ctx.region), opts=self._opts(depends_on=after_igw))
            gateway = aws.ec2.NatGateway(f"{self._name}-nat-{i}", aws.ec2.NatGatewayArgs(
                subnet_id=self.public_subnet_ids[i], allocation_id=eip.allocation_id,
                tags={"Name": f"{self._name}-nat-{i}"}, region=self._ctx.region),
                opts=self._opts(depends_on=[*after_igw, *self._after_encryption]))
            ids.append(gateway.id)
        return ids

    def _private_routes(self, nat_ids: list[pulumi.Output[str]]) -> list[pulumi.Output[str]]:
        # One table per zone whatever the NAT mode, so switching single <-> per_zone only changes routes.
        tables = []
        for i, subnet_id in enumerate(self.private_subnet_ids):
            table = aws.ec2.RouteTable(f"{self._name}-private-rt-{i}", aws.ec2.RouteTableArgs(
                vpc_id=self.vpc.id, tags={"Name": f"{self._name}-private-{i}"}, region=self._ctx.region), opts=self._opts())
            aws.ec2.RouteTableAssociation(f"{self._name}-private-{i}", aws.ec2.RouteTableAssociationArgs(
                route_table_id=table.id, subnet_id=subnet_id, region=self._ctx.region), opts=self._opts())
            if nat_ids:
                aws.ec2.Route(f"{self._name}-private-default-{i}", aws.ec2.RouteArgs(
                    route_table_id=table.id, destination_cidr_block="0.0.0.0/0",
                    nat_gateway_id=nat_ids[i if i < len(nat_ids) else 0], region=self._ctx.region), opts=self._opts())
            tables.append(table.id)
        return tables

    def _endpoints(self, spec: NetworkSpec, nat: bool) -> None:
        ctx, name = self._ctx, self._name
        aws.ec2.VpcEndpoint(f"{name}-endpoint-s3", aws.ec2.VpcEndpointArgs(
            vpc_id=self.vpc.id, service_name=ctx.service_name("s3"), vpc_endpoint_type="Gateway",
            route_table_ids=self.private_route_table_ids, tags={"Name": f"{name}-s3"}, region=ctx.region), opts=self._opts())
        group = aws.ec2.SecurityGroup(f"{name}-endpoints-sg", aws.ec2.SecurityGroupArgs(
            vpc_id=self.vpc.id, description="HTTPS from the VPC to AWS service interface endpoints",
            ingress=[aws.ec2.SecurityGroupIngressArgs(protocol="tcp", from_port=HTTPS, to_port=HTTPS,
                                                      cidr_blocks=[str(spec.cidr)], description="HTTPS from the VPC")],
            egress=[], tags={"Name": f"{name}-endpoints"}, region=ctx.region), opts=self._opts())
        services = ENDPOINT_SERVICES if nat else ENDPOINT_SERVICES + AIRGAPPED_ENDPOINT_SERVICES
        for service in services:
            aws.ec2.VpcEndpoint(f"{name}-endpoint-{service.replace('.', '-')}", aws.ec2.VpcEndpointArgs(
                vpc_id=self.vpc.id, service_name=ctx.service_name(service), vpc_endpoint_type="Interface",
                private_dns_enabled=True, subnet_ids=self.endpoint_subnet_ids, security_group_ids=[group.id],
                tags={"Name": f"{name}-{service}"}, region=ctx.region), opts=self._opts(depends_on=self._after_encryption))

    def _flow_logs(self, args: NetworkArgs, retention_days: int) -> None:
        # A flow log's settings cannot change: any change replaces it, old one first, as EC2 may refuse a second flow
        # log of the same VPC and destination (FlowLogAlreadyExists). Records stop for the seconds in between; those
        # already delivered stay where they are.
        ctx, name = self._ctx, self._name
        replace = {"delete_before_replace": True}
        if args.flow_log_destination is FlowLogDestination.S3:
            if args.logs is None:
                raise ValueError(f"{name}: flow logs to S3 need the region's log bucket (NetworkArgs.logs)")
            aws.ec2.FlowLog(f"{name}-flow-logs", aws.ec2.FlowLogArgs(
                vpc_id=self.vpc.id, traffic_type="ALL", log_destination_type="s3", log_format=FLOW_LOG_FORMAT,
                log_destination=pulumi.Output.concat(args.logs.arn, f"/{FLOW_LOG_PREFIX}/"),
                destination_options=aws.ec2.FlowLogDestinationOptionsArgs(file_format="parquet", per_hour_partition=True),
                max_aggregation_interval=60, tags={"Name": name}, region=ctx.region),
                opts=self._opts(depends_on=[args.logs.ready], **replace))
            return
        group_name = f"/ai-infra/{name}/vpc-flow-logs"
        group = aws.cloudwatch.LogGroup(f"{name}-flow-log-group", aws.cloudwatch.LogGroupArgs(
            name=group_name, kms_key_id=args.kms_key_arn, retention_in_days=retention_days,
            region=ctx.region), opts=ctx.stateful(self))
        role = aws.iam.Role(f"{name}-flow-logs-role", aws.iam.RoleArgs(
            assume_role_policy=render(lambda account: assume_role("vpc-flow-logs.amazonaws.com", account), ctx.account_id),
            description=f"VPC flow logs of {name} into its log group"), opts=self._opts())
        aws.iam.RolePolicy(f"{name}-flow-logs-policy", aws.iam.RolePolicyArgs(
            # The group's ARN spelled out from its fixed name, so the policy is known at preview and the policy pack
            # can read it (the group's `arn` output is unknown until the group exists).
            role=role.id, policy=render(flow_log_delivery, ctx.arn("logs", f"log-group:{group_name}"))), opts=self._opts())
        aws.ec2.FlowLog(f"{name}-flow-logs", aws.ec2.FlowLogArgs(
            vpc_id=self.vpc.id, traffic_type="ALL", log_destination_type="cloud-watch-logs", log_destination=group.arn,
            log_format=FLOW_LOG_FORMAT,
            iam_role_arn=role.arn, max_aggregation_interval=60, tags={"Name": name}, region=ctx.region), opts=self._opts(**replace))


def _first_zones(names: list[str], count: int, region: str) -> list[str]:
    # Known only once the zones are looked up (the spec cannot tell), so a config error raised as the program runs.
    # The zones EKS refuses are not among `names` (in us-west-1, where accounts have two zones anyway, the count is
    # the same with or without them).
    if len(names) < count:
        raise pulumi.RunError(f"{region_path('aws', region)}.network.zones: {count}, but {region} has "
                              f"{len(names)} standard availability zones ({', '.join(names)}); allowed: "
                              f"{'2' if len(names) == 2 else f'2 to {len(names)}'}")
    return names[:count]
