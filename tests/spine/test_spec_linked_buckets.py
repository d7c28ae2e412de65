"""A bucket a Lustre file system links: no offline archive step on AWS and Azure (review 5, storage)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import change, platform_dict

from components.spec import SpecError, Tiering, load_platform
from components.spec.storage import linked_tiering

AWS = "clouds/aws/regions/us-east-1"
AZURE = "clouds/azure/regions/eastus2"


def linked(cloud: str) -> dict[str, Any]:
    """A valid platform whose one region links Lustre file system `train` to bucket `datasets`."""
    if cloud == "aws":
        region = {"network": {"cidr": "10.10.0.0/16"}, "lustre": {"train": {"size_gib": 2400, "bucket": "datasets"}},
                  "buckets": {"datasets": {}}}
        return platform_dict({"aws": {"regions": {"us-east-1": region}}})
    if cloud == "azure":
        region = {"network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"},
                  "lustre": {"train": {"size_gib": 16384, "bucket": "datasets"}}, "buckets": {"datasets": {}}}
        return platform_dict({"azure": {"hpc_cache_principal_id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
                                        "allow_shared_key_for_lustre": True, "regions": {"eastus2": region}}})
    region = {"network": {"cidr": "10.20.0.0/16"}, "lustre": {"train": {"size_gib": 18000, "bucket": "datasets"}},
              "buckets": {"datasets": {}}}
    return platform_dict({"gcp": {"project": "acme-ml-test", "regions": {"us-central1": region}}})


def problems(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(SpecError) as err:
        load_platform(data)
    return dict(err.value.issues)


@pytest.mark.parametrize(("cloud", "base", "archive", "service"), [
    ("aws", AWS, "S3 Glacier Deep Archive", "FSx for Lustre file system"),
    ("azure", AZURE, "the Blob Archive tier", "Azure Managed Lustre file system"),
])
def test_an_archive_step_on_a_linked_bucket_is_refused_with_its_path_value_and_file_system(
        cloud: str, base: str, archive: str, service: str) -> None:
    data = change(linked(cloud), f"{base}/buckets/datasets/tiering", {"archive_after_days": 400})
    path = "platform." + base.replace("/", ".") + ".buckets.datasets.tiering.archive_after_days"
    assert problems(data) == {path: (
        f"archive_after_days 400 would move objects of bucket 'datasets' to {archive}, which {service} 'train' "
        f"(lustre.train.bucket) cannot read until each object is {'restored' if cloud == 'aws' else 'rehydrated'}; "
        "remove archive_after_days (a bucket linked to Lustre gets no archive step) or set it to null")}


def test_every_file_system_linking_the_bucket_is_named() -> None:
    data = change(linked("aws"), f"{AWS}/lustre/eval", {"size_gib": 1200, "bucket": "datasets"})
    data = change(data, f"{AWS}/buckets/datasets/tiering", {"archive_after_days": 500})
    [message] = problems(data).values()
    assert "FSx for Lustre file systems 'train' (lustre.train.bucket) and 'eval' (lustre.eval.bucket)" in message


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp"])
def test_a_linked_bucket_with_the_default_or_no_archive_step_is_valid(cloud: str) -> None:
    base = {"aws": AWS, "azure": AZURE, "gcp": "clouds/gcp/regions/us-central1"}[cloud]
    load_platform(linked(cloud))
    load_platform(change(linked(cloud), f"{base}/buckets/datasets/tiering", {"archive_after_days": None}))
    load_platform(change(linked(cloud), f"{base}/buckets/datasets/tiering", {"warm_after_days": 60}))


def test_gcs_archive_is_online_so_a_linked_gcp_bucket_may_archive() -> None:
    load_platform(change(linked("gcp"), "clouds/gcp/regions/us-central1/buckets/datasets/tiering", {"archive_after_days": 400}))


def test_an_unlinked_bucket_may_archive_on_every_cloud() -> None:
    data = change(linked("aws"), f"{AWS}/buckets/models", {"tiering": {"archive_after_days": 400}})
    load_platform(data)


def test_the_linked_tiering_drops_only_an_archive_step_that_was_not_written() -> None:
    assert linked_tiering(Tiering()).archive_after_days is None
    assert linked_tiering(Tiering(warm_after_days=60)) == Tiering(warm_after_days=60, archive_after_days=None)
    assert linked_tiering(Tiering(archive_after_days=400)).archive_after_days == 400
    assert linked_tiering(Tiering(archive_after_days=None)).archive_after_days is None
