"""Read a Pulumi project the way the CLI does: Pulumi.yaml, the stack file, and the flat config map."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
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
    config_defaults: dict[str, Any] = field(default_factory=dict)
    """Project-level config from Pulumi.yaml (`config:`), by full key; a stack file's value overrides it."""
    secret_defaults: frozenset[str] = frozenset()

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def entry_point(self) -> Path:
        """What the Python language host runs: `main` itself, or the `__main__.py` of a `main` directory."""
        where = self.root / "Pulumi.yaml"
        if not self.main.exists():
            raise ProjectError(f"{where}: main {self.main} does not exist")
        if self.main.is_dir() and not (self.main / "__main__.py").is_file():
            raise ProjectError(f"{where}: main directory {self.main} has no __main__.py (Pulumi runs a directory's __main__.py)")
        return self.main

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.stack_config_dir.glob("Pulumi.*.yaml"))


def load_project(root: Path) -> Project:
    path = root / "Pulumi.yaml"
    if not path.is_file():
        raise ProjectError(f"no Pulumi.yaml in {root}; pass --program DIR pointing at a Pulumi project")
    data = _read_mapping(path)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{path}: 'name' is required")
    runtime = data.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name != "python":
        raise ProjectError(f"{path}: runtime is {runtime_name!r}; aiinfra plan runs Python programs only")
    main = (root / _relative_path(path, data, "main")).resolve()
    config_dir = (root / _relative_path(path, data, "stackConfigDir")).resolve()
    defaults, secret = _project_config(path, name, data.get("config"))
    return Project(root=root.resolve(), name=name, main=main, stack_config_dir=config_dir,
                   config_defaults=defaults, secret_defaults=frozenset(secret))


def _relative_path(path: Path, data: dict[str, Any], key: str) -> str:
    """A directory or file setting of Pulumi.yaml, relative to the project root; "." when not set."""
    value = data.get(key, ".")
    if not isinstance(value, str) or not value:
        raise ProjectError(f"{path}: '{key}' must be a path relative to the project, got {value!r}")
    return value


_DECLARATION_KEYS = {"type", "description", "default", "value", "secret", "items"}


def _project_config(path: Path, project: str, raw: Any) -> tuple[dict[str, Any], set[str]]:
    """Values from Pulumi.yaml's project-level `config:` block (Pulumi 3.44+), as the CLI applies them.

    A key is either a declaration ({type, description, default | value, secret}) or a plain value (short form).
    Keys without a namespace are the project's. `pulumi:tags` holds stack tags, not program config.
    """
    if raw is None:
        return {}, set()
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping of config keys, got {type(raw).__name__}")
    defaults: dict[str, Any] = {}
    secret: set[str] = set()
    for key, spec in raw.items():
        full = key if ":" in str(key) else f"{project}:{key}"
        if full == "pulumi:tags":
            continue
        if isinstance(spec, dict) and spec and set(spec) <= _DECLARATION_KEYS:
            if "value" in spec:
                value = spec["value"]
            elif "default" in spec:
                value = spec["default"]
            else:
                continue  # declared without a default: the stack file must set it (the program's require() says so)
            if spec.get("secret") is True:
                secret.add(full)
        else:
            value = spec
        defaults[full] = value
    return defaults, secret


def load_stack_config(project: Project, stack: str) -> tuple[dict[str, str], list[str]]:
    """The engine's flat config map {"ns:key": "value-or-JSON"} and the keys holding secrets.

    Keys without a namespace belong to the project, as in the CLI. `secure:` values (which need the
    stack's secrets provider to decrypt) become a placeholder marked secret: the plan never decrypts.
    """
    path = project.stack_file(stack)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise ProjectError(f"stack '{stack}' has no config file {path}; known stacks: {known}")
    data = _read_mapping(path)
    raw = data.get("config") or {}
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping")
    config: dict[str, str] = {}
    secrets: list[str] = []
    stack_values = {(key if ":" in key else f"{project.name}:{key}"): value for key, value in raw.items()}
    for full, value in {**project.config_defaults, **stack_values}.items():
        value, secret = _strip_secure(value)
        if secret or (full in project.secret_defaults and full not in stack_values):
            secrets.append(full)
        if isinstance(value, bool):
            value = "true" if value else "false"  # the CLI stores top-level booleans as strings
        config[full] = value if isinstance(value, str) else json.dumps(value)
    return config, secrets


def stack_environments(project: Project, stack: str) -> list[str]:
    """The Pulumi ESC environments the stack file imports (`environment:`). An offline plan cannot open them, so
    the config they provide is missing from the plan."""
    path = project.stack_file(stack)
    imports = _read_mapping(path).get("environment") if path.is_file() else None
    if isinstance(imports, str):
        return [imports]
    return [str(name) for name in imports] if isinstance(imports, list) else []


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


class _CliYamlLoader(yaml.SafeLoader):
    """YAML as the Pulumi CLI (Go yaml.v3) reads config: only true/false are booleans, so `off`, `no`, `on`
    and `yes` stay strings (PyYAML's YAML 1.1 default would turn `reasoning: off` into false)."""


_CliYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_CliYamlLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _mapping_without_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """Go's yaml.v3, which the Pulumi CLI reads these files with, refuses a key given twice in one mapping (PyYAML
    would keep the last): refuse it too, so a file aiinfra accepts is one `pulumi up` accepts."""
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice in one mapping (first at "
                                                    f"line {seen[key].start_mark.line + 1})", key_node.start_mark)
        seen[key] = key_node
    return loader.construct_mapping(node)


_CliYamlLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def _yaml_error(path: Path, err: yaml.YAMLError) -> str:
    """One line: the file, line and column, and what is wrong there (PyYAML's own text spans several lines and names
    the text it parsed, not the file)."""
    mark = getattr(err, "problem_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = " ".join(filter(None, [getattr(err, "context", None), getattr(err, "problem", None)])) or str(err)
    return f"{where}: not valid YAML: {' '.join(problem.split())}"


def _read_mapping(path: Path) -> dict[str, Any]:
    """A project or stack file's settings; an empty file has none. Read-only: the parse of a file's text is cached, so
    the plan and its checks (environments, config) parse a stack file once."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ProjectError(f"{path} is not UTF-8 text: byte {err.object[err.start]:#04x} at offset {err.start}") from None
    except OSError as err:
        raise ProjectError(f"{path}: cannot read it ({err.strerror})") from None
    try:
        data = _parse(text)
    except yaml.YAMLError as err:
        raise ProjectError(_yaml_error(path, err)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProjectError(f"{path}: expected a mapping of settings (name: ..., config: ...), got {type(data).__name__}")
    return data


@functools.lru_cache(maxsize=8)
def _parse(text: str) -> Any:
    """Keyed by the text itself, so an edited file is parsed again however soon after (mtimes are coarse)."""
    return yaml.load(text, Loader=_CliYamlLoader)  # noqa: S506 (a SafeLoader subclass)
