"""Read a Pulumi project the way the CLI does: Pulumi.yaml (or .json, .yml), the stack file, and the flat config map."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .config_keys import config_key
from .declarations import MISSING, ConfigDeclaration, default_content, matches_type, project_config, stack_content, type_name
from .esc import StackEnvironment, merge_under, read_environment
from .goyaml import GoTime, NonStringKey, go_json, parse, scalar_text

SECRET_PLACEHOLDER = "[secret]"


class ProjectError(Exception):
    """The project or stack files are missing or malformed; the message says which and why."""


PROJECT_FILES = ("Pulumi.json", "Pulumi.yaml", "Pulumi.yml")
"""The project file names the CLI looks for, in its order (sdk/go/common/workspace/paths.go, findProjectInDir over
encoding.Exts); a stack file takes its project file's extension."""


def project_file(directory: Path) -> Path | None:
    """The directory's project file, as the CLI picks it; None when it has none."""
    return next((directory / name for name in PROJECT_FILES if (directory / name).is_file()), None)


@dataclass
class Project:
    root: Path
    file: Path
    """The project file: Pulumi.yaml, or Pulumi.json / Pulumi.yml."""
    name: str
    main: Path
    stack_config_dir: Path
    config_declarations: tuple[ConfigDeclaration, ...] = ()
    """Project-level config from Pulumi.yaml (`config:`); a stack file's value overrides a default."""

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}{self.file.suffix}"

    def entry_point(self) -> Path:
        """What the Python language host runs: `main` itself, or the `__main__.py` of a `main` directory."""
        where = self.file
        if not self.main.exists():
            raise ProjectError(f"{where}: main {self.main} does not exist")
        if self.main.is_dir() and not (self.main / "__main__.py").is_file():
            raise ProjectError(f"{where}: main directory {self.main} has no __main__.py (Pulumi runs a directory's __main__.py)")
        return self.main

    def stacks(self) -> list[str]:
        suffix = self.file.suffix
        return sorted(p.name[len("Pulumi.") : -len(suffix)] for p in self.stack_config_dir.glob(f"Pulumi.*{suffix}"))


def load_project(root: Path) -> Project:
    path = project_file(root)
    if path is None:
        raise ProjectError(f"no Pulumi.yaml in {root}; pass --program DIR pointing at a Pulumi project")
    data = _read_mapping(path)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{path}: 'name' is required")
    runtime = data.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name != "python":
        raise ProjectError(f"{path}: runtime is {runtime_name!r}; aiinfra plan runs Python programs only")
    config = data.get("config")
    if isinstance(config, str):
        # The deprecated spelling of stackConfigDir (project.go RewriteConfigPathIntoStackConfigDir).
        if "stackConfigDir" in data:
            raise ProjectError(f"{path}: Should not use both config and stackConfigDir to define the stack directory. "
                               "Use only stackConfigDir instead.")
        data = {**data, "stackConfigDir": config}
        config = None
    main = (root / _relative_path(path, data, "main")).resolve()
    config_dir = (root / _relative_path(path, data, "stackConfigDir")).resolve()
    try:
        declarations = project_config(path, name, config)
    except ValueError as err:
        raise ProjectError(str(err)) from None
    return Project(root=root.resolve(), file=path.resolve(), name=name, main=main, stack_config_dir=config_dir,
                   config_declarations=declarations)


def _relative_path(path: Path, data: dict[str, Any], key: str) -> str:
    """A directory or file setting of Pulumi.yaml, relative to the project root; "." when not set, null or empty (the
    project schema allows null; the CLI reads an empty `main` as "." (pkg/engine/project.go getPwdMain) and joins an
    empty stackConfigDir to the project's directory)."""
    value = data.get(key)
    if value is None or value == "":
        return "."
    if not isinstance(value, str):
        raise ProjectError(f"{path}: '{key}' must be a path relative to the project, got {value!r}")
    return value


_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]*")


def check_stack_name(stack: str) -> None:
    """tokens.ParseStackName (sdk/go/common/tokens/stack_name.go): the CLI refuses any other name, and a stack's name
    names its file."""
    if not stack:
        problem = "a stack name may not be empty"
    elif len(stack) > 100:
        problem = "a stack name cannot exceed 100 characters"
    else:
        end = _STACK_NAME.match(stack).end()  # type: ignore[union-attr] (the pattern matches the empty string)
        if end == len(stack):
            return
        problem = ("a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character "
                   f"'{stack[end]}' at position {end}")
    raise ProjectError(f"stack {stack!r}: {problem}")


def missing_stack_file(project: Project, stack: str) -> str | None:
    """The warning for a stack without a stack file, which the CLI plans with empty config (workspace/loaders.go
    LoadProjectStack); the stack files there are named, so a mistyped stack name shows."""
    path = project.stack_file(stack)
    if path.is_file():
        return None
    known = ", ".join(project.stacks()) or "none"
    return (f"stack '{stack}' has no config file {path}: planning it with empty config, as `pulumi preview` does "
            f"(stacks with a file there: {known})")


def stack_values(project: Project, stack: str) -> tuple[Path, dict[str, Any]]:
    """The stack file's path and its config as written (YAML values, `secure:` ones as `{"secure": ...}`), by full
    key: a bare key is the project's, the older `ns:config:key` form is `ns:key` (config_keys.py), and two keys that
    name one key are refused, where the CLI would keep one of them at random. A stack without a stack file has no
    config, as in the CLI (missing_stack_file says so)."""
    check_stack_name(stack)
    path = project.stack_file(stack)
    if not path.is_file():
        return path, {}
    raw = _read_mapping(path).get("config") or {}
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping")
    values: dict[str, Any] = {}
    written: dict[str, str] = {}
    for key, value in raw.items():
        try:
            full = config_key(str(key), project.name)
        except ValueError as err:
            raise ProjectError(f"{path}: {err}") from None
        if full in written:
            raise ProjectError(f"{path}: config keys '{written[full]}' and '{key}' are the same key {full}; keep one")
        # A key with no value is the empty string in a YAML file: yaml.v3 leaves the CLI's config.Value unset for a
        # null node. encoding/json calls config.Value's UnmarshalJSON even for null, which makes it "null".
        # empty_config_warning says so, as the CLI does.
        values[full], written[full] = ("" if value is None and path.suffix != ".json" else value), str(key)
    return path, values


def empty_config_warning(project: Project, stack: str) -> str | None:
    """The CLI's warning for stack config keys written with no value (workspace/loaders.go checkForEmptyConfig),
    which it gives the program as the empty string (from a JSON stack file, as "null"); the keys as the file writes
    them."""
    path = project.stack_file(stack)
    raw = _read_mapping(path).get("config") if path.is_file() else None
    keys = [f'"{key}"' for key, value in raw.items() if value is None] if isinstance(raw, dict) else []
    if not keys:
        return None
    listed = keys[0] if len(keys) == 1 else ", ".join(keys[:-1]) + f" and {keys[-1]}"
    plural = "s" if len(keys) > 1 else ""
    reads = '"null" (from a JSON stack file)' if path.suffix == ".json" else 'an empty string ""'
    return (f"stack '{stack}': no value for configuration key{plural} {listed} in {path.name}; the CLI treats "
            f"{'it' if len(keys) == 1 else 'each'} as {reads} (a future Pulumi will read null): set "
            f"{'it' if len(keys) == 1 else 'them'} to \"\" to avoid this warning")


def load_stack_config(project: Project, stack: str) -> tuple[dict[str, str], list[str]]:
    """The engine's flat config map {"ns:key": "value-or-JSON"} and the keys holding secrets.

    Keys without a namespace belong to the project, as in the CLI. `secure:` values (which need the
    stack's secrets provider to decrypt) become a placeholder marked secret: the plan never decrypts.
    Pulumi.yaml's project config is merged and checked as `pulumi preview` does (pkg/workspace/config.go,
    mergeConfig and validateStackConfigValue): a declared key the stack lacks, a secret one the stack holds in
    plain text or a value of the wrong type fails before the program runs.
    """
    path, values = stack_values(project, stack)
    # An inline ESC environment's plain pulumiConfig values, under the stack file's (config.go mergeConfig).
    for key, value in stack_environment(project, stack).config.items():
        try:
            full = config_key(key, project.name)
        except ValueError as err:
            raise ProjectError(f"{path}: environment.values.pulumiConfig: {err}") from None
        values[full] = merge_under(values[full], value) if full in values else value
    from_project: set[str] = set()
    missing = []
    declarations = sorted(project.config_declarations, key=lambda d: d.key)
    for declaration in declarations:
        if declaration.full in values:
            continue
        if declaration.value is MISSING:
            if declaration.namespace == project.name:
                missing.append(declaration.key)
            continue
        # A project default is set as the CLI sets it (config.go createConfigValue): plain text, never secure.
        values[declaration.full] = declaration.value
        from_project.add(declaration.full)
    if missing:
        keys = f"'{missing[0]}'" if len(missing) == 1 else \
            ", ".join(f"'{k}'" for k in missing[:-2]) + (", " if len(missing) > 2 else "") + \
            f"'{missing[-2]}' and '{missing[-1]}'"
        raise ProjectError(f"{path}: Stack '{stack}' is missing configuration value{'s' if len(missing) > 1 else ''} "
                           f"{keys} ({project.file} declares {'it' if len(missing) == 1 else 'them'} "
                           f"with no default: set {'it' if len(missing) == 1 else 'them'} in the stack file, e.g. with "
                           "`pulumi config set`)")
    for declaration in declarations:
        if declaration.type is None:
            continue  # only a typed declaration is checked (config.go validateStackConfigValues: IsExplicitlyTyped)
        value = values[declaration.full]
        default = declaration.full in from_project
        where = f"its default in {project.file} is" if default else f"{path} sets it to"
        if declaration.secret and not (isinstance(value, dict) and set(value) == {"secure"}):
            # Only a typed key is held to `secret: true` (config.go validateStackConfigValue), and a default is never
            # encrypted (createConfigValue), so such a key cannot have one. The plain text is not repeated here.
            holder = f"its default in {project.file.name} is" if default else f"{path} has it"
            raise ProjectError(f"Stack '{stack}' with configuration key '{declaration.key}' must be encrypted as it's "
                               f"secret ({holder} in plain text; allowed: a `secure:` value in {path}, as "
                               f"`pulumi config set --secret {declaration.key}` writes it)")
        content = default_content(value) if default else stack_content(value)
        if not matches_type(declaration.type, declaration.items, content):
            raise ProjectError(f"Stack '{stack}' with configuration key '{declaration.key}' must be of type "
                               f"'{type_name(declaration.type, declaration.items)}' ({where} {_shown(value)})")
    config: dict[str, str] = {}
    secrets: list[str] = []
    for full, value in values.items():
        value, secret = _strip_secure(value)
        if secret:
            secrets.append(full)
        try:
            if full in from_project and isinstance(value, GoTime):
                config[full] = value.rfc3339  # a default is marshalled as JSON (config.go createConfigValue)
            elif isinstance(value, (dict, list)) or value is None:
                config[full] = go_json(value)
            else:
                config[full] = scalar_text(value)
        except ValueError as err:
            where = project.file if full in from_project else path
            raise ProjectError(f"{where}: config key '{full}': {err}") from None
    return config, secrets


def _shown(value: Any, width: int = 80) -> str:
    """A config value in a message: as written, or, for a mapping or list longer than `width` characters (a whole
    platform does not fit in one line), its kind and size."""
    text = repr(value)
    if len(text) <= width or not isinstance(value, (dict, list)):
        return text
    kind, unit = ("a mapping", "key") if isinstance(value, dict) else ("a list", "item")
    return f"{kind} of {len(value)} {unit}{'s' if len(value) != 1 else ''}"


def stack_environment(project: Project, stack: str) -> StackEnvironment:
    """The stack file's Pulumi ESC `environment:` (esc.py): what it imports and its inline values."""
    path = project.stack_file(stack)
    try:
        return read_environment(_read_mapping(path).get("environment") if path.is_file() else None,
                                json_file=path.suffix == ".json")
    except ValueError as err:
        raise ProjectError(f"{path}: {err}") from None


def stack_environments(project: Project, stack: str) -> list[str]:
    """The Pulumi ESC environments the stack file imports (`environment:`). An offline plan cannot open them, so
    the config they provide is missing from the plan."""
    return stack_environment(project, stack).imports


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


def _yaml_error(path: Path, err: yaml.YAMLError) -> str:
    """One line: the file, line and column, and what is wrong there (PyYAML's own text spans several lines and names
    the text it parsed, not the file)."""
    mark = getattr(err, "problem_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = " ".join(filter(None, [getattr(err, "context", None), getattr(err, "problem", None)])) or str(err)
    label = "the Pulumi CLI refuses this file" if isinstance(err, NonStringKey) else "not valid YAML"
    return f"{where}: {label}: {' '.join(problem.split())}"


def _read_mapping(path: Path) -> dict[str, Any]:
    """A project or stack file's settings; an empty file has none. Read-only: the parse of a file's text is cached, so
    the plan and its checks (environments, config) parse a stack file once."""
    try:
        # The CLI drops a UTF-8 byte order mark (workspace/loaders.go readFileStripUTF8BOM), which JSON refuses.
        text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise ProjectError(f"{path} is not UTF-8 text: byte {err.object[err.start]:#04x} at offset {err.start}") from None
    except OSError as err:
        raise ProjectError(f"{path}: cannot read it ({err.strerror})") from None
    try:
        # The CLI reads .json project and stack files as JSON (encoding/json), the others as YAML.
        data = json.loads(text) if path.suffix == ".json" else parse(text)
    except json.JSONDecodeError as err:
        raise ProjectError(f"{path}:{err.lineno}:{err.colno}: not valid JSON: {err.msg}") from None
    except yaml.YAMLError as err:
        raise ProjectError(_yaml_error(path, err)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProjectError(f"{path}: expected a mapping of settings (name: ..., config: ...), got {type(data).__name__}")
    return data
