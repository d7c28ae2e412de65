"""CIDR planning: carve a region's network into per-zone subnets, and derive pod/service ranges.

Layout of a network of prefix /p (p in 16..22), with 8 zone slots whatever the zone count:
  first half            -> private node subnets, one per zone       (/p+4 each)
  third quarter         -> public subnets (load balancers only), one per zone (/p+5)
  fourth quarter, 1st half -> private endpoint subnets, one per zone (/p+6)
  fourth quarter, 2nd half -> regional services block (Azure load-balancer/private-endpoint subnets,
                              GCP proxy-only subnet), never given to nodes
Fixed slots mean adding a zone never moves or resizes an existing subnet (which would replace it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

MAX_ZONES = 6
_SLOT_BITS = 3  # 8 slots per block: room for MAX_ZONES with stable positions
_POD_SUPERNET = IPv4Network("100.64.0.0/10")  # RFC 6598 shared space: never collides with RFC 1918 VPCs
_POD_PREFIX = 14  # 262k pod IPs per region
_SERVICE_SUPERNET = IPv4Network("172.16.0.0/12")
_SERVICE_PREFIX = 16


@dataclass(frozen=True)
class SubnetPlan:
    network: IPv4Network
    private: tuple[IPv4Network, ...]
    """Node subnets, index = zone index."""
    public: tuple[IPv4Network, ...]
    """Load-balancer subnets, index = zone index."""
    endpoints: tuple[IPv4Network, ...]
    """Private endpoint / interface endpoint subnets, index = zone index."""
    services: IPv4Network
    """Regional block for cloud-managed subnets (Azure LB/private endpoints, GCP proxy-only)."""

    def all_subnets(self) -> list[IPv4Network]:
        return [*self.private, *self.public, *self.endpoints, self.services]


def plan_subnets(network: IPv4Network, zones: int) -> SubnetPlan:
    """Deterministic subnet plan; raises ValueError if the network is too small for `zones`."""
    if not 1 <= zones <= MAX_ZONES:
        raise ValueError(f"zones must be between 1 and {MAX_ZONES}; got {zones}")
    bits = _SLOT_BITS
    if network.prefixlen + 3 + bits > 28:
        raise ValueError(f"network {network} is too small for the subnet plan; use /{28 - 3 - bits} or larger")
    first_half, second_half = network.subnets(prefixlen_diff=1)
    third_quarter, fourth_quarter = second_half.subnets(prefixlen_diff=1)
    endpoint_block, services = fourth_quarter.subnets(prefixlen_diff=1)
    def per_zone(block: IPv4Network) -> tuple[IPv4Network, ...]:
        return tuple(list(block.subnets(prefixlen_diff=bits))[:zones])
    return SubnetPlan(
        network=network,
        private=per_zone(first_half),
        public=per_zone(third_quarter),
        endpoints=per_zone(endpoint_block),
        services=services,
    )


def default_pod_cidr(network: IPv4Network) -> IPv4Network:
    """A /14 inside 100.64.0.0/10 chosen by the network's second octet, so it is stable when regions are added.

    Two networks whose second octets agree modulo 16 get the same range; the spec checks report that
    and ask for an explicit `pod_cidr`.
    """
    index = (int(network.network_address) >> 16) & 0xF
    return list(_POD_SUPERNET.subnets(new_prefix=_POD_PREFIX))[index]


def default_service_cidr(network: IPv4Network, avoid: Sequence[IPv4Network] = ()) -> IPv4Network:
    """A /16 inside 172.16.0.0/12 chosen like `default_pod_cidr`; cluster-internal, never routed.

    `avoid`: ranges the cloud reserves (AKS: 172.30.0.0/16 and 172.31.0.0/16). When the derived /16 overlaps one, the
    next /16 of 172.16.0.0/12 that overlaps none is taken, wrapping around (172.30 and 172.31 give 172.16 on AKS).
    Only then: the ranges of EKS and GKE clusters never move (a new service range replaces a cluster)."""
    candidates = list(_SERVICE_SUPERNET.subnets(new_prefix=_SERVICE_PREFIX))
    index = (int(network.network_address) >> 16) & 0xF
    for step in range(len(candidates)):
        candidate = candidates[(index + step) % len(candidates)]
        if not any(candidate.overlaps(reserved) for reserved in avoid):
            return candidate
    raise ValueError(f"every /{_SERVICE_PREFIX} of {_SERVICE_SUPERNET} overlaps one of {', '.join(map(str, avoid))}")
