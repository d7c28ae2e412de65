"""The GitHub workflows validate offline (GitHub's workflow schema and actionlint) and say what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def test_workflows_match_githubs_schema() -> None:
    done = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_nothing() -> None:
    done = subprocess.run([str(BIN / "actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def flows() -> dict[str, dict]:
    return {p.stem: yaml.safe_load(p.read_text()) for p in WORKFLOWS}


def test_preview_plans_base_and_head_comments_once_and_fails_on_violations(flows: dict[str, dict]) -> None:
    preview = flows["preview"]
    assert "pull_request" in preview[True]  # PyYAML reads the `on:` key as True
    steps = preview["jobs"]["offline-plan"]["steps"]
    script = "\n".join(str(s.get("run", "")) + str(s.get("with", {}).get("script", "")) for s in steps)
    assert "make test" in script and "--diff" in script and "--markdown" in script
    assert "updateComment" in script and "<!-- ai-infra-plan -->" in script
    assert steps[-1]["if"] == "steps.plan.outputs.status != '0'"
    real = preview["jobs"]["pulumi-preview"]
    assert real["if"] == "vars.PULUMI_PREVIEW_ENABLED == 'true'"
    action = next(s for s in real["steps"] if str(s.get("uses", "")).startswith("pulumi/actions"))
    assert action["with"]["command"] == "preview" and action["with"]["policyPacks"] == "policies"


def test_deploy_goes_dev_then_staging_then_prod_with_protection(flows: dict[str, dict]) -> None:
    deploy = flows["deploy"]
    assert deploy[True]["push"]["branches"] == ["main"]
    jobs = deploy["jobs"]
    assert jobs["staging"]["needs"] == "dev" and jobs["prod"]["needs"] == "staging"
    assert {jobs[e]["with"]["environment"] for e in ("staging", "prod")} == {"staging", "prod"}
    up = flows["pulumi-up"]["jobs"]["up"]
    assert up["environment"] == "${{ inputs.environment }}"
    action = next(s for s in up["steps"] if str(s.get("uses", "")).startswith("pulumi/actions"))
    assert action["with"]["command"] == "up"
    assert action["with"]["policyPackConfigs"] == "policies/config/${{ inputs.stack }}.json"
