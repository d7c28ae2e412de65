"""Cloud TPU generations on GCP and how a slice topology maps to GKE machine types and node counts."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from . import _data
from .errors import CatalogError, allowed

_TOPOLOGY = re.compile(r"^[1-9][0-9]*(x[1-9][0-9]*){1,2}$")


@dataclass(frozen=True)
class TpuGeneration:
    """One TPU generation: its GKE label, machine types and the slice shapes it offers."""

    name: str
    accelerator: str
    gke_accelerator: str
    machine_types: dict[int, str]
    topology_dims: int
    topologies: tuple[str, ...]
    hbm_gib_per_chip: int
    tpu_vm_accelerator_prefix: str
    cores_per_chip: int
    source: str
    multi_host_chips_per_vm: int = 4
    """Chips per VM of the machine type GKE uses for multi-host slices (4 for every generation here)."""


@dataclass(frozen=True)
class TpuSlicePlan:
    """A resolved slice: which machine type, how many nodes, and the Cloud TPU API name."""

    generation: str
    topology: str
    chips: int
    chips_per_vm: int
    machine_type: str
    node_count: int
    multi_host: bool
    gke_accelerator: str
    tpu_vm_accelerator_type: str


@functools.cache
def _generations() -> tuple[TpuGeneration, ...]:
    return tuple(
        TpuGeneration(
            name=g["name"],
            accelerator=g["accelerator"],
            gke_accelerator=g["gke_accelerator"],
            machine_types={int(k): v for k, v in g["machine_types"].items()},
            topology_dims=g["topology_dims"],
            topologies=tuple(g["topologies"]),
            hbm_gib_per_chip=g["hbm_gib_per_chip"],
            tpu_vm_accelerator_prefix=g["tpu_vm_accelerator_prefix"],
            cores_per_chip=g["cores_per_chip"],
            source=g["source"],
            multi_host_chips_per_vm=g["multi_host_chips_per_vm"],
        )
        for g in _data.load("tpus")["generations"]
    )


def tpu_generations() -> list[TpuGeneration]:
    """All TPU generations in the catalog, oldest first."""
    return list(_generations())


def tpu_generation(name: str) -> TpuGeneration:
    """A generation by short name ("v5e") or accelerator name ("tpu-v5e")."""
    for gen in _generations():
        if name in (gen.name, gen.accelerator):
            return gen
    names = [g.name for g in _generations()]
    raise CatalogError(f"unknown TPU generation '{name}'; allowed: {allowed(names)} (or with the tpu- prefix)", argument="generation")


def topology_chips(topology: str) -> int:
    """Number of chips in a topology string such as "2x4" or "2x2x2"."""
    if not _TOPOLOGY.match(topology):
        raise CatalogError(f"topology '{topology}' is malformed; expected AxB or AxBxC with positive integers, e.g. 2x4 or 2x2x2", argument="topology")
    return math.prod(int(d) for d in topology.split("x"))


def allowed_chips_per_vm(gen: TpuGeneration, chips: int) -> list[int]:
    """VM sizes GKE accepts for a slice of `chips` chips.

    A single VM holding the whole slice (when a machine type with exactly that many chips exists),
    or the multi-host machine type when it divides the slice. Source: GKE "Plan TPUs in GKE"
    tables, where ct5lp-hightpu-8t / ct6e-standard-8t appear only for single-host 2x4 slices and
    every multi-host slice uses the 4-chip machine type.
    """
    sizes = {chips} & set(gen.machine_types)
    multi = gen.multi_host_chips_per_vm
    if chips > multi and chips % multi == 0:
        sizes.add(multi)
    return sorted(sizes)


def _default_chips_per_vm(gen: TpuGeneration, chips: int) -> int:
    # GKE rule: slices smaller than the multi-host VM (1x1) and slices that fill it exactly (2x2,
    # 2x2x1) are single-host; every bigger slice, 2x4 included, is built from 4-chip VMs (2x4 on
    # v5e -> 2 nodes of ct5lp-hightpu-4t). Pass chips_per_vm=8 to get one ct5lp-hightpu-8t instead.
    multi = gen.multi_host_chips_per_vm
    if chips <= multi and chips in gen.machine_types:
        return chips
    return multi


def resolve_tpu_slice(generation: str, topology: str, chips_per_vm: int | None = None) -> TpuSlicePlan:
    """Machine type and node count of a slice, e.g. ("tpu-v5e", "2x4") -> 2 nodes of ct5lp-hightpu-4t.

    Default `chips_per_vm`: the single VM for slices of up to 4 chips, else the 4-chip multi-host
    machine type (see `_default_chips_per_vm`). The Cloud TPU API type counts TensorCores
    (chips x cores_per_chip): v5p-8 is 4 chips, v5litepod-8 is 8 chips.
    """
    gen = tpu_generation(generation)
    if topology not in gen.topologies:
        raise CatalogError(
            f"topology '{topology}' is not valid for {gen.accelerator}; valid: {allowed(gen.topologies)}", argument="topology"
        )
    chips = topology_chips(topology)
    options = allowed_chips_per_vm(gen, chips)
    if chips_per_vm is None:
        chips_per_vm = _default_chips_per_vm(gen, chips)
    elif chips_per_vm not in options:
        offered = allowed(f"{n} ({gen.machine_types[n]})" for n in options)
        raise CatalogError(
            f"chips_per_vm {chips_per_vm} is not possible for a {topology} {gen.accelerator} slice ({chips} chips); allowed: {offered}", argument="chips_per_vm"
        )
    node_count = chips // chips_per_vm
    return TpuSlicePlan(
        generation=gen.name,
        topology=topology,
        chips=chips,
        chips_per_vm=chips_per_vm,
        machine_type=gen.machine_types[chips_per_vm],
        node_count=node_count,
        multi_host=node_count > 1,
        gke_accelerator=gen.gke_accelerator,
        tpu_vm_accelerator_type=f"{gen.tpu_vm_accelerator_prefix}-{chips * gen.cores_per_chip}",
    )
