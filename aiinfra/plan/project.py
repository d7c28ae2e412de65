"""Read a Pulumi project the way the CLI does: Pulumi.yaml (or .json, .yml), the stack file, and the flat config map."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .config_keys import config_key
from .goyaml import GoTime, go_json, parse, scalar_text

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
    main = (root / _relative_path(path, data, "main")).resolve()
    config_dir = (root / _relative_path(path, data, "stackConfigDir")).resolve()
    declarations = _project_config(path, name, data.get("config"))
    return Project(root=root.resolve(), file=path.resolve(), name=name, main=main, stack_config_dir=config_dir,
                   config_declarations=declarations)


def _relative_path(path: Path, data: dict[str, Any], key: str) -> str:
    """A directory or file setting of Pulumi.yaml, relative to the project root; "." when not set."""
    value = data.get(key, ".")
    if not isinstance(value, str) or not value:
        raise ProjectError(f"{path}: '{key}' must be a path relative to the project, got {value!r}")
    return value


_DECLARATION_KEYS = ("default", "description", "items", "secret", "type", "value")
_CONFIG_TYPES = ("string", "integer", "boolean", "array", "object")
_MISSING = object()


@dataclass(frozen=True)
class ConfigDeclaration:
    """One key of Pulumi.yaml's `config:` block, as the CLI reads it (sdk/go/common/workspace/project.go,
    ProjectConfigType; a short-form value is rewritten into `default`, or `value` for another namespace)."""
    key: str
    """As written in Pulumi.yaml; the CLI's messages name it so."""
    full: str
    namespace: str
    type: str | None = None
    items: Any = None
    secret: bool = False
    value: Any = _MISSING
    """The `default` or `value`, if any (the CLI refuses both at once)."""


def _project_config(path: Path, project: str, raw: Any) -> tuple[ConfigDeclaration, ...]:
    """Pulumi.yaml's project-level `config:` block (Pulumi 3.44+), checked as the CLI checks it when it loads the
    project (sdk/go/common/workspace/project.go: the project JSON schema, RewriteShorthandConfigValues and
    Project.Validate). `pulumi:tags` holds stack tags, not program config."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping of config keys, got {type(raw).__name__}")
    declarations = []
    for key, spec in raw.items():
        key = str(key)
        namespace, _, name = key.partition(":") if ":" in key else (project, ":", key)
        full = f"{namespace}:{name}"
        own = namespace == project
        where = f"{path}: config key '{key}'"
        if full == "pulumi:tags":
            continue
        if isinstance(spec, dict):
            unknown = sorted(str(k) for k in spec if k not in _DECLARATION_KEYS)
            if unknown:
                raise ProjectError(f"{where}: attribute '{unknown[0]}' is not allowed; the allowed attributes are "
                                   f"{', '.join(repr(k) for k in _DECLARATION_KEYS)} (a value that is a mapping goes "
                                   "under 'value' or 'default')")
            type_ = spec.get("type")
            if type_ is not None and type_ not in _CONFIG_TYPES:
                raise ProjectError(f"{where}: type {type_!r} is not one of {', '.join(_CONFIG_TYPES)}")
            if "secret" in spec and not isinstance(spec["secret"], bool):
                raise ProjectError(f"{where}: 'secret' must be true or false, got {spec['secret']!r}")
            default, value = spec.get("default"), spec.get("value")  # null is no default, as in Go
            if default is not None and value is not None:
                raise ProjectError(f"{where}: project config '{key}' cannot have both a 'default' and 'value' attribute")
            chosen = default if default is not None else value
        elif isinstance(spec, (str, int, list)):
            # Short form (project.go RewriteShorthandConfigValues): a project key's default, another namespace's value.
            type_, chosen = None, spec
            spec = {"default": spec} if own else {"value": spec}
        else:
            # The project schema (sdk/go/common/workspace/project.json) allows these forms only: no null, no float.
            raise ProjectError(f"{where}: {'null' if spec is None else repr(spec)} is not a string, integer, boolean, "
                               f"list or a declaration ({', '.join(_DECLARATION_KEYS)})")
        # sdk/go/common/workspace/project.go, Project.Validate: the rules for each namespace.
        if own:
            if type_ == "array" and spec.get("items") is None:
                raise ProjectError(f"{path}: The configuration key '{key}' declares an array but does not specify the "
                                   "underlying type via the 'items' attribute")
            if type_ is not None and spec.get("default") is not None and \
                    not _matches_type(type_, spec.get("items"), spec["default"]):
                raise ProjectError(f"{path}: The default value specified for configuration key '{key}' is not of the "
                                   f"expected type '{_type_name(type_, spec.get('items'))}' (it is {spec['default']!r})")
        else:
            if type_ is not None:
                raise ProjectError(f"{path}: Configuration key '{key}' is not namespaced by the project and should not "
                                   f"define a type (only a 'value' is allowed for a key of '{namespace}')")
            if spec.get("default") is not None:
                raise ProjectError(f"{path}: Configuration key '{key}' is not namespaced by the project and should not "
                                   "define a default value. Did you mean to use the 'value' attribute instead of "
                                   "'default'?")
            if spec.get("value") is None:
                raise ProjectError(f"{path}: Configuration key '{key}' is namespaced and must provide an attribute "
                                   "'value'")
        declarations.append(ConfigDeclaration(key=key, full=full, namespace=namespace, type=type_,
                                              items=spec.get("items"), secret=spec.get("secret") is True,
                                              value=_MISSING if chosen is None else chosen))
    return tuple(declarations)


def _type_name(type_: str, items: Any) -> str:
    """project.go InferFullTypeName: `array<string>`, `array<array<integer>>`."""
    if isinstance(items, dict):
        return f"array<{_type_name(str(items.get('type')), items.get('items'))}>"
    return type_


_UNKNOWN = object()
"""A secure value's content: the plan never decrypts, so its type is unknown and passes any check."""


def _matches_type(type_: str, items: Any, value: Any) -> bool:
    """project.go ValidateConfigValue, on the value as Go holds it: a scalar stack value is its text, an object or
    list is its JSON decoded (numbers are float64)."""
    if value is _UNKNOWN:
        return True
    if type_ == "string":
        return isinstance(value, str) and not isinstance(value, GoTime)  # Go holds a time.Time there
    if type_ == "integer":
        if isinstance(value, bool):
            return False
        if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer()):
            return True
        return isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value) is not None  # strconv.Atoi
    if type_ == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    if type_ == "object":
        return isinstance(value, dict)
    if not isinstance(value, list) or not isinstance(items, dict):
        return False
    return all(_matches_type(str(items.get("type")), items.get("items"), item) for item in value)


def _default_content(value: Any) -> Any:
    """What config.go validateStackConfigValue type-checks for a Pulumi.yaml default it merged (createConfigValue): the
    text of a string, integer or boolean; anything else went through JSON (a timestamp as RFC 3339 text)."""
    if isinstance(value, GoTime):
        return value.rfc3339
    if isinstance(value, (str, int)):
        return scalar_text(value)
    return _json_content(value)


def _stack_content(value: Any) -> Any:
    """What config.go validateStackConfigValue type-checks: the text of a scalar, the JSON-decoded object or list (a
    `secure:` value is unknown)."""
    if isinstance(value, (dict, list)) or value is None:
        return _json_content(value)
    return scalar_text(value)


def _json_content(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return _UNKNOWN
        return {scalar_text(k): _json_content(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_content(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    return scalar_text(value)


def stack_values(project: Project, stack: str) -> tuple[Path, dict[str, Any]]:
    """The stack file's path and its config as written (YAML values, `secure:` ones as `{"secure": ...}`), by full
    key: a bare key is the project's, the older `ns:config:key` form is `ns:key` (config_keys.py), and two keys that
    name one key are refused, where the CLI would keep one of them at random."""
    path = project.stack_file(stack)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise ProjectError(f"stack '{stack}' has no config file {path}; known stacks: {known}")
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
        values[full], written[full] = value, str(key)
    return path, values


def load_stack_config(project: Project, stack: str) -> tuple[dict[str, str], list[str]]:
    """The engine's flat config map {"ns:key": "value-or-JSON"} and the keys holding secrets.

    Keys without a namespace belong to the project, as in the CLI. `secure:` values (which need the
    stack's secrets provider to decrypt) become a placeholder marked secret: the plan never decrypts.
    Pulumi.yaml's project config is merged and checked as `pulumi preview` does (pkg/workspace/config.go,
    mergeConfig and validateStackConfigValue): a declared key the stack lacks, a secret one the stack holds in
    plain text or a value of the wrong type fails before the program runs.
    """
    path, values = stack_values(project, stack)
    from_project: set[str] = set()
    missing = []
    declarations = sorted(project.config_declarations, key=lambda d: d.key)
    for declaration in declarations:
        if declaration.full in values:
            continue
        if declaration.value is _MISSING:
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
        content = _default_content(value) if default else _stack_content(value)
        if not _matches_type(declaration.type, declaration.items, content):
            raise ProjectError(f"Stack '{stack}' with configuration key '{declaration.key}' must be of type "
                               f"'{_type_name(declaration.type, declaration.items)}' ({where} {_shown(value)})")
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
