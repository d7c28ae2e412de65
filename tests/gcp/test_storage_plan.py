"""Buckets and Managed Lustre: private CMEK-only buckets with versioning, soft delete, lifecycle tiers or Autoclass
and access logs; Lustre with the catalog tier, CMEK, GKE support, import IAM; protection outside dev."""

from __future__ import annotations

import pytest
from gcp.support import DEV_GCP, by_name

from aiinfra.plan.runtime import PlanResult
from components.gcp.lustre import import_command


def lifecycle(bucket: dict) -> list[tuple]:  # noqa: ANN001
    """(action, storage class, age, matches, state, days since noncurrent) per rule."""
    return [(r["action"]["type"], r["action"].get("storageClass"), r["condition"].get("age"),
             tuple(r["condition"].get("matchesStorageClasses", ())), r["condition"].get("withState"),
             r["condition"].get("daysSinceNoncurrentTime")) for r in bucket["lifecycleRules"]]


def test_buckets_are_private_and_cmek_only(prod_plan: PlanResult) -> None:
    buckets = [r for r in prod_plan.of_type("gcp:storage/bucket:Bucket") if not r.name.endswith("access-logs-bucket")]
    assert len(buckets) == 3
    for record in buckets:
        inputs = record.inputs
        assert inputs["uniformBucketLevelAccess"] is True
        assert inputs["publicAccessPrevention"] == "enforced"
        encryption = inputs["encryption"]
        assert encryption["defaultKmsKeyName"].endswith("-key-id")
        assert encryption["googleManagedEncryptionEnforcementConfig"] == {"restrictionMode": "FullyRestricted"}
        assert encryption["customerSuppliedEncryptionEnforcementConfig"] == {"restrictionMode": "FullyRestricted"}
        assert inputs["versioning"] == {"enabled": True}
        assert inputs["softDeletePolicy"] == {"retentionDurationSeconds": 7 * 86400}
        assert inputs["logging"]["logBucket"].startswith("acme-ml-test-prod-access-logs-")
        assert inputs["forceDestroy"] is False
        assert record.protect and record.retainOnDelete
        assert 3 <= len(inputs["name"]) <= 63 and "google" not in inputs["name"]


def test_lifecycle_rules_follow_the_hot_warm_cold_archive_thresholds(prod_plan: PlanResult) -> None:
    datasets = by_name(prod_plan, "prod-us-central1-datasets-bucket")
    assert datasets["location"] == "US-CENTRAL1" and datasets["storageClass"] == "STANDARD"
    assert lifecycle(datasets) == [
        ("SetStorageClass", "NEARLINE", 30, ("STANDARD",), None, None),
        ("SetStorageClass", "COLDLINE", 90, ("STANDARD", "NEARLINE"), None, None),
        ("SetStorageClass", "ARCHIVE", 365, ("STANDARD", "NEARLINE", "COLDLINE"), None, None),
        ("Delete", None, None, (), "ARCHIVED", 90),
        ("AbortIncompleteMultipartUpload", None, 7, (), None, None),
    ]
    # cold skipped, objects expire at 730 days
    eu = by_name(prod_plan, "prod-europe-west4-eu-data-bucket")
    assert lifecycle(eu)[:3] == [
        ("SetStorageClass", "NEARLINE", 30, ("STANDARD",), None, None),
        ("SetStorageClass", "ARCHIVE", 365, ("STANDARD", "NEARLINE", "COLDLINE"), None, None),
        ("Delete", None, 730, (), "LIVE", None),
    ]
    assert eu["labels"] == {"data-class": "datasets", "data-zone": "eu"}


def test_autoclass_replaces_the_class_rules(prod_plan: PlanResult) -> None:
    ckpt = by_name(prod_plan, "prod-us-central1-ckpt-bucket")
    assert ckpt["autoclass"] == {"enabled": True, "terminalStorageClass": "ARCHIVE"}
    assert [rule[0] for rule in lifecycle(ckpt)] == ["Delete", "AbortIncompleteMultipartUpload"]


def test_access_log_bucket_receives_usage_logs(prod_plan: PlanResult) -> None:
    logs = prod_plan.one("gcp:storage/bucket:Bucket", "prod-europe-west4-access-logs-bucket")
    assert logs.inputs["encryption"] == {"defaultKmsKeyName": "prod-europe-west4-key-id"}
    assert logs.inputs["publicAccessPrevention"] == "enforced" and logs.protect
    assert lifecycle(logs.inputs) == [("Delete", None, 400, (), None, None)]
    writer = by_name(prod_plan, "prod-europe-west4-access-logs-writer")
    assert (writer["role"], writer["member"]) == ("roles/storage.objectCreator", "group:cloud-storage-analytics@google.com")


def test_dev_buckets_are_not_protected(dev_plan: PlanResult) -> None:
    scratch = dev_plan.one("gcp:storage/bucket:Bucket", "dev-us-central1-scratch-bucket")
    assert not scratch.protect and not scratch.retainOnDelete
    assert scratch.inputs["versioning"] == {"enabled": False}
    assert [rule[0] for rule in lifecycle(scratch.inputs)] == ["SetStorageClass", "Delete", "AbortIncompleteMultipartUpload"]


def test_lustre_takes_the_catalog_tier_cmek_and_gke_support(prod_plan: PlanResult) -> None:
    lustre = prod_plan.one("gcp:lustre/instance:Instance", "prod-us-central1-scratch-lustre")
    inputs = lustre.inputs
    assert (inputs["capacityGib"], inputs["perUnitStorageThroughput"]) == ("18000", "500")
    assert (inputs["kmsKey"], inputs["gkeSupportEnabled"]) == ("prod-us-central1-key-id", True)
    assert (inputs["location"], inputs["instanceId"], inputs["filesystem"]) == ("us-central1-a", "prod-us-central1-scratch", "scratch")
    assert inputs["network"] == "prod-us-central1-vpc-id"
    assert lustre.protect and lustre.retainOnDelete
    # A fixed instance_id: a replacement (tier, file system, network, key are immutable) deletes the old one first
    # instead of failing with ALREADY_EXISTS; `protect` still refuses it outside dev.
    assert lustre.deleteBeforeReplace is True
    peering = prod_plan.one("gcp:servicenetworking/connection:Connection")
    grant = prod_plan.one("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "prod-us-central1-key-lustre")
    assert peering.urn in lustre.dependencies and grant.urn in lustre.dependencies


def test_lustre_service_agent_can_import_from_and_export_to_the_bucket(prod_plan: PlanResult) -> None:
    grants = [r.inputs for r in prod_plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
              if r.name.startswith("prod-us-central1-scratch-bucket-")]
    assert [g["role"] for g in grants] == ["roles/storage.objectUser"]  # export overwrites objects: objectUser
    assert {g["member"] for g in grants} == {"serviceAccount:service-987654321098@gcp-sa-lustre.iam.gserviceaccount.com"}
    assert {g["bucket"] for g in grants} == {by_name(prod_plan, "prod-us-central1-datasets-bucket")["name"]}
    assert import_command("prod-us-central1-scratch", "us-central1-a", "b", "/train/") == (
        "gcloud lustre instances import-data prod-us-central1-scratch --location=us-central1-a "
        "--gcs-path-uri=gs://b/train/ --lustre-path=/")


def test_only_unprotected_buckets_are_emptied_on_delete(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    """`pulumi destroy` of dev deletes non-empty buckets (data and access logs); elsewhere no bucket is ever emptied."""
    prod = prod_plan.of_type("gcp:storage/bucket:Bucket")
    assert {r.name for r in prod} >= {"prod-us-central1-access-logs-bucket", "prod-europe-west4-access-logs-bucket"}
    assert [r.name for r in prod if r.inputs["forceDestroy"] is not False] == []
    dev = {r.name: r.inputs["forceDestroy"] for r in dev_plan.of_type("gcp:storage/bucket:Bucket")}
    assert dev == {"dev-us-central1-scratch-bucket": True, "dev-us-central1-access-logs-bucket": True}


@pytest.mark.parametrize(("environment", "protect", "force_destroy", "sampling"), [
    ("dev", True, False, 0.5),
    ("staging", False, True, 1.0),
])
def test_force_destroy_follows_protection_and_flow_sampling_the_environment(
        plan_gcp, environment: str, protect: bool, force_destroy: bool, sampling: float) -> None:  # noqa: ANN001
    """`protect_stateful` overrides protection, and with it force_destroy; flow log sampling is a cost choice, dev only."""
    plan = plan_gcp(DEV_GCP, environment=environment, protect_stateful=protect)
    buckets = plan.of_type("gcp:storage/bucket:Bucket")
    assert len(buckets) == 2
    assert all((r.inputs["forceDestroy"], r.protect) == (force_destroy, protect) for r in buckets)
    assert by_name(plan, f"{environment}-us-central1-nodes")["logConfig"]["flowSampling"] == sampling
