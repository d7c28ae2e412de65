"""Read a Pulumi project the way the CLI does: Pulumi.yaml, the stack file, and the flat config map."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SECRET_PLACEHOLDER = "[secret]"


class ProjectError(Exception):
    """The project or stack files are missing or malformed; the message says which and why."""


@dataclass
class Project:
    root: Path
    name: str
    main: Path
    stack_config_dir: Path

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.stack_config_dir.glob("Pulumi.*.yaml"))


def load_project(root: Path) -> Project:
    path = root / "Pulumi.yaml"
    if not path.is_file():
        raise ProjectError(f"no Pulumi.yaml in {root}; pass --program DIR pointing at a Pulumi project")
    data = _read_yaml(path)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{path}: 'name' is required")
    runtime = data.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name != "python":
        raise ProjectError(f"{path}: runtime is {runtime_name!r}; aiinfra plan runs Python programs only")
    main = (root / data.get("main", ".")).resolve()
    config_dir = (root / data.get("stackConfigDir", ".")).resolve()
    return Project(root=root.resolve(), name=name, main=main, stack_config_dir=config_dir)


def load_stack_config(project: Project, stack: str) -> tuple[dict[str, str], list[str]]:
    """The engine's flat config map {"ns:key": "value-or-JSON"} and the keys holding secrets.

    Keys without a namespace belong to the project, as in the CLI. `secure:` values (which need the
    stack's secrets provider to decrypt) become a placeholder marked secret: the plan never decrypts.
    """
    path = project.stack_file(stack)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise ProjectError(f"stack '{stack}' has no config file {path}; known stacks: {known}")
    data = _read_yaml(path) or {}
    raw = data.get("config") or {}
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping")
    config: dict[str, str] = {}
    secrets: list[str] = []
    for key, value in raw.items():
        full = key if ":" in key else f"{project.name}:{key}"
        value, secret = _strip_secure(value)
        if secret:
            secrets.append(full)
        if isinstance(value, bool):
            value = "true" if value else "false"  # the CLI stores top-level booleans as strings
        config[full] = value if isinstance(value, str) else json.dumps(value)
    return config, secrets


def _strip_secure(value: Any) -> tuple[Any, bool]:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        out, any_secret = {}, False
        for k, v in value.items():
            out[k], secret = _strip_secure(v)
            any_secret |= secret
        return out, any_secret
    if isinstance(value, list):
        items = [_strip_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ProjectError(f"{path} is not valid YAML: {err}") from None
