"""Managed Lustre's access to its linked bucket and the import command it exports (review 5, storage)."""

from __future__ import annotations

import pytest
from gcp.support import COMPLIANCE, PROJECT, gcp_platform
from helpers import run_platform

from aiinfra.plan.runtime import PlanResult
from components import catalog
from components.catalog import CatalogError
from components.gcp.lustre import import_command
from components.spec import load_platform

MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
LINKED = {"project": PROJECT, "regions": {"us-central1": {
    "network": {"cidr": "10.9.0.0/16"},
    "lustre": {"fs": {"size_gib": 18000, "bucket": "data", "bucket_prefix": "train"}},
    "buckets": {"data": {}},
}}}


@pytest.fixture(scope="module")
def linked_plan(plan_gcp) -> PlanResult:  # noqa: ANN001
    return plan_gcp(LINKED, environment="prod")


def test_the_service_agent_gets_object_user_on_the_bucket_it_imports_from_and_exports_to(linked_plan: PlanResult) -> None:
    # Export overwrites changed objects, which needs storage.objects.delete: objectUser, as Managed Lustre's transfer
    # docs name for both directions (objectViewer + objectCreator could not overwrite).
    grants = [r for r in linked_plan.of_type(MEMBER) if r.name.startswith("prod-us-central1-fs-bucket-")]
    assert [g.name for g in grants] == ["prod-us-central1-fs-bucket-access"]
    [grant] = grants
    assert grant.inputs["role"] == "roles/storage.objectUser"
    assert grant.inputs["member"].endswith("@gcp-sa-lustre.iam.gserviceaccount.com")
    bucket = linked_plan.one("gcp:storage/bucket:Bucket", "prod-us-central1-data-bucket").inputs["name"]
    assert grant.inputs["bucket"] == bucket


def test_the_grant_takes_over_the_old_read_grant_so_access_never_lapses(linked_plan: PlanResult) -> None:
    # The old `-bucket-read` becomes this grant (a role change: replaced, created before the old one is deleted), and
    # the dropped `-bucket-write` is deleted after every create of the update.
    grant = linked_plan.one(MEMBER, "prod-us-central1-fs-bucket-access")
    assert [urn.rsplit("::", 1)[1] for urn in grant.aliases] == ["prod-us-central1-fs-bucket-read"]
    assert grant.deleteBeforeReplace is None  # the default: create the replacement first


@pytest.mark.parametrize(("prefix", "path"), [
    ("train", "gs://b/train/"),  # a folder of the bucket must end with "/" (ImportDataRequest.gcs_path)
    ("train/", "gs://b/train/"),
    ("/train/", "gs://b/train/"),
    ("data/2024", "gs://b/data/2024/"),
    ("", "gs://b"),  # the whole bucket, as gcloud's own example writes it
    ("/", "gs://b"),
])
def test_the_import_command_names_the_folder_with_its_trailing_slash(prefix: str, path: str) -> None:
    assert import_command("prod-us-central1-fs", "us-central1-a", "b", prefix) == (
        f"gcloud lustre instances import-data prod-us-central1-fs --location=us-central1-a --gcs-path-uri={path} --lustre-path=/")


def test_the_exported_import_command_uses_the_linked_folder() -> None:
    plan = run_platform(load_platform(gcp_platform(LINKED, environment="prod", compliance=COMPLIANCE)), stack="prod")
    bucket = plan.one("gcp:storage/bucket:Bucket", "prod-us-central1-data-bucket").inputs["name"]
    assert plan.outputs["gcp"]["us-central1"]["lustre"]["fs"]["import_command"] == (
        f"gcloud lustre instances import-data prod-us-central1-fs --location=us-central1-a --gcs-path-uri=gs://{bucket}/train/ "
        "--lustre-path=/")


def test_a_refused_size_names_how_far_an_instance_can_grow() -> None:
    # An instance created at or below a tier's step threshold can only be increased up to it (Managed Lustre
    # "Increase capacity"): the size rule says so, since a spec check cannot know the size at creation.
    with pytest.raises(CatalogError) as err:
        catalog.resolve_lustre("gcp", "persistent", 1_539_000, 1000)
    assert str(err.value) == (
        "GCP Managed Lustre 1000 MB/s/TiB tier capacity must be a multiple of 9000 GiB from 9000 GiB (a multiple of "
        "72000 GiB above 1530000 GiB; an instance created at or below 1530000 GiB can grow only up to it) up to "
        "10008000 GiB; got 1539000 GiB")
