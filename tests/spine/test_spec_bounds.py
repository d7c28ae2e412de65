"""Bounds and branches of the spec that only a mutation review found unpinned: each test fails if the check it names is
loosened by one or dropped (the value at the bound loads, the one past it gets the user's error)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import change as set_path
from helpers import full_platform_dict as valid
from helpers import AZURE_ONLY, platform_dict, spec_issues

from components.planning.ranges import NON_PUBLIC_BLOCKS
from components.spec import load_platform

AWS_REGION = "platform.clouds.aws.regions.us-east-1"
A = "clouds/aws/regions/us-east-1"
def test_a_network_smaller_than_a_22_is_refused_and_a_22_loads() -> None:
    # plan_subnets needs a /22 for 3 zones of subnets: a /23 would fail at preview with a bare ValueError and no path.
    assert spec_issues(set_path(valid(), f"{A}/network/cidr", "10.10.0.0/23")) == [(
        f"{AWS_REGION}.network.cidr", "network cidr 10.10.0.0/23 has prefix /23; allowed: /16 to /22 (room for 3 zones of subnets)")]
    spec = load_platform(set_path(valid(), f"{A}/network/cidr", "10.10.0.0/22"))
    assert str(spec.clouds.aws.regions["us-east-1"].network.cidr) == "10.10.0.0/22"


def test_a_system_pool_with_min_above_max_is_refused() -> None:
    # EKS, GKE and AKS refuse a scaling config with min > max at `pulumi up`.
    assert spec_issues(set_path(valid(), f"{A}/cluster/system_pool", {"min_nodes": 5, "max_nodes": 2})) == [
        (f"{AWS_REGION}.cluster.system_pool.max_nodes", "max_nodes (2) must be >= min_nodes (5)")]


def test_tiering_ages_may_not_be_equal() -> None:
    # Two lifecycle transitions on the same day: "must be greater than", not "at least".
    data = set_path(valid(), f"{A}/buckets/datasets/tiering", {"warm_after_days": 90, "cold_after_days": 90})
    assert spec_issues(data) == [(f"{AWS_REGION}.buckets.datasets.tiering.cold_after_days",
                              "cold_after_days (90) must be greater than warm_after_days (90)")]


QUALIFIED_NAME_RULE = ("is not a Kubernetes qualified name: an optional DNS-subdomain prefix (at most 253 characters) and '/', "
                       "then a name of at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")


def test_a_label_or_taint_key_name_of_64_characters_is_refused_and_63_loads() -> None:
    # Kubernetes (and the EKS, GKE and AKS node pool APIs) take a name part of at most 63 characters.
    long, fits = "a" * 64, "a" * 63
    assert spec_issues(set_path(valid(), f"{A}/gpu_pools/train/labels", {long: "x"})) == [
        (f"{AWS_REGION}.gpu_pools.train.labels", f"label key '{long}' {QUALIFIED_NAME_RULE}")]
    assert spec_issues(set_path(valid(), f"{A}/gpu_pools/train/taints", [{"key": long}])) == [
        (f"{AWS_REGION}.gpu_pools.train.taints[0].key", f"taint key '{long}' {QUALIFIED_NAME_RULE}")]
    data = set_path(set_path(valid(), f"{A}/gpu_pools/train/labels", {fits: "x"}), f"{A}/gpu_pools/train/taints", [{"key": fits}])
    pool = load_platform(data).clouds.aws.regions["us-east-1"].gpu_pools["train"]
    assert list(pool.labels) == [fits] and [taint.key for taint in pool.taints] == [fits]


def _not_public(cidr: str, overlaps: str) -> list[tuple[str, str]]:
    return [(f"{AWS_REGION}.cluster.authorized_cidrs[0]",
             f"{cidr} is not a public range: it overlaps {overlaps}, addresses no client reaches a public endpoint from "
             "(EKS refuses them); list your public egress ranges, or use api_access 'private' for networks that reach the "
             "cluster privately")]


def _at_public_endpoint(cidr: str) -> list[tuple[str, str]]:
    return spec_issues(set_path(valid(), f"{A}/cluster", {"api_access": "public_restricted", "authorized_cidrs": [cidr]}))


@pytest.mark.parametrize(("block", "what"), NON_PUBLIC_BLOCKS, ids=[str(b) for b, _ in NON_PUBLIC_BLOCKS])
def test_every_non_public_block_is_refused_at_a_public_endpoint(block: object, what: str) -> None:
    # EKS refuses reserved addresses in publicAccessCidrs ("The block cannot include reserved addresses").
    assert _at_public_endpoint(str(block)) == _not_public(str(block), f"{block} ({what})")


@pytest.mark.parametrize(("cidr", "overlaps"), [
    ("198.18.0.0/16", "198.18.0.0/15 (benchmarking, RFC 2544)"),
    ("0.1.0.0/16", "0.0.0.0/8 ('this network', RFC 1122)"),
    ("192.0.0.0/29", "192.0.0.0/24 (IETF protocol assignments, RFC 6890)"),
])
def test_a_range_inside_a_reserved_block_is_refused_at_a_public_endpoint(cidr: str, overlaps: str) -> None:
    # Spelt out so that dropping a row of NON_PUBLIC_BLOCKS is noticed (the parametrized test above follows the table).
    assert _at_public_endpoint(cidr) == _not_public(cidr, overlaps)


AKS_SPOT_TAINT = [{"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"}]


@pytest.mark.parametrize(("pool_path", "pool"), [
    (f"{A}/gpu_pools/train", {"accelerator": "l4", "capacity": "spot", "max_nodes": 2, "taints": AKS_SPOT_TAINT}),
    ("clouds/gcp/regions/us-central1/gpu_pools/serve", {"accelerator": "l4", "capacity": "spot", "max_nodes": 2, "taints": AKS_SPOT_TAINT}),
], ids=["aws", "gcp"])
def test_the_aks_spot_taint_is_an_ordinary_taint_on_other_clouds_spot_pools(pool_path: str, pool: dict[str, Any]) -> None:
    # Only AKS sets kubernetes.azure.com/scalesetpriority=spot:NoSchedule itself; elsewhere the key is the user's.
    spec = load_platform(set_path(valid(), pool_path, pool))
    region = spec.clouds.aws.regions["us-east-1"] if pool_path.startswith(A) else spec.clouds.gcp.regions["us-central1"]
    [name] = [n for n in region.gpu_pools if n in ("train", "serve")]
    assert [t.key for t in region.gpu_pools[name].taints] == ["kubernetes.azure.com/scalesetpriority"]


def test_the_aks_spot_taint_is_refused_on_an_azure_spot_pool() -> None:
    pool = {"accelerator": "a100-80gb", "accelerators_per_node": 1, "capacity": "spot", "max_nodes": 2, "taints": AKS_SPOT_TAINT}
    data = set_path(platform_dict(AZURE_ONLY), "clouds/azure/regions/eastus2/cluster", {})
    assert spec_issues(set_path(data, "clouds/azure/regions/eastus2/gpu_pools/serve", pool)) == [(
        "platform.clouds.azure.regions.eastus2.gpu_pools.serve.taints[0]",
        "taint kubernetes.azure.com/scalesetpriority with effect NoSchedule is the taint AKS sets on every spot pool "
        "(kubernetes.azure.com/scalesetpriority=spot:NoSchedule); a node takes one taint per key and effect: remove it, or "
        "use another key or effect")]


@pytest.mark.parametrize(("path", "value", "where", "message"), [
    (f"{A}/gpu_pools/train/capacity", "SPOT", f"{AWS_REGION}.gpu_pools.train.capacity",
     "Input should be 'on_demand', 'spot', 'reserved', 'capacity_block', 'flex_start' or 'queued' (got 'SPOT'); did you mean 'spot'?"),
    (f"{A}/network/nat", "Single", f"{AWS_REGION}.network.nat",
     "Input should be 'per_zone', 'single' or 'none' (got 'Single'); did you mean 'single'?"),
], ids=["capacity-upper-case", "nat-capitalised"])
def test_a_choice_in_another_case_gets_the_spelling_to_write(path: str, value: str, where: str, message: str) -> None:
    # difflib's ratio for a change of case alone is below its cutoff: the case-insensitive match gives the hint.
    assert spec_issues(set_path(valid(), path, value)) == [(where, message)]


def test_the_whole_internet_at_a_public_endpoint_gets_its_own_message() -> None:
    data = set_path(valid(), f"{A}/cluster", {"api_access": "public_restricted", "authorized_cidrs": ["0.0.0.0/0"]})
    assert spec_issues(data) == [(f"{AWS_REGION}.cluster.authorized_cidrs", "authorized_cidrs entry 0.0.0.0/0 opens the API "
                                  "server to the whole internet; list your egress ranges")]
