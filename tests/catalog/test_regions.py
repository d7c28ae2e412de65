"""Region lists per cloud: data integrity, the lookups, and the typo suggestions (properties)."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from rapidfuzz.distance import OSA

from components import catalog
from components.catalog import CatalogError

ROOT = Path(__file__).resolve().parents[2]
CLOUDS = ("aws", "gcp", "azure")
REGIONS = catalog.regions()
ALL_NAMES = set(catalog.region_names())
# The shape of each cloud's region names (us-east-1, us-gov-west-1; us-central1, europe-west10; eastus2, westeurope).
SHAPES = {
    "aws": re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$"),
    "gcp": re.compile(r"^[a-z]+-[a-z]+\d+$"),
    "azure": re.compile(r"^[a-z]+\d?$"),
}


def test_the_data_file_is_where_messages_say() -> None:
    assert (ROOT / catalog.REGIONS_FILE).is_file()
    rows = json.loads((ROOT / catalog.REGIONS_FILE).read_text(encoding="utf-8"))["regions"]
    assert len(rows) == len(REGIONS)


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: f"{r.cloud}-{r.name}")
def test_row_integrity(region: catalog.Region) -> None:
    assert region.cloud in CLOUDS
    assert SHAPES[region.cloud].match(region.name), region.name
    assert region.location.strip()
    assert region.source.startswith("https://"), region.source
    assert (region.partition is not None) == (region.cloud == "aws")
    assert not region.restricted or region.cloud == "azure"
    # Every Azure row records availability zone support; no other cloud's row does (all their regions have zones).
    assert (region.availability_zones is not None) == (region.cloud == "azure")


def test_names_are_unique_within_and_across_clouds() -> None:
    names = [r.name for r in REGIONS]
    assert len(names) == len(set(names))
    for name in names:
        assert len(catalog.region_clouds(name)) == 1


@pytest.mark.parametrize("cloud", CLOUDS)
def test_every_cloud_has_its_list_example_and_doc(cloud: str) -> None:
    assert len(catalog.region_names(cloud)) >= 30
    assert catalog.region_example(cloud) in catalog.region_names(cloud)
    assert catalog.region_doc(cloud).startswith("https://")


def test_known_regions_and_partitions() -> None:
    assert catalog.find_region("aws", "us-east-1").location == "US East (N. Virginia)"
    assert catalog.find_region("aws", "us-gov-west-1").partition == "aws-us-gov"
    assert catalog.find_region("aws", "cn-north-1") is None  # China needs a separate account; not targeted
    assert catalog.find_region("gcp", "europe-west4") is not None
    assert catalog.find_region("azure", "germanynorth").restricted
    assert catalog.find_region("aws", "westeurope") is None
    assert catalog.region_clouds("westeurope") == ["azure"]
    assert catalog.region_clouds("us-est-1") == []


def test_azure_availability_zone_support() -> None:
    # Microsoft's regions list, "Availability zone support" column (the source cited in the data file).
    without = [r.name for r in catalog.regions("azure") if not r.availability_zones]
    assert without == ["australiacentral", "australiacentral2", "australiasoutheast", "brazilsoutheast", "canadaeast",
                       "francesouth", "germanynorth", "koreasouth", "northcentralus", "norwaywest", "southafricawest",
                       "southindia", "switzerlandwest", "uaecentral", "ukwest", "westcentralus", "westindia", "westus"]
    assert len(catalog.regions("azure")) - len(without) == 39
    for zonal in ("eastus", "eastus2", "westus2", "westus3", "swedencentral", "westeurope", "indiasouthcentral"):
        assert catalog.find_region("azure", zonal).availability_zones is True, zonal
    assert catalog.find_region("aws", "us-east-1").availability_zones is None


def test_the_reference_stacks_use_listed_regions() -> None:
    import yaml

    for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        platform = yaml.safe_load(path.read_text())["config"]["ai-infra:platform"]
        for cloud, spec in platform["clouds"].items():
            for region in spec["regions"]:
                assert catalog.find_region(cloud, region), f"{path.name}: {cloud} {region}"
                if cloud == "azure":  # the spec refuses an Azure region without zones
                    assert catalog.find_region(cloud, region).availability_zones, f"{path.name}: {region}"


def test_unknown_cloud_is_refused() -> None:
    with pytest.raises(CatalogError, match="unknown cloud 'oci'") as err:
        catalog.region_names("oci")
    assert err.value.argument == "cloud"


@pytest.mark.parametrize(("typo", "cloud", "expected"), [
    ("us-centrl1", "gcp", ["us-central1"]),
    ("westeurpe", "azure", ["westeurope"]),
    ("eu-wst-1", None, ["eu-west-1"]),
    ("us-est-1", "aws", ["us-west-1", "us-east-1"]),  # one edit from both
    ("qqqq", "aws", []),
])
def test_suggestions(typo: str, cloud: str | None, expected: list[str]) -> None:
    assert catalog.suggest_regions(typo, cloud) == expected


ALPHABET = string.ascii_lowercase + string.digits + "-"


@st.composite
def one_edit(draw: st.DrawFn) -> tuple[catalog.Region, str]:
    """A listed region and a one-character typo of it: a deletion, insertion, substitution or swap of neighbours."""
    region = draw(st.sampled_from(REGIONS))
    name = region.name
    kind = draw(st.sampled_from(["delete", "insert", "substitute", "swap"]))
    i = draw(st.integers(0, len(name) - (2 if kind == "swap" else 1) + (1 if kind == "insert" else 0)))
    char = draw(st.sampled_from(ALPHABET))
    typo = {
        "delete": name[:i] + name[i + 1:],
        "insert": name[:i] + char + name[i:],
        "substitute": name[:i] + char + name[i + 1:],
        "swap": name[:i] + name[i + 1:i + 2] + name[i:i + 1] + name[i + 2:],
    }[kind]
    return region, typo


@given(one_edit())
def test_a_one_character_typo_suggests_the_region_it_came_from(case: tuple[catalog.Region, str]) -> None:
    region, typo = case
    assume(typo not in ALL_NAMES)
    suggestions = catalog.suggest_regions(typo, region.cloud)
    assert suggestions, typo
    # Only the closest regions are suggested: the original, or (when more than three regions are one edit away)
    # three of those equally close ones.
    assert all(OSA.distance(typo, s) == 1 for s in suggestions), (typo, suggestions)
    ties = [n for n in catalog.region_names(region.cloud) if OSA.distance(typo, n) == 1]
    assert region.name in suggestions or len(ties) > 3, (typo, suggestions)


@given(st.sampled_from(sorted(ALL_NAMES)))
def test_a_listed_region_suggests_itself(name: str) -> None:
    assert catalog.suggest_regions(name) == [name]


@pytest.mark.parametrize(("name", "cloud", "expected"), [
    ("EastUS2", "azure", ["eastus2"]),
    ("WestEurope", None, ["westeurope"]),
    ("US-EAST-1", "aws", ["us-east-1"]),  # not us-east-2, also one edit from us-east-1's lower-case form
    ("Europe-West4", "gcp", ["europe-west4"]),
    ("US-EST-1", "aws", ["us-west-1", "us-east-1"]),  # a typo in another case: as the lower-case typo
])
def test_suggestions_ignore_case(name: str, cloud: str | None, expected: list[str]) -> None:
    assert catalog.suggest_regions(name, cloud) == expected


@st.composite
def recased(draw: st.DrawFn) -> tuple[catalog.Region, str]:
    """A listed region and its name in any case (some letters upper-case)."""
    region = draw(st.sampled_from(REGIONS))
    return region, "".join(c.upper() if draw(st.booleans()) else c for c in region.name)


@given(recased())
def test_any_casing_of_a_listed_name_suggests_the_listed_name_alone(case: tuple[catalog.Region, str]) -> None:
    region, name = case
    assert catalog.suggest_regions(name, region.cloud) == [region.name]
    assert catalog.suggest_regions(name) == [region.name]  # names are distinct across clouds, in any case too
