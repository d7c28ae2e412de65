"""Load raw config into a `Platform`, turning every problem into a message with its config path."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from .checks import check_platform
from .common import FieldError
from .platform import Platform

ROOT = "platform"


class SpecError(Exception):
    """The platform config is invalid. `issues` holds (dotted path, message) pairs; str() renders all of them."""

    def __init__(self, issues: list[tuple[str, str]]):
        self.issues = issues
        count = len(issues)
        lines = [f"invalid platform config ({count} problem{'s' if count != 1 else ''}):"]
        lines += [f"  {path}: {message}" for path, message in issues]
        super().__init__("\n".join(lines))


def load_platform(data: Any, root: str = ROOT) -> Platform:
    """Validate `data` (the parsed `ai-infra:platform` value). Raises `SpecError`; never registers anything."""
    if not isinstance(data, dict):
        raise SpecError([(root, f"expected a mapping of platform settings, got {type(data).__name__}")])
    try:
        spec = Platform.model_validate(data)
    except ValidationError as err:
        raise SpecError([_describe(root, e) for e in err.errors(include_url=False)]) from None
    issues = check_platform(spec)
    if issues:
        raise SpecError([(_dotted(root, path), message) for path, message in issues])
    return spec


def _dotted(root: str, loc: tuple[Any, ...]) -> str:
    parts = [root]
    for item in loc:
        parts.append(f"[{item}]" if isinstance(item, int) else str(item))
    return ".".join(parts).replace(".[", "[")


def _describe(root: str, error: dict[str, Any]) -> tuple[str, str]:
    loc = tuple(error["loc"])
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, FieldError):
        loc = (*loc, cause.field)
    kind = error["type"]
    value = error.get("input")
    if "[key]" in loc:
        where = loc[: loc.index("[key]")]
        return _dotted(root, where), f"name {value!r} is invalid: {_clean(error['msg'])}; names are lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters"
    if kind == "extra_forbidden":
        allowed = _fields_at(loc[:-1])
        hint = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
        return _dotted(root, loc), f"unknown field{suggestion}; allowed fields: {', '.join(allowed)}"
    if kind == "missing":
        return _dotted(root, loc), "required field is missing"
    message = _clean(error["msg"])
    if value is not None and not isinstance(value, (dict, list)) and repr(value) not in message and str(value) not in message:
        message += f" (got {value!r})"
    return _dotted(root, loc), message


def _clean(msg: str) -> str:
    return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """Field names of the model found at `loc` inside `Platform`, for 'unknown field' messages."""
    current: Any = Platform
    for item in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(item))
            if field is None:
                return []
            current = field.annotation
        elif typing.get_origin(current) in (dict, list):
            current = typing.get_args(current)[-1]
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


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
