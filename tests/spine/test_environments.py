"""The reference environments plan offline, and the prod plan is what the issues promise."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from helpers import assert_urns_match_snapshot

from aiinfra.cli import main
from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanResult

ROOT = Path(__file__).resolve().parents[2]
ENVIRONMENTS = ["dev", "staging", "prod"]


@cache
def planned(stack: str) -> PlanResult:
    return plan_stack(load_project(ROOT), stack)


@pytest.mark.parametrize("stack", ENVIRONMENTS)
def test_environment_plans_without_error(stack: str) -> None:
    result = planned(stack)
    types = {r.type for r in result.resources}
    assert "pulumi:pulumi:Stack" in types
    assert sum(r.custom for r in result.resources) > 50
    assert result.outputs["environment"] == stack


@pytest.mark.parametrize("stack", ENVIRONMENTS)
def test_every_custom_resource_lives_under_an_ai_infra_component(stack: str) -> None:
    result = planned(stack)
    by_urn = {r.urn: r for r in result.resources}
    for record in result.resources:
        if not record.custom or record.type.startswith("pulumi:providers:"):
            continue
        parent = by_urn.get(record.parent)
        assert parent is not None and not parent.custom, f"{record.urn} has no component parent"
        assert parent.type.startswith("ai-infra:"), f"{record.urn} is parented to {parent.type}"


def test_prod_is_multi_region_on_all_three_clouds() -> None:
    result = planned("prod")
    component_types = {r.type for r in result.resources if not r.custom}
    for cloud in ("aws", "gcp", "azure", "kubernetes"):
        assert any(t.startswith(f"ai-infra:{cloud}:") for t in component_types), cloud
    assert result.of_type("aws:globalaccelerator/accelerator:Accelerator")
    assert result.of_type("gcp:compute/globalForwardingRule:GlobalForwardingRule")
    assert result.of_type("azure-native:cdn:Profile")
    tpu_pools = [r for r in result.of_type("gcp:container/nodePool:NodePool") if (r.inputs.get("placementPolicy") or {}).get("tpuTopology")]
    assert len(tpu_pools) >= 3  # 2 x v5p multislice + v6e


def test_stateful_resources_are_protected_in_prod_and_not_in_dev() -> None:
    stateful = ["aws:fsx/lustreFileSystem:LustreFileSystem", "aws:kms/key:Key", "gcp:storage/bucket:Bucket"]
    for kind in stateful:
        prod = planned("prod").of_type(kind)
        assert prod and all(r.protect for r in prod), kind
        assert not any(r.protect for r in planned("dev").of_type(kind)), kind


def test_plan_json_for_prod(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    code = main(["plan", "--stack", "prod", "--json", str(out), "-q"])
    document = json.loads(out.read_text())
    assert code == 0, document.get("policy")
    assert document["project"] == "ai-infra" and document["stack"] == "prod"
    assert not [v for v in document["policy"]["violations"] if v["enforcementLevel"] == "mandatory"]
    # Policies whose inputs the toolkit can know at preview are evaluated, not skipped: the flow-log delivery policies
    # name their log group's ARN from its fixed name. (A bucket policy names a KMS key ARN, unknown until created.)
    skipped = {v["urn"].split("::")[-1] for v in document["policy"]["violations"] if "can't be known" in v["message"]}
    assert not [name for name in skipped if "flow-logs" in name], skipped


@pytest.mark.parametrize("stack", ENVIRONMENTS)
def test_the_reference_environments_keep_their_urns(stack: str) -> None:
    """A child renamed in a refactor is a resource replaced in every deployed environment: the reference stacks' own
    URNs are pinned here (the per-cloud snapshots pin test fixtures). Regenerate deliberately, with aliases."""
    assert_urns_match_snapshot([r.urn for r in planned(stack).resources], ROOT / "tests" / "spine" / "snapshots" / f"{stack}_urns.txt")


@pytest.mark.parametrize("stack", ENVIRONMENTS)
def test_the_readme_lists_the_rules_each_environment_reports(stack: str, tmp_path: Path) -> None:
    from policy_helpers import RULES

    out = tmp_path / "plan.json"
    assert main(["plan", "--stack", stack, "--json", str(out), "-q"]) == 0
    reported = {v["policy"] for v in json.loads(out.read_text())["policy"]["violations"]}
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("### Policy verdicts of the reference environments", 1)[1].split("\n\nUnknown values", 1)[0]
    bullet = next(b for b in section.split("\n- ") if b.startswith(f"**{stack}**"))
    listed = {name for name in re.findall(r"`([a-z0-9-]+)`", bullet) if name in RULES}
    assert listed == reported, f"README says {sorted(listed)}; the plan reports {sorted(reported)}"
