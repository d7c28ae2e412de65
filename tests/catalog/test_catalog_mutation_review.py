"""Gaps found by a mutation review of components/catalog: each test pins a behaviour a user sees (a message, a suggestion,
a row of `aiinfra catalog --json`, a refused value) that the neighbouring tests left free to change."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import catalog
from components.catalog import CatalogError
from components.catalog.tpus import topology_chips

CLOUDS = ("aws", "gcp", "azure")
ROWS = catalog.instance_types()


# --- GPU / Neuron instance types -------------------------------------------------------------------------------------


def test_accelerator_names_are_sorted() -> None:
    """The vocabulary is listed sorted (the docstring's promise), not in data-file order."""
    names = catalog.accelerator_names()
    assert names == sorted(names)
    assert names[:3] == ["a10", "a100-40gb", "a100-80gb"]


def test_a_model_of_other_clouds_names_them_in_cloud_order() -> None:
    """b200 is on AWS and GCP: the message names them as the clouds are listed everywhere else (aws, gcp, azure)."""
    assert catalog.clouds_offering("b200") == ["aws", "gcp"]
    assert catalog.clouds_offering("t4") == ["aws", "azure"]
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance("azure", "b200", 8)
    assert str(err.value).startswith("accelerator 'b200' is not offered on azure (it is offered on aws, gcp); allowed: ")


@pytest.mark.parametrize(("cloud", "name", "hint"), [
    ("gcp", " A10G", "(did you mean 'a10g'? it is offered on aws)"),
    ("aws", " L4 ", "(did you mean 'l4'?)"),
])
def test_a_padded_model_name_is_recognised(cloud: str, name: str, hint: str) -> None:
    """Surrounding blanks do not hide the model: the hint names it (and where it is offered), as for the bare name."""
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance(cloud, name, 1)
    assert f"accelerator '{name}' is not offered on {cloud} {hint}; allowed: " in str(err.value)


def _hinted(message: str) -> list[str]:
    match = re.search(r"\(did you mean (.*?)\?", message)
    return re.findall(r"'([^']+)'", match.group(1)) if match else []


PREFIXES = sorted({name[:i] for name in catalog.accelerator_names() for i in range(1, len(name) + 1)})


@given(st.sampled_from(CLOUDS), st.sampled_from(PREFIXES))
def test_a_hint_for_an_unknown_name_names_at_most_two_models(cloud: str, prefix: str) -> None:
    """An unknown name is completed only to the memory variants of a model name ("h100" -> h100-80gb, h100-mega-80gb),
    else to difflib's two nearest: a bare prefix ("a", "t") never lists every model that starts with it."""
    if prefix in catalog.accelerator_names():
        return
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance(cloud, prefix, 1)
    hinted = _hinted(str(err.value))
    assert len(hinted) <= 2, str(err.value)


@pytest.mark.parametrize(("cloud", "name", "hinted"), [
    ("aws", "a", []),  # not a model name: no prefix completion, and nothing close enough
    ("aws", "t", ["t4"]),  # difflib's nearest, not t4, trainium and trainium2
    ("aws", "a100-40", ["a100-40gb", "a100-80gb"]),  # difflib's two nearest, not a third
])
def test_hints_for_unknown_names(cloud: str, name: str, hinted: list[str]) -> None:
    """Worked examples of the rule above."""
    with pytest.raises(CatalogError) as err:
        catalog.resolve_instance(cloud, name, 1)
    assert _hinted(str(err.value)) == hinted


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.cloud}:{r.instance_type}")
def test_spot_alternatives_have_the_same_host(row: catalog.GpuInstance) -> None:
    """Every alternative matches the type's model, count, vCPUs and memory: the Cluster Autoscaler sizes the group by
    one type, so a host with more (or less) memory must not join it."""
    for alt in catalog.spot_alternatives(row):
        assert (alt.cloud, alt.accelerator, alt.accelerator_count, alt.vcpus, alt.memory_gib) == (
            row.cloud, row.accelerator, row.accelerator_count, row.vcpus, row.memory_gib), alt.instance_type


def test_a10_hosts_with_more_memory_are_no_spot_alternative() -> None:
    """Standard_NV36ads_A10_v5 and Standard_NV36adms_A10_v5 share 36 vCPUs but not their memory."""
    ads = catalog.find_instance("azure", "Standard_NV36ads_A10_v5")
    adms = catalog.find_instance("azure", "Standard_NV36adms_A10_v5")
    assert ads.vcpus == adms.vcpus and ads.memory_gib != adms.memory_gib
    assert catalog.spot_alternatives(ads) == []
    assert catalog.spot_alternatives(adms) == []


def test_find_instance_refuses_an_unknown_cloud() -> None:
    """A misspelt cloud is an error, not "the catalog doesn't know this type"."""
    with pytest.raises(CatalogError, match="unknown cloud 'oci'") as err:
        catalog.find_instance("oci", "p5.48xlarge")
    assert err.value.argument == "cloud"


# --- TPUs ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("topology", ["2x2x2x2", "0x4", "2x0", "02x4", "2x4x"])
def test_malformed_topologies_are_refused(topology: str) -> None:
    """Two or three positive dimensions without leading zeros; anything else is malformed (not 0 chips, not 16)."""
    with pytest.raises(CatalogError, match="malformed") as err:
        topology_chips(topology)
    assert err.value.argument == "topology"


def test_unknown_generation_message_mentions_the_prefixed_form() -> None:
    """The message says both spellings are accepted."""
    with pytest.raises(CatalogError) as err:
        catalog.tpu_generation("v9")
    assert str(err.value) == "unknown TPU generation 'v9'; allowed: v4, v5e, v5p, v6e (or with the tpu- prefix)"


def test_allowed_vm_sizes_are_listed_smallest_first() -> None:
    """A refused chips_per_vm lists the possible VM sizes in ascending order, each with its machine type."""
    with pytest.raises(CatalogError) as err:
        catalog.resolve_tpu_slice("v5e", "2x4", chips_per_vm=2)
    assert str(err.value) == ("chips_per_vm 2 is not possible for a 2x4 tpu-v5e slice (8 chips); allowed: "
                              "4 (ct5lp-hightpu-4t), 8 (ct5lp-hightpu-8t)")


# --- Lustre ----------------------------------------------------------------------------------------------------------


def test_gcp_size_message_states_the_growth_cap_and_the_maximum() -> None:
    """The GCP rule names both steps, the growth limit of an instance created below the threshold, and the maximum."""
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre("gcp", "persistent", 4500, 1000)
    assert str(err.value) == (
        "GCP Managed Lustre 1000 MB/s/TiB tier capacity must be a multiple of 9000 GiB from 9000 GiB (a multiple of "
        "72000 GiB above 1530000 GiB; an instance created at or below 1530000 GiB can grow only up to it) up to "
        "10008000 GiB; got 4500 GiB")


def test_azure_size_message_states_the_maximum() -> None:
    """A tier with a maximum says so: a user sizing up needs the ceiling as much as the step."""
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre("azure", "persistent", 24 * 1024, 125)
    assert str(err.value) == ("Azure Managed Lustre AMLFS-Durable-Premium-125 capacity must be a multiple of 16384 GiB "
                              "from 16384 GiB up to 131072 GiB; got 24576 GiB")


@pytest.mark.parametrize(("cloud", "message"), [
    ("gcp", "throughput 300 MB/s/TiB is not offered by GCP Managed Lustre; allowed: 125, 250, 500, 1000"),
    ("azure", "throughput 300 MB/s/TiB is not offered by Azure Managed Lustre; allowed: 40, 125, 250, 500"),
])
def test_unoffered_throughput_names_the_product_where_each_tier_is_its_own_service(cloud: str, message: str) -> None:
    """GCP and Azure name a tier per throughput: the message's subject is the product, not one of its tiers."""
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre(cloud, "persistent", 10**6, 300)
    assert str(err.value) == message
    assert err.value.argument == "throughput_mbps_per_tib"


def test_unknown_deployment_lists_the_deployments_sorted() -> None:
    """The allowed deployments are listed in a stable (sorted) order, not a set's hash order."""
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre("aws", "bogus", 1200, None)
    assert str(err.value) == "bogus Lustre is not offered on aws; allowed deployments: persistent, scratch"


# --- regions ---------------------------------------------------------------------------------------------------------


def test_regions_refuses_an_unknown_cloud() -> None:
    """regions('oci') is an error naming the argument, as region_names('oci') is, not an empty list."""
    with pytest.raises(CatalogError, match="unknown cloud 'oci'") as err:
        catalog.regions("oci")
    assert err.value.argument == "cloud"


@pytest.mark.parametrize(("name", "cloud", "expected"), [
    ("eastus ", "azure", ["eastus"]),  # blanks ignored: not eastus2, one edit from "eastus "
    (" us-east-1", "aws", ["us-east-1"]),
    ("germany", "azure", ["germanynorth"]),  # difflib similarity 0.74: above the 0.6 cutoff
    ("east-us", "aws", ["us-east-2", "us-east-1", "sa-east-1"]),  # similarity 0.62
    ("ap-southeast-9", "aws", ["ap-southeast-7", "ap-southeast-6", "ap-southeast-5"]),  # at most three of the seven ties
    ("us-east2", "gcp", ["us-east5", "us-east4", "us-east1"]),  # the closest, though difflib ranks us-west2 higher
])
def test_suggestion_examples(name: str, cloud: str, expected: list[str]) -> None:
    """suggest_regions: blanks and case ignored, difflib's cutoff 0.6 over every region, then the fewest edits, at most
    three."""
    assert catalog.suggest_regions(name, cloud) == expected


# --- catalog_rows (aiinfra catalog --json) ---------------------------------------------------------------------------


TPU_ROWS = [r for r in catalog.catalog_rows() if r["instance_type"].startswith("ct")]


def test_a_tpu_row_in_full() -> None:
    """One TPU row spelt out: per-chip HBM, chips per VM, Google as vendor, host size not recorded (None)."""
    gen = catalog.tpu_generation("v5p")
    [row] = [r for r in TPU_ROWS if r["instance_type"] == "ct5p-hightpu-4t"]
    assert row == {
        "cloud": "gcp", "instance_type": "ct5p-hightpu-4t", "accelerator": "tpu-v5p", "accelerator_count": 4,
        "accelerator_memory_gib": 95, "vendor": "google", "vcpus": None, "memory_gib": None,
        "gke_accelerator": "tpu-v5p-slice", "topologies": list(gen.topologies), "source": gen.source,
    }


@pytest.mark.parametrize("row", TPU_ROWS, ids=lambda r: r["instance_type"])
def test_tpu_rows_follow_their_generation(row: dict) -> None:
    """Every TPU row: chips from the machine type, HBM per chip, the generation's source, no host size."""
    gen = catalog.tpu_generation(row["accelerator"])
    assert gen.machine_types[row["accelerator_count"]] == row["instance_type"]
    assert row["accelerator_memory_gib"] == gen.hbm_gib_per_chip
    assert (row["vendor"], row["vcpus"], row["memory_gib"]) == ("google", None, None)
    assert row["source"] == gen.source and row["source"].startswith("https://")
