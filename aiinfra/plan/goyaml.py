"""Stack and project YAML read as the Pulumi CLI reads it (Go's gopkg.in/yaml.v3), and config values written as the
CLI hands them to the program (Go's text of numbers, times and JSON)."""

from __future__ import annotations

import datetime
import functools
import json
import math
import re
from collections.abc import Hashable
from decimal import Decimal
from typing import Any

import yaml


def scalar_text(value: Any) -> str:
    """A scalar config value as the CLI passes it to the program (resource/config/object.go MarshalString): the
    string itself, JSON for booleans and numbers (`1.0` is `1`), Go's time.String for a timestamp."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, GoTime):
        return value.go_string
    return str(value)


def _go_float(value: float) -> str:
    """Go's encoding/json text of a float64 (floatEncoder): shortest digits, exponent form below 1e-6 and from 1e21."""
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a number JSON can hold (the Pulumi CLI fails on it: json: unsupported value)")
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(value)
        return re.sub(r"e-0(\d)$", r"e-\1", text)
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


_GO_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: Any) -> str:
    """Go's json.Marshal of a config object or list, which the CLI gives the program: compact, keys sorted, numbers
    as Go prints them, <, > and & escaped."""
    if isinstance(value, dict):
        items = sorted((scalar_text(k), v) for k, v in value.items())
        return "{" + ",".join(f"{go_json(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, str) and not isinstance(value, GoTime):
        return re.sub("[<>&\u2028\u2029]", lambda m: _GO_JSON_ESCAPES[m.group()], json.dumps(value, ensure_ascii=False))
    if isinstance(value, (bool, int, float)):
        return scalar_text(value)
    return go_json(scalar_text(value))


class GoTime(str):
    """A plain scalar Go's yaml.v3 reads as a timestamp (`2025-12-31`): the CLI never sees a date, but a time.Time,
    which a stack value turns into its Go String() text (resource/config/object.go unmarshalObject) and a Pulumi.yaml
    default into JSON's RFC 3339 text (pkg/workspace/config.go createConfigValue)."""

    go_string: str
    rfc3339: str


# yaml.v3 resolve.go allowedTimestampFormats: 2006-1-2T15:4:5.999999999Z07:00 (T or t), "2006-1-2 15:4:5.999999999"
# (no zone: UTC) and 2006-1-2.
_TIMESTAMP = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:([Tt])|( ))(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?"
                        r"(Z|[+-]\d{2}:\d{2})?)?")


def _go_time(text: str) -> GoTime | None:
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    year, month, day, t, space, hour, minute, second, fraction, zone = match.groups()
    if (t and not zone) or (space and zone):
        return None  # time.Parse refuses these: a `T` form needs a zone, the space form takes none
    try:
        datetime.datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
    except ValueError:
        return None  # out of range (2025-02-30): yaml.v3 keeps it a string
    digits = (fraction or "")[:9].rstrip("0")
    clock = f"{int(hour or 0):02d}:{int(minute or 0):02d}:{int(second or 0):02d}{'.' + digits if digits else ''}"
    date = f"{year}-{int(month):02d}-{int(day):02d}"
    if zone in (None, "Z", "+00:00", "-00:00"):
        # No zone or a zero offset: UTC (a zero offset is the local zone of a CLI that runs in UTC, as CI does).
        offset, name, rfc_zone = "+0000", "UTC", "Z"
    else:
        offset, rfc_zone = zone.replace(":", ""), zone
        name = offset  # time.Parse fabricates a zone without a name for another offset: String() shows the offset
    value = GoTime(text)
    value.go_string = f"{date} {clock} {offset} {name}"
    value.rfc3339 = f"{date}T{clock}{rfc_zone}"
    return value


_GO_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)")
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_NUMBER_TAG = "tag:aiinfra,2025:go-number"


def _go_number(text: str) -> Any:
    """A plain scalar starting with a digit, sign or dot, as Go's yaml.v3 resolves it (resolve.go `resolve`):
    a timestamp, else an integer (underscores dropped; 0x, 0o, 0b and a leading 0 for octal, as Go's
    strconv.ParseInt with base 0 reads them), else a float of YAML's form, else the text itself. There are no
    base-60 numbers (YAML 1.1's `22:00` is 1320) and no dates."""
    if text.startswith("."):
        if re.fullmatch(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?", text) and math.isfinite(float(text)):
            return float(text)
        return text  # Go's ParseFloat fails out of range: the text stays a string
    timestamp = _go_time(text)
    if timestamp is not None:
        return timestamp
    plain = text.replace("_", "")
    if _GO_INT.fullmatch(plain):
        digits = plain.lstrip("+-")
        number = int(digits, 8) if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit() else int(digits, 0)
        number = -number if plain.startswith("-") else number
        if -(2**63) <= number < 2**63 or (plain[0] != "+" and 0 <= number < 2**64):
            return number
    if _YAML_STYLE_FLOAT.fullmatch(plain):
        number = float(plain)
        if math.isfinite(number):  # Go's ParseFloat fails out of range: the text stays a string
            return number
    return text


class _CliYamlLoader(yaml.SafeLoader):
    """YAML as the Pulumi CLI reads it (Go's gopkg.in/yaml.v3, resolve.go): YAML 1.2's core schema, not PyYAML's
    YAML 1.1. Only true/false (3 spellings each) are booleans, so `off`, `no`, `on` and `yes` stay strings; `22:00`
    stays "22:00" (no base-60 numbers); numbers resolve as in Go (`_go_number`); a timestamp is not a date object
    (`GoTime`). The implicit resolvers are rebuilt from scratch: none of PyYAML's YAML 1.1 ones is kept except `<<`."""

    non_string_key: NonStringKey | None = None


_CliYamlLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:merge", r"^(?:<<)$", "<"),
    ("tag:yaml.org,2002:float", r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+."),
    (_GO_NUMBER_TAG, r"^[-+0-9.]", "-+0123456789."),
]:
    _CliYamlLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))
_CliYamlLoader.add_constructor(_GO_NUMBER_TAG, lambda loader, node: _go_number(loader.construct_scalar(node)))
# An explicit `!!timestamp`: Go's time.Time too, never a Python date (which JSON cannot hold).
_CliYamlLoader.add_constructor("tag:yaml.org,2002:timestamp",
                               lambda loader, node: _go_time(loader.construct_scalar(node)) or loader.construct_scalar(node))


class NonStringKey(yaml.constructor.ConstructorError):
    """A mapping key Go's yaml.v3 does not read as a string (`1`, `true`, `~`, `2025-01-01`): the mapping decodes as
    map[any]any, and the CLI refuses any such key in a project or stack file, at any depth (workspace/project.go
    SimplifyMarshalledValue: "expected only string keys"). It does so after decoding the whole file, so a YAML error
    anywhere in the file is reported first."""


_KEY_KINDS = {bool: "a boolean", int: "an integer", float: "a number", type(None): "null", GoTime: "a timestamp",
              bytes: "binary"}


def _mapping_without_duplicates(loader: _CliYamlLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """Go's yaml.v3, which the Pulumi CLI reads these files with, refuses a key given twice in one mapping (PyYAML
    would keep the last): refuse it too, so a file aiinfra accepts is one `pulumi up` accepts. Like yaml.v3
    (decode.go `mapping`: same node kind and same `Value`), keys are the same when their text is, whatever they resolve
    to: `1` and `"1"` are. The first key that is not a string is kept for `parse` to refuse; with string keys only,
    two keys Python holds as one (`1` and `1.0` would be) always have the same text."""
    seen: dict[tuple[type, str], yaml.Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # `<<: *anchor`: construct_mapping flattens it (its keys may be overridden, as in Go)
        # A collection node's Value is "" in yaml.v3, so any two mapping (or sequence) keys clash.
        text = key_node.value if isinstance(key_node, yaml.ScalarNode) else ""
        same = (type(key_node), text)
        if same in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {text!r} is given twice in one mapping (first at "
                                                    f"line {seen[same].start_mark.line + 1})", key_node.start_mark)
        seen[same] = key_node
        key = loader.construct_object(key_node)
        if type(key) is not str and isinstance(key, Hashable) and loader.non_string_key is None:
            kind = _KEY_KINDS.get(type(key), type(key).__name__)
            loader.non_string_key = NonStringKey(None, None, f"key {text!r} is {kind}, not a string; allowed: string "
                                                 f"keys only, at any depth (quote it: '\"{text}\"')", key_node.start_mark)
    return loader.construct_mapping(node)


_CliYamlLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


@functools.lru_cache(maxsize=8)
def parse(text: str) -> Any:
    """Keyed by the text itself, so an edited file is parsed again however soon after (mtimes are coarse)."""
    loader = _CliYamlLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.non_string_key is not None:
        raise loader.non_string_key
    return data


class _ManifestLoader(yaml.SafeLoader):
    """Kubernetes manifests as pulumi-kubernetes decodes them (sigs.k8s.io/yaml, which reads with Go's yaml.v2): YAML
    1.1 booleans (yes/no/on/off), but no timestamps (a date stays a string) and no base-60 numbers (`12:30` stays a
    string); PyYAML's YAML 1.1 would give a date, which JSON cannot hold, and 750."""


_ManifestLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_ManifestLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"))
_ManifestLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
                                         r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), list("-+0123456789."))


def manifest_documents(text: str) -> list[Any]:
    """The objects of a multi-document manifest, empty documents dropped."""
    return [doc for doc in yaml.load_all(text, Loader=_ManifestLoader) if doc is not None]  # noqa: S506 (SafeLoader)
