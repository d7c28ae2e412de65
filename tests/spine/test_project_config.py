"""Project-level config (Pulumi.yaml `config:`) applies to every stack, under the stack file's own values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import ProjectError, load_project, load_stack_config
from aiinfra.plan.runtime import SECRET_SIG

PROGRAM = Path(__file__).resolve().parents[1] / "data" / "programs" / "project-config"


def test_defaults_reach_the_program_and_the_stack_file_wins() -> None:
    result = plan_stack(load_project(PROGRAM), "demo")
    deployment = result.one("kubernetes:apps/v1:Deployment")
    spec = deployment.inputs["spec"]
    assert spec["replicas"] == 2  # `type: integer, default: 2`
    assert spec["selector"]["matchLabels"] == {"app": "web", "team": "web"}  # an object default
    assert spec["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"  # the stack file overrides the default
    assert len(result.of_type("kubernetes:core/v1:Service")) == 1  # `type: boolean, default: true`
    assert result.outputs["namespace"] == "web"  # a namespaced key's `value`
    assert result.outputs["region"] == "eu-west-1"  # short form: a plain value
    assert result.outputs["reasoning"] == "off"  # YAML as the CLI reads it: `off` is a string, not false


def test_secret_default_stays_secret() -> None:
    result = plan_stack(load_project(PROGRAM), "demo")
    assert result.outputs["token"][SECRET_SIG]


def test_config_map_has_the_engine_form() -> None:
    config, secrets = load_stack_config(load_project(PROGRAM), "demo")
    assert config["project-config-demo:replicas"] == "2"
    assert config["project-config-demo:exposeService"] == "true"
    assert json.loads(config["project-config-demo:labels"]) == {"team": "web"}
    assert "pulumi:tags" not in config  # stack tags are not program config
    assert secrets == ["project-config-demo:apiToken"]


def test_declared_key_without_default_is_left_to_the_stack(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\nconfig:\n  dbPassword:\n    type: string\n    secret: true\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    assert load_stack_config(load_project(tmp_path), "dev") == ({}, [])


def test_malformed_config_block_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\nconfig: [a, b]\n")
    with pytest.raises(ProjectError, match=r"Pulumi.yaml: 'config' must be a mapping of config keys, got list"):
        load_project(tmp_path)


@pytest.mark.parametrize(("text", "message"), [
    # Go's yaml.v3 (the Pulumi CLI) refuses a key given twice; PyYAML alone would keep the last value silently.
    ("config:\n  demo:replicas: 2\n  demo:replicas: 3\n", ":3:3: not valid YAML: key 'demo:replicas' is given twice in one mapping (first at line 2)"),
    ("config:\n\tdemo:replicas: 2\n", ":2:1: not valid YAML: while scanning for the next token found character '\\t' that cannot start any token"),
])
def test_a_malformed_stack_file_is_one_line_naming_file_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text(text)
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "x")
    assert str(caught.value) == f"{tmp_path / 'Pulumi.x.yaml'}{message}"


def test_a_stack_file_is_parsed_once_per_text_and_again_when_edited(tmp_path) -> None:  # noqa: ANN001
    from aiinfra.plan import project as project_module
    from aiinfra.plan.project import load_project, load_stack_config, stack_environments

    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\n")
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text("environment: [shared]\nconfig:\n  demo:size: 1\n")
    project = load_project(tmp_path)
    project_module._parse.cache_clear()
    assert load_stack_config(project, "dev")[0] == {"demo:size": "1"} and stack_environments(project, "dev") == ["shared"]
    assert project_module._parse.cache_info().misses == 1  # the plan and its environment check share one parse
    stack.write_text("environment: [shared]\nconfig:\n  demo:size: 2\n")  # same size, same coarse mtime tick
    assert load_stack_config(project, "dev")[0] == {"demo:size": "2"}
