"""A region's private network: a custom-mode VPC with one regional node subnet (secondary ranges for pods and
services, Private Google Access, flow logs), Cloud Router + Cloud NAT, a firewall that denies ingress by default
plus the minimal allows, and, when needed, the proxy-only subnet and the Managed Lustre private services range.

Layout (components.planning.cidr): the first half of the network is the node subnet (the union of the plan's
private slots: on GCP a subnet spans all zones of the region), the third quarter is the Managed Lustre range
(GCP has no public subnets) and the services block is the proxy-only subnet.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network

import pulumi
import pulumi_gcp as gcp

from components.spec import Cloud, NatMode, NetworkSpec
from components.spec.gcp import lustre_range

from .context import GcpContext

POD_RANGE = "pods"
SERVICE_RANGE = "services"
# Google Front Ends: health checks and the global external Application Load Balancer's proxies
# (cloud.google.com/load-balancing/docs/health-check-concepts#ip-ranges).
GFE_RANGES = ("35.191.0.0/16", "130.211.0.0/22")
# Managed Lustre: LNet listens on 988; GKE clients of instances with GKE support use 6988.
LUSTRE_PORTS = ("988", "6988")
JUMBO_MTU = 8896
"""Largest VPC MTU; Managed Lustre docs measure about 10% more throughput with it, GPU/TPU traffic gains too."""
DENY_PRIORITY = 65534  # just above GCP's implied deny, below every allow
ALLOW_PRIORITY = 1000
# Share of the collected flow logs the subnet reports (1.0 all, the API default 0.5 half; cloud.google.com/vpc/docs/flow-logs,
# "Log sampling and processing"): all of them outside dev, so forensics and audits see every flow; half in dev,
# where log volume is only cost.
FLOW_SAMPLING = 1.0
DEV_FLOW_SAMPLING = 0.5
FIREWALL_LOGS = gcp.compute.FirewallLogConfigArgs(metadata="INCLUDE_ALL_METADATA")


def flow_logs(environment: str) -> gcp.compute.SubnetworkLogConfigArgs:
    """The node subnet's flow log settings; keyed on the environment, not on protection (a sampling rate is a
    cost choice, and `protect_stateful` may be overridden either way)."""
    sampling = DEV_FLOW_SAMPLING if environment == "dev" else FLOW_SAMPLING
    return gcp.compute.SubnetworkLogConfigArgs(
        aggregation_interval="INTERVAL_5_SEC", flow_sampling=sampling, metadata="INCLUDE_ALL_METADATA")


def node_subnet(cidr: IPv4Network) -> IPv4Network:
    """The node subnet: the first half of the network, where the CIDR plan puts every zone's private slot."""
    return list(cidr.subnets(prefixlen_diff=1))[0]


@dataclass(frozen=True)
class NetworkArgs:
    context: GcpContext
    spec: NetworkSpec
    inference_port: int | None = None
    """Port of the region's inference pods: admits Google Front Ends (health checks and the global load
    balancer) and adds the proxy-only subnet for in-VPC Gateways. Default: no inference, neither is made."""
    lustre: bool = False
    """Reserve the Managed Lustre range, peer it (private services access) and admit LNet from it. Default off."""


class Network(pulumi.ComponentResource):
    """`ai-infra:gcp:Network`. Children: `<name>-vpc`, `<name>-nodes` (subnet), `<name>-router` and `<name>-nat`
    (unless nat is `none`), `<name>-deny-ingress`, `<name>-allow-internal`; with inference `<name>-proxy-only`
    and `<name>-allow-gfe`; with Lustre `<name>-lustre-range`, `<name>-lustre-peering`, `<name>-allow-lustre`."""

    vpc: gcp.compute.Network
    subnet: gcp.compute.Subnetwork
    peering: gcp.servicenetworking.Connection | None

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:Network", name, None, opts)
        ctx, spec = args.context, args.spec
        child = pulumi.ResourceOptions(parent=self)
        self.vpc = gcp.compute.Network(f"{name}-vpc", gcp.compute.NetworkArgs(
            project=ctx.project, auto_create_subnetworks=False, routing_mode="REGIONAL", mtu=JUMBO_MTU,
            description=f"ai-infra {ctx.environment} network in {ctx.region}"), opts=child)
        self.subnet = gcp.compute.Subnetwork(f"{name}-nodes", gcp.compute.SubnetworkArgs(
            project=ctx.project, region=ctx.region, network=self.vpc.id,
            ip_cidr_range=str(node_subnet(spec.cidr)),
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=POD_RANGE, ip_cidr_range=str(spec.effective_pod_cidr)),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=SERVICE_RANGE, ip_cidr_range=str(spec.service_range(Cloud.GCP))),
            ],
            private_ip_google_access=True, log_config=flow_logs(ctx.environment)), opts=child)
        self.router: gcp.compute.Router | None = None
        if spec.nat is not NatMode.NONE:
            # Cloud NAT is regional and distributed (no gateway per zone), so `per_zone` and `single` build the same NAT.
            self.router = gcp.compute.Router(f"{name}-router", gcp.compute.RouterArgs(
                project=ctx.project, region=ctx.region, network=self.vpc.id), opts=child)
            gcp.compute.RouterNat(f"{name}-nat", gcp.compute.RouterNatArgs(
                project=ctx.project, region=ctx.region, router=self.router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
                subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=self.subnet.id, source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
                # Dynamic port allocation (image pulls open many connections) excludes endpoint-independent mapping.
                enable_dynamic_port_allocation=True, enable_endpoint_independent_mapping=False,
                min_ports_per_vm=64, max_ports_per_vm=4096,
                log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY")), opts=child)
        self._firewall(name, "deny-ingress", ctx, ["0.0.0.0/0"], deny=True)
        self._firewall(name, "allow-internal", ctx, [str(spec.cidr), str(spec.effective_pod_cidr)])
        self.proxy_subnet: gcp.compute.Subnetwork | None = None
        if args.inference_port is not None:
            self._firewall(name, "allow-gfe", ctx, list(GFE_RANGES), ports=[str(args.inference_port)])
            # Regional Envoy load balancers (GKE Gateway class gke-l7-rilb for in-VPC clients) need it.
            self.proxy_subnet = gcp.compute.Subnetwork(f"{name}-proxy-only", gcp.compute.SubnetworkArgs(
                project=ctx.project, region=ctx.region, network=self.vpc.id,
                ip_cidr_range=str(spec.subnet_plan().services), purpose="REGIONAL_MANAGED_PROXY", role="ACTIVE"), opts=child)
        self.peering = None
        if args.lustre:
            self.peering = self._lustre_access(name, ctx, lustre_range(spec.cidr))
        self.register_outputs({"network_id": self.vpc.id, "subnet_id": self.subnet.id})

    def _firewall(self, name: str, suffix: str, ctx: GcpContext, sources: list[str], *, deny: bool = False,
                  ports: list[str] | None = None) -> gcp.compute.Firewall:
        rule = [gcp.compute.FirewallDenyArgs(protocol="all")] if deny else None
        allows = None if deny else [gcp.compute.FirewallAllowArgs(protocol="tcp", ports=ports)] if ports else [
            gcp.compute.FirewallAllowArgs(protocol="all")]
        return gcp.compute.Firewall(f"{name}-{suffix}", gcp.compute.FirewallArgs(
            project=ctx.project, network=self.vpc.id, direction="INGRESS", source_ranges=sources,
            priority=DENY_PRIORITY if deny else ALLOW_PRIORITY, denies=rule, allows=allows, log_config=FIREWALL_LOGS),
            opts=pulumi.ResourceOptions(parent=self))

    def _lustre_access(self, name: str, ctx: GcpContext, block: IPv4Network) -> gcp.servicenetworking.Connection:
        child = pulumi.ResourceOptions(parent=self)
        reserved = gcp.compute.GlobalAddress(f"{name}-lustre-range", gcp.compute.GlobalAddressArgs(
            project=ctx.project, network=self.vpc.id, purpose="VPC_PEERING", address_type="INTERNAL",
            address=str(block.network_address), prefix_length=block.prefixlen), opts=child)
        self._firewall(name, "allow-lustre", ctx, [str(block)], ports=list(LUSTRE_PORTS))
        # REMOVE_PEERING: the API refuses to delete a connection whose producer still holds addresses; the
        # provider then removes the peering itself, so the network can still be deleted.
        return gcp.servicenetworking.Connection(f"{name}-lustre-peering", gcp.servicenetworking.ConnectionArgs(
            network=self.vpc.id, service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[reserved.name], deletion_policy="REMOVE_PEERING"), opts=child)
