"""Whole-platform properties: default tags on the provider, per-resource region, parenting and type tokens,
protection outside dev, stable URNs and the resource budget of a region."""

from __future__ import annotations

import collections
import functools
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest
from helpers import assert_urns_match_snapshot

from aiinfra.plan.runtime import PlanResult

SNAPSHOT = Path(__file__).parent / "snapshots" / "prod_urns.txt"
STATEFUL = {"aws:kms/key:Key", "aws:s3/bucket:Bucket", "aws:fsx/lustreFileSystem:LustreFileSystem",
            "aws:cloudwatch/logGroup:LogGroup"}
REGION_OF_NAME = re.compile(r"^(?:prod|dev|test)-(?P<region>[a-z]{2}-[a-z]+-\d)-")


@functools.cache
def accepts_region(type_token: str) -> bool:
    """Whether the pulumi-aws resource has a per-resource `region` input (read from the installed SDK)."""
    _, module, name = type_token.split(":")
    sdk = importlib.import_module(f"pulumi_aws.{module.split('/')[0]}")
    args = getattr(sdk, f"{name}InitArgs", None) or getattr(sdk, f"{name}Args")
    return "region" in inspect.signature(args.__init__).parameters


@pytest.mark.parametrize("plan_name", ["prod_plan", "dev_plan"])
def test_tags_come_from_the_provider_default_tags(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan: PlanResult = request.getfixturevalue(plan_name)
    provider = plan.one("pulumi:providers:aws")
    assert provider.name == f"{plan.stack}-aws"
    tags = json.loads(provider.inputs["defaultTags"])["tags"]
    assert tags == {"environment": plan.stack, "owner": "ml-platform", "team": "ml-platform", "cost-center": "cc-1234",
                    "managed-by": "ai-infra"}
    for record in plan.resources:
        if record.type.startswith("aws:"):
            assert record.provider.startswith(provider.urn), record.name


def test_every_regional_resource_sets_its_region(prod_plan: PlanResult) -> None:
    regional = [r for r in prod_plan.resources if r.type.startswith("aws:") and accepts_region(r.type)]
    assert len(regional) > 150
    for record in regional:
        match = REGION_OF_NAME.match(record.name)
        assert match is not None, record.name
        assert record.inputs.get("region") == match["region"], record.name
    counts = collections.Counter(r.inputs["region"] for r in regional)
    assert set(counts) == {"us-east-1", "eu-west-1"}
    # the global ones: IAM, Global Accelerator
    global_types = {r.type for r in prod_plan.resources if r.type.startswith("aws:") and not accepts_region(r.type)}
    assert {t.split(":")[1].split("/")[0] for t in global_types} == {"iam", "globalaccelerator"}


def test_every_child_has_a_component_parent_and_type_tokens_are_ai_infra_aws(prod_plan: PlanResult) -> None:
    components = {r.urn: r for r in prod_plan.resources if not r.custom and r.type != "pulumi:pulumi:Stack"}
    assert {r.type.rsplit(":", 1)[1] for r in components.values()} == {
        "KmsKey", "LogBucket", "Network", "Bucket", "Cluster", "GpuNodePool", "Lustre", "InferenceEndpoint", "GlobalEndpoint",
        "ControllerRoles"}
    assert all(r.type.startswith("ai-infra:aws:") for r in components.values())
    for record in prod_plan.resources:
        if record.custom and not record.type.startswith("pulumi:providers:"):
            assert record.parent in components, record.name


def test_stateful_resources_are_protected_outside_dev(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    prod = [r for r in prod_plan.resources if r.type in STATEFUL]
    assert {r.type for r in prod} == STATEFUL
    for record in prod:
        assert record.protect and record.retainOnDelete, record.name
    dev = [r for r in dev_plan.resources if r.type in STATEFUL]
    assert {r.type for r in dev} == STATEFUL
    assert not any(r.protect or r.retainOnDelete for r in dev)


def test_a_production_region_stays_within_the_resource_budget(prod_plan: PlanResult) -> None:
    east = [r for r in prod_plan.resources if r.name.startswith("prod-us-east-1")]
    # network + cluster (with its VPC CNI, kube-proxy and CoreDNS add-ons) + 3 accelerator pools + Lustre + 2 buckets +
    # inference + controller roles, components included
    assert 80 <= len(east) <= 130, len(east)


def test_urns_match_the_snapshot(prod_plan: PlanResult) -> None:
    assert_urns_match_snapshot([r.urn for r in prod_plan.resources], SNAPSHOT)
