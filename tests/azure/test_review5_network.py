"""Network review 5: a Key Vault keeps the soft-delete retention it was created with (Azure refuses to change it), and
what unlocks the customer-managed key (its identity and the identity's role on the vault) is protected like the key."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from aiinfra.plan.property_paths import MISSING, get_at, parse_path, reset
from aiinfra.plan.runtime import PlanResult
from components.azure.keyvault import VAULT_IGNORED_CHANGES

VAULT = "azure-native:keyvault:Vault"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
ROLE = "azure-native:authorization:RoleAssignment"
SERVICE_ENCRYPTION_USER = "e147488a-f6f5-4113-8e2d-b22465e65bf6"  # Key Vault Crypto Service Encryption User
SUBSCRIPTION = "00000000-0000-4000-8000-000000000000"


def _etcd(config: dict[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(config), "etcd_encryption": "customer_key"}


def test_every_vault_ignores_its_retention_at_a_real_input_path(prod_config: dict[str, Any], dev_config: dict[str, Any],
                                                               plan_azure: Callable[..., PlanResult]) -> None:
    assert VAULT_IGNORED_CHANGES == ["properties.softDeleteRetentionInDays"]
    for environment, config, days in (("prod", prod_config, 90), ("dev", dev_config, 7)):
        plan = plan_azure(_etcd(config), environment=environment)
        vaults = plan.of_type(VAULT)
        assert {v.name.split("-", 2)[2] for v in vaults} == {"kv", "etcd-kv"}  # the CMK vault and the etcd one
        for vault in vaults:
            assert vault.ignoreChanges == VAULT_IGNORED_CHANGES, vault.name
            # The path names the value the engine compares (the SDK's wire name under `properties`), not a typo that
            # would ignore nothing.
            assert get_at(vault.inputs, parse_path(VAULT_IGNORED_CHANGES[0])) == days, vault.name


def test_turning_protection_on_keeps_the_retention_the_vault_was_created_with(dev_plan: PlanResult,
                                                                             plan_azure: Callable[..., PlanResult],
                                                                             dev_config: dict[str, Any]) -> None:
    # The same dev environment planned again with protect_stateful on: the program asks for 90 days, the engine
    # resets the ignored path to the state's 7, so `pulumi up` sends Azure no retention change it would refuse.
    created = dev_plan.one(VAULT, "dev-eastus2-kv").inputs
    protected = plan_azure(dev_config, environment="dev", protect_stateful=True).one(VAULT, "dev-eastus2-kv")
    assert protected.protect and protected.inputs["properties"]["softDeleteRetentionInDays"] == 90
    sent, found = reset(created, protected.inputs, parse_path(protected.ignoreChanges[0]))
    assert found
    assert sent["properties"]["softDeleteRetentionInDays"] == 7
    assert {k: v for k, v in sent["properties"].items() if k != "softDeleteRetentionInDays"} == \
        {k: v for k, v in protected.inputs["properties"].items() if k != "softDeleteRetentionInDays"}
    assert get_at(created, ["properties", "noSuchProperty"]) is MISSING


def test_the_cmk_identity_and_its_vault_role_are_protected_outside_dev(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    for region in ("eastus2", "swedencentral"):
        name = f"prod-{region}"
        identity = prod_plan.one(IDENTITY, f"{name}-cmk-identity")
        grant = prod_plan.one(ROLE, f"{name}-cmk-identity-crypto")
        for record in (identity, grant):
            assert record.protect and record.retainOnDelete, record.name
        # The same assignment as before (type, name and parent, so the same URN; the same inputs).
        assert grant.urn == ("urn:pulumi:prod::ai-infra::ai-infra:azure:KeyVault$azure-native:authorization:RoleAssignment::"
                             f"{name}-cmk-identity-crypto")
        assert {k: v for k, v in grant.inputs.items() if k != "principalId"} == {
            "scope": f"{name}-kv-id", "principalType": "ServicePrincipal",
            "roleDefinitionId": f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Authorization/roleDefinitions/"
                                f"{SERVICE_ENCRYPTION_USER}"}
        assert grant.propertyDependencies["principalId"] == [identity.urn]  # the identity's principal, known on create
        assert identity.parent == grant.parent
    for name in ("dev-eastus2-cmk-identity", "dev-eastus2-cmk-identity-crypto"):
        record = next(r for r in dev_plan.resources if r.name == name)
        assert not (record.protect or record.retainOnDelete), name
