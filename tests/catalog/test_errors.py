"""Catalog errors name the argument whose value was refused, so the spec can report the config field that holds it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from components import catalog
from components.catalog import CatalogError
from components.catalog.tpus import topology_chips


@pytest.mark.parametrize(
    ("call", "argument", "fragment"),
    [
        (lambda: catalog.resolve_lustre("aws", "scratch", 1000, None), "size_gib", "SCRATCH_2 capacity"),
        (lambda: catalog.resolve_lustre("aws", "persistent", 1000, 250), "size_gib", "got 1000 GiB"),
        (lambda: catalog.resolve_lustre("aws", "persistent", 2400, 300), "throughput_mbps_per_tib", "throughput 300"),
        (lambda: catalog.resolve_lustre("gcp", "scratch", 9000, None), "deployment", "scratch Lustre"),
        (lambda: catalog.resolve_tpu_slice("v7", "2x4"), "generation", "unknown TPU generation 'v7'"),
        (lambda: catalog.resolve_tpu_slice("v5e", "3x3"), "topology", "topology '3x3'"),
        (lambda: catalog.resolve_tpu_slice("v5e", "4x4", chips_per_vm=8), "chips_per_vm", "chips_per_vm 8"),
        (lambda: topology_chips("2by4"), "topology", "malformed"),
        (lambda: catalog.resolve_instance("aws", "h100-80gb", 3), "count", "3x h100-80gb"),
        (lambda: catalog.resolve_instance("aws", "tpu-v5e", 1), "accelerator", "'tpu-v5e'"),
        (lambda: catalog.instance_types("oci"), "cloud", "unknown cloud 'oci'"),
    ],
    ids=["lustre-scratch-size", "lustre-size", "lustre-throughput", "lustre-deployment", "tpu-generation", "tpu-topology",
         "tpu-chips-per-vm", "tpu-topology-malformed", "gpu-count", "gpu-accelerator", "cloud"],
)
def test_error_names_the_refused_argument(call: Callable[[], object], argument: str, fragment: str) -> None:
    with pytest.raises(CatalogError) as err:
        call()
    assert err.value.argument == argument
    assert fragment in str(err.value)


def test_argument_is_optional() -> None:
    assert CatalogError("free text").argument is None
    assert str(CatalogError("free text", argument="x")) == "free text"
