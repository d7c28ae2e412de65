"""Flat, JSON-serialisable rows of the whole accelerator catalog (for `aiinfra catalog --json`)."""

from __future__ import annotations

from dataclasses import asdict

from .gpus import instance_types
from .tpus import tpu_generations


def catalog_rows() -> list[dict]:
    """One dict per GPU/Neuron instance type and per TPU machine type.

    Every row has cloud, instance_type, accelerator, accelerator_count, accelerator_memory_gib,
    vendor, vcpus, memory_gib and source. TPU rows add gke_accelerator and topologies; their
    vcpus and memory_gib are None (not recorded in the catalog).
    """
    rows: list[dict] = []
    for gpu in instance_types():
        row = asdict(gpu)
        row["mig_profiles"] = list(gpu.mig_profiles)
        rows.append(row)
    for gen in tpu_generations():
        for chips, machine_type in sorted(gen.machine_types.items()):
            rows.append(
                {
                    "cloud": "gcp",
                    "instance_type": machine_type,
                    "accelerator": gen.accelerator,
                    "accelerator_count": chips,
                    "accelerator_memory_gib": gen.hbm_gib_per_chip,
                    "vendor": "google",
                    "vcpus": None,
                    "memory_gib": None,
                    "gke_accelerator": gen.gke_accelerator,
                    "topologies": list(gen.topologies),
                    "source": gen.source,
                }
            )
    return rows
