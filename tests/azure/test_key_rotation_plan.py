"""The region's customer-managed key as each consumer references it, with Key Vault's key URIs known (the default
plan leaves them unknown): which consumers follow the key's automatic rotation themselves, and which one Pulumi
moves to the new version."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import platform_dict

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

KEY = "azure-native:keyvault:Key"
AMLFS = "azure-native:storagecache:AmlFilesystem"
VERSION = "0123456789abcdef0123456789abcdef"


def vault_uri(key_name: str) -> str:
    return f"https://{key_name}.vault.azure.net/"


class KeyUriMocks(PlanMocks):
    """Key Vault reports a key's URIs as Azure does: `keyUri` without a version, `keyUriWithVersion` with the current one."""

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = super().answer(type_, name, outputs)
        if type_ == KEY:
            uri = f"{vault_uri(name)}keys/cmk"
            outputs = {**outputs, "keyUri": uri, "keyUriWithVersion": f"{uri}/{VERSION}"}
        return resource_id, outputs


@pytest.fixture(scope="module")
def key_plan(prod_config: dict[str, Any]) -> PlanResult:
    spec = load_platform(platform_dict({"azure": prod_config}, addons={"enabled": False}, environment="prod"))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="prod", mocks_=KeyUriMocks())


def test_lustre_uses_the_versioned_key_and_pulumi_moves_it_to_new_versions(key_plan: PlanResult) -> None:
    # Azure Managed Lustre accepts a versioned key URL only and does not follow rotation itself; the key URL is
    # updatable in place, so Pulumi must keep tracking the key's current version (no ignore_changes on it).
    fs = key_plan.one(AMLFS, "prod-eastus2-scratch-amlfs")
    assert fs.inputs["encryptionSettings"]["keyEncryptionKey"] == {
        "keyUrl": f"{vault_uri('prod-eastus2-key')}keys/cmk/{VERSION}",
        "sourceVault": {"id": "prod-eastus2-kv-id"},
    }
    assert not any("encryptionSettings" in path for path in fs.ignoreChanges)
    assert fs.protect and fs.retainOnDelete


def test_disks_and_storage_follow_the_rotation_themselves(key_plan: PlanResult) -> None:
    des = key_plan.one("azure-native:compute:DiskEncryptionSet", "prod-eastus2-des")
    # the set needs a versioned URL, then moves to each new version by itself
    assert des.inputs["activeKey"]["keyUrl"] == f"{vault_uri('prod-eastus2-key')}keys/cmk/{VERSION}"
    assert des.inputs["rotationToLatestKeyVersionEnabled"] is True
    # storage accounts name the key without a version, which makes them follow rotation
    for account in key_plan.of_type("azure-native:storage:StorageAccount"):
        region = account.name.split("-")[1]
        assert account.inputs["encryption"]["keyVaultProperties"] == {
            "keyName": "cmk", "keyVaultUri": vault_uri(f"prod-{region}-key")}, account.name
