"""Behaviour of small AWS, Azure and GCP modules that a hand mutation review (of aws/transit, aws/elb_logs,
azure/naming, base, lifecycle, reservations, gcp/offerings, gcp/naming) found no test pinning (the AWS modules and
gcp/offerings had none): the physical names that must stay stable or follow a service's rules (a changed name
replaces the storage account, key vault, private endpoint, service account or bucket), which existing storage
accounts keep archiving and deleting old versions, and that a capacity reservation group is checked whatever the case
of its ID."""

from __future__ import annotations

import pytest
from azure.conftest import CRG, azure_platform
from azure.test_reservations import BATCH, GROUP, H200, agent_pool_inputs, ReservationGroupMocks
from azure.test_review5_storage import ExistingAccounts, base_blob, config, plan

from aiinfra.plan.runtime import run_program
from components.azure.naming import fitted_name, global_name
from components.compose import build_platform
from components.gcp.naming import bucket_name, resource_id, service_account_id
from components.spec import load_platform

SUBSCRIPTION = "00000000-0000-4000-8000-000000000000"

# --- Azure names -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, parts, name", [
    ("st", ["prod", "eastus2", "datasets"], "stprodeastus2dat6a4b2b1b"),
    ("kv", ["prod", "eastus2"], "kvprodeastus2b580c388"),
    ("kvetcd", ["prod", "eastus2"], "kvetcdprodeastuse4ac4622"),
])
def test_global_names_stay_what_existing_accounts_and_vaults_are_called(kind, parts, name):
    """A storage account's or key vault's name is its identity: any change to how the name or its hash is made (the
    hash covers the subscription, the kind and every part) replaces every existing one."""
    assert global_name(kind, parts, SUBSCRIPTION) == name


@pytest.mark.parametrize("length, name", [
    (72, None),  # 72 + 8 random characters fit in 80: azure-native's auto-name stays
    (73, "x" * 71 + "-71b07785"),
])
def test_a_fitted_name_stays_the_auto_name_up_to_the_limit_exactly(length, name):
    """The boundary decides whether an existing resource keeps its auto-name or gets an explicit name (a replacement):
    an auto-name of exactly `max_length` characters is valid and kept."""
    assert fitted_name("x" * length, 80) == name


def test_a_fitted_name_is_the_shortened_logical_name_a_hyphen_and_its_hash():
    assert fitted_name("prod-eastus2-inference-origin-westeurope", 40) == "prod-eastus2-inference-origin-w-c194baaa"


# --- Azure storage lifecycle on existing accounts ---------------------------------------------------------------


def test_an_account_created_read_access_geo_redundant_keeps_archiving():
    """RA-GRS offers Blob Archive, like LRS and GRS: no warning, the archive step stays."""
    result = plan(config({"archive": {}}), ExistingAccounts({"prod-eastus2-archive-account": "Standard_RAGRS"}))
    assert base_blob(result, "archive")["definition"]["actions"]["baseBlob"]["tierToArchive"] == {
        "daysAfterCreationGreaterThan": 365}
    assert not [d for d in result.diagnostics if "archive_after_days" in d.message]


def test_old_versions_are_still_deleted_when_a_zone_redundant_account_drops_its_only_tiering_step():
    """Archive the only base-blob step, on an account that cannot archive: the rule that deletes old versions stays on
    (only a lifecycle with nothing left is kept as a disabled placeholder)."""
    only_archive = {"tiering": {"warm_after_days": None, "cold_after_days": None}}
    result = plan(config({"archive": only_archive}), ExistingAccounts({"prod-eastus2-archive-account": "Standard_ZRS"}))
    rule = base_blob(result, "archive")
    assert rule["enabled"] is True
    assert rule["definition"]["actions"]["version"] == {"delete": {"daysAfterCreationGreaterThan": 90}}
    assert "tierToArchive" not in (rule["definition"]["actions"].get("baseBlob") or {})


# --- Azure capacity reservation groups -----------------------------------------------------------------------------


def _plan_reserved(reservation: str, subscription: str = SUBSCRIPTION) -> tuple[ReservationGroupMocks, dict]:
    spec = load_platform(azure_platform({"regions": {"eastus2": {
        "network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}, "cluster": {},
        "gpu_pools": {"batch": {**BATCH, "reservation": reservation}}}}}))
    mocks = ReservationGroupMocks("eastus2", [(H200, ["1"]), (H200, ["2"])])
    result = run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks,
                         config={"azure-native:subscriptionId": subscription})
    return mocks, agent_pool_inputs(result)


@pytest.mark.parametrize("reservation, subscription", [
    # Azure resource IDs are case-insensitive and the spec accepts any case; Azure itself often answers
    # `resourcegroups`, and the CLI prints subscription IDs in either case.
    (CRG.replace("/resourceGroups/", "/resourcegroups/"), SUBSCRIPTION),
    (CRG.replace(SUBSCRIPTION, SUBSCRIPTION.replace("0000-4000", "ABCD-4000")), SUBSCRIPTION.replace("0000-4000", "abcd-4000")),
])
def test_a_reservation_group_id_in_another_case_is_still_checked(reservation, subscription):
    mocks, pool = _plan_reserved(reservation, subscription)
    assert [t for t, _ in mocks.asked].count(GROUP) == 1
    assert pool["capacityReservationGroupID"] == reservation


# --- GCS bucket names ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("project", ["g00gle-ml", "acme-google-ml", "goog-ml"])
def test_bucket_names_avoid_what_gcs_refuses(project):
    """GCS refuses bucket names that contain "google" or close misspellings such as "g00gle", or start with "goog"
    (cloud.google.com/storage/docs/buckets#naming)."""
    name = bucket_name(project, "prod", "us-central1", "datasets")
    assert "google" not in name and "g00gle" not in name and not name.startswith("goog")


@pytest.mark.parametrize("parts, max_length", [(("production", "us-central1", "x" * 40), 63), (("production", "us-central1", "scratch"), 30)])
def test_an_id_of_exactly_the_longest_allowed_length_is_kept_as_written(parts, max_length):
    """A readable ID that fits (even to the last character) is used as it is; only a longer one is shortened and
    hashed, so an existing instance or log bucket keeps its ID."""
    slug = "-".join(parts)
    assert len(slug) == max_length
    assert resource_id(*parts, max_length=max_length) == slug


def test_a_shortened_service_account_id_cut_at_a_hyphen_has_no_double_hyphen():
    """The cut body loses its trailing hyphen before `-<hash>`: the ID existing service accounts were created with."""
    assert service_account_id("production", "us-central1", "lustre-x") == "production-us-central1-ea9ab9"
