"""catalog_rows(): the flat view behind `aiinfra catalog --json`."""

from __future__ import annotations

import json

from components import catalog

REQUIRED = {"cloud", "instance_type", "accelerator", "accelerator_count", "accelerator_memory_gib", "vendor", "vcpus", "memory_gib", "source"}


def test_rows_cover_every_gpu_and_tpu_machine_type_and_serialise() -> None:
    rows = catalog.catalog_rows()
    json.dumps(rows)
    names = {(r["cloud"], r["instance_type"]) for r in rows}
    assert {(g.cloud, g.instance_type) for g in catalog.instance_types()} <= names
    tpu_machine_types = {m for g in catalog.tpu_generations() for m in g.machine_types.values()}
    assert {("gcp", m) for m in tpu_machine_types} <= names
    assert len(rows) == len(names)  # no duplicates
    for row in rows:
        assert REQUIRED <= row.keys()


def test_tpu_rows_carry_label_and_topologies() -> None:
    row = next(r for r in catalog.catalog_rows() if r["instance_type"] == "ct5lp-hightpu-4t")
    assert row["gke_accelerator"] == "tpu-v5-lite-podslice"
    assert row["accelerator"] == "tpu-v5e" and row["accelerator_count"] == 4
    assert "2x4" in row["topologies"]
