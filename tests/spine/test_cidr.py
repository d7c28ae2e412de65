"""Property tests for the CIDR planner (pure logic, no Pulumi)."""

from __future__ import annotations

from ipaddress import IPv4Network

from hypothesis import given
from hypothesis import strategies as st

from components.planning.cidr import default_pod_cidr, default_service_cidr, plan_subnets

networks = st.builds(
    lambda base, prefix: IPv4Network((base << 8, prefix), strict=False),
    st.integers(min_value=(10 << 16), max_value=(10 << 16) + 0xFFFF),
    st.integers(min_value=16, max_value=22),
)
zones = st.integers(min_value=1, max_value=6)


@given(networks, zones)
def test_subnets_are_inside_the_network_and_disjoint(network: IPv4Network, count: int) -> None:
    plan = plan_subnets(network, count)
    subnets = plan.all_subnets()
    assert all(s.subnet_of(network) for s in subnets)
    for i, a in enumerate(subnets):
        for b in subnets[i + 1 :]:
            assert not a.overlaps(b), (a, b)


@given(networks, zones)
def test_one_subnet_of_each_kind_per_zone(network: IPv4Network, count: int) -> None:
    plan = plan_subnets(network, count)
    assert len(plan.private) == len(plan.public) == len(plan.endpoints) == count
    # node subnets are the largest: nodes need the addresses
    assert plan.private[0].num_addresses > plan.public[0].num_addresses
    assert all(s.prefixlen <= 28 for s in plan.all_subnets())  # AWS's smallest subnet is /28


@given(networks, st.integers(min_value=1, max_value=5))
def test_adding_a_zone_never_moves_existing_subnets(network: IPv4Network, count: int) -> None:
    before, after = plan_subnets(network, count), plan_subnets(network, count + 1)
    assert after.private[:count] == before.private
    assert after.public[:count] == before.public
    assert after.endpoints[:count] == before.endpoints
    assert after.services == before.services


@given(networks)
def test_default_ranges_never_overlap_rfc1918_tens(network: IPv4Network) -> None:
    pods, services = default_pod_cidr(network), default_service_cidr(network)
    assert pods.subnet_of(IPv4Network("100.64.0.0/10"))
    assert services.subnet_of(IPv4Network("172.16.0.0/12"))
    assert not pods.overlaps(network) and not services.overlaps(network)
    # stable: depends on the network alone
    assert default_pod_cidr(network) == pods


def test_too_small_network_is_refused_with_the_size_needed() -> None:
    try:
        plan_subnets(IPv4Network("10.0.0.0/24"), 3)
    except ValueError as err:
        assert "10.0.0.0/24" in str(err) and "/22" in str(err)
    else:
        raise AssertionError("a /24 cannot hold six zones of subnets")


AKS_RESERVED = [IPv4Network("172.30.0.0/16"), IPv4Network("172.31.0.0/16")]


@given(networks)
def test_the_aks_service_default_skips_reserved_ranges_and_moves_nothing_else(network: IPv4Network) -> None:
    derived, on_aks = default_service_cidr(network), default_service_cidr(network, avoid=AKS_RESERVED)
    assert not any(on_aks.overlaps(r) for r in AKS_RESERVED) and on_aks.subnet_of(IPv4Network("172.16.0.0/12"))
    # Only a reserved derivation moves (to the next free /16, wrapping): EKS and GKE ranges stay where they were.
    assert on_aks == derived or (derived in AKS_RESERVED and on_aks == IPv4Network("172.16.0.0/16"))
