"""Shared config schema and facts used by several domains."""

from __future__ import annotations

ENVIRONMENT = {"environment": {"type": "string", "default": "dev",
                               "description": "Environment name; 'dev' relaxes some checks and enables dev-only ones. "
                                              "'unknown' (the baseline config) takes each resource's `environment` tag "
                                              "or label, where a rule reads one."}}
ALLOWED_REGIONS = {"allowedRegions": {"type": "array", "items": {"type": "string"}, "default": [],
                                      "description": "Regions resources may be placed in; empty means no restriction."}}

TLS_SSL_POLICIES_AWS = {
    "ELBSecurityPolicy-TLS13-1-2-2021-06", "ELBSecurityPolicy-TLS13-1-2-Res-2021-06", "ELBSecurityPolicy-TLS13-1-3-2021-06",
    "ELBSecurityPolicy-TLS13-1-2-Ext1-2021-06", "ELBSecurityPolicy-TLS13-1-2-Ext2-2021-06", "ELBSecurityPolicy-TLS-1-2-2017-01",
    "ELBSecurityPolicy-TLS-1-2-Ext-2018-06", "ELBSecurityPolicy-FS-1-2-2019-08", "ELBSecurityPolicy-FS-1-2-Res-2019-08",
    "ELBSecurityPolicy-FS-1-2-Res-2020-10", "ELBSecurityPolicy-TLS13-1-2-FIPS-2023-04", "ELBSecurityPolicy-TLS13-1-3-FIPS-2023-04",
}
"""AWS ELB security policies that refuse TLS below 1.2 (Elastic Load Balancing user guide, 'Security policies')."""

ADMIN_PORTS = (22, 3389)
OPEN_CIDRS = {"0.0.0.0/0", "::/0", "*", "Internet", "Any"}


def port_range_hits(from_port: int | None, to_port: int | None, protocol: str | None) -> list[str]:
    """Which of SSH, RDP or 'all ports' an ingress rule opens."""
    if str(protocol) in ("-1", "all", "*"):
        return ["all ports"]
    lo, hi = int(from_port or 0), int(to_port if to_port is not None else 65535)
    if lo <= 0 and hi >= 65535:
        return ["all ports"]
    return [f"port {p}" for p in ADMIN_PORTS if lo <= p <= hi]
