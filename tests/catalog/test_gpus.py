"""GPU/Neuron instance lookups: examples from the cloud docs, data integrity and properties."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.catalog import CatalogError

VOCABULARY = {
    "h100-80gb", "h100-mega-80gb", "h200-141gb", "b200", "a100-40gb", "a100-80gb", "l4", "t4", "a10g",
    "a10", "l40s", "h100-nvl-94gb", "trainium", "trainium2", "inferentia2",
}
ROWS = catalog.instance_types()


@pytest.mark.parametrize(
    ("cloud", "accelerator", "count", "expected"),
    [
        ("gcp", "h100-80gb", 8, "a3-highgpu-8g"),
        ("gcp", "h100-mega-80gb", 8, "a3-megagpu-8g"),
        ("gcp", "h200-141gb", 8, "a3-ultragpu-8g"),
        ("gcp", "b200", 8, "a4-highgpu-8g"),
        ("gcp", "a100-40gb", 16, "a2-megagpu-16g"),
        ("gcp", "a100-80gb", 1, "a2-ultragpu-1g"),
        ("aws", "h100-80gb", 8, "p5.48xlarge"),
        ("aws", "a100-40gb", 8, "p4d.24xlarge"),
        ("aws", "trainium2", 16, "trn2.48xlarge"),
        ("aws", "a10g", 1, "g5.xlarge"),  # smallest of g5.xlarge ... g5.16xlarge
        ("aws", "a10g", 4, "g5.12xlarge"),  # 48 vCPUs beats g5.24xlarge's 96
        ("azure", "h100-80gb", 8, "Standard_ND96isr_H100_v5"),
        ("azure", "a100-40gb", 8, "Standard_ND96asr_v4"),
        ("azure", "t4", 1, "Standard_NC4as_T4_v3"),
        ("azure", "a10", 1, "Standard_NV36ads_A10_v5"),
    ],
)
def test_resolve_instance_examples(cloud: str, accelerator: str, count: int, expected: str) -> None:
    assert catalog.resolve_instance(cloud, accelerator, count).instance_type == expected


def test_h200_on_aws_prefers_the_first_of_equal_hosts_by_name() -> None:
    # p5e and p5en have the same vCPUs and memory; the name breaks the tie so the pick is stable.
    assert catalog.resolve_instance("aws", "h200-141gb", 8).instance_type == "p5e.48xlarge"


def test_unknown_accelerator_lists_what_the_cloud_offers() -> None:
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance("azure", "trainium2", 16)
    message = str(err.value)
    assert "'trainium2'" in message
    for name in catalog.accelerators_on("azure"):
        assert name in message
    assert "a10g" not in message  # an AWS-only model is not offered as an Azure alternative


def test_known_accelerator_wrong_count_lists_counts() -> None:
    with pytest.raises(CatalogError, match=r"3x a10g; allowed counts: 1, 4, 8$"):
        catalog.resolve_instance("aws", "a10g", 3)


def test_unknown_cloud_is_rejected_with_the_clouds() -> None:
    with pytest.raises(CatalogError, match=r"unknown cloud 'oci'; allowed: aws, gcp, azure"):
        catalog.instance_types("oci")


def test_find_instance() -> None:
    row = catalog.find_instance("aws", "p5.48xlarge")
    assert row is not None
    assert (row.accelerator, row.accelerator_count, row.vcpus, row.memory_gib, row.efa) == ("h100-80gb", 8, 192, 2048, True)
    assert row.gcp_accelerator_type is None
    assert catalog.find_instance("aws", "p5.96xlarge") is None
    assert catalog.find_instance("gcp", "p5.48xlarge") is None  # names are per cloud


def test_gcp_rows_carry_the_guest_accelerator_type() -> None:
    assert catalog.find_instance("gcp", "a3-megagpu-8g").gcp_accelerator_type == "nvidia-h100-mega-80gb"
    assert catalog.find_instance("gcp", "a2-highgpu-1g").gcp_accelerator_type == "nvidia-tesla-a100"
    assert catalog.find_instance("gcp", "a2-ultragpu-8g").gcp_accelerator_type == "nvidia-a100-80gb"


def test_efa_only_where_ec2_reports_it() -> None:
    assert catalog.find_instance("aws", "g5.xlarge").efa is False
    assert catalog.find_instance("aws", "trn1.32xlarge").efa is True
    assert not any(r.efa for r in ROWS if r.cloud != "aws")


def test_mig_profiles() -> None:
    assert catalog.find_instance("aws", "p4d.24xlarge").mig_profiles[0] == "1g.5gb"
    assert "7g.80gb" in catalog.find_instance("gcp", "a3-highgpu-8g").mig_profiles
    assert catalog.find_instance("aws", "g6.xlarge").mig_profiles == ()
    assert catalog.find_instance("aws", "trn2.48xlarge").mig_profiles == ()


def test_spot_alternatives_share_model_count_and_host_size() -> None:
    # g5.2xlarge .. g5.16xlarge carry the same 1x A10G on bigger hosts: the Cluster Autoscaler sizes a group by one type,
    # so none of them may join a g5.xlarge group.
    g5 = catalog.find_instance("aws", "g5.xlarge")
    assert catalog.spot_alternatives(g5) == []
    assert catalog.spot_alternatives(catalog.find_instance("aws", "p5.48xlarge")) == []
    p5e = catalog.find_instance("aws", "p5e.48xlarge")
    assert [r.instance_type for r in catalog.spot_alternatives(p5e)] == ["p5en.48xlarge"]


def test_accelerators_on_is_sorted_and_per_cloud() -> None:
    aws = catalog.accelerators_on("aws")
    assert aws == sorted(aws)
    assert "trainium2" in aws and "h100-mega-80gb" not in aws
    assert "h100-mega-80gb" in catalog.accelerators_on("gcp")


# --- data integrity ---------------------------------------------------------------------------


def test_no_duplicate_instance_types_per_cloud() -> None:
    keys = [(r.cloud, r.instance_type) for r in ROWS]
    assert len(keys) == len(set(keys))


def test_every_cloud_is_covered() -> None:
    assert {r.cloud for r in ROWS} == {"aws", "gcp", "azure"}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.cloud}:{r.instance_type}")
def test_row_integrity(row: catalog.GpuInstance) -> None:
    assert row.source.startswith("https://")
    assert row.accelerator in VOCABULARY
    assert row.accelerator == row.accelerator.lower()
    assert row.accelerator_count > 0 and row.accelerator_memory_gib > 0
    assert row.vcpus > 0 and row.memory_gib > 0
    assert row.vendor == ("aws-neuron" if row.accelerator in {"trainium", "trainium2", "inferentia2"} else "nvidia")
    assert (row.gcp_accelerator_type is not None) == (row.cloud == "gcp")
    if row.gcp_accelerator_type is not None:
        assert row.gcp_accelerator_type.startswith("nvidia-")
    for profile in row.mig_profiles:
        assert re.fullmatch(r"[1-7]g\.\d+gb", profile)
    if row.mig_profiles:  # the whole-GPU profile is the GPU's memory size
        assert row.mig_profiles[-1].startswith("7g.")


def test_accelerator_facts_agree_across_clouds() -> None:
    by_model: dict[str, set[tuple]] = {}
    for r in ROWS:
        by_model.setdefault(r.accelerator, set()).add((r.accelerator_memory_gib, r.vendor, r.mig_profiles))
    assert all(len(facts) == 1 for facts in by_model.values()), by_model


def test_vocabulary_matches_the_data() -> None:
    assert set(catalog.accelerator_names()) == VOCABULARY


# --- properties -------------------------------------------------------------------------------


@given(st.sampled_from(ROWS))
def test_resolve_returns_a_row_with_the_requested_model_and_count(row: catalog.GpuInstance) -> None:
    picked = catalog.resolve_instance(row.cloud, row.accelerator, row.accelerator_count)
    assert (picked.cloud, picked.accelerator, picked.accelerator_count) == (row.cloud, row.accelerator, row.accelerator_count)
    assert (picked.vcpus, picked.memory_gib) <= (row.vcpus, row.memory_gib)  # never a bigger host than a match


@given(st.sampled_from(ROWS))
def test_spot_alternatives_never_include_the_instance_itself(row: catalog.GpuInstance) -> None:
    alternatives = catalog.spot_alternatives(row)
    assert row not in alternatives
    assert all((a.cloud, a.accelerator, a.accelerator_count) == (row.cloud, row.accelerator, row.accelerator_count) for a in alternatives)


@given(st.sampled_from(["aws", "gcp", "azure"]), st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12))
def test_unknown_accelerator_names_are_rejected(cloud: str, name: str) -> None:
    if name in catalog.accelerators_on(cloud):
        return
    with pytest.raises(CatalogError, match=re.escape(f"accelerator '{name}' is not offered on {cloud}")):
        catalog.resolve_instance(cloud, name, 1)


@given(st.sampled_from(["aws", "gcp", "azure"]), st.sampled_from(catalog.accelerator_names()))
def test_a_model_of_another_cloud_is_refused_with_the_clouds_that_offer_it(cloud: str, name: str) -> None:
    offering = catalog.clouds_offering(name)
    if cloud in offering or not offering:
        return
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance(cloud, name, 1)
    assert f"(it is offered on {', '.join(offering)})" in str(err.value)
    assert err.value.argument == "accelerator"


@pytest.mark.parametrize(("cloud", "name", "hint"), [
    ("aws", "L4", "(did you mean 'l4'?)"),
    ("gcp", "A10G", "(did you mean 'a10g'? it is offered on aws)"),
    ("aws", "H100", "(did you mean 'h100-80gb'?)"),  # no model is named h100: the models of that name, in any case
    ("gcp", "H100", "(did you mean 'h100-80gb' or 'h100-mega-80gb'?)"),
])
def test_an_accelerator_in_another_case_suggests_the_catalog_name(cloud: str, name: str, hint: str) -> None:
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance(cloud, name, 1)
    offered = ", ".join(catalog.accelerators_on(cloud))
    assert str(err.value) == f"accelerator '{name}' is not offered on {cloud} {hint}; allowed: {offered}"
    assert err.value.argument == "accelerator"


@given(st.sampled_from(["aws", "gcp", "azure"]), st.sampled_from(catalog.accelerator_names()), st.data())
def test_any_casing_of_a_model_suggests_its_catalog_name(cloud: str, name: str, data: st.DataObject) -> None:
    spelt = "".join(c.upper() if data.draw(st.booleans()) else c for c in name)
    if spelt == name:
        return
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance(cloud, spelt, 1)
    elsewhere = [c for c in catalog.clouds_offering(name) if c != cloud]
    where = "" if name in catalog.accelerators_on(cloud) else f" it is offered on {', '.join(elsewhere)}"
    assert f"accelerator '{spelt}' is not offered on {cloud} (did you mean '{name}'?{where}); allowed: " in str(err.value)
