"""Whole-platform properties: tags on every taggable resource, protection outside dev, parenting, stable URNs."""

from __future__ import annotations

import functools
import importlib
import inspect
from pathlib import Path

import pytest
from helpers import assert_urns_match_snapshot

from aiinfra.plan.runtime import PlanResult

REQUIRED_TAGS = {"environment": None, "team": "ml-platform", "cost-center": "cc-1234", "managed-by": "ai-infra"}
STATEFUL = {
    "azure-native:resources:ResourceGroup",
    "azure-native:keyvault:Vault",
    "azure-native:keyvault:Key",
    "azure-native:storage:StorageAccount",
    "azure-native:storage:BlobContainer",
    "azure-native:storagecache:AmlFilesystem",
    "azure-native:operationalinsights:Workspace",
}
SNAPSHOT = Path(__file__).parent / "snapshots" / "prod_urns.txt"


@functools.cache
def accepts_tags(type_token: str) -> bool:
    """Whether the azure-native resource's Args class has a `tags` input (read from the installed SDK)."""
    _, module, name = type_token.split(":")
    sdk = importlib.import_module(f"pulumi_azure_native.{module}")
    args = getattr(sdk, f"{name}InitArgs", None) or getattr(sdk, f"{name}Args")
    return "tags" in inspect.signature(args.__init__).parameters


@pytest.mark.parametrize("plan_name", ["prod_plan", "dev_plan"])
def test_every_taggable_resource_carries_the_platform_tags(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan: PlanResult = request.getfixturevalue(plan_name)
    environment = plan.stack
    taggable = [r for r in plan.resources if r.type.startswith("azure-native:") and accepts_tags(r.type)]
    assert len(taggable) > 20
    for record in taggable:
        tags = record.inputs.get("tags", {})
        expected = {**REQUIRED_TAGS, "environment": environment}
        assert {k: tags.get(k) for k in expected} == expected, record.name
    # nested agent pool profiles are tagged too
    for cluster in plan.of_type("azure-native:containerservice:ManagedCluster"):
        assert cluster.inputs["agentPoolProfiles"][0]["tags"]["managed-by"] == "ai-infra"


def test_stateful_resources_are_protected_outside_dev(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    prod = [r for r in prod_plan.resources if r.type in STATEFUL and not r.name.endswith("frontdoor-rg")]
    assert {r.type for r in prod} == STATEFUL
    for record in prod:
        assert record.protect and record.retainOnDelete, record.name
    dev = [r for r in dev_plan.resources if r.type in STATEFUL]
    assert dev and not any(r.protect or r.retainOnDelete for r in dev)
    assert dev_plan.one("azure-native:keyvault:Vault", "dev-eastus2-kv").inputs["properties"]["softDeleteRetentionInDays"] == 7


def test_every_child_has_a_component_parent_and_type_tokens_are_ai_infra_azure(prod_plan: PlanResult) -> None:
    components = {r.urn: r for r in prod_plan.resources if not r.custom and r.type != "pulumi:pulumi:Stack"}
    assert {r.type.rsplit(":", 1)[1] for r in components.values()} == {
        "Network", "KeyVault", "FlowLogs", "BlobStorage", "Lustre", "Cluster", "GpuPool", "FrontDoor"}  # EtcdKey: customer_key
    assert all(r.type.startswith("ai-infra:azure:") for r in components.values())
    for record in prod_plan.resources:
        engine_default_provider = record.type.startswith("pulumi:providers:") and record.name.startswith("default")
        if record.custom and not engine_default_provider:
            assert record.parent in components, record.name


def test_dev_is_cheap_and_small(dev_plan: PlanResult) -> None:
    aks = dev_plan.one("azure-native:containerservice:ManagedCluster").inputs
    assert aks["sku"] == {"name": "Base", "tier": "Free"}
    assert aks["agentPoolProfiles"][0]["availabilityZones"] == ["1", "2"]
    pool = dev_plan.one("azure-native:containerservice:AgentPool").inputs
    assert (pool["vmSize"], pool["scaleSetPriority"], pool["minCount"]) == ("Standard_NC4as_T4_v3", "Spot", 0)
    assert dev_plan.one("azure-native:network:FlowLog").inputs["retentionPolicy"]["days"] == 30


def test_urns_match_the_snapshot(prod_plan: PlanResult) -> None:
    assert_urns_match_snapshot([r.urn for r in prod_plan.resources], SNAPSHOT)
