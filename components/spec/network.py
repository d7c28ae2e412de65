"""Network spec: one encrypted private network per cloud region."""

from __future__ import annotations

import enum
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from components.planning.cidr import SubnetPlan, default_pod_cidr, default_service_cidr, plan_subnets
from components.planning.ranges import AKS_RESERVED, PRIVATE_RULE, is_private

from .common import Cloud, Days, SpecModel


class NatMode(str, enum.Enum):
    """How private subnets reach the internet."""

    PER_ZONE = "per_zone"
    """One NAT gateway per zone: survives a zone outage (production default)."""
    SINGLE = "single"
    """One shared NAT gateway: cheaper, a single point of failure (dev)."""
    NONE = "none"
    """No NAT: nodes reach only private endpoints (air-gapped)."""


class TransitEncryption(str, enum.Enum):
    """Cloud-enforced encryption in transit inside the network.

    AWS: VPC encryption controls; Azure: VNet encryption; GCP encrypts VM-to-VM traffic always.
    """

    ENFORCE = "enforce"
    """Unencrypted traffic is refused (AWS enforce mode, Azure DropUnencrypted)."""
    MONITOR = "monitor"
    """Encryption is on and unencrypted flows are reported, not dropped (AWS monitor mode, Azure AllowUnencrypted)."""


class NetworkSpec(SpecModel):
    """An encrypted network with private node subnets, flow logs and private service endpoints."""

    cidr: IPv4Network
    """Address space of the VPC/VNet (e.g. 10.10.0.0/16). Must not overlap any other region's network, nor the GKE pod and
    services ranges of a GCP region (secondary ranges of the GCP subnet, which peering and VPNs route).
    Subnets for nodes, endpoints and load balancers are carved from it by the CIDR planner."""
    zones: Annotated[int, Field(ge=2, le=6)] = 3
    """Availability zones to spread subnets over. Default 3; 2 is the minimum for a highly available control plane.
    On AWS and GCP, more than the region has (GCP's us-east1 has 3) stops `pulumi preview` with the zones it has."""
    nat: NatMode = NatMode.PER_ZONE
    """Egress NAT layout. Default: one NAT per zone."""
    transit_encryption: TransitEncryption = TransitEncryption.ENFORCE
    """Default `enforce`: AWS VPC encryption controls drop unencrypted traffic. GCP encrypts VM-to-VM traffic always,
    whatever the setting. Azure cannot drop it yet (VNet encryption's DropUnencrypted is documented as future support),
    so an Azure network must set `monitor` explicitly: the named opt-in, which the policy pack reports
    (`azure-vnet-transit-encryption-enforced`, advisory); on Azure with `clouds.azure.etcd_encryption: customer_key` a
    region with a cluster has VNet encryption off (API Server VNet Integration doesn't support it), so `monitor` is moot
    there and `enforce` is a config error; `monitor` on AWS is reported too
    (`aws-vpc-transit-encryption-enforced`)."""
    flow_log_retention_days: Days = 365
    """Days flow logs are kept. Default 365 (HIPAA/PCI audits look back a year)."""
    pod_cidr: IPv4Network | None = None
    """Pod address range (GKE secondary range, AKS overlay), private (RFC 1918/6598). GKE and AKS give every node a
    /24 of it, so it must hold one for each node the region's pools can scale to. Not used on AWS (the VPC CNI gives
    pods VPC addresses): leave it unset there. On GCP it must not overlap another region's network or GKE ranges (a GKE
    pod range is routed in the VPC); an AKS overlay range may repeat (pods are NATed to their node's address). Default:
    a /14 of 100.64.0.0/10 picked by the network's second octet (stable when regions are added)."""
    service_cidr: IPv4Network | None = None
    """Kubernetes service range, private, within the cloud's limits: EKS /12 to /24 inside RFC 1918; AKS /13 to /28,
    clear of 172.30.0.0/16 and 172.31.0.0/16; GKE /16 or smaller. Default: a /16 of 172.16.0.0/12 picked like
    `pod_cidr`; on Azure, where that would be 172.30 or 172.31 (reserved by AKS), 172.16.0.0/16. On GCP it is a subnet
    secondary range too, so it must not overlap another region's network or GKE ranges."""

    @field_validator("cidr", "pod_cidr", "service_cidr", mode="before")
    @classmethod
    def _prefix_given(cls, value: object, info: ValidationInfo) -> object:
        # An address without '/' parses as a /32, which the size checks would report as "has prefix /32".
        if isinstance(value, str) and "/" not in value and _is_address(value):
            what = "network cidr" if info.field_name == "cidr" else info.field_name
            example = IPv4Network(f"{value.strip()}/16", strict=False)
            raise ValueError(f"{what} '{value}' has no prefix length; a network is written as its first address, '/' "
                             f"and the prefix length, like '{example}'")
        return value

    @field_validator("cidr")
    @classmethod
    def _size(cls, value: IPv4Network) -> IPv4Network:
        if not 16 <= value.prefixlen <= 22:
            raise ValueError(f"network cidr {value} has prefix /{value.prefixlen}; allowed: /16 to /22 (room for 3 zones of subnets)")
        if not is_private(value):
            raise ValueError(f"network cidr {value} is not a private range; allowed: {PRIVATE_RULE}")
        return value

    @field_validator("pod_cidr", "service_cidr")
    @classmethod
    def _private(cls, value: IPv4Network | None, info: ValidationInfo) -> IPv4Network | None:
        if value is not None and not is_private(value):
            raise ValueError(f"{info.field_name} {value} is not a private range; allowed: {PRIVATE_RULE}")
        return value

    @property
    def effective_pod_cidr(self) -> IPv4Network:
        return self.pod_cidr or default_pod_cidr(self.cidr)

    def service_range(self, cloud: Cloud) -> IPv4Network:
        """`service_cidr`, or the derived default; on Azure that skips the ranges AKS reserves."""
        return self.service_cidr or default_service_cidr(self.cidr, avoid=AKS_RESERVED if cloud is Cloud.AZURE else ())

    def subnet_plan(self) -> SubnetPlan:
        return plan_subnets(self.cidr, self.zones)


def _is_address(text: str) -> bool:
    try:
        IPv4Address(text.strip())
    except ValueError:
        return False
    return True
