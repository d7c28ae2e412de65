"""Inference endpoints: per-region services and the cloud's global load balancer in front of them."""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import Field

from .common import SpecModel


class InferenceSpec(SpecModel):
    """An inference service in one region, exposed through a regional load balancer."""

    port: Annotated[int, Field(ge=1, le=65535)] = 8080
    """Port the service listens on behind the load balancer. Default 8080."""
    health_check_path: Annotated[str, Field(pattern=r"^/[A-Za-z0-9._~/-]*$")] = "/healthz"
    """HTTP path probed by the load balancer and global endpoint. Default /healthz."""
    certificate: str | None = None
    """TLS certificate for the regional listener: an ACM certificate ARN on AWS. Required on AWS."""
    traffic_percent: Annotated[int, Field(ge=0, le=100)] = 100
    """Share of this region's traffic to accept (AWS traffic dial, Azure origin weight). Default 100."""


class GlobalRouting(str, enum.Enum):
    ANYCAST = "anycast"
    """Anycast front door: AWS Global Accelerator, GCP global external ALB, Azure Front Door. Default."""
    LATENCY_DNS = "latency_dns"
    """DNS latency-based routing (AWS Route 53 only)."""


class AzureFrontDoorTier(str, enum.Enum):
    STANDARD = "standard"
    PREMIUM = "premium"


class GlobalEndpointSpec(SpecModel):
    """A multi-region entry point in front of every region of this cloud that declares `inference`."""

    domain: str | None = None
    """Public host name (e.g. infer.example.com). Required for managed certificates and `latency_dns`."""
    certificate: str | None = None
    """Certificate for the global listener: a GCP certificate resource name, an Azure Key Vault secret ID.
    Default: a cloud-managed certificate for `domain`."""
    routing: GlobalRouting = GlobalRouting.ANYCAST
    """Default `anycast`."""
    hosted_zone_id: str | None = None
    """AWS Route 53 hosted zone for `latency_dns`."""
    waf: bool = True
    """Attach a WAF policy (Cloud Armor, Front Door WAF in prevention mode; AWS WAF on the regional ALBs). Default on."""
    azure_tier: AzureFrontDoorTier = AzureFrontDoorTier.PREMIUM
    """Azure only: Front Door tier. Default premium (managed WAF rule sets need it)."""
