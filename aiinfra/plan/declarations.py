"""Pulumi.yaml's project-level `config:` block, read and checked as the CLI reads it (Pulumi 3.44+).

sdk/go/common/workspace/project.go: the project JSON schema, RewriteShorthandConfigValues and Project.Validate; and the
type checks pkg/workspace/config.go validateStackConfigValue makes on the merged stack config. Errors are ValueError
with a message naming the file; project.py raises them as ProjectError.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config_keys import config_key
from .goyaml import GoTime, scalar_text

_DECLARATION_KEYS = ("default", "description", "items", "secret", "type", "value")
_GO_INT = range(-2**63, 2**63)
"""Go's int (64-bit), which the CLI's type check holds an `integer` value to."""
_CONFIG_TYPES = ("string", "integer", "boolean", "array", "object")
MISSING = object()


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
    value: Any = MISSING
    """The `default` or `value`, if any (the CLI refuses both at once)."""


def project_config(path: Path, project: str, raw: Any) -> tuple[ConfigDeclaration, ...]:
    """Pulumi.yaml's project-level `config:` block (Pulumi 3.44+), checked as the CLI checks it when it loads the
    project (sdk/go/common/workspace/project.go: the project JSON schema, RewriteShorthandConfigValues and
    Project.Validate). `pulumi:tags` is a namespaced value like any other: the CLI merges it into the program's config
    too (pkg/workspace/config.go mergeConfig), besides deriving the stack's tags from it (stack_tags.py)."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: 'config' must be a mapping of config keys, got {type(raw).__name__}")
    declarations = []
    for key, spec in raw.items():
        key = str(key)
        where = f"{path}: config key '{key}'"
        # pkg/workspace/config.go parseConfigKey: config.ParseKey reads `aws:config:region` as `aws:region`.
        try:
            full = config_key(key, project)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
        namespace = full.partition(":")[0]
        own = namespace == project  # project.go configKeyIsNamespacedByProject
        if isinstance(spec, dict):
            unknown = sorted(str(k) for k in spec if k not in _DECLARATION_KEYS)
            if unknown:
                raise ValueError(f"{where}: attribute '{unknown[0]}' is not allowed; the allowed attributes are "
                                 f"{', '.join(repr(k) for k in _DECLARATION_KEYS)} (a value that is a mapping goes "
                                 "under 'value' or 'default')")
            type_ = spec.get("type")
            if type_ is not None and type_ not in _CONFIG_TYPES:
                raise ValueError(f"{where}: type {type_!r} is not one of {', '.join(_CONFIG_TYPES)}")
            if "secret" in spec and not isinstance(spec["secret"], bool):
                raise ValueError(f"{where}: 'secret' must be true or false, got {spec['secret']!r}")
            default, value = spec.get("default"), spec.get("value")  # null is no default, as in Go
            if default is not None and value is not None:
                raise ValueError(f"{where}: project config '{key}' cannot have both a 'default' and 'value' attribute")
            chosen = default if default is not None else value
        elif isinstance(spec, (str, int, list)):
            # Short form (project.go RewriteShorthandConfigValues): a project key's default, another namespace's value.
            type_, chosen = None, spec
            spec = {"default": spec} if own else {"value": spec}
        else:
            # The project schema (sdk/go/common/workspace/project.json) allows these forms only: no null, no float.
            raise ValueError(f"{where}: {'null' if spec is None else repr(spec)} is not a string, integer, boolean, "
                             f"list or a declaration ({', '.join(_DECLARATION_KEYS)})")
        # sdk/go/common/workspace/project.go, Project.Validate: the rules for each namespace.
        if own:
            if type_ == "array" and spec.get("items") is None:
                raise ValueError(f"{path}: The configuration key '{key}' declares an array but does not specify the "
                                 "underlying type via the 'items' attribute")
            if type_ is not None and spec.get("default") is not None and \
                    not matches_type(type_, spec.get("items"), spec["default"]):
                raise ValueError(f"{path}: The default value specified for configuration key '{key}' is not of the "
                                 f"expected type '{type_name(type_, spec.get('items'))}' (it is {spec['default']!r})")
        else:
            if type_ is not None:
                raise ValueError(f"{path}: Configuration key '{key}' is not namespaced by the project and should not "
                                 f"define a type (only a 'value' is allowed for a key of '{namespace}')")
            if spec.get("default") is not None:
                raise ValueError(f"{path}: Configuration key '{key}' is not namespaced by the project and should not "
                                 "define a default value. Did you mean to use the 'value' attribute instead of "
                                 "'default'?")
            if spec.get("value") is None:
                raise ValueError(f"{path}: Configuration key '{key}' is namespaced and must provide an attribute "
                                 "'value'")
        declarations.append(ConfigDeclaration(key=key, full=full, namespace=namespace, type=type_,
                                              items=spec.get("items"), secret=spec.get("secret") is True,
                                              value=MISSING if chosen is None else chosen))
    return tuple(declarations)


def type_name(type_: str, items: Any) -> str:
    """project.go InferFullTypeName: `array<string>`, `array<array<integer>>`."""
    if isinstance(items, dict):
        return f"array<{type_name(str(items.get('type')), items.get('items'))}>"
    return type_


_UNKNOWN = object()
"""A secure value's content: the plan never decrypts, so its type is unknown and passes any check."""


def matches_type(type_: str, items: Any, value: Any) -> bool:
    """project.go ValidateConfigValue, on the value as Go holds it: a scalar stack value is its text, an object or
    list is its JSON decoded (numbers are float64)."""
    if value is _UNKNOWN:
        return True
    if type_ == "string":
        return isinstance(value, str) and not isinstance(value, GoTime)  # Go holds a time.Time there
    if type_ == "integer":
        if isinstance(value, bool):
            return False
        if isinstance(value, int):  # yaml.v3 gives a uint64, which is not an int, from 2**63 up
            return value in _GO_INT
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return True
        # strconv.Atoi: decimal digits with an optional sign, within Go's 64-bit int (else a range error)
        return isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value) is not None and int(value) in _GO_INT
    if type_ == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    if type_ == "object":
        return isinstance(value, dict)
    if not isinstance(value, list) or not isinstance(items, dict):
        return False
    return all(matches_type(str(items.get("type")), items.get("items"), item) for item in value)


def default_content(value: Any) -> Any:
    """What config.go validateStackConfigValue type-checks for a Pulumi.yaml default it merged (createConfigValue): the
    text of a string, integer or boolean; anything else went through JSON (a timestamp as RFC 3339 text)."""
    if isinstance(value, GoTime):
        return value.rfc3339
    if isinstance(value, (str, int)):
        return scalar_text(value)
    return _json_content(value)


def stack_content(value: Any) -> Any:
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
