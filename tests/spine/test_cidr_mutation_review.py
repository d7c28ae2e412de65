"""Gaps found by a mutation review of components/planning (cidr.py, ranges.py): each test pins a rule the neighbouring
tests left free to change (a bound of plan_subnets, how a reserved range moves the derived service range, the order of a
message, the size of the advice for a pod range)."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest
from helpers import change as set_path
from helpers import full_platform_dict as valid
from helpers import spec_issues
from hypothesis import given
from hypothesis import strategies as st

from components.planning.cidr import MAX_ZONES, default_service_cidr, plan_subnets
from components.planning.ranges import NON_PUBLIC_BLOCKS, PodShortfall, node_blocks, pod_shortfall

SERVICE_SUPERNET = IPv4Network("172.16.0.0/12")
SLASH_16S = list(SERVICE_SUPERNET.subnets(new_prefix=16))


# --- plan_subnets bounds ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("zones", [0, MAX_ZONES + 1, 8])
def test_zone_counts_outside_one_to_six_are_refused(zones: int) -> None:
    """1..6 zones: 0 would plan no node subnet, 7 or 8 would fill the slots kept for stable positions."""
    assert MAX_ZONES == 6
    with pytest.raises(ValueError, match=f"^zones must be between 1 and 6; got {zones}$"):
        plan_subnets(IPv4Network("10.0.0.0/16"), zones)


def test_a_slash_23_is_too_small_and_a_slash_22_fits() -> None:
    """A /22 gives /28 endpoint subnets (AWS's smallest); a /23 would need /29s, so it is refused naming the /22."""
    with pytest.raises(ValueError, match=r"network 10\.0\.0\.0/23 is too small for the subnet plan; use /22 or larger"):
        plan_subnets(IPv4Network("10.0.0.0/23"), 1)
    assert {s.prefixlen for s in plan_subnets(IPv4Network("10.0.0.0/22"), 6).endpoints} == {28}


# --- default_service_cidr and ranges to avoid ------------------------------------------------------------------------


def test_a_reserved_range_inside_the_derived_slash_16_moves_it() -> None:
    """Overlap, not equality, is what AKS refuses: a reserved /17 inside the derived 172.30.0.0/16 moves it to 172.31."""
    network = IPv4Network("10.30.0.0/16")  # second octet 30 = 14 mod 16: 172.30.0.0/16
    assert default_service_cidr(network) == IPv4Network("172.30.0.0/16")
    assert default_service_cidr(network, avoid=[IPv4Network("172.30.128.0/17")]) == IPv4Network("172.31.0.0/16")


def test_a_reserved_range_larger_than_a_slash_16_is_skipped_whole() -> None:
    """A reserved /14 (172.28-172.31) overlaps the derived 172.30 and the next 172.31: the search wraps to 172.16."""
    network = IPv4Network("10.30.0.0/16")
    assert default_service_cidr(network, avoid=[IPv4Network("172.28.0.0/14")]) == IPv4Network("172.16.0.0/16")


def test_the_last_free_slash_16_is_found() -> None:
    """Every /16 of 172.16.0.0/12 is tried, the one just before the derived one included; only when none is free the
    error names the reserved ranges."""
    network = IPv4Network("10.30.0.0/16")  # derives 172.30; wrapping, 172.29 is tried last
    last = IPv4Network("172.29.0.0/16")
    assert default_service_cidr(network, avoid=[s for s in SLASH_16S if s != last]) == last
    with pytest.raises(ValueError, match=r"^every /16 of 172\.16\.0\.0/12 overlaps one of 172\.16\.0\.0/12$"):
        default_service_cidr(network, avoid=[SERVICE_SUPERNET])


reserved_ranges = st.lists(
    st.builds(lambda address, prefix: IPv4Network((int(SERVICE_SUPERNET.network_address) + address, prefix), strict=False),
              st.integers(0, SERVICE_SUPERNET.num_addresses - 1), st.integers(12, 24)),
    max_size=6,
)


@given(st.integers(0, 255), reserved_ranges)
def test_the_service_range_is_the_first_free_slash_16_from_the_derived_one(octet: int, avoid: list[IPv4Network]) -> None:
    """The result overlaps no reserved range, and every /16 passed over on the way (from the derived one, wrapping)
    overlaps one; when none is free, ValueError."""
    network = IPv4Network(f"10.{octet}.0.0/16")
    start = SLASH_16S.index(default_service_cidr(network))
    order = SLASH_16S[start:] + SLASH_16S[:start]
    free = [s for s in order if not any(s.overlaps(r) for r in avoid)]
    if not free:
        with pytest.raises(ValueError):
            default_service_cidr(network, avoid=avoid)
        return
    picked = default_service_cidr(network, avoid=avoid)
    assert picked == free[0]
    assert not any(picked.overlaps(r) for r in avoid)
    assert all(any(s.overlaps(r) for r in avoid) for s in order[:order.index(picked)])


# --- non-public blocks -----------------------------------------------------------------------------------------------


def test_non_public_blocks_are_in_address_order() -> None:
    """Messages list the blocks a range overlaps in this order: by address, not by description."""
    blocks = [block for block, _ in NON_PUBLIC_BLOCKS]
    assert blocks == sorted(blocks)
    assert blocks[0] == IPv4Network("0.0.0.0/8") and blocks[-1] == IPv4Network("240.0.0.0/4")


def test_a_public_endpoint_range_over_several_blocks_names_them_by_address() -> None:
    """96.0.0.0/3 holds the RFC 6598 space and loopback: the message names 100.64.0.0/10 first."""
    data = set_path(valid(), "clouds/aws/regions/us-east-1/cluster",
                    {"api_access": "public_restricted", "authorized_cidrs": ["96.0.0.0/3"]})
    [(path, message)] = spec_issues(data)
    assert path == "platform.clouds.aws.regions.us-east-1.cluster.authorized_cidrs[0]"
    assert message.startswith("96.0.0.0/3 is not a public range: it overlaps 100.64.0.0/10 (shared address space, RFC 6598) "
                              "and 127.0.0.0/8 (loopback), ")


# --- pod range advice ------------------------------------------------------------------------------------------------


def test_a_power_of_two_of_nodes_gets_the_exact_range() -> None:
    """32 nodes of /24 blocks fit a /19 exactly: the advice is a /19, not the twice-as-large /18."""
    assert pod_shortfall(IPv4Network("100.64.0.0/20"), 24, [("train", 32)]) == PodShortfall(blocks=16, nodes=32, needed_prefix=19)
    assert pod_shortfall(IPv4Network("100.64.0.0/19"), 24, [("train", 32)]) is None


@given(st.integers(16, 28), st.lists(st.tuples(st.just("pool"), st.integers(1, 5000)), min_size=1, max_size=4))
def test_the_advised_prefix_is_the_longest_that_holds_the_nodes(block: int, pools: list[tuple[str, int]]) -> None:
    """The advised range holds every node, and one bit smaller would not (the advice never asks for more than needed)."""
    nodes = sum(count for _, count in pools)
    short = pod_shortfall(IPv4Network((0, 32)), block, pools)  # a /32 holds no block of /16../28: always short
    assert short is not None and short.nodes == nodes
    assert node_blocks(IPv4Network((0, short.needed_prefix)), block) >= nodes
    if short.needed_prefix < block:
        assert node_blocks(IPv4Network((0, short.needed_prefix + 1)), block) < nodes
