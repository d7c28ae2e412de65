"""Property tests for the pod and service range math (components/planning/ranges.py: pure, no pydantic, no Pulumi)."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.planning.ranges import (
    PRIVATE_BLOCKS,
    PodShortfall,
    gke_node_block_prefix,
    is_private,
    node_blocks,
    overlapping,
    pod_shortfall,
    prefix_for_nodes,
)

ADDRESSES = st.integers(min_value=0, max_value=2**32 - 1)
networks = st.builds(lambda address, prefix: IPv4Network((address, prefix), strict=False), ADDRESSES, st.integers(0, 32))
block_prefixes = st.integers(min_value=16, max_value=28)
pools = st.lists(st.tuples(st.sampled_from(["system", "train", "serve", "pretrain"]), st.integers(1, 1000)), min_size=1, max_size=6)


# The table of https://cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr: maximum Pods per node ->
# the node's CIDR block.
GKE_TABLE = [((8, 8), 28), ((9, 16), 27), ((17, 32), 26), ((33, 64), 25), ((65, 110), 24)]


@pytest.mark.parametrize(("pods", "prefix"), GKE_TABLE, ids=[f"{low}-{high}" for (low, high), _ in GKE_TABLE])
def test_gke_node_block_follows_the_documented_table(pods: tuple[int, int], prefix: int) -> None:
    low, high = pods
    assert {gke_node_block_prefix(n) for n in range(low, high + 1)} == {prefix}


def test_gke_default_of_110_pods_gives_a_slash_24() -> None:
    assert gke_node_block_prefix() == 24


@given(st.integers(min_value=1, max_value=2**20))
def test_gke_node_block_is_the_smallest_with_twice_the_pods(pods: int) -> None:
    prefix = gke_node_block_prefix(pods)
    assert 2 ** (32 - prefix) >= 2 * pods  # at least twice the pods
    assert 2 ** (32 - prefix - 1) < 2 * pods  # and the next smaller block would not be


@given(networks, block_prefixes)
def test_node_blocks_tile_the_range(network: IPv4Network, block: int) -> None:
    count = node_blocks(network, block)
    if network.prefixlen > block:
        assert count == 0
    else:
        assert count * 2 ** (32 - block) == network.num_addresses
        if block - network.prefixlen <= 10:
            assert count == len(list(network.subnets(new_prefix=block)))


@given(st.integers(min_value=1, max_value=2**16), block_prefixes)
def test_prefix_for_nodes_is_the_smallest_range_that_holds_them(nodes: int, block: int) -> None:
    prefix = prefix_for_nodes(nodes, block)
    fits = IPv4Network((0, prefix))
    assert node_blocks(fits, block) >= nodes
    if prefix < block and prefix > 0:
        assert node_blocks(IPv4Network((0, prefix + 1)), block) < nodes  # one bit smaller would not hold them
    if nodes == 1:
        assert prefix == block


def test_prefix_for_nodes_never_goes_below_the_whole_address_space() -> None:
    assert prefix_for_nodes(2**30, 24) == 0


@pytest.mark.parametrize("bad", [0, -1])
def test_counts_below_one_are_refused(bad: int) -> None:
    with pytest.raises(ValueError, match=f"got {bad}"):
        prefix_for_nodes(bad, 24)
    with pytest.raises(ValueError, match=f"got {bad}"):
        gke_node_block_prefix(bad)


@given(networks, block_prefixes, pools)
def test_shortfall_exactly_when_the_nodes_outnumber_the_blocks(network: IPv4Network, block: int, counts: list[tuple[str, int]]) -> None:
    short = pod_shortfall(network, block, counts)
    nodes = sum(count for _, count in counts)
    if nodes <= node_blocks(network, block):
        assert short is None
    else:
        assert short is not None
        assert short.nodes == nodes and short.blocks == node_blocks(network, block)
        assert short.needed_prefix < network.prefixlen or network.prefixlen > block  # the advice is a larger range
        assert node_blocks(IPv4Network((0, short.needed_prefix)), block) >= nodes  # that holds every node


def test_shortfall_of_the_worked_example() -> None:
    pools_ = [("system", 3), ("train", 32), ("serve", 5)]
    assert pod_shortfall(IPv4Network("100.64.0.0/20"), 24, pools_) == PodShortfall(blocks=16, nodes=40, needed_prefix=18)
    assert pod_shortfall(IPv4Network("100.64.0.0/18"), 24, pools_) is None


@given(networks)
def test_private_means_inside_rfc1918_or_rfc6598(network: IPv4Network) -> None:
    inside = [block for block in PRIVATE_BLOCKS if network.subnet_of(block)]
    assert is_private(network) == bool(inside)


@given(st.sampled_from(PRIVATE_BLOCKS), st.integers(0, 22), ADDRESSES)
def test_every_range_inside_a_private_block_is_private(block: IPv4Network, extra: int, address: int) -> None:
    prefix = min(32, block.prefixlen + extra)
    offset = address % block.num_addresses
    assert is_private(IPv4Network((int(block.network_address) + offset, prefix), strict=False))


@pytest.mark.parametrize("text", ["8.8.0.0/16", "127.0.0.0/16", "169.254.0.0/16", "192.0.2.0/24", "198.18.0.0/16",
                                  "10.0.0.0/7", "100.0.0.0/8", "172.0.0.0/11"])
def test_public_special_and_straddling_ranges_are_not_private(text: str) -> None:
    # Python's is_private calls the loopback, link-local and documentation ranges private; the spec does not.
    assert not is_private(IPv4Network(text))


@given(networks, st.lists(networks, max_size=5))
def test_overlapping_keeps_exactly_the_ranges_that_share_an_address(network: IPv4Network, others: list[IPv4Network]) -> None:
    hits = overlapping(network, others)
    assert hits == [o for o in others if o.overlaps(network)]
    for hit in hits:
        low, high = max(int(hit.network_address), int(network.network_address)), min(int(hit.broadcast_address), int(network.broadcast_address))
        assert low <= high
