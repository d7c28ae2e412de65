"""Region names in the spec are checked against the catalog's lists: every listed region loads, a typo is refused at
its config path with the value, a "did you mean" and where the full list is. Residency lists take any cloud's region."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import OSA
from helpers import platform_dict

from components import catalog
from components.spec import Platform, SpecError, load_platform

ALL_NAMES = set(catalog.region_names())
REGIONS = catalog.regions()
HOMES = [r for r in REGIONS if getattr(r, "availability_zones", None) is not False]
"""The regions a platform may run in: every listed one but Azure's regions without availability zones (refused by the
Azure checks, tests/azure)."""


def _platform(cloud: str, region: str, **top: Any) -> dict[str, Any]:
    network = {"cidr": "10.30.0.0/16", **({"transit_encryption": "monitor"} if cloud == "azure" else {})}
    spec: dict[str, Any] = {"regions": {region: {"network": network}}}
    if cloud == "gcp":
        spec["project"] = "acme-ml-test"
    return platform_dict({cloud: spec}, **top)


def _issues(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    return caught.value.issues


@pytest.mark.parametrize("region", HOMES, ids=lambda r: f"{r.cloud}-{r.name}")
def test_every_listed_region_loads_under_its_cloud_and_in_residency_lists(region: catalog.Region) -> None:
    compliance = {"allowed_regions": [region.name], "data_zones": {"home": [region.name]}}
    assert isinstance(load_platform(_platform(region.cloud, region.name, compliance=compliance)), Platform)


@st.composite
def typos(draw: st.DrawFn, regions: list[catalog.Region] = REGIONS) -> tuple[catalog.Region, str]:
    """A listed region and a one-character typo of it (deletion, insertion or substitution) that no cloud lists."""
    region = draw(st.sampled_from(regions))
    name = region.name
    kind = draw(st.sampled_from(["delete", "insert", "substitute"]))
    i = draw(st.integers(0, len(name) - 1 + (kind == "insert")))
    char = draw(st.sampled_from(string.ascii_lowercase + string.digits + "-"))
    typo = {"delete": name[:i] + name[i + 1:], "insert": name[:i] + char + name[i:], "substitute": name[:i] + char + name[i + 1:]}[kind]
    return region, typo


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(typos())
def test_a_typo_of_a_listed_region_is_refused_with_the_original_suggested(case: tuple[catalog.Region, str]) -> None:
    region, typo = case
    assume(typo not in ALL_NAMES)
    [(path, message)] = _issues(_platform(region.cloud, typo))
    assert path == f"platform.clouds.{region.cloud}.regions.{typo}"
    assert message.startswith(f"unknown {region.cloud} region '{typo}'; did you mean ")
    assert catalog.REGIONS_FILE in message and catalog.region_doc(region.cloud) in message
    suggested = catalog.suggest_regions(typo, region.cloud)
    assert all(f"'{name}'" in message for name in suggested)
    ties = [n for n in catalog.region_names(region.cloud) if OSA.distance(typo, n) == 1]
    assert f"'{region.name}'" in message or len(ties) > 3, message


@settings(max_examples=100, deadline=None)
@given(typos(HOMES))
def test_a_typo_in_the_residency_list_is_refused_at_its_index(case: tuple[catalog.Region, str]) -> None:
    region, typo = case
    assume(typo not in ALL_NAMES)
    compliance = {"allowed_regions": [region.name, typo]}
    [(path, message)] = _issues(_platform(region.cloud, region.name, compliance=compliance))
    assert path == "platform.compliance.allowed_regions[1]"
    assert message.startswith(f"unknown region '{typo}'; did you mean ")
    assert catalog.REGIONS_FILE in message


def test_residency_lists_take_regions_of_every_cloud() -> None:
    # A data zone spans clouds: one AWS, one GCP and one Azure region, while the platform itself runs on AWS only.
    compliance = {"allowed_regions": ["eu-west-1", "europe-west4", "westeurope"],
                  "data_zones": {"eu": ["eu-west-1", "europe-west4", "westeurope"]}}
    assert load_platform(_platform("aws", "eu-west-1", compliance=compliance)).compliance.data_zones["eu"][2] == "westeurope"


def test_a_typo_in_a_data_zone_is_refused_at_its_index() -> None:
    compliance = {"data_zones": {"eu": ["eu-west-1", "europe-wst4"]}}
    [(path, message)] = _issues(_platform("aws", "eu-west-1", compliance=compliance))
    assert path == "platform.compliance.data_zones.eu[1]"
    assert "did you mean 'europe-west4'?" in message


@st.composite
def recased(draw: st.DrawFn) -> tuple[catalog.Region, str]:
    """A listed region and the same name in another case (EastUS2, US-EAST-1, Europe-West4)."""
    region = draw(st.sampled_from(REGIONS))
    assume(any(c.isalpha() for c in region.name))
    name = "".join(c.upper() if draw(st.booleans()) else c for c in region.name)
    assume(name != region.name)
    return region, name


def test_a_region_in_another_case_is_refused_with_the_listed_name() -> None:
    # Azure takes location names in any case, but the toolkit uses the name as written (resource names, outputs,
    # residency): the listed name is asked for.
    [(path, message)] = _issues(_platform("azure", "EastUS2"))
    assert (path, message) == ("platform.clouds.azure.regions.EastUS2",
                               "unknown azure region 'EastUS2'; did you mean 'eastus2'? Region names are written in lower "
                               "case. All azure regions: components/catalog/data/regions.json, or the cloud's own list: "
                               "https://learn.microsoft.com/azure/reliability/regions-list")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recased())
def test_any_casing_of_a_listed_region_suggests_that_region_alone(case: tuple[catalog.Region, str]) -> None:
    region, name = case
    [(path, message)] = _issues(_platform(region.cloud, name))
    assert path == f"platform.clouds.{region.cloud}.regions.{name}"
    assert message.startswith(f"unknown {region.cloud} region '{name}'; did you mean '{region.name}'? Region names are "
                              "written in lower case. ")
    home = region.name if region in HOMES else catalog.region_example(region.cloud)
    [(path, message)] = _issues(_platform(region.cloud, home, compliance={"data_zones": {"home": [name]}}))
    assert path == "platform.compliance.data_zones.home[0]"
    assert message.startswith(f"unknown region '{name}'; did you mean '{region.name}'? Region names are written in lower case.")


def test_a_region_of_another_cloud_in_another_case_is_moved_under_its_listed_name() -> None:
    [(path, message)] = _issues(_platform("aws", "WestEurope"))
    assert (path, message) == ("platform.clouds.aws.regions.WestEurope",
                               "'WestEurope' is an Azure region, not an AWS region: move it under clouds.azure.regions as "
                               "'westeurope' (aws regions are named like us-east-1)")
