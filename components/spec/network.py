"""Network spec: one encrypted private network per cloud region."""

from __future__ import annotations

import enum
from ipaddress import IPv4Network
from typing import Annotated

from pydantic import Field, field_validator

from components.planning.cidr import SubnetPlan, default_pod_cidr, default_service_cidr, plan_subnets

from .common import Days, SpecModel


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
    """Address space of the VPC/VNet (e.g. 10.10.0.0/16). Must not overlap any other region's network.
    Subnets for nodes, endpoints and load balancers are carved from it by the CIDR planner."""
    zones: Annotated[int, Field(ge=2, le=6)] = 3
    """Availability zones to spread subnets over. Default 3; 2 is the minimum for a highly available control plane."""
    nat: NatMode = NatMode.PER_ZONE
    """Egress NAT layout. Default: one NAT per zone."""
    transit_encryption: TransitEncryption = TransitEncryption.ENFORCE
    """Default `enforce`: the network drops unencrypted traffic where the cloud supports it."""
    flow_log_retention_days: Days = 365
    """Days flow logs are kept. Default 365 (HIPAA/PCI audits look back a year)."""
    pod_cidr: IPv4Network | None = None
    """Pod address range (GKE secondary range, AKS overlay). Default: a /14 of 100.64.0.0/10 picked by the
    network's second octet (stable when regions are added)."""
    service_cidr: IPv4Network | None = None
    """Kubernetes service range. Default: a /16 of 172.16.0.0/12 picked like `pod_cidr`."""

    @field_validator("cidr")
    @classmethod
    def _size(cls, value: IPv4Network) -> IPv4Network:
        if not 16 <= value.prefixlen <= 22:
            raise ValueError(f"network cidr {value} has prefix /{value.prefixlen}; allowed: /16 to /22 (room for 3 zones of subnets)")
        if not value.is_private:
            raise ValueError(f"network cidr {value} is not a private (RFC 1918/6598) range")
        return value

    @property
    def effective_pod_cidr(self) -> IPv4Network:
        return self.pod_cidr or default_pod_cidr(self.cidr)

    @property
    def effective_service_cidr(self) -> IPv4Network:
        return self.service_cidr or default_service_cidr(self.cidr)

    def subnet_plan(self) -> SubnetPlan:
        return plan_subnets(self.cidr, self.zones)
