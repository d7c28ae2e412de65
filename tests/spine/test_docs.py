"""Generated docs (config reference, JSON Schemas) match the code, and the schema validates real stack files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from helpers import script_module

from aiinfra.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_generated_docs_are_fresh() -> None:
    module = script_module(ROOT / "scripts" / "gen_docs.py")
    stale = [str(path.relative_to(ROOT)) for path, text in module.outputs().items() if path.read_text() != text]
    assert not stale, f"regenerate with `.venv/bin/python scripts/gen_docs.py`: {stale}"


@pytest.mark.parametrize("stack_file", sorted((ROOT / "stacks").glob("Pulumi.*.yaml")), ids=lambda p: p.name)
def test_stack_files_validate_against_the_published_schema(stack_file: Path) -> None:
    schema = json.loads((ROOT / "docs" / "stack.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(stack_file.read_text()), schema)


def test_schema_rejects_what_the_models_reject() -> None:
    schema = json.loads((ROOT / "docs" / "platform.schema.json").read_text())
    bad = {"environment": "dev", "labels": {"owner": "a", "team": "b", "cost_center": "c"},
           "clouds": {"aws": {"regions": {"us-east-1": {"network": {"cidr": "10.0.0.0/16", "nat": "triple"}}}}}}
    with pytest.raises(jsonschema.ValidationError, match="triple"):
        jsonschema.validate(bad, schema)


def test_cli_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["title"].startswith("ai-infra platform")
    assert "clouds" in printed["properties"]


def test_the_readme_excerpt_of_the_dev_plan_is_what_the_plan_prints() -> None:
    from aiinfra.plan.program import plan_stack
    from aiinfra.plan.project import load_project
    from aiinfra.plan.summary import render_summary

    readme = (ROOT / "README.md").read_text()
    excerpt = readme.split("The dev plan starts like this", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    printed = iter(render_summary(plan_stack(load_project(ROOT), "dev")).splitlines())
    for line in excerpt.splitlines():
        if line.strip() != "...":
            assert line in printed, f"README excerpt line not in the dev plan (or out of order): {line!r}"


def test_the_readme_config_example_and_its_error_example_are_what_the_spec_says() -> None:
    """The config reference's example is valid, and the error example is what its two mistakes print."""
    from components.spec import SpecError, load_platform

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Config reference", 1)[1]
    config = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])["config"]["ai-infra:platform"]
    load_platform(config)
    region = config["clouds"]["aws"]["regions"]["us-east-1"]
    region["network"]["natt"] = "single"
    region["gpu_pools"]["train"].update(min_nodes=3, max_nodes=2)
    with pytest.raises(SpecError) as caught:
        load_platform(config)
    printed = str(caught.value).splitlines()
    shown = section.split("what is allowed:\n\n```\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(shown) == len(printed)
    for line, actual in zip(shown, printed, strict=True):
        assert actual == line or (line.endswith(", ...") and actual.startswith(line[:-3])), (line, actual)


def _reference_sections() -> dict[str, list[str]]:
    """The config reference's lines by section (`## Model`), heading excluded."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in (ROOT / "docs" / "config-reference.md").read_text().splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:], [])
        else:
            current.append(line)
    return sections


def test_class_summaries_in_the_reference_are_whole_sentences() -> None:
    """A summary is the docstring's whole first paragraph, not its first line (which can stop mid-sentence)."""
    sections = _reference_sections()
    summaries = {name: next((line for line in lines if line), "") for name, lines in sections.items()}
    summaries = {name: text for name, text in summaries.items() if not text.startswith("|")}  # no docstring: no summary
    assert {"Platform", "AwsCloudSpec", "GcpCloudSpec", "CloudsSpec"} <= set(summaries)
    for name, text in summaries.items():
        assert text.endswith("."), f"{name}: summary does not end with a full stop: {text!r}"
    assert summaries["AwsCloudSpec"].endswith("so one provider serves all regions.")
    assert "`GOOGLE_CREDENTIALS`" in summaries["GcpCloudSpec"]


def _type_cell(section: str, field: str) -> str:
    row = next(line for line in _reference_sections()[section] if line.startswith(f"| `{field}` |"))
    return row.split(" | ")[1]


def test_constrained_fields_show_their_rule_in_words() -> None:
    """A field whose type carries one of the spec's patterns shows the rule the loader's errors state
    (common.PATTERN_RULES), itself, in a union, in a list, and as a mapping's keys or values."""
    from components.spec.common import (ENVIRONMENT_RULE, GCP_PROJECT_RULE, GCP_ZONE_RULE, GUID_RULE,
                                        KUBERNETES_VERSION_RULE, LABEL_KEY_RULE, LABEL_VALUE_RULE, NAME_RULE)

    assert _type_cell("Platform", "environment") == f"`str` (environment name: {ENVIRONMENT_RULE})"
    assert _type_cell("Platform", "teams") == f"map[`str` (name: {NAME_RULE}), TeamSpec]"
    assert _type_cell("PlatformLabels", "owner") == f"`str` (label value: {LABEL_VALUE_RULE})"
    assert _type_cell("PlatformLabels", "extra") == (
        f"map[`str` (label key: {LABEL_KEY_RULE}), `str` (label value: {LABEL_VALUE_RULE})]")
    assert _type_cell("GcpCloudSpec", "project") == f"`str` (project ID: {GCP_PROJECT_RULE})"
    assert _type_cell("GcpCloudSpec", "zones") == f"map[str, list[`str` (zone: {GCP_ZONE_RULE})]]"
    assert _type_cell("AzureCloudSpec", "hpc_cache_principal_id") == f"`str` (GUID: {GUID_RULE}) or null"
    assert _type_cell("ClusterSpec", "kubernetes_version") == (
        f"`str` (Kubernetes version: {KUBERNETES_VERSION_RULE}) or null")
    assert _type_cell("Taint", "effect") == "`NoSchedule` \\| `PreferNoSchedule` \\| `NoExecute`"
    assert _type_cell("GcpCloudSpec", "regions") == "map[str, RegionSpec]"  # region names: checked against the catalog
