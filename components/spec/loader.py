"""Load raw config into a `Platform`, turning every problem into a message with its config path."""

from __future__ import annotations

import difflib
import json
import math
import re
import types
import typing
from collections.abc import Sequence
from ipaddress import IPv4Network
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from .checks import check_platform
from .common import PATTERN_RULES, FieldError
from .platform import Platform

ROOT = "platform"
Model = typing.TypeVar("Model", bound=BaseModel)

_EXPECTED = {
    "int_type": "integer", "int_parsing": "integer", "int_from_float": "integer",
    "float_type": "number", "float_parsing": "number",
    "bool_type": "boolean", "bool_parsing": "boolean",
}
"""Scalar type errors -> the JSON type the field takes; their message says what was given in JSON's own words."""
_YAML11_BOOLEANS = {"yes": True, "y": True, "on": True, "no": False, "n": False, "off": False}
"""YAML 1.1's other booleans, which YAML 1.2 (Go's yaml.v3, the Pulumi CLI's reader) reads as strings; the loader
says which boolean each meant (yes -> true)."""
_CONTAINER_TYPES = frozenset({"model_type", "dict_type", "list_type"})
"""A mapping or list expected and something else given: the message says what the field takes (the settings a model
has, what a mapping maps from and to) and what was given, in JSON's words, instead of pydantic's Python words ("a
valid dictionary or instance of NetworkSpec")."""
_OUT_OF_RANGE = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})
"""A number outside its field's range: the message gives the whole range ("from 1 to 1000"), not the one bound that was
crossed."""
_NULL_KEYS = frozenset({"", "None"})
"""How a null or empty YAML key (`~:`, `null:`, `"":`) reaches the loader when the key's pattern refuses it: the offline
reader (aiinfra.plan) writes a null key as Python's text, None. (json.dumps writes it as "null", which is a valid name.)"""


class SpecError(Exception):
    """The platform config is invalid. `issues` holds (dotted path, message) pairs; str() renders all of them."""

    def __init__(self, issues: list[tuple[str, str]]):
        self.issues = issues
        count = len(issues)
        lines = [f"invalid platform config ({count} problem{'s' if count != 1 else ''}):"]
        lines += [f"  {path}: {message}" for path, message in issues]
        super().__init__("\n".join(lines))


def load_platform(data: Any, root: str = ROOT) -> Platform:
    """Validate `data` (the parsed `ai-infra:platform` value). Raises `SpecError`; never registers anything.

    Scalars are taken as JSON and YAML type them, never converted: a boolean is not an integer (`max_nodes: true`),
    a quoted number is a string, not a number (`gpu_quota: '4'`), `efa: 'yes'` is not a boolean; an integer is a valid
    float. Enum values and CIDRs are written as strings, as YAML and JSON have no other form for them. (A whole number
    written with a decimal point, `max_nodes: 4.0`, never gets here as a float: the Pulumi CLI passes config objects to
    the program as Go's JSON, which writes 4.0 as 4, and `aiinfra validate` reads stack files the same way.)"""
    if not isinstance(data, dict):
        raise SpecError([(root, f"expected a mapping of platform settings, got {_json_value(data)}")])
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as err:  # `data` comes from JSON, so only a caller passing Python objects gets here
        raise SpecError([(root, f"expected plain JSON/YAML values (mappings, lists, strings, numbers, booleans, null): {err}")]) from None
    try:
        spec = validate_strict(Platform, text)
    except ValidationError as err:
        raise SpecError([_describe(root, e) for e in err.errors(include_url=False)]) from None
    issues = check_platform(spec)
    if issues:
        raise SpecError([(_dotted(root, path), message) for path, message in issues])
    return spec


def validate_strict(model: type[Model], text: str) -> Model:
    """Validate JSON `text` as `model` in pydantic's strict mode. Strict JSON validation is JSON's type system: str,
    int, float and bool never convert into each other (an int is accepted for a float), while the types JSON has no
    literal for still parse from their string form (enum values, IPv4 networks). Python-mode strict would refuse
    those strings (it wants enum members and IPv4Network objects), and lax mode converts true to 1 and '4' to 4."""
    return model.model_validate_json(text, strict=True)


def region_path(cloud: str, region: str) -> str:
    """The config path of a region's settings, `platform.clouds.<cloud>.regions.<region>`, for errors that the
    components find as the program runs (what only the cloud can tell) to name it as the loader does."""
    return _dotted(ROOT, ("clouds", cloud, "regions", region))


def config_path(loc: tuple[Any, ...], root: str = ROOT) -> str:
    """The config path of `loc` as error messages name it: `platform.teams.research`, `platform.labels.extra`,
    `platform.clouds.aws.regions.us-east-1.gpu_pools.train.zones[0]`."""
    return _dotted(root, loc)


def _dotted(root: str, loc: tuple[Any, ...]) -> str:
    parts = [root]
    for item in loc:
        parts.append(f"[{item}]" if isinstance(item, int) else str(item))
    return ".".join(parts).replace(".[", "[")


def _describe(root: str, error: dict[str, Any]) -> tuple[str, str]:
    loc = tuple(error["loc"])
    ctx = error.get("ctx", {})
    cause = ctx.get("error")
    if isinstance(cause, FieldError):
        loc = (*loc, cause.field)
    kind = error["type"]
    value = error.get("input")
    if "[key]" in loc:
        mapping = loc[: loc.index("[key]") - 1]
        if value in _NULL_KEYS and ctx.get("pattern") in PATTERN_RULES:
            what = _key_noun(mapping)
            rule = PATTERN_RULES[ctx["pattern"]][1]
            return _dotted(root, mapping), (f"a {what} is null or empty (YAML reads ~, null and a key with nothing before "
                                            f"the ':' as null); {what}s are {rule}")
        where = _dotted(root, loc[: loc.index("[key]")])
        if kind == "value_error":  # a key type's own check (a reserved team name): its message names the key
            return where, _clean(error["msg"])
        return where, _pattern_rule(ctx, value) or f"key {value!r} is invalid: {_clean(error['msg'])}"
    if kind == "extra_forbidden":
        allowed = _fields_at(loc[:-1])
        hint = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
        return _dotted(root, loc), f"unknown field{suggestion}; allowed fields: {', '.join(allowed)}"
    if kind == "missing":
        return _dotted(root, loc), "required field is missing"
    if kind == "string_pattern_mismatch" and (message := _pattern_rule(ctx, value)):
        return _dotted(root, loc), message
    if kind in _EXPECTED:
        return _dotted(root, loc), _wrong_scalar(_EXPECTED[kind], value, loc)
    if kind in _OUT_OF_RANGE and isinstance(value, (int, float)) and (bounds := _bounds(loc)):
        number = "an integer" if _unwrap(_annotation_at(loc)) is int else "a number"
        return _dotted(root, loc), f"expected {number}{bounds}, got {value!r}"
    if kind == "too_short" and isinstance(value, (dict, list)):
        return _dotted(root, loc), _too_few(loc, ctx)
    if kind in ("string_type", "value_error") and _unwrap(_annotation_at(loc)) is IPv4Network and not _is_network(value):
        if (network := _host_bits_set(value)) is not None:
            return _dotted(root, loc), (f"{value!r} has host bits set: a network is written with every bit after its "
                                        f"/{network.prefixlen} prefix zero; did you mean '{network}'?")
        kind, message = "ip_v4_network", "Input is not a valid IPv4 network"
    elif kind in _CONTAINER_TYPES:
        return _dotted(root, loc), f"expected {_container(kind, loc)}, got {_json_value(value)}"
    elif kind == "string_type":
        return _dotted(root, loc), f"expected a string, got {_json_value(value)}{_quote_hint(value, loc)}"
    else:
        message = _clean(error["msg"])
    if value is not None and not isinstance(value, (dict, list)) and not _states_value(kind, message, value):
        message += f" (got {value!r})"
    if kind == "enum" and isinstance(value, str):
        message += _did_you_mean(value, re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
    return _dotted(root, loc), message


def _too_few(loc: tuple[Any, ...], ctx: dict[str, Any]) -> str:
    """An empty (or too short) mapping or list where entries are required: `regions: {}`."""
    least, given = ctx.get("min_length", 1), ctx.get("actual_length", 0)
    noun = _entry_noun(loc)
    got = "none" if not given else str(given)
    message = f"expected at least {least} {noun}{'' if least == 1 else 's'}, got {got}"
    if loc[-1] == "regions" and len(loc) >= 2:  # a cloud without regions: list them, or leave the cloud out
        message += f"; list the {loc[-2]} regions to deploy to, or remove clouds.{loc[-2]}"
    return message


def _entry_noun(loc: tuple[Any, ...]) -> str:
    """An entry of the mapping or list field at `loc`, in words: regions -> region."""
    name = str(loc[-1]) if loc else "entry"
    *words, last = name.split("_")
    if last.endswith("ies"):
        last = f"{last[:-3]}y"
    elif last.endswith("s") and not last.endswith("ss"):
        last = last[:-1]
    return " ".join([*words, last])


def _quote_hint(value: Any, loc: tuple[Any, ...]) -> str:
    """For a number given where text is expected: how to write it as text, when quoting it would give a valid value
    (YAML reads an unquoted 1.30 as the number 1.3, so the quoted form is the one the user most likely meant)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return ""
    text = _as_text(value, _pattern_at(loc))
    if text is None:
        return ""
    if text != repr(value):
        return f"; YAML reads an unquoted {text} as the number {value!r}: write it as a string in quotes: '{text}'"
    return f"; write it as a string in quotes: '{text}'"


def _container(kind: str, loc: tuple[Any, ...]) -> str:
    """What a mapping or list field takes, in words: "a mapping of settings (cidr, nat, ...)" for a model, "a mapping
    of gpu pool name to settings" for a mapping, "a list"."""
    if kind == "list_type":
        return "a list"
    if kind == "model_type":
        fields = _fields_at(loc)
        return f"a mapping of settings ({', '.join(fields)})" if fields else "a mapping of settings"
    annotation = _unwrap(_annotation_at(loc))
    if typing.get_origin(annotation) is not dict:
        return "a mapping"
    return f"a mapping of {_key_noun(loc)} to {_value_noun(typing.get_args(annotation)[1])}"


def _key_noun(loc: tuple[Any, ...]) -> str:
    """What the keys of the mapping at `loc` are: "gpu pool name" for a mapping of names held by the field gpu_pools,
    "label key", or "key"."""
    annotation = _unwrap(_annotation_at(loc))
    args = typing.get_args(annotation) if typing.get_origin(annotation) is dict else ()
    pattern = _constraint_of(args[0], "pattern", str) if args else None
    what = PATTERN_RULES[pattern][0] if pattern in PATTERN_RULES else "key"
    if what == "name" and loc and isinstance(loc[-1], str) and loc[-1] in _fields_at(loc[:-1]):
        return f"{_entry_noun(loc)} name"  # the field's plural noun, in the singular: gpu_pools -> gpu pool name
    return what


def _value_noun(annotation: Any) -> str:
    """What the values of a mapping are, in words: "settings" (a model), "a list", "a mapping", "label value"."""
    base = _unwrap(annotation)
    if isinstance(base, type) and issubclass(base, BaseModel):
        return "settings"
    if typing.get_origin(base) in (list, dict):
        return "a list" if typing.get_origin(base) is list else "a mapping"
    pattern = _constraint_of(annotation, "pattern", str)
    if pattern in PATTERN_RULES:
        return PATTERN_RULES[pattern][0]
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}.get(base, "a value")


def _did_you_mean(value: str, choices: list[str]) -> str:
    """"; did you mean 'x'?" for the allowed value closest to `value` (a typo or another case), or ""."""
    close = [c for c in choices if c.lower() == value.strip().lower()] or difflib.get_close_matches(value, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _pattern_rule(ctx: dict[str, Any], value: Any) -> str | None:
    """The rule in words for a value that fails one of the spec's named patterns (names, label keys and values, ...:
    common.PATTERN_RULES) or a pattern that lists the allowed values (`^(NoSchedule|NoExecute)$`), worded as an enum's
    message; None for any other pattern."""
    pattern = ctx.get("pattern")
    if pattern in PATTERN_RULES:
        what, rule = PATTERN_RULES[pattern]
        return f"{what} {value!r} is invalid; {what}s are {rule}"
    listed = re.fullmatch(r"\^\(([\w-]+(?:\|[\w-]+)+)\)\$", str(pattern))
    if listed is None:
        return None
    choices = listed.group(1).split("|")
    allowed = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"
    return f"Input should be {allowed} (got {value!r}){_did_you_mean(str(value), choices)}"


def _wrong_scalar(expected: str, value: Any, loc: tuple[Any, ...]) -> str:
    """What a scalar field takes and what it was given, in JSON's words: "expected an integer from 1 to 1000, got the
    boolean true", with the fix when the value was only written the wrong way ('4' -> 4, 2.0 -> 2, 'true' -> true)."""
    allowed = {"integer": "an integer", "number": "a number", "boolean": "a boolean (true or false)"}[expected]
    if expected != "boolean":
        allowed += _bounds(loc)
    hint = ""
    if isinstance(value, str) and expected != "boolean" and re.fullmatch(r"[+-]?\d+", value.strip()):
        hint = f"; write the number without quotes: {int(value)}"
    elif isinstance(value, str) and expected == "number" and _is_number(value):
        hint = f"; write the number without quotes: {value.strip()}"
    elif isinstance(value, str) and expected == "boolean" and value.strip().lower() in ("true", "false"):
        hint = f"; write it without quotes: {value.strip().lower()}"
    elif isinstance(value, str) and expected == "boolean" and value.strip().lower() in _YAML11_BOOLEANS:
        word = "true" if _YAML11_BOOLEANS[value.strip().lower()] else "false"
        hint = f"; YAML 1.2, which Pulumi reads, takes only true and false as booleans: write {word}"
    elif isinstance(value, float) and expected == "integer" and value.is_integer():
        hint = f"; write it without a decimal point: {int(value)}"
    return f"expected {allowed}, got {_json_value(value)}{hint}"


def _json_value(value: Any) -> str:
    """A value as JSON/YAML names it: the boolean true, the number 2.5, the string '4', null."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def _bounds(loc: tuple[Any, ...]) -> str:
    """The range a number field allows, as text to follow "an integer": " from 1 to 1000", " of 0 or more", or ""."""
    ge, le = _constraint_at(loc, "ge"), _constraint_at(loc, "le")
    gt, lt = _constraint_at(loc, "gt"), _constraint_at(loc, "lt")
    if ge is not None and le is not None:
        return f" from {ge} to {le}"
    parts = [f"of {ge} or more" if ge is not None else f"greater than {gt}" if gt is not None else None,
             f"of {le} or less" if le is not None else f"less than {lt}" if lt is not None else None]
    text = " and ".join(part for part in parts if part)
    return f" {text}" if text else ""


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _is_network(value: Any) -> bool:
    """Whether `value` is an IPv4 network in CIDR notation (host bits clear), as the field's type parses it."""
    try:
        IPv4Network(value)
    except (TypeError, ValueError):
        return False
    return isinstance(value, str)


def _host_bits_set(value: Any) -> IPv4Network | None:
    """The network an address with a prefix lies in ('10.10.0.1/16' -> 10.10.0.0/16), when `value` is one; else None."""
    if not isinstance(value, str):
        return None
    try:
        return IPv4Network(value, strict=False)
    except ValueError:
        return None


def _states_value(kind: str, message: str, value: Any) -> bool:
    """Whether `message` already names `value` as the value given. Pydantic's own messages never do (they state
    the constraint: "greater than or equal to 50" says nothing about a 5), so only the spec's validator messages
    are searched, for the value as a whole token: 5 is not stated by "50", '5' not by "'50'"."""
    if kind not in ("value_error", "assertion_error"):
        return False
    forms = {repr(value), str(value)} if not isinstance(value, str) or len(value) > 2 else {repr(value)}
    return any(re.search(rf"(?<![\w.]){re.escape(form)}(?![\w.])", message) for form in forms)


def _as_text(number: int | float, pattern: str | None) -> str | None:
    """How the user most likely wrote a number that YAML parsed from unquoted text: the first rendering that matches
    the field's pattern (1.3 -> "1.30" for a Kubernetes minor version such as 1.33); Python's rendering when the field
    has no pattern; None when no rendering would be valid (quoting would not help)."""
    candidates = [repr(number)]
    if isinstance(number, float):
        candidates += [f"{number:.{digits}f}" for digits in range(1, 4)]
    if pattern is None:
        return candidates[0]
    return next((text for text in candidates if re.match(pattern, text)), None)


def _clean(msg: str) -> str:
    return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _annotation_at(loc: tuple[Any, ...]) -> Any:
    """The annotation of the value found at `loc` inside `Platform` (dict keys and list indexes step into the
    container's value type), or None when `loc` leaves the models."""
    current: Any = Platform
    for item in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(item))
            if field is None:
                return None
            current = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        elif typing.get_origin(current) in (dict, list):
            current = typing.get_args(current)[-1]
        else:
            return None
    return current


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """Field names of the model found at `loc` inside `Platform`, for 'unknown field' messages."""
    current = _unwrap(_annotation_at(loc))
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _pattern_at(loc: tuple[Any, ...]) -> str | None:
    """The string pattern constraining the field at `loc`, if any."""
    return _constraint_at(loc, "pattern", str)


def _constraint_at(loc: tuple[Any, ...], name: str, kind: type = object) -> Any:
    """The constraint `name` (pattern, ge, le, ...) of the field at `loc` if it has one of type `kind`, else None."""
    return _constraint_of(_annotation_at(loc), name, kind)


def _constraint_of(annotation: Any, name: str, kind: type = object) -> Any:
    """The constraint `name` of a type `annotation` (Annotated metadata, through Optional) of type `kind`, or None."""
    pending = [annotation]
    while pending:
        annotation = pending.pop()
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            base, *metadata = typing.get_args(annotation)
            if (found := constraint_in(metadata, name, kind)) is not None:
                return found
            pending.append(base)
        elif origin in (typing.Union, types.UnionType):
            pending += list(typing.get_args(annotation))
    return None


def constraint_in(metadata: Sequence[Any], name: str, kind: type = object) -> Any:
    """The constraint `name` (pattern, max_length, ge, ...) of type `kind` among pydantic metadata: StringConstraints,
    annotated_types' MaxLen and the like, or the metadata a `Field(pattern=...)` holds; None without one."""
    for item in metadata:
        for constraint in (item, *getattr(item, "metadata", ())):
            found = getattr(constraint, name, None)
            if found is not None and isinstance(found, kind):
                return found
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip Optional/Annotated so the model class or container type remains."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = args[0]
        else:
            return annotation
