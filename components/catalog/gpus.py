"""GPU and AWS Neuron instance types per cloud, and the lookups the spec and the components use."""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass

from . import _data
from .errors import CLOUDS, CatalogError, allowed, check_cloud


@dataclass(frozen=True)
class GpuInstance:
    """One instance/machine/VM type with accelerators attached.

    Accelerator-level facts (vendor, per-accelerator memory, GCP accelerator type, MIG profiles)
    come from `data/accelerators.json`, so they are the same on every cloud.
    """

    cloud: str
    instance_type: str
    accelerator: str
    accelerator_count: int
    accelerator_memory_gib: int
    vendor: str
    vcpus: int
    memory_gib: int
    gcp_accelerator_type: str | None
    efa: bool
    mig_profiles: tuple[str, ...]
    source: str


@functools.cache
def _accelerators() -> dict[str, dict]:
    return {k: v for k, v in _data.load("accelerators").items() if not k.startswith("_")}


@functools.cache
def _rows() -> tuple[GpuInstance, ...]:
    accels = _accelerators()
    rows = []
    for raw in _data.load("gpus")["instances"]:
        acc = accels[raw["accelerator"]]
        rows.append(
            GpuInstance(
                cloud=raw["cloud"],
                instance_type=raw["instance_type"],
                accelerator=raw["accelerator"],
                accelerator_count=raw["accelerator_count"],
                accelerator_memory_gib=acc["memory_gib"],
                vendor=acc["vendor"],
                vcpus=raw["vcpus"],
                memory_gib=raw["memory_gib"],
                gcp_accelerator_type=acc["gcp_accelerator_type"] if raw["cloud"] == "gcp" else None,
                efa=raw.get("efa", False),
                mig_profiles=tuple(acc["mig_profiles"]),
                source=raw["source"],
            )
        )
    return tuple(rows)


@functools.cache
def _index() -> dict[tuple[str, str], GpuInstance]:
    return {(r.cloud, r.instance_type): r for r in _rows()}


def accelerator_names() -> list[str]:
    """The accelerator vocabulary (every model the catalog knows), sorted."""
    return sorted(_accelerators())


def instance_types(cloud: str | None = None) -> list[GpuInstance]:
    """All GPU/Neuron rows, or those of one cloud, in data-file order."""
    if cloud is None:
        return list(_rows())
    check_cloud(cloud)
    return [r for r in _rows() if r.cloud == cloud]


def find_instance(cloud: str, instance_type: str) -> GpuInstance | None:
    """The row of an exact instance type name on a cloud, or None when the catalog doesn't know it."""
    check_cloud(cloud)
    return _index().get((cloud, instance_type))


def accelerators_on(cloud: str) -> list[str]:
    """Accelerator models offered on a cloud, sorted."""
    return sorted({r.accelerator for r in instance_types(cloud)})


def clouds_offering(accelerator: str) -> list[str]:
    """The clouds with an instance type carrying `accelerator`, in CLOUDS order; empty for an unknown model."""
    return [cloud for cloud in CLOUDS if accelerator in accelerators_on(cloud)]


def _not_offered(accelerator: str, cloud: str, offered: list[str]) -> CatalogError:
    # Catalog names are lower-case; a name in another case ("L4") is the model of that name.
    same = [a for a in accelerator_names() if a.lower() == accelerator.strip().lower()]
    name = same[0] if same else accelerator
    elsewhere = [c for c in clouds_offering(name) if c != cloud]
    if name != accelerator:
        where = "" if name in offered or not elsewhere else f" it is offered on {', '.join(elsewhere)}"
        hint = f" (did you mean {name!r}?{where})"
    elif elsewhere:
        hint = f" (it is offered on {', '.join(elsewhere)})"
    else:
        # An unknown name gets the nearest models: "h100" -> h100-80gb, h100-mega-80gb (catalog names carry the memory).
        key = accelerator.lower()
        close = [a for a in offered if a.startswith(f"{key}-")] or difflib.get_close_matches(key, offered, n=2)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    return CatalogError(f"accelerator '{accelerator}' is not offered on {cloud}{hint}; allowed: {allowed(offered)}",
                        argument="accelerator")


def _preference(row: GpuInstance) -> tuple[int, int, str]:
    # The smallest host that carries the accelerators: fewest vCPUs, then least memory, then name
    # (so the choice is deterministic). E.g. 1x l4 on gcp -> g2-standard-4, 1x a10g on aws -> g5.xlarge.
    return (row.vcpus, row.memory_gib, row.instance_type)


def resolve_instance(cloud: str, accelerator: str, count: int) -> GpuInstance:
    """The instance type with `count` x `accelerator` on `cloud`.

    Several types may match (g5.xlarge ... g5.16xlarge all have 1x a10g): the one with the fewest
    vCPUs, then least host memory, wins. Pass an explicit instance type to get a bigger host.
    """
    offered = accelerators_on(cloud)
    if accelerator not in offered:
        raise _not_offered(accelerator, cloud, offered)
    matching = [r for r in instance_types(cloud) if r.accelerator == accelerator]
    exact = [r for r in matching if r.accelerator_count == count]
    if not exact:
        counts = sorted({r.accelerator_count for r in matching})
        raise CatalogError(
            f"no {cloud} instance type has {count}x {accelerator}; allowed counts: {allowed(counts)}", argument="count"
        )
    return min(exact, key=_preference)


def spot_alternatives(instance: GpuInstance) -> list[GpuInstance]:
    """Other types on the same cloud with the same accelerator model and count, vCPUs and memory (spot
    diversification within one node group).

    The Cluster Autoscaler sizes a group by one type and needs the others to match it: "the instance types should have
    the same amount of RAM and number of CPU cores, since this is fundamental to CA's scaling calculations"
    (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md, mixed instances policy). A bigger host
    would sit half used, a smaller one would not fit the pods it was started for.

    Excludes `instance` itself; sorted by the same preference as `resolve_instance`; often empty.
    """
    return sorted(
        (
            r
            for r in instance_types(instance.cloud)
            if r.accelerator == instance.accelerator
            and r.accelerator_count == instance.accelerator_count
            and (r.vcpus, r.memory_gib) == (instance.vcpus, instance.memory_gib)
            and r.instance_type != instance.instance_type
        ),
        key=_preference,
    )
