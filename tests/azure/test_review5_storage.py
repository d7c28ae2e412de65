"""Storage account redundancy and the lifecycle of buckets Azure Managed Lustre links (review 5, storage)."""

from __future__ import annotations

from typing import Any

import pytest
from azure.conftest import HPC_CACHE_PRINCIPAL, azure_platform

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

ACCOUNT = "azure-native:storage:StorageAccount"
POLICY = "azure-native:storage:ManagementPolicy"
NETWORK = {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}


def config(buckets: dict[str, Any], lustre: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"hpc_cache_principal_id": HPC_CACHE_PRINCIPAL, "allow_shared_key_for_lustre": True,
            "regions": {"eastus2": {"network": NETWORK, "buckets": buckets, "lustre": lustre or {}}}}


LINKED = config({"datasets": {}, "archive": {}}, {"train": {"size_gib": 16384, "bucket": "datasets"}})


class ExistingAccounts(PlanMocks):
    """Storage accounts as they were created: `skus` by resource name (the SKU ignore_changes keeps)."""

    def __init__(self, skus: dict[str, str]) -> None:
        super().__init__()
        self.skus = skus

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict]:
        id_, outputs = super().answer(type_, name, outputs)
        if type_ == ACCOUNT and name in self.skus:
            outputs = {**outputs, "sku": {"name": self.skus[name]}}
        return id_, outputs


def plan(azure: dict[str, Any], mocks: PlanMocks | None = None) -> PlanResult:
    spec = load_platform(azure_platform(azure, environment="prod"))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="prod", mocks_=mocks)


@pytest.fixture(scope="module")
def linked_plan() -> PlanResult:
    return plan(LINKED)


def base_blob(result: PlanResult, bucket: str) -> dict[str, Any]:
    [rule] = result.one(POLICY, f"prod-eastus2-{bucket}-lifecycle").inputs["policy"]["rules"]
    return rule


def test_a_bucket_linked_to_lustre_does_not_archive_and_its_new_account_is_zone_redundant(linked_plan: PlanResult) -> None:
    # Azure Managed Lustre cannot read a blob in the Archive tier until it is rehydrated: no archive step by default,
    # and without one the account is zone-redundant.
    rule = base_blob(linked_plan, "datasets")
    assert rule["definition"]["actions"]["baseBlob"] == {
        "tierToCool": {"daysAfterCreationGreaterThan": 30}, "tierToCold": {"daysAfterCreationGreaterThan": 90}}
    assert linked_plan.one(ACCOUNT, "prod-eastus2-datasets-account").inputs["sku"] == {"name": "Standard_ZRS"}


def test_an_unlinked_bucket_archives_on_a_locally_redundant_account(linked_plan: PlanResult) -> None:
    rule = base_blob(linked_plan, "archive")
    assert rule["enabled"] is True
    assert rule["definition"]["actions"]["baseBlob"]["tierToArchive"] == {"daysAfterCreationGreaterThan": 365}
    assert linked_plan.one(ACCOUNT, "prod-eastus2-archive-account").inputs["sku"] == {"name": "Standard_LRS"}


def test_every_storage_account_keeps_the_sku_it_was_created_with(linked_plan: PlanResult) -> None:
    # Azure refuses an LRS <-> ZRS change as an update (a redundancy conversion is a separate operation): a later
    # tiering change must not send a new SKU.
    accounts = linked_plan.of_type(ACCOUNT)
    assert {r.name for r in accounts} >= {"prod-eastus2-datasets-account", "prod-eastus2-archive-account"}
    assert all("sku" in r.ignoreChanges for r in accounts), [(r.name, r.ignoreChanges) for r in accounts]


def test_an_archive_step_on_an_account_created_zone_redundant_is_left_out_with_a_warning() -> None:
    # The bucket was linked to Lustre when its account was created (ZRS); unlinked, its default archive step returns,
    # which a ZRS account cannot run.
    result = plan(config({"archive": {}}), ExistingAccounts({"prod-eastus2-archive-account": "Standard_ZRS"}))
    rule = base_blob(result, "archive")
    assert rule["enabled"] is True
    assert rule["definition"]["actions"]["baseBlob"] == {
        "tierToCool": {"daysAfterCreationGreaterThan": 30}, "tierToCold": {"daysAfterCreationGreaterThan": 90}}
    assert rule["definition"]["actions"]["version"] == {"delete": {"daysAfterCreationGreaterThan": 90}}
    [warning] = [d.message for d in result.diagnostics if "archive_after_days" in d.message]
    assert "bucket 'archive'" in warning and "Standard_ZRS" in warning and "365" in warning


def test_an_archive_only_lifecycle_on_a_zone_redundant_account_is_kept_disabled() -> None:
    only_archive = {"versioning": False, "tiering": {"warm_after_days": None, "cold_after_days": None}}
    result = plan(config({"archive": only_archive}), ExistingAccounts({"prod-eastus2-archive-account": "Standard_ZRS"}))
    rule = base_blob(result, "archive")
    assert rule["enabled"] is False
    # Azure refuses tierToArchive on a ZRS account even in a disabled rule: the placeholder cools instead.
    assert rule["definition"]["actions"]["baseBlob"] == {"tierToCool": {"daysAfterCreationGreaterThan": 365}}


def test_an_account_created_locally_redundant_keeps_archiving() -> None:
    result = plan(config({"archive": {}}), ExistingAccounts({"prod-eastus2-archive-account": "Standard_GRS"}))
    assert base_blob(result, "archive")["definition"]["actions"]["baseBlob"]["tierToArchive"] == {
        "daysAfterCreationGreaterThan": 365}
    assert not [d for d in result.diagnostics if "archive_after_days" in d.message]
