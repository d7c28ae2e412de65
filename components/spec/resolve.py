"""Resolve spec entries against the accelerator catalog (pure; shared by the checks and the cloud components)."""

from __future__ import annotations

from components import catalog

from .common import Cloud
from .compute import GpuPoolSpec, Taint, TpuSliceSpec
from .storage import LustreSpec


_SPEC_FIELDS = {
    # catalog argument -> spec field that holds its value
    "count": "accelerators_per_node",
}


def spec_field(err: catalog.CatalogError, default: str) -> str:
    """The spec field a catalog error is about: the catalog argument it names (renamed where the spec calls it
    differently, e.g. `count` is `accelerators_per_node`), else `default`."""
    return _SPEC_FIELDS.get(err.argument, err.argument) if err.argument else default


def resolve_gpu_pool(cloud: Cloud, pool: GpuPoolSpec) -> catalog.GpuInstance:
    """The catalog row of a pool's instance type. Raises `catalog.CatalogError` with the allowed values; its
    `argument` is the pool field holding the refused value (see `spec_field`)."""
    if pool.instance_type is not None:
        row = catalog.find_instance(cloud.value, pool.instance_type)
        if row is None:
            known = ", ".join(r.instance_type for r in catalog.instance_types(cloud.value))
            raise catalog.CatalogError(f"instance type '{pool.instance_type}' is not in the {cloud.value} catalog; known: {known}",
                                       argument="instance_type")
        if pool.accelerator is not None and row.accelerator != pool.accelerator:
            raise catalog.CatalogError(
                f"instance type '{pool.instance_type}' carries {row.accelerator}, not '{pool.accelerator}'; drop one of the two",
                argument="accelerator",
            )
        if pool.accelerators_per_node is not None and row.accelerator_count != pool.accelerators_per_node:
            raise catalog.CatalogError(
                f"instance type '{pool.instance_type}' has {row.accelerator_count} accelerators per node, not {pool.accelerators_per_node}",
                argument="accelerators_per_node",
            )
        return row
    assert pool.accelerator is not None  # the model guarantees one of the two
    _check_not_tpu(cloud, pool.accelerator)
    if pool.accelerators_per_node is None:
        rows = sorted(
            (r for r in catalog.instance_types(cloud.value) if r.accelerator == pool.accelerator),
            key=lambda r: (r.accelerator_count, r.vcpus),
        )
        count = rows[0].accelerator_count if rows else 1
    else:
        count = pool.accelerators_per_node
    return catalog.resolve_instance(cloud.value, pool.accelerator, count)


def _check_not_tpu(cloud: Cloud, accelerator: str) -> None:
    """A TPU named as a GPU pool's accelerator is refused with where TPUs go: `tpu_slices`, on GCP only."""
    try:
        tpu = catalog.tpu_generation(accelerator)  # by short name (v5e) or accelerator name (tpu-v5e)
    except catalog.CatalogError:
        return  # not a TPU: the catalog's own check names where the model is offered
    raise catalog.CatalogError(
        f"'{accelerator}' is a TPU, not a GPU: TPU slices are GCP-only and are declared under the region's "
        f"tpu_slices (for example `{{generation: {tpu.name}, topology: {tpu.topologies[0]}}}`), not gpu_pools; "
        f"GPU models on {cloud.value}: {', '.join(catalog.accelerators_on(cloud.value))}", argument="accelerator")


def resolve_tpu(slice_: TpuSliceSpec) -> catalog.TpuSlicePlan:
    return catalog.resolve_tpu_slice(slice_.generation, slice_.topology)


def resolve_lustre(cloud: Cloud, fs: LustreSpec) -> catalog.LustreTier:
    return catalog.resolve_lustre(cloud.value, fs.deployment.value, fs.size_gib, fs.throughput_mbps_per_tib)


NODE_LABEL_PREFIX = "ai-infra"
"""Node labels every cloud puts on accelerator pools; Kueue flavors and dashboards select on them."""


def accelerator_node_labels(pool_name: str, pool: GpuPoolSpec, row: catalog.GpuInstance) -> dict[str, str]:
    """The pool's own labels plus pool name, accelerator model, count and capacity type (these win on conflicts)."""
    return {
        **pool.labels,
        f"{NODE_LABEL_PREFIX}/pool": pool_name,
        f"{NODE_LABEL_PREFIX}/accelerator": row.accelerator,
        f"{NODE_LABEL_PREFIX}/accelerator-count": str(row.accelerator_count),
        f"{NODE_LABEL_PREFIX}/capacity": pool.capacity.value,
    }


def accelerator_taint(row: catalog.GpuInstance) -> tuple[str, str, str]:
    """(key, value, effect) of the taint that keeps non-accelerator pods off the pool."""
    if row.vendor == "aws-neuron":
        return ("aws.amazon.com/neuron", "true", "NoSchedule")
    return ("nvidia.com/gpu", "true", "NoSchedule")


AKS_SPOT_TAINT = Taint(key="kubernetes.azure.com/scalesetpriority", value="spot", effect="NoSchedule")
"""The taint AKS puts on every spot pool (learn.microsoft.com/azure/aks/spot-node-pool): the Azure GPU pool declares
it, the Kubernetes layer tolerates it, and the spec checks refuse a pool taint that clashes with it."""
