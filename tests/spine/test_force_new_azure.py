"""`aiinfra plan --diff` shows what the azure-native provider replaces rather than updates: the SDK classes list no
replaceOnChanges, the provider decides at Diff time (aiinfra/plan/force_new_azure.py). A new GPU type (vmSize) or MIG
profile (gpuInstanceProfile) replaces the AKS agent pool, a larger Azure Managed Lustre (storageCapacityTiB, create-only
in the 2024-03-01 REST API the pinned SDK uses) replaces the file system, and scaling or retagging stays an update."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import edited_stack_plan

from aiinfra.plan.diff import diff_plans
from aiinfra.plan.force_new import FORCE_NEW, force_new_paths

EASTUS2 = "clouds/azure/regions/eastus2"
WESTEUROPE = "clouds/azure/regions/westeurope"


@pytest.fixture(scope="module")
def diff() -> dict[str, Any]:
    base = edited_stack_plan("prod", {})
    head = edited_stack_plan("prod", {
        f"{EASTUS2}/gpu_pools/h100-train/accelerator": "a100-80gb",  # vmSize
        f"{EASTUS2}/gpu_pools/a100-serve/sharing/mig_profile": "2g.20gb",  # gpuInstanceProfile
        f"{EASTUS2}/lustre/train/size_gib": 32768,  # storageCapacityTiB 16 -> 32
        f"{WESTEUROPE}/gpu_pools/a100-serve/max_nodes": 5,  # maxCount
        "labels/cost_center": "cc-ml-prod-2",  # every resource's tags
    })
    return diff_plans(base, head)


def entries(diff: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {e["urn"].split("::")[-1]: e for group in diff["components"].values() for e in group[kind]}


def test_a_new_gpu_type_or_mig_profile_replaces_the_agent_pool(diff: dict[str, Any]) -> None:
    replaced = entries(diff, "replaced")
    train = replaced["prod-eastus2-h100-train-agentpool"]
    assert train["type"] == "azure-native:containerservice:AgentPool"
    assert "vmSize" in train["replaceBecause"]
    serve = replaced["prod-eastus2-a100-serve-agentpool"]
    assert serve["replaceBecause"] == ["gpuInstanceProfile"]


def test_growing_azure_managed_lustre_replaces_the_file_system(diff: dict[str, Any]) -> None:
    [fs] = [e for e in entries(diff, "replaced").values() if e["type"] == "azure-native:storagecache:AmlFilesystem"]
    assert fs["replaceBecause"] == ["storageCapacityTiB"]
    assert {"path": "storageCapacityTiB", "old": "16", "new": "32"} in fs["changes"]
    # Prod protects the file system: the reviewer is told `pulumi up` refuses rather than losing the data.
    assert fs.get("protected") and "protected: `pulumi up` will fail" in fs["notes"]


def test_scaling_and_retagging_azure_resources_update_in_place(diff: dict[str, Any]) -> None:
    changed = entries(diff, "changed")
    pool = changed["prod-westeurope-a100-serve-agentpool"]
    assert pool["action"] == "update" and pool["replaceBecause"] == []
    assert "maxCount" in pool["inputs"] and any(path.startswith("tags") for path in pool["inputs"])
    # Tags alone replace nothing: no Azure resource but the two pools and the file system is replaced.
    replaced_azure = {name for name, e in entries(diff, "replaced").items() if e["type"].startswith("azure-native:")}
    assert replaced_azure == {"prod-eastus2-h100-train-agentpool", "prod-eastus2-a100-serve-agentpool",
                              next(n for n, e in entries(diff, "replaced").items()
                                   if e["type"] == "azure-native:storagecache:AmlFilesystem")}
    retagged = {e["type"] for e in changed.values() if e["type"].startswith("azure-native:")}
    assert {"azure-native:storage:StorageAccount", "azure-native:resources:ResourceGroup",
            "azure-native:keyvault:Vault", "azure-native:containerservice:ManagedCluster"} <= retagged


def test_the_azure_native_table_names_inputs_the_plan_records() -> None:
    """Each azure-native type the table covers is one the SDK defines, and a ManagedCluster's networkProfile replaces
    only through its create-only fields (pulumi/pulumi-azure-native#4771), not as a whole."""
    import importlib

    for type_, paths in FORCE_NEW.items():
        if not type_.startswith("azure-native:"):
            continue
        _, module, name = type_.split(":")
        assert hasattr(importlib.import_module(f"pulumi_azure_native.{module}"), name), type_
        assert paths and "resourceGroupName" in paths or type_.endswith("RoleAssignment"), type_
    cluster = force_new_paths("azure-native:containerservice:ManagedCluster")
    assert "networkProfile.serviceCidr" in cluster and "networkProfile" not in cluster
