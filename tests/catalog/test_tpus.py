"""TPU generations and slice planning: documented examples, integrity and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.catalog import CatalogError

GENERATIONS = catalog.tpu_generations()
VALID = [(g.name, t) for g in GENERATIONS for t in g.topologies]


@pytest.mark.parametrize(
    ("generation", "topology", "machine_type", "nodes", "tpu_type"),
    [
        ("tpu-v5e", "2x4", "ct5lp-hightpu-4t", 2, "v5litepod-8"),  # GKE docs: 2x4 on 4t VMs is two nodes
        ("v5e", "1x1", "ct5lp-hightpu-1t", 1, "v5litepod-1"),
        ("v5e", "2x2", "ct5lp-hightpu-4t", 1, "v5litepod-4"),
        ("v5e", "16x16", "ct5lp-hightpu-4t", 64, "v5litepod-256"),  # GKE docs: 16x16 -> 64 nodes
        ("v5p", "2x2x1", "ct5p-hightpu-4t", 1, "v5p-8"),  # v5p names count TensorCores
        ("v5p", "2x2x2", "ct5p-hightpu-4t", 2, "v5p-16"),
        ("v5p", "2x2x4", "ct5p-hightpu-4t", 4, "v5p-32"),  # the v5p page's own example, not in its shape table
        ("v6e", "4x4", "ct6e-standard-4t", 4, "v6e-16"),
        ("tpu-v4", "2x2x1", "ct4p-hightpu-4t", 1, "v4-8"),  # v4-8 is 4 chips
    ],
)
def test_resolve_tpu_slice_examples(generation: str, topology: str, machine_type: str, nodes: int, tpu_type: str) -> None:
    plan = catalog.resolve_tpu_slice(generation, topology)
    assert (plan.machine_type, plan.node_count, plan.tpu_vm_accelerator_type) == (machine_type, nodes, tpu_type)
    assert plan.multi_host == (nodes > 1)


def test_explicit_8_chip_vm_makes_2x4_single_host() -> None:
    plan = catalog.resolve_tpu_slice("v6e", "2x4", chips_per_vm=8)
    assert (plan.machine_type, plan.node_count, plan.multi_host) == ("ct6e-standard-8t", 1, False)


def test_chips_per_vm_not_offered_lists_the_allowed_sizes() -> None:
    with pytest.raises(CatalogError, match=r"chips_per_vm 8 is not possible for a 4x4 tpu-v5e slice \(16 chips\); allowed: 4 \(ct5lp-hightpu-4t\)"):
        catalog.resolve_tpu_slice("v5e", "4x4", chips_per_vm=8)
    with pytest.raises(CatalogError, match=r"allowed: 4 \(ct5p-hightpu-4t\)"):
        catalog.resolve_tpu_slice("v5p", "2x2x2", chips_per_vm=1)


def test_invalid_topology_lists_the_valid_ones() -> None:
    with pytest.raises(CatalogError) as err:
        catalog.resolve_tpu_slice("tpu-v5e", "3x3")
    assert str(err.value) == "topology '3x3' is not valid for tpu-v5e; valid: 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"


def test_2d_topology_on_a_3d_generation_is_rejected() -> None:
    with pytest.raises(CatalogError, match=r"not valid for tpu-v5p"):
        catalog.resolve_tpu_slice("v5p", "2x4")


def test_unknown_generation_lists_generations() -> None:
    with pytest.raises(CatalogError, match=r"unknown TPU generation 'v9'; allowed: v4, v5e, v5p, v6e"):
        catalog.tpu_generation("v9")


def test_generation_accepts_both_names() -> None:
    assert catalog.tpu_generation("v5e") is catalog.tpu_generation("tpu-v5e")
    assert catalog.tpu_generation("v5e").gke_accelerator == "tpu-v5-lite-podslice"


@pytest.mark.parametrize("gen", GENERATIONS, ids=lambda g: g.name)
def test_generation_integrity(gen: catalog.TpuGeneration) -> None:
    assert gen.source.startswith("https://")
    assert gen.accelerator == f"tpu-{gen.name}"
    assert gen.multi_host_chips_per_vm in gen.machine_types
    for chips, machine_type in gen.machine_types.items():
        assert machine_type.endswith(f"-{chips}t")
    assert len(set(gen.topologies)) == len(gen.topologies)
    for topology in gen.topologies:
        assert len(topology.split("x")) == gen.topology_dims


# --- properties -------------------------------------------------------------------------------


@given(st.sampled_from(VALID))
def test_every_valid_topology_plans_consistently(case: tuple[str, str]) -> None:
    generation, topology = case
    plan = catalog.resolve_tpu_slice(generation, topology)
    gen = catalog.tpu_generation(generation)
    assert plan.chips == math.prod(int(d) for d in topology.split("x"))
    assert plan.node_count * plan.chips_per_vm == plan.chips
    assert plan.machine_type == gen.machine_types[plan.chips_per_vm]
    assert plan.gke_accelerator == gen.gke_accelerator
    count = int(plan.tpu_vm_accelerator_type.rsplit("-", 1)[1])
    assert count == plan.chips * gen.cores_per_chip


@given(st.sampled_from(VALID), st.integers(min_value=1, max_value=16))
def test_explicit_chips_per_vm_is_honoured_or_rejected(case: tuple[str, str], chips_per_vm: int) -> None:
    generation, topology = case
    gen = catalog.tpu_generation(generation)
    chips = math.prod(int(d) for d in topology.split("x"))
    # GKE: one VM holding the whole slice, or the 4-chip multi-host machine type dividing it.
    whole = chips_per_vm == chips and chips_per_vm in gen.machine_types
    multi_host = chips_per_vm == 4 and chips > 4 and chips % 4 == 0
    if whole or multi_host:
        plan = catalog.resolve_tpu_slice(generation, topology, chips_per_vm=chips_per_vm)
        assert (plan.chips_per_vm, plan.node_count) == (chips_per_vm, chips // chips_per_vm)
    else:
        with pytest.raises(CatalogError, match=f"chips_per_vm {chips_per_vm} is not possible"):
            catalog.resolve_tpu_slice(generation, topology, chips_per_vm=chips_per_vm)


@given(
    st.sampled_from([g.name for g in GENERATIONS]),
    st.lists(st.integers(min_value=1, max_value=40), min_size=2, max_size=3),
)
def test_random_invalid_topologies_are_rejected_with_the_valid_ones(generation: str, dims: list[int]) -> None:
    topology = "x".join(str(d) for d in dims)
    gen = catalog.tpu_generation(generation)
    if topology in gen.topologies:
        return
    with pytest.raises(CatalogError) as err:
        catalog.resolve_tpu_slice(generation, topology)
    assert f"'{topology}' is not valid for {gen.accelerator}" in str(err.value)
    assert str(err.value).endswith("valid: " + ", ".join(gen.topologies))
