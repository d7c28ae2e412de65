"""Managed Lustre tiers per cloud and their capacity rules."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import _data
from .errors import CatalogError, allowed, check_cloud


@dataclass(frozen=True)
class LustreTier:
    """One deployment/throughput tier of a cloud's managed Lustre.

    Valid sizes: `min_gib`, and every multiple of `step_gib` from `min_gib` up to `max_gib`.
    AWS SSD tiers have min 1200 and step 2400, so 1200, 2400, 4800, 7200 ... GiB.
    GCP tiers switch to a coarser step above a threshold: sizes above `large_step_above_gib`
    must be multiples of `large_step_gib` (e.g. 1000 MB/s/TiB: 9,000 GiB steps up to
    1,530,000 GiB, then 72,000 GiB steps). The threshold also caps growth: an instance created
    at or below it can only be increased up to it (GCP Managed Lustre "Increase capacity",
    limitations), and no capacity can be decreased. The catalog checks a size as a creation size:
    it cannot know what an existing instance was created with.
    """

    cloud: str
    deployment: str
    service_name: str
    throughput_mbps_per_tib: int
    min_gib: int
    step_gib: int
    max_gib: int | None
    source: str
    large_step_above_gib: int | None = None
    large_step_gib: int | None = None
    product: str = ""
    """Human name of the service for messages, e.g. "AWS FSx for Lustre"."""
    default: bool = False
    """This tier is used when the throughput is not given."""


@functools.cache
def _tiers() -> tuple[LustreTier, ...]:
    data = _data.load("lustre")
    return tuple(
        LustreTier(product=data["products"][t["cloud"]], **t)
        for t in data["tiers"]
    )


def lustre_tiers(cloud: str) -> list[LustreTier]:
    """The Lustre tiers a cloud offers, in data-file order."""
    check_cloud(cloud)
    return [t for t in _tiers() if t.cloud == cloud]


def is_valid_lustre_size(tier: LustreTier, size_gib: int) -> bool:
    """True when `size_gib` is a capacity the tier accepts at creation."""
    if size_gib < tier.min_gib or (tier.max_gib is not None and size_gib > tier.max_gib):
        return False
    if size_gib != tier.min_gib and size_gib % tier.step_gib:
        return False
    if tier.large_step_above_gib is not None and size_gib > tier.large_step_above_gib:
        assert tier.large_step_gib is not None
        return size_gib % tier.large_step_gib == 0
    return True


def size_rule(tier: LustreTier) -> str:
    """The tier's size rule in words, for error messages and `aiinfra catalog`."""
    if tier.min_gib != tier.step_gib:
        rule = f"{tier.min_gib} GiB, {tier.step_gib} GiB or a multiple of {tier.step_gib} GiB"
    else:
        rule = f"a multiple of {tier.step_gib} GiB from {tier.min_gib} GiB"
    if tier.large_step_above_gib is not None:
        rule += (f" (a multiple of {tier.large_step_gib} GiB above {tier.large_step_above_gib} GiB; an instance created "
                 f"at or below {tier.large_step_above_gib} GiB can grow only up to it)")
    if tier.max_gib is not None:
        rule += f" up to {tier.max_gib} GiB"
    return rule


def resolve_lustre(cloud: str, deployment: str, size_gib: int, throughput_mbps_per_tib: int | None) -> LustreTier:
    """The tier for a Lustre file system; raises CatalogError when the size or throughput isn't offered.

    `throughput_mbps_per_tib=None` picks the cloud's default tier for the deployment (the row
    marked `default` in data/lustre.json): AWS PERSISTENT_2 125, AWS SCRATCH_2 200 (its only
    value), GCP 500 (cluster-toolkit's default; GCP's 125 tier starts at 72,000 GiB),
    Azure AMLFS-Durable-Premium-125.
    """
    tiers = lustre_tiers(cloud)
    deployments = sorted({t.deployment for t in tiers})
    if deployment not in deployments:
        raise CatalogError(f"{deployment} Lustre is not offered on {cloud}; allowed deployments: {allowed(deployments)}",
                           argument="deployment")
    candidates = [t for t in tiers if t.deployment == deployment]
    if throughput_mbps_per_tib is None:
        tier = next(t for t in candidates if t.default)
    else:
        matching = [t for t in candidates if t.throughput_mbps_per_tib == throughput_mbps_per_tib]
        if not matching:
            offered = sorted(t.throughput_mbps_per_tib for t in candidates)
            raise CatalogError(
                f"throughput {throughput_mbps_per_tib} MB/s/TiB is not offered by {_service_label(candidates)}; "
                f"allowed: {allowed(offered)}",
                argument="throughput_mbps_per_tib",
            )
        tier = matching[0]
    if not is_valid_lustre_size(tier, size_gib):
        raise CatalogError(f"{tier_label(tier)} capacity must be {size_rule(tier)}; got {size_gib} GiB", argument="size_gib")
    return tier


def tier_label(tier: LustreTier) -> str:
    """E.g. "AWS FSx for Lustre PERSISTENT_2" or "GCP Managed Lustre 500 MB/s/TiB tier"."""
    if tier.service_name == "managed-lustre":
        return f"{tier.product} {tier.throughput_mbps_per_tib} MB/s/TiB tier"
    return f"{tier.product} {tier.service_name}"


def _service_label(tiers: list[LustreTier]) -> str:
    # AWS names the deployment (all its throughputs share PERSISTENT_2); GCP and Azure name a tier
    # per throughput, so the product name is the right subject there.
    names = {t.service_name for t in tiers}
    return tier_label(tiers[0]) if len(names) == 1 and "managed-lustre" not in names else tiers[0].product
