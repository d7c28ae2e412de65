"""Shared config schema and facts used by several domains."""

from __future__ import annotations

import re

ENVIRONMENT = {"environment": {"type": "string", "default": "dev",
                               "description": "Environment name; 'dev' relaxes some checks and enables dev-only ones. "
                                              "'unknown' (the baseline config) takes each resource's `environment` tag "
                                              "or label, where a rule reads one."}}
ALLOWED_REGIONS = {"allowedRegions": {"type": "array", "items": {"type": "string"}, "default": [],
                                      "description": "Regions resources may be placed in; empty means no restriction."}}

_AWS_TLS_MINIMUM = re.compile(r"^ELBSecurityPolicy-(?:TLS13|TLS|FS)-1-(\d)(?:-|$)")
"""AWS ELB security policies name their minimum TLS version: ELBSecurityPolicy-TLS13-1-2-Res-PQ-2025-09,
-TLS13-1-3-FIPS-2023-04, -TLS-1-2-Ext-2018-06 and -FS-1-2-Res-2020-10 refuse TLS below 1.2, while -TLS13-1-0-2021-06,
-TLS13-1-1-FIPS-2023-04 and -TLS-1-1-2017-01 allow 1.0 or 1.1; the dated ones without a minimum in the name
(ELBSecurityPolicy-2016-08, -2015-05, -FS-2018-06) allow TLS 1.0. Matching the name keeps new dated variants (PQ,
FIPS, RFC9151) covered ("Security policies" tables of the ELB user guides:
https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html)."""


def aws_ssl_policy_tls12(policy: str) -> bool:
    """Whether an AWS ELB security policy refuses TLS below 1.2."""
    minimum = _AWS_TLS_MINIMUM.match(policy)
    return minimum is not None and int(minimum.group(1)) >= 2


ADMIN_PORTS = (22, 3389)
OPEN_CIDRS = {"0.0.0.0/0", "::/0", "*", "Internet", "Any"}
ALL_PROTOCOLS = {"-1", "all", "*"}
PORTED_PROTOCOLS = {"tcp", "udp", "sctp", "6", "17", "132"}
"""Protocols with ports (also as IP protocol numbers); ICMP, ESP, AH and the like have none, so "all ports" or an
admin port range means nothing for them."""


def has_ports(protocol: str | None) -> bool:
    """Whether a rule's protocol can reach a port: a ported one, all protocols, or one not given (assume the worst)."""
    return protocol is None or str(protocol).lower() in PORTED_PROTOCOLS | ALL_PROTOCOLS


def port_range_hits(from_port: int | None, to_port: int | None, protocol: str | None) -> list[str]:
    """Which of SSH, RDP or 'all ports' an ingress rule opens (none for a protocol without ports)."""
    if str(protocol).lower() in ALL_PROTOCOLS:
        return ["all ports"]
    if not has_ports(protocol):
        return []
    lo, hi = int(from_port or 0), int(to_port if to_port is not None else 65535)
    if lo <= 0 and hi >= 65535:
        return ["all ports"]
    return [f"port {p}" for p in ADMIN_PORTS if lo <= p <= hi]
