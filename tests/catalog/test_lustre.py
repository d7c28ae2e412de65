"""Managed Lustre tiers: documented size/throughput rules, defaults and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.catalog import CatalogError

TIB_GIB = 1024
TIERS = [t for cloud in ("aws", "gcp", "azure") for t in catalog.lustre_tiers(cloud)]


def test_fsx_1000_gib_is_rejected() -> None:
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre("aws", "persistent", 1000, 250)
    assert str(err.value) == "AWS FSx for Lustre PERSISTENT_2 capacity must be 1200 GiB, 2400 GiB or a multiple of 2400 GiB; got 1000 GiB"


@pytest.mark.parametrize("size_gib", [1200, 2400, 4800, 7200, 240000])
def test_fsx_documented_sizes_are_accepted(size_gib: int) -> None:
    assert catalog.resolve_lustre("aws", "persistent", size_gib, 1000).service_name == "PERSISTENT_2"


@pytest.mark.parametrize("size_gib", [3600, 6000, 1201])
def test_fsx_sizes_between_the_steps_are_rejected(size_gib: int) -> None:
    with pytest.raises(CatalogError, match=f"got {size_gib} GiB"):
        catalog.resolve_lustre("aws", "persistent", size_gib, 125)


def test_fsx_throughput_300_is_rejected_with_the_allowed_values() -> None:
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre("aws", "persistent", 2400, 300)
    assert str(err.value) == "throughput 300 MB/s/TiB is not offered by AWS FSx for Lustre PERSISTENT_2; allowed: 125, 250, 500, 1000"


def test_fsx_scratch_is_scratch_2_at_200() -> None:
    tier = catalog.resolve_lustre("aws", "scratch", 1200, None)
    assert (tier.service_name, tier.throughput_mbps_per_tib) == ("SCRATCH_2", 200)
    with pytest.raises(CatalogError, match=r"allowed: 200$"):
        catalog.resolve_lustre("aws", "scratch", 1200, 125)


def test_scratch_is_aws_only() -> None:
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre("gcp", "scratch", 9000, None)
    assert str(err.value) == "scratch Lustre is not offered on gcp; allowed deployments: persistent"


def test_azure_125_size_must_be_a_multiple_of_16_tib() -> None:
    assert catalog.resolve_lustre("azure", "persistent", 32 * TIB_GIB, 125).service_name == "AMLFS-Durable-Premium-125"
    with pytest.raises(CatalogError, match=r"AMLFS-Durable-Premium-125 capacity must be a multiple of 16384 GiB.*got 24576 GiB"):
        catalog.resolve_lustre("azure", "persistent", 24 * TIB_GIB, 125)


def test_azure_40_tier_starts_at_48_tib() -> None:
    tier = catalog.resolve_lustre("azure", "persistent", 48 * TIB_GIB, 40)
    assert tier.service_name == "AMLFS-Durable-Premium-40" and tier.max_gib == 768 * TIB_GIB


def test_gcp_below_the_tier_minimum_is_rejected() -> None:
    with pytest.raises(CatalogError, match=r"GCP Managed Lustre 1000 MB/s/TiB tier capacity must be a multiple of 9000 GiB from 9000 GiB.*got 4500 GiB"):
        catalog.resolve_lustre("gcp", "persistent", 4500, 1000)
    with pytest.raises(CatalogError, match=r"got 36000 GiB"):
        catalog.resolve_lustre("gcp", "persistent", 36000, 125)  # 125 tier starts at 72,000


def test_gcp_large_step_above_the_threshold() -> None:
    assert catalog.resolve_lustre("gcp", "persistent", 1_530_000, 1000)  # last 9,000-GiB step
    assert catalog.resolve_lustre("gcp", "persistent", 1_584_000, 1000)  # 22 x 72,000
    with pytest.raises(CatalogError):
        catalog.resolve_lustre("gcp", "persistent", 1_539_000, 1000)  # a 9,000 step above the threshold
    assert catalog.resolve_lustre("gcp", "persistent", 10_008_000, 1000)  # documented maximum
    with pytest.raises(CatalogError):
        catalog.resolve_lustre("gcp", "persistent", 10_080_000, 1000)


@pytest.mark.parametrize(
    ("cloud", "deployment", "size_gib", "expected"),
    [
        ("aws", "persistent", 1200, ("PERSISTENT_2", 125)),
        ("gcp", "persistent", 18000, ("managed-lustre", 500)),
        ("azure", "persistent", 16 * TIB_GIB, ("AMLFS-Durable-Premium-125", 125)),
    ],
)
def test_default_tier_when_throughput_is_not_given(cloud: str, deployment: str, size_gib: int, expected: tuple[str, int]) -> None:
    tier = catalog.resolve_lustre(cloud, deployment, size_gib, None)
    assert (tier.service_name, tier.throughput_mbps_per_tib) == expected


@pytest.mark.parametrize("tier", TIERS, ids=lambda t: f"{t.cloud}:{t.service_name}:{t.throughput_mbps_per_tib}")
def test_tier_integrity(tier: catalog.LustreTier) -> None:
    assert "https://" in tier.source
    assert tier.min_gib > 0 and tier.step_gib > 0
    assert tier.max_gib is None or tier.max_gib >= tier.min_gib
    assert catalog.is_valid_lustre_size(tier, tier.min_gib)
    if tier.max_gib is not None:
        assert catalog.is_valid_lustre_size(tier, tier.max_gib)


def test_one_default_per_cloud_and_deployment() -> None:
    pairs = [(t.cloud, t.deployment) for t in TIERS]
    defaults = [(t.cloud, t.deployment) for t in TIERS if t.default]
    assert sorted(defaults) == sorted(set(pairs))


# --- properties -------------------------------------------------------------------------------


def documented_valid_sizes(tier: catalog.LustreTier, k: int) -> int:
    """The k-th valid size, built from the docs' wording rather than from is_valid_lustre_size."""
    if tier.cloud == "aws":  # "1200 GiB, 2400 GiB, and increments of 2400 GiB"
        return 1200 if k == 0 else 2400 * k
    if tier.cloud == "azure":  # minimum = increment
        return tier.min_gib * (k + 1)
    small = tier.min_gib * (k + 1)  # GCP: step up to the threshold, the larger step above it
    if tier.large_step_above_gib is None or small <= tier.large_step_above_gib:
        return small
    return (tier.large_step_above_gib // tier.large_step_gib + 1 + (k - tier.large_step_above_gib // tier.min_gib)) * tier.large_step_gib


@given(st.sampled_from(TIERS), st.integers(min_value=0, max_value=400))
def test_documented_sizes_are_accepted(tier: catalog.LustreTier, k: int) -> None:
    size = documented_valid_sizes(tier, k)
    if tier.max_gib is not None and size > tier.max_gib:
        return
    assert catalog.resolve_lustre(tier.cloud, tier.deployment, size, tier.throughput_mbps_per_tib) == tier


@given(st.sampled_from(TIERS), st.integers(min_value=1, max_value=50_000_000))
def test_accepted_sizes_follow_the_tier_rule_and_others_are_rejected(tier: catalog.LustreTier, size: int) -> None:
    follows = size >= tier.min_gib and (tier.max_gib is None or size <= tier.max_gib)
    follows = follows and (size == tier.min_gib or size % tier.step_gib == 0)
    if tier.large_step_above_gib is not None and size > tier.large_step_above_gib:
        follows = follows and size % tier.large_step_gib == 0
    if follows:
        assert catalog.resolve_lustre(tier.cloud, tier.deployment, size, tier.throughput_mbps_per_tib) == tier
    else:
        with pytest.raises(CatalogError, match=f"got {size} GiB$"):
            catalog.resolve_lustre(tier.cloud, tier.deployment, size, tier.throughput_mbps_per_tib)


@given(st.sampled_from(["aws", "gcp", "azure"]), st.integers(min_value=1, max_value=5000))
def test_unoffered_throughputs_are_rejected_with_the_offered_ones(cloud: str, throughput: int) -> None:
    offered = sorted(t.throughput_mbps_per_tib for t in catalog.lustre_tiers(cloud) if t.deployment == "persistent")
    if throughput in offered:
        return
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre(cloud, "persistent", 10**6, throughput)
    assert str(err.value).endswith("allowed: " + ", ".join(map(str, offered)))
