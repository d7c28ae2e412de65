"""A stack file's Pulumi ESC `environment:`, as far as an offline plan can read it.

The CLI takes a list of environment names to import, or an inline environment definition: a mapping with `imports`
and `values` (sdk/go/common/workspace/project.go, Environment). Anything else (one name, a list holding a mapping) is
sent to ESC as a definition, which ESC refuses: it must be an object (pulumi/esc ast/environment.go, parseRecord).
The CLI opens the environment with Pulumi Cloud and merges the `values.pulumiConfig` it evaluates into the stack's
config, the stack file's values winning (pkg/workspace/config.go mergeConfig). Offline no environment can be opened:
the imported ones are missing, and of the inline `pulumiConfig` only the values that need no evaluation (no `${...}`
interpolation, no `fn::` function) are merged, as the CLI merges them; the rest is reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .goyaml import GoTime, scalar_text


@dataclass
class StackEnvironment:
    imports: list[str] = field(default_factory=list)
    """The environments it imports, in order."""
    config: dict[str, Any] = field(default_factory=dict)
    """The inline `values.pulumiConfig` entries that need no evaluation, by key as written, values as parsed."""
    unevaluated: list[str] = field(default_factory=list)
    """The inline `values.pulumiConfig` keys whose values ESC would have to evaluate."""
    other_values: list[str] = field(default_factory=list)
    """The inline `values` other than `pulumiConfig` (environmentVariables, files, ...), which the CLI applies to the
    program's environment and the plan does not."""


def read_environment(raw: Any, json_file: bool = False) -> StackEnvironment:
    """The stack file's `environment:` value, read as the CLI reads it (`json_file`: from a Pulumi.<stack>.json)."""
    if raw is None:
        return StackEnvironment()
    if isinstance(raw, list) and all(_decodes_as_name(item, json_file) for item in raw):
        return StackEnvironment(imports=["" if item is None else scalar_text(item) for item in raw])
    if not isinstance(raw, dict):
        # Environment.UnmarshalYAML (and UnmarshalJSON) keep what does not decode as []string as a definition for ESC
        # to open, and the CLI stops with ESC's diagnostic ("opening environment: too many errors").
        shown = raw if isinstance(raw, str) else json.dumps(raw, default=str)
        raise ValueError(f"environment: {shown} is not a list of environment names, so the Pulumi CLI sends it to ESC as "
                         "an environment definition, which ESC refuses: 'environment must be an object'; allowed: a "
                         "list of names to import ([team/shared]) or a mapping with imports and values")
    imports = raw.get("imports")
    names = [_import_name(item) for item in imports] if isinstance(imports, list) else []
    values = raw.get("values") if isinstance(raw.get("values"), dict) else {}
    pulumi_config = values.get("pulumiConfig")
    static: dict[str, Any] = {}
    unevaluated: list[str] = []
    if isinstance(pulumi_config, dict):
        for key, value in pulumi_config.items():
            if _static(value):
                static[str(key)] = value
            else:
                unevaluated.append(str(key))
    elif pulumi_config is not None:
        unevaluated.append("pulumiConfig")
    return StackEnvironment(imports=names, config=static, unevaluated=unevaluated,
                            other_values=[str(k) for k in values if k != "pulumiConfig"])


def _decodes_as_name(item: Any, json_file: bool) -> bool:
    """Whether a list item decodes into the CLI's []string: yaml.v3 decodes any scalar (as its text), encoding/json
    only a string; null leaves "" in both."""
    return (item is None or isinstance(item, str)) if json_file else not isinstance(item, (list, dict))


def _import_name(item: Any) -> str:
    """An import is a name, or a mapping of one name to its options (`- shared: {merge: false}`)."""
    if isinstance(item, dict) and len(item) == 1:
        return str(next(iter(item)))
    return str(item)


def _static(value: Any) -> bool:
    """Whether ESC gives the value as written: plain strings, numbers, booleans and the lists and mappings of them.
    A `${...}` interpolation or an `fn::` function is evaluated by ESC; a null or a timestamp is left to it too."""
    if isinstance(value, dict):
        return all(not str(k).startswith("fn::") and _static(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_static(v) for v in value)
    if isinstance(value, GoTime) or value is None:
        return False
    if isinstance(value, str):
        return "${" not in value
    return isinstance(value, (bool, int, float))


def merge_under(stack_value: Any, env_value: Any) -> Any:
    """config.Value.Merge (sdk/go/common/resource/config/object.go): the stack file's value over the environment's,
    key by key where both are mappings; otherwise the stack file's value. A `secure:` value is a scalar."""
    if _mapping(stack_value) and _mapping(env_value):
        merged = dict(env_value)
        for key, value in stack_value.items():
            merged[key] = merge_under(value, env_value[key]) if key in env_value else value
        return merged
    return stack_value


def _mapping(value: Any) -> bool:
    return isinstance(value, dict) and set(value) != {"secure"}
