"""The project and the templates refresh on every preview, update and destroy (Pulumi.yaml `options.refresh: always`,
Pulumi CLI 3.14+): node counts the autoscalers own are in ignore_changes, which sends back the value in state, and
only a refresh makes that the live one. The offline planner still loads such a project."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aiinfra.plan.project import load_project

ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = [ROOT / "Pulumi.yaml", *sorted((ROOT / "templates").glob("*/Pulumi.yaml"))]


@pytest.mark.parametrize("path", PROJECT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_project_file_refreshes_always(path: Path) -> None:
    # "always" is the only value the CLI's project schema allows (sdk/go/common/workspace/project.json, options.refresh).
    assert yaml.safe_load(path.read_text())["options"] == {"refresh": "always"}


def test_there_are_the_root_project_and_three_templates() -> None:
    assert len(PROJECT_FILES) == 4


def test_the_planner_loads_the_project_with_the_option() -> None:
    project = load_project(ROOT)
    assert project.name == "ai-infra" and project.main == (ROOT / "stacks").resolve()
