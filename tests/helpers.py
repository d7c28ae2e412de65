"""Test helpers importable from any test module (`from helpers import ...`; tests/ is on pythonpath)."""

from __future__ import annotations

import copy
import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

BASE_PLATFORM: dict[str, Any] = {
    "environment": "test",
    "labels": {"owner": "ml-platform", "team": "ml-platform", "cost_center": "cc-1234"},
    "clouds": {},
}


AZURE_ONLY = {"azure": {"regions": {"eastus2": {"network": {"cidr": "10.50.0.0/16", "transit_encryption": "monitor"}}}}}
"""The `clouds` of the smallest Azure-only platform (pass to `platform_dict`)."""


def script_module(path: Path, name: str | None = None) -> ModuleType:
    """A Python file that is not importable as a module (a script, the pack's gen_config, a bootstrap program's
    file), loaded on its own as `name` (default: the file's stem)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def platform_dict(clouds: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A valid platform config with the given clouds and top-level overrides (deep-copied)."""
    data = copy.deepcopy(BASE_PLATFORM)
    data["clouds"] = copy.deepcopy(clouds)
    data.update(copy.deepcopy(top))
    return data


def full_platform_dict() -> dict[str, Any]:
    """A valid two-cloud platform exercising pools, Lustre, buckets, TPU slices, teams and residency."""
    return platform_dict(
        {
            "aws": {
                "regions": {
                    "us-east-1": {
                        "network": {"cidr": "10.10.0.0/16"},
                        "cluster": {},
                        "gpu_pools": {"train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 4}},
                        "lustre": {"scratch": {"size_gib": 2400, "throughput_mbps_per_tib": 250, "bucket": "datasets"}},
                        "buckets": {"datasets": {}},
                    }
                }
            },
            "gcp": {
                "project": "acme-ml-prod",
                "regions": {
                    "us-central1": {
                        "network": {"cidr": "10.20.0.0/16"},
                        "cluster": {},
                        "tpu_slices": {"pretrain": {"generation": "v5e", "topology": "2x4"}},
                    }
                },
            },
        },
        compliance={"profiles": ["baseline", "hipaa"], "allowed_regions": ["us-east-1", "us-central1"],
                    "data_zones": {"eu": ["eu-west-1", "europe-west4"]}},
        teams={"research": {"gpu_quota": 16, "tpu_quota": 8}},
    )


DELETE = object()
"""Pass as the value to `change` to remove the key."""


def change(config: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `config` with `value` set (or DELETE-d) at the /-separated path."""
    data = copy.deepcopy(config)
    *parents, last = path.split("/")
    node = data
    for key in parents:
        node = node.setdefault(key, {})
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return data


def assert_urns_match_snapshot(urns: list[str], snapshot: Path) -> None:
    """Child names are part of the API: a renamed child is a replaced resource. Regenerate deliberately with
    AIINFRA_UPDATE_SNAPSHOTS=1 (and add `aliases` for every renamed resource)."""
    text = "\n".join(sorted(urns)) + "\n"
    if os.environ.get("AIINFRA_UPDATE_SNAPSHOTS"):
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(text)
    expected = snapshot.read_text()
    missing = sorted(set(expected.splitlines()) - set(text.splitlines()))
    added = sorted(set(text.splitlines()) - set(expected.splitlines()))
    assert not missing and not added, f"URNs changed; missing: {missing[:10]}; added: {added[:10]}"


def run_platform(spec: Any, stack: str = "test") -> Any:
    """Plan a validated platform spec the way `stacks/__main__.py` runs it: every cloud composition, the Kubernetes
    layer and the exports. Returns the PlanResult."""
    from aiinfra.plan.runtime import run_program
    from components.compose import deploy

    return run_program(lambda: deploy(spec), project="ai-infra", stack=stack)


def write_program(root: Path, source: str, stack_file: str = "config: {}\n") -> Path:
    """A one-file Pulumi Python project `x` with stack `dev`."""
    (root / "Pulumi.yaml").write_text("name: x\nruntime: python\n")
    (root / "Pulumi.dev.yaml").write_text(stack_file)
    (root / "__main__.py").write_text(source)
    return root


def stack_platform(stack: str) -> dict[str, Any]:
    """A fresh copy of the `ai-infra:platform` value of `stacks/Pulumi.<stack>.yaml`."""
    import yaml

    path = Path(__file__).resolve().parents[1] / "stacks" / f"Pulumi.{stack}.yaml"
    return copy.deepcopy(yaml.safe_load(path.read_text())["config"]["ai-infra:platform"])


def edited_stack_plan(stack: str, edits: dict[str, Any]) -> dict[str, Any]:
    """The plan document (`aiinfra plan --json`) of the stack's platform with `edits` ({/-separated path: value},
    see `change`) applied: the head of a day-2 `--diff` against `edited_stack_plan(stack, {})`."""
    from components.spec import load_platform

    config = stack_platform(stack)
    for path, value in edits.items():
        config = change(config, path, value)
    return run_platform(load_platform(config), stack=stack).to_json()


def spec_issues(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The (config path, message) pairs `load_platform` refuses `data` with; the test fails if it loads."""
    import pytest

    from components.spec import SpecError, load_platform

    with pytest.raises(SpecError) as caught:
        load_platform(data)
    return caught.value.issues


PLAN_STACK_URN = "urn:pulumi:prod::ai-infra::pulumi:pulumi:Stack::ai-infra-prod"
"""The stack URN of the hand-made prod plan documents `plan_record` and `base_and_head` build (diff tests)."""


def plan_record(type_: str, name: str, inputs: dict, parent: str = PLAN_STACK_URN, **options: Any) -> dict:
    """One resource of a hand-made plan document (`aiinfra plan --json` form), a custom resource with no options set
    unless `options` sets them."""
    return {"urn": f"urn:pulumi:prod::ai-infra::{type_}::{name}", "type": type_, "name": name, "parent": parent,
            "custom": True, "provider": "", "protect": False, "retainOnDelete": False, "ignoreChanges": [],
            "replaceOnChanges": [], "inputs": inputs, **options}


def base_and_head(*records: dict) -> tuple[dict, dict]:
    """A base plan of prod holding the stack and `records`, and a copy of it to edit as the head."""
    stack = {"urn": PLAN_STACK_URN, "type": "pulumi:pulumi:Stack", "name": "ai-infra-prod", "parent": "",
             "custom": False, "inputs": {}}
    base = {"project": "ai-infra", "stack": "prod", "resources": [stack, *copy.deepcopy(records)]}
    return base, copy.deepcopy(base)


def only_entry(diff: dict) -> dict:
    """The one changed or replaced resource of a `diff_plans` result (the test fails if there is not exactly one)."""
    [entry] = [e for g in diff["components"].values() for kind in ("changed", "replaced") for e in g[kind]]
    return entry


def resource_record(type_: str, name: str, inputs: dict | None = None, parent: str | None = None, custom: bool = True,
                    stack: str = "prod") -> Any:
    """One `ResourceRecord` of a hand-made plan of project ai-infra (summary tests), parented to the stack
    `ai-infra-<stack>` unless `parent` is given ("" for the stack itself), with no options set."""
    from aiinfra.plan.runtime import ResourceRecord

    return ResourceRecord(urn=f"urn:pulumi:{stack}::ai-infra::{type_}::{name}", type=type_, name=name,
                          parent=f"urn:pulumi:{stack}::ai-infra::pulumi:pulumi:Stack::ai-infra-{stack}" if parent is None
                          else parent, provider="", custom=custom, protect=False, retainOnDelete=False,
                          ignoreChanges=[], dependencies=[], inputs=inputs or {})
