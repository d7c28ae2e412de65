"""A region's network: resource group, VNet with VNet encryption (off where the region's cluster runs API Server VNet
Integration), subnets, NSG, NAT gateway, private DNS zones for private endpoints, and the Log Analytics workspace the
region's logs go to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

import pulumi
import pulumi_azure_native as azure_native

from components.spec import NatMode, NetworkSpec
from components.spec.azure import (
    AZURE_ZONES,
    LUSTRE_SLOTS,
    aks_apiserver_subnet,
    aks_node_subnet,
    lustre_subnets,
    transit_enforcement,
)

from .base import AzureComponent
from .context import AzureContext
from .private_link import PRIVATE_DNS_ZONES

# Log Analytics keeps data 30 to 730 days on the PerGB2018 SKU.
_WORKSPACE_RETENTION_DAYS = (30, 730)
_INFERENCE_IP_OFFSET = 10  # inside the load-balancer subnet, clear of Azure's 4 reserved first addresses
APISERVER_SUBNET = "apiserver"
# API Server VNet Integration injects the API server's internal load balancer and pods into a subnet delegated to AKS
# (learn.microsoft.com/azure/aks/api-server-vnet-integration: "delegate an API server subnet to
# Microsoft.ContainerService/managedClusters").
_APISERVER_DELEGATION = "Microsoft.ContainerService/managedClusters"


def subnet_layout(cidr: IPv4Network, lustre: Sequence[str], *, apiserver: bool = False) -> dict[str, IPv4Network]:
    """Regional Azure subnets carved from the CIDR planner's blocks (components/planning/cidr.py):
    nodes = first half, lustre-<fs> = the first 7 blocks of the third quarter (one subnet per file system, in spec
    order), apiserver (with `apiserver`) = the first /28 of its 8th block, endpoints = first half of the fourth quarter,
    lb = the planner's services block (last eighth). The apiserver subnet comes last: subnets are created in this order."""
    _, second_half = cidr.subnets(prefixlen_diff=1)
    _, fourth_quarter = second_half.subnets(prefixlen_diff=1)
    endpoints, services = fourth_quarter.subnets(prefixlen_diff=1)
    slots = lustre_subnets(cidr)
    if len(lustre) > len(slots):
        raise ValueError(f"{len(lustre)} Lustre file systems need {len(lustre)} subnets; network {cidr} has "
                         f"{LUSTRE_SLOTS} Lustre slots; allowed: at most {LUSTRE_SLOTS} file systems per region")
    layout = {"nodes": aks_node_subnet(cidr), "endpoints": endpoints, "lb": services}
    layout.update({f"lustre-{fs}": slot for fs, slot in zip(lustre, slots)})
    if apiserver:
        layout[APISERVER_SUBNET] = aks_apiserver_subnet(cidr)
    return layout


def inference_frontend_ip(cidr: IPv4Network) -> IPv4Address:
    """Fixed private address of the region's internal inference load balancer (in the `lb` subnet)."""
    return subnet_layout(cidr, [])["lb"][_INFERENCE_IP_OFFSET]


@dataclass(frozen=True)
class NetworkArgs:
    context: AzureContext
    """Region, tags and protection; `resource_group_name` set means: deploy into that existing group."""
    network: NetworkSpec
    """CIDR, zones, NAT layout, transit encryption and flow log retention."""
    lustre: Sequence[str] = ()
    """Lustre file system names, in spec order: each gets its own subnet. Default none."""
    public_inference_port: int | None = None
    """Open this port to Azure Front Door's backend service tag (Front Door Standard reaches a public origin).
    Default None: nothing inbound from outside the VNet."""
    apiserver_subnet: bool = False
    """Create the `apiserver` subnet, delegated to AKS, for the region's cluster (API Server VNet Integration). Default
    off: a region without a cluster has no use for it (its block stays reserved)."""
    vnet_encryption: bool = True
    """VNet encryption on, with `network.transit_encryption`'s enforcement. False: off (`enabled: false`), for a region
    whose cluster runs API Server VNet Integration, which Azure doesn't support in an encrypted VNet
    (learn.microsoft.com/azure/aks/api-server-vnet-integration#limitations). Default on."""


class Network(AzureComponent):
    """`ai-infra:azure:Network` — see the module docstring. Children: `<name>-rg` (unless the region names an existing
    group), `-logs`, `-vnet`, `-nsg`, `-nat-ip` and `-nat` (unless nat `none`), `-subnet-<role>` (`-subnet-apiserver` with
    `apiserver_subnet`), `-dns-<zone>`,
    `-dns-<zone>-link`, `-inference-ip` (Front Door Standard only)."""

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:Network", name, opts)
        ctx, spec = args.context, args.network
        child = pulumi.ResourceOptions(parent=self)
        if ctx.resource_group_name is None:
            # Deleting a resource group deletes everything in it, protected or not: protect it like the data.
            group = azure_native.resources.ResourceGroup(
                f"{name}-rg",
                azure_native.resources.ResourceGroupArgs(resource_group_name=f"rg-{name}", location=ctx.region, tags=ctx.tags()),
                opts=ctx.stateful(self),
            )
            ctx = ctx.in_resource_group(group.name)
        self.resource_group_name: pulumi.Output[str] = pulumi.Output.from_input(ctx.group)

        retention = min(max(spec.flow_log_retention_days, _WORKSPACE_RETENTION_DAYS[0]), _WORKSPACE_RETENTION_DAYS[1])
        self.workspace = azure_native.operationalinsights.Workspace(
            f"{name}-logs",
            azure_native.operationalinsights.WorkspaceArgs(
                resource_group_name=ctx.group,
                location=ctx.region,
                sku=azure_native.operationalinsights.WorkspaceSkuArgs(name="PerGB2018"),
                retention_in_days=retention,
                # Entra ID only: agents and readers authenticate with managed identities, never workspace keys.
                features=azure_native.operationalinsights.WorkspaceFeaturesArgs(disable_local_auth=True),
                tags=ctx.tags(),
            ),
            opts=ctx.stateful(self),
        )

        self.vnet = azure_native.network.VirtualNetwork(
            f"{name}-vnet",
            azure_native.network.VirtualNetworkInitArgs(
                resource_group_name=ctx.group,
                location=ctx.region,
                address_space=azure_native.network.AddressSpaceArgs(address_prefixes=[str(spec.cidr)]),
                # Off explicitly, not left out: the VNet is written with a PUT, and an explicit false both turns an
                # encrypted VNet's encryption off and shows the policy pack why (a PUT without `encryption` turns it
                # off too: hashicorp/terraform-provider-azurerm#22679, but says nothing).
                encryption=azure_native.network.VirtualNetworkEncryptionArgs(
                    enabled=True, enforcement=transit_enforcement(spec.transit_encryption))
                if args.vnet_encryption else azure_native.network.VirtualNetworkEncryptionArgs(enabled=False),
                tags=ctx.tags(),
            ),
            # Subnets are separate resources: keep the VNet from claiming (and removing) them.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["subnets"]),
        )

        layout = subnet_layout(spec.cidr, args.lustre, apiserver=args.apiserver_subnet)
        self.nsg = azure_native.network.NetworkSecurityGroup(
            f"{name}-nsg",
            azure_native.network.NetworkSecurityGroupInitArgs(
                resource_group_name=ctx.group,
                location=ctx.region,
                security_rules=_security_rules(args.public_inference_port),
                tags=ctx.tags(),
            ),
            opts=child,
        )
        self.nat: azure_native.network.NatGateway | None = None
        if spec.nat is not NatMode.NONE:
            # One regional NAT gateway for both `single` and `per_zone`: Azure subnets span zones and take one NAT
            # gateway each, and the Standard SKU of this API version is zonal or non-zonal, never zone-redundant.
            nat_ip = _public_ip(f"{name}-nat-ip", self, ctx)
            self.nat = azure_native.network.NatGateway(
                f"{name}-nat",
                azure_native.network.NatGatewayInitArgs(
                    resource_group_name=ctx.group,
                    location=ctx.region,
                    sku=azure_native.network.NatGatewaySkuArgs(name="Standard"),
                    public_ip_addresses=[azure_native.network.SubResourceArgs(id=nat_ip.id)],
                    idle_timeout_in_minutes=4,
                    tags=ctx.tags(),
                ),
                opts=child,
            )
        egress = azure_native.network.SubResourceArgs(id=self.nat.id) if self.nat else None

        self.subnet_ids: dict[str, pulumi.Output[str]] = {}
        previous: pulumi.Resource | None = None
        for role, cidr in layout.items():
            subnet = azure_native.network.Subnet(
                f"{name}-subnet-{role}",
                azure_native.network.SubnetInitArgs(
                    resource_group_name=ctx.group,
                    virtual_network_name=self.vnet.name,
                    subnet_name=role,
                    address_prefix=str(cidr),
                    network_security_group=azure_native.network.NetworkSecurityGroupArgs(id=self.nsg.id),
                    # Egress only through the NAT gateway (none with nat `none`); no implicit outbound address for any VM.
                    # The apiserver subnet gets no NAT gateway: AKS manages its traffic, and Microsoft documents none
                    # there (learn.microsoft.com/azure/aks/api-server-vnet-integration and the AKS Automatic custom
                    # VNet samples, Azure-Samples/aks-samples automatic/custom-network: delegation only).
                    default_outbound_access=False,
                    nat_gateway=egress if role not in ("endpoints", APISERVER_SUBNET) else None,
                    private_endpoint_network_policies="Enabled",  # NSG rules apply to private endpoints too
                    # The load-balancer subnet hosts the Private Link service Front Door Premium connects through.
                    private_link_service_network_policies="Disabled" if role == "lb" else "Enabled",
                    # An NSG on the API server subnet is supported as long as it lets nodes reach TCP 443 and 4443 and
                    # the load balancer TCP 9988 (learn.microsoft.com/azure/aks/api-server-vnet-integration, NSG
                    # security rules), and the API server reach the vault's private endpoint on TCP 443
                    # (use-kms-etcd-encryption, Limitations): ours denies only the Internet inbound, so Azure's
                    # AllowVnetInBound, AllowAzureLoadBalancerInBound and AllowVnetOutBound admit all of it.
                    delegations=[azure_native.network.DelegationArgs(name="aks-apiserver", service_name=_APISERVER_DELEGATION)]
                    if role == APISERVER_SUBNET else None,
                ),
                # Azure rejects concurrent subnet writes on one VNet: create them one after another.
                opts=pulumi.ResourceOptions(parent=self, depends_on=[previous] if previous else None),
            )
            previous = subnet
            self.subnet_ids[role] = subnet.id

        self.dns_zone_ids: dict[str, pulumi.Output[str]] = {}
        for group_id, zone_name in PRIVATE_DNS_ZONES.items():
            zone = azure_native.privatedns.PrivateZone(
                f"{name}-dns-{group_id}",
                azure_native.privatedns.PrivateZoneArgs(
                    resource_group_name=ctx.group, private_zone_name=zone_name, location="global", tags=ctx.tags()),
                opts=child,
            )
            link = azure_native.privatedns.VirtualNetworkLink(
                f"{name}-dns-{group_id}-link",
                azure_native.privatedns.VirtualNetworkLinkArgs(
                    resource_group_name=ctx.group,
                    private_zone_name=zone.name,
                    location="global",
                    registration_enabled=False,
                    virtual_network=azure_native.privatedns.SubResourceArgs(id=self.vnet.id),
                    tags=ctx.tags(),
                ),
                opts=child,
            )
            # The zone's ID once the VNet resolves its names: a record registered there is then usable at once.
            self.dns_zone_ids[group_id] = pulumi.Output.all(zone.id, link.id).apply(lambda ids: ids[0])

        self.inference_ip: azure_native.network.PublicIPAddress | None = None
        if args.public_inference_port is not None:
            # Front Door Standard has no Private Link: the inference load balancer gets this public address,
            # reachable only from Front Door's backend range (NSG rule above).
            self.inference_ip = _public_ip(f"{name}-inference-ip", self, ctx, zones=list(AZURE_ZONES[: spec.zones]),
                                          dns_label=ctx.global_name("inf", max_length=63))

        self.inference_private_ip = str(inference_frontend_ip(spec.cidr))
        self.context = ctx
        self.register_outputs({
            "resource_group_name": self.resource_group_name,
            "vnet_id": self.vnet.id,
            "subnet_ids": self.subnet_ids,
            "workspace_id": self.workspace.id,
        })


def _public_ip(name: str, parent: pulumi.Resource, ctx: AzureContext, zones: list[str] | None = None,
               dns_label: pulumi.Input[str] | None = None) -> azure_native.network.PublicIPAddress:
    """A static Standard IPv4 address (Standard: closed to inbound traffic unless an NSG allows it)."""
    return azure_native.network.PublicIPAddress(
        name,
        azure_native.network.PublicIPAddressInitArgs(
            resource_group_name=ctx.group,
            location=ctx.region,
            sku=azure_native.network.PublicIPAddressSkuArgs(name="Standard", tier="Regional"),
            public_ip_allocation_method="Static",
            public_ip_address_version="IPv4",
            zones=zones,
            dns_settings=azure_native.network.PublicIPAddressDnsSettingsArgs(domain_name_label=dns_label) if dns_label else None,
            tags=ctx.tags(),
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )


def _security_rules(public_inference_port: int | None) -> list[azure_native.network.SecurityRuleArgs]:
    """An explicit deny of inbound Internet traffic, so the plan and the policy pack see it (Azure's own default
    rule at 65500 denies it too); traffic inside the VNet and load-balancer probes keep Azure's default allows."""
    rules = [_inbound("deny-internet-inbound", 4096, "Deny", "*", "Internet", "*",
                      "No inbound traffic from the Internet (ai-infra default).")]
    if public_inference_port is not None:
        rules.insert(0, _inbound("allow-front-door-inference", 100, "Allow", "Tcp", "AzureFrontDoor.Backend", str(public_inference_port),
                                 "Front Door Standard to the public inference origin (opt-in: azure_tier standard)."))
    return rules


def _inbound(name: str, priority: int, access: str, protocol: str, source: str, ports: str, description: str) -> azure_native.network.SecurityRuleArgs:
    return azure_native.network.SecurityRuleArgs(
        name=name, priority=priority, direction="Inbound", access=access, protocol=protocol,
        source_address_prefix=source, source_port_range="*", destination_address_prefix="*", destination_port_range=ports,
        description=description,
    )
