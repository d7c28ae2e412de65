"""What a later `pulumi refresh`, `up` or `destroy` does with the plan: the key goes with its vault (azure-native would
delete it through Key Vault's data plane), and values Azure moves by itself (pool versions under an upgrade channel,
a Private Link approval) are not taken back out of the inputs by the next `up`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aiinfra.plan.runtime import PlanResult, RecordingMonitor

KEY = "azure-native:keyvault:Key"
VAULT = "azure-native:keyvault:Vault"
AKS = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
ORIGIN = "azure-native:cdn:AFDOrigin"
REGION = {"network": {"cidr": "10.50.0.0/16", "transit_encryption": "monitor"}, "cluster": {},
          "gpu_pools": {"serve": {"accelerator": "t4", "max_nodes": 1}}}


@pytest.fixture
def deleted_with(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Resource name -> the URN its registration names as `deletedWith` (what the engine gets; the plan records no such field)."""
    seen: dict[str, str] = {}
    register = RecordingMonitor.RegisterResource

    def recording(self: RecordingMonitor, request: Any) -> Any:
        seen[request.name] = request.deletedWith
        return register(self, request)

    monkeypatch.setattr(RecordingMonitor, "RegisterResource", recording)
    return seen


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_the_key_is_deleted_with_its_vault_never_through_the_data_plane(
        environment: str, deleted_with: dict[str, str], plan_azure: Callable[..., PlanResult]) -> None:
    # azure-native deletes a key with a data-plane call from the deploying machine, which this vault's network rules
    # (public access off, or default Deny) and RBAC refuse: a destroy of dev would fail with 403. Deleted with the
    # vault, the engine skips that call when the vault goes too.
    plan = plan_azure({"etcd_encryption": "customer_key", "regions": {"westus3": REGION}}, environment=environment)
    region = f"{environment}-westus3"
    # The region's CMK and the etcd key of its AKS cluster (KMS, with customer_key), each in its own vault.
    for vault_name, key_name in ((f"{region}-kv", f"{region}-key"), (f"{region}-etcd-kv", f"{region}-etcd-key")):
        vault, key = plan.one(VAULT, vault_name), plan.one(KEY, key_name)
        assert deleted_with[key.name] == vault.urn
        # Protection is unchanged: retained in protected environments, deletable (with the vault) in dev.
        assert (key.protect, key.retainOnDelete) == ((True, True) if environment == "prod" else (False, False))
    # Nothing else of the vault is a data-plane object: no secret is ever created in it.
    assert not plan.of_type("azure-native:keyvault:Secret")


@pytest.mark.parametrize(("channel", "ignored"), [
    ("rapid", ["count", "orchestratorVersion"]),
    ("regular", ["count", "orchestratorVersion"]),  # AKS "stable": minor versions move too
    ("stable", ["count"]),  # AKS "patch": minor versions are a deliberate kubernetes_version change
])
def test_gpu_pools_leave_the_version_to_channels_that_move_minor_versions(
        channel: str, ignored: list[str], plan_azure: Callable[..., PlanResult]) -> None:
    region = {**REGION, "cluster": {"upgrade_channel": channel}}
    plan = plan_azure({"regions": {"westus3": region}})
    pool = plan.one(POOL)
    assert pool.ignoreChanges == ignored
    # the same decision as for the system pool inside the cluster
    owns_version = "agentPoolProfiles[0].orchestratorVersion" in plan.one(AKS).ignoreChanges
    assert owns_version == ("orchestratorVersion" in pool.ignoreChanges)


@pytest.mark.parametrize("channel, version", [("stable", "1.33"), ("stable", None), ("regular", "1.33"), ("rapid", "1.33")])
def test_gpu_pools_follow_a_pinned_version_only_under_the_patch_channel(
        channel: str, version: str | None, plan_azure: Callable[..., PlanResult]) -> None:
    """Under `patch` (config `stable`) minors change only by `kubernetes_version`; AKS upgrades the control plane and the
    inline system pool, so the separate GPU pools carry the version too, or they would stay a minor behind."""
    cluster = {"upgrade_channel": channel, **({"kubernetes_version": version} if version else {})}
    plan = plan_azure({"regions": {"westus3": {**REGION, "cluster": cluster}}})
    expected = version if channel == "stable" else None
    assert plan.one(POOL).inputs.get("orchestratorVersion") == expected


def test_private_link_origins_ignore_the_approval_status_azure_reports(prod_plan: PlanResult) -> None:
    origins = prod_plan.of_type(ORIGIN)
    assert origins
    for origin in origins:
        # the wire path of SharedPrivateLinkResourcePropertiesArgs.status, which a refresh turns Pending -> Approved
        assert "sharedPrivateLinkResource" in origin.inputs and "status" not in origin.inputs["sharedPrivateLinkResource"]
        assert origin.ignoreChanges == ["sharedPrivateLinkResource.status"], origin.name


def test_public_origins_have_no_private_link_status_to_ignore(prod_config: dict[str, Any],
                                                              plan_azure: Callable[..., PlanResult]) -> None:
    prod_config["global_endpoint"]["azure_tier"] = "standard"
    plan = plan_azure(prod_config, environment="prod")
    for origin in plan.of_type(ORIGIN):
        assert "sharedPrivateLinkResource" not in origin.inputs and origin.ignoreChanges == [], origin.name
