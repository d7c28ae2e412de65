"""`aiinfra plan --diff` shows what the azure-native provider replaces rather than updates: the SDK classes list no
replaceOnChanges, the provider decides at Diff time (aiinfra/plan/force_new_azure.py). A new GPU type (vmSize) or MIG
profile (gpuInstanceProfile) replaces the AKS agent pool, a larger Azure Managed Lustre (storageCapacityTiB, create-only
in the 2024-03-01 REST API the pinned SDK uses) replaces the file system, moving a Log Analytics workspace or a private
DNS zone or link (location, create-only in their REST specs) replaces it, and scaling or retagging stays an update."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import edited_stack_plan

from aiinfra.plan.diff import diff_plans
from aiinfra.plan.force_new import FORCE_NEW, force_new_paths

EASTUS2 = "clouds/azure/regions/eastus2"
WESTEUROPE = "clouds/azure/regions/westeurope"


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return edited_stack_plan("prod", {})


@pytest.fixture(scope="module")
def diff(base: dict[str, Any]) -> dict[str, Any]:
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


def with_inputs(plan: dict[str, Any], edits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A copy of the plan document with the inputs of the resources named in `edits` (last URN part) set; for inputs
    no platform setting reaches (a private DNS zone's location is always `global`)."""
    head = copy.deepcopy(plan)
    for record in head["resources"]:
        record["inputs"].update(edits.get(record["urn"].split("::")[-1], {}))
    return head


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


@pytest.mark.parametrize(("name", "type_"), [
    ("prod-eastus2-logs", "azure-native:operationalinsights:Workspace"),  # common-types v2 TrackedResource
    ("prod-eastus2-dns-blob", "azure-native:privatedns:PrivateZone"),  # privatedns.json 2024-06-01
    ("prod-eastus2-dns-blob-link", "azure-native:privatedns:VirtualNetworkLink"),
])
def test_a_new_location_replaces_a_log_workspace_or_private_dns_zone_or_link(base: dict[str, Any], name: str,
                                                                             type_: str) -> None:
    """Their location is x-ms-mutability [read, create] in the REST spec the pinned SDK uses (force_new_azure.py)."""
    replaced = entries(diff_plans(base, with_inputs(base, {name: {"location": "westus3"}})), "replaced")
    assert name in replaced, f"{name}: a new location reads as an update"
    assert replaced[name]["type"] == type_
    assert replaced[name]["replaceBecause"] == ["location"]


def test_updatable_inputs_of_those_types_and_a_nat_gateway_location_update_in_place(base: dict[str, Any]) -> None:
    """A workspace's retention and a link's auto-registration carry no x-ms-mutability; nor does a NAT gateway's
    location (network.json's Resource), which forceNewMap lists for VirtualNetwork and PublicIPAddress only; nor a
    subnet's defaultOutboundAccess, create-time only in its description but not marked so."""
    diff = diff_plans(base, with_inputs(base, {
        "prod-eastus2-logs": {"retentionInDays": 90},
        "prod-eastus2-dns-blob-link": {"registrationEnabled": True},
        "prod-eastus2-nat": {"location": "westus3", "idleTimeoutInMinutes": 10},
        "prod-eastus2-subnet-nodes": {"defaultOutboundAccess": True},
    }))
    assert not entries(diff, "replaced")
    changed = entries(diff, "changed")
    assert {name: (e["action"], e["inputs"], e["replaceBecause"]) for name, e in changed.items()} == {
        "prod-eastus2-logs": ("update", ["retentionInDays"], []),
        "prod-eastus2-dns-blob-link": ("update", ["registrationEnabled"], []),
        "prod-eastus2-nat": ("update", ["idleTimeoutInMinutes", "location"], []),
        "prod-eastus2-subnet-nodes": ("update", ["defaultOutboundAccess"], []),
    }
