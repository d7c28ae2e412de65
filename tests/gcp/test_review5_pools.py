"""GKE pools on reserved capacity upgrade without a surge node (it would have to come from the reservation too);
flex-start TPU slices only of the generations and GKE versions GKE provisions them on; GPU pools whose first nodes
(initial_node_count is per zone) would exceed max_nodes are refused."""

from __future__ import annotations

import math
from typing import Any

import pytest
from gcp.support import PROJECT, by_name, gcp_platform, plan_platform
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.runtime import PlanResult
from components import catalog
from components.gcp.gpu_pool import upgrade_settings
from components.gcp.tpu import tpu_node_pool_settings
from components.spec import CapacityType, SpecError, TpuSliceSpec, load_platform

U = "platform.clouds.gcp.regions.us-central1"
NO_SURGE = {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}


def region(**parts: Any) -> dict[str, Any]:
    return {"project": PROJECT, "zones": {"us-central1": ["us-central1-a", "us-central1-b", "us-central1-c"]},
            "regions": {"us-central1": {"network": {"cidr": "10.20.0.0/16"}, "cluster": {}, **parts}}}


def problems(gcp: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(SpecError) as caught:
        load_platform(gcp_platform(gcp))
    return dict(caught.value.issues)


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return plan_platform(gcp_platform(region(
        gpu_pools={"train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "reserved",
                             "reservation": "a3-res", "max_nodes": 4},
                   "serve": {"accelerator": "l4", "max_nodes": 4},
                   "cheap": {"accelerator": "l4", "capacity": "spot", "max_nodes": 4}},
        tpu_slices={"pretrain": {"generation": "v5p", "topology": "2x4x4", "slices": 2, "capacity": "reserved",
                                 "reservation": "v5p-res"},
                    "small": {"generation": "v5e", "topology": "2x2", "capacity": "reserved", "reservation": "v5e-res"},
                    "spare": {"generation": "v6e", "topology": "2x2", "capacity": "spot"}})))


def test_reserved_gpu_pools_and_tpu_slices_upgrade_one_node_at_a_time_without_a_surge_node(plan: PlanResult) -> None:
    reserved = ["test-us-central1-train-pool", "test-us-central1-pretrain-0", "test-us-central1-pretrain-1",
                "test-us-central1-small-0"]
    for name in reserved:  # multi-host (pretrain) and single-host (small) slices alike
        assert by_name(plan, name)["upgradeSettings"] == NO_SURGE, name
    for name in ("test-us-central1-serve-pool", "test-us-central1-cheap-pool", "test-us-central1-spare-0"):
        assert "upgradeSettings" not in by_name(plan, name), name  # GKE's default surge upgrade


@given(st.sampled_from(list(CapacityType)))
def test_only_reserved_capacity_changes_the_upgrade(capacity: CapacityType) -> None:
    settings = upgrade_settings(capacity)
    assert (settings is not None) == (capacity is CapacityType.RESERVED)
    if settings is not None:
        assert (settings.strategy, settings.max_surge, settings.max_unavailable) == ("SURGE", 0, 1)


@given(st.sampled_from(["on_demand", "spot", "reserved", "flex_start", "queued"]),
       st.sampled_from([("v5p", "2x4x4"), ("v5e", "2x2"), ("v6e", "4x4"), ("v4", "2x2x1")]))
def test_tpu_slices_take_the_upgrade_settings_of_their_capacity(capacity: str, shape: tuple[str, str]) -> None:
    generation, topology = shape
    spec = TpuSliceSpec(generation=generation, topology=topology, capacity=capacity,
                        reservation="res" if capacity == "reserved" else None)
    settings = tpu_node_pool_settings(spec, catalog.resolve_tpu_slice(generation, topology))
    assert ("upgrade_settings" in settings) == (capacity == "reserved")


# --- flex-start TPU slices --------------------------------------------------------------------------------------


def test_flex_start_tpu_v4_is_refused_with_the_generations_gke_provisions() -> None:
    found = problems(region(tpu_slices={"pod": {"generation": "v4", "topology": "2x2x2", "capacity": "flex_start"}}))
    assert found == {f"{U}.tpu_slices.pod.capacity": (
        "capacity 'flex_start' is not available for TPU v4: GKE provisions flex-start TPUs of v5e, v5p or v6e only; allowed "
        "for v4: capacity on_demand, spot or reserved (or generation v5e, v5p or v6e with flex_start)")}


@pytest.mark.parametrize(("generation", "topology"), [("v5e", "2x2"), ("v5p", "2x2x1"), ("v6e", "2x4"), ("tpu-v6e", "1x1")])
def test_flex_start_tpu_of_a_supported_generation_loads(generation: str, topology: str) -> None:
    load_platform(gcp_platform(region(tpu_slices={"pod": {"generation": generation, "topology": topology,
                                                          "capacity": "flex_start"}})))


def test_flex_start_tpu_needs_gke_1_33_when_the_cluster_pins_its_version() -> None:
    gcp = region(tpu_slices={"pod": {"generation": "v6e", "topology": "2x2", "capacity": "flex_start"}})
    gcp["regions"]["us-central1"]["cluster"] = {"kubernetes_version": "1.32"}
    assert problems(gcp) == {f"{U}.tpu_slices.pod.capacity": (
        "capacity 'flex_start' on TPUs needs GKE 1.33 or later (1.33.0-gke.1712000), and the cluster's kubernetes_version "
        "is 1.32: set cluster.kubernetes_version to 1.33 or later, or leave it unset for the release channel's")}
    gcp["regions"]["us-central1"]["cluster"] = {"kubernetes_version": "1.33"}
    load_platform(gcp_platform(gcp))


# --- GPU pools whose first nodes exceed max_nodes ---------------------------------------------------------------


def test_a_pool_starting_with_a_node_in_each_zone_above_its_maximum_is_refused() -> None:
    found = problems(region(gpu_pools={"mig": {"accelerator": "a100-80gb", "min_nodes": 1, "max_nodes": 2}}))
    assert found == {f"{U}.gpu_pools.mig.max_nodes": (
        "got 2; GKE starts the pool with the same number of nodes in each of the network's zones (the pool has no zones "
        "of its own), 1 in each of 3 for min_nodes 1, 3 in all: set max_nodes to at least 3, or min_nodes to 0 or a "
        "multiple of 3")}


@pytest.mark.parametrize("pool", [
    {"min_nodes": 0, "max_nodes": 1},  # starts empty; the total limits take fewer nodes than zones
    {"min_nodes": 1, "max_nodes": 2, "zones": ["us-central1-b"]},
    {"min_nodes": 3, "max_nodes": 3},
    {"capacity": "flex_start", "max_nodes": 1},
])
def test_pools_whose_first_nodes_fit_load(pool: dict[str, Any]) -> None:
    load_platform(gcp_platform(region(gpu_pools={"p": {"accelerator": "l4", **pool}})))


@given(st.integers(0, 12), st.integers(1, 12), st.integers(1, 3))
def test_refused_exactly_when_the_per_zone_start_exceeds_the_total_maximum(low: int, high: int, zones: int) -> None:
    low, high = min(low, high), max(low, high)
    names = ["us-central1-a", "us-central1-b", "us-central1-c"][:zones]
    gcp = region(gpu_pools={"p": {"accelerator": "l4", "min_nodes": low, "max_nodes": high, "zones": names}})
    first = math.ceil(low / zones) * zones
    if first > high:
        assert f"{U}.gpu_pools.p.max_nodes" in problems(gcp)
    else:
        load_platform(gcp_platform(gcp))
