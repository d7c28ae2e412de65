"""Property paths as the engine reads them (sdk/go/common/resource/properties_path.go): parsed, printed, looked up,
and reset to a base's value as an ignoreChanges path is. Values inside a secret are opaque: no path reaches into one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .masking import is_secret

# Path syntax: `a.b`, `a[0]`, `a["k.e.y"]`, `a[*]`, `a.*`.
_PATH_TOKEN = re.compile(r'\.?([^.\[\]"]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|\[(\*)\]')


def parse_path(path: str) -> list[str | int] | None:
    """The segments of a property path (`*` a wildcard); None for a path that does not parse."""
    segments: list[str | int] = []
    position = 0
    while position < len(path):
        match = _PATH_TOKEN.match(path, position)
        if match is None or match.end() == position:
            return None
        name, index, quoted, star = match.groups()
        segments.append(name if name is not None else int(index) if index is not None
                        else quoted.replace('\\"', '"') if quoted is not None else star)  # the engine unescapes only \"
        position = match.end()
    return segments or None


def format_path(segments: list[str | int]) -> str:
    text = ""
    for segment in segments:
        if isinstance(segment, int):
            text += f"[{segment}]"
        elif re.fullmatch(r"[A-Za-z_$][\w$-]*", segment) or segment == "*":
            text += f".{segment}" if text else segment
        else:
            text += f"[{json.dumps(segment)}]"
    return text or "(value)"


MISSING = object()
"""No value at a path (an absent key or index), unlike a null one."""


def get_at(value: Any, segments: list[str | int]) -> Any:
    """The value at `segments` in `value`, or MISSING."""
    for segment in segments:
        if isinstance(value, dict) and not is_secret(value) and isinstance(segment, str) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and isinstance(segment, int) and 0 <= segment < len(value):
            value = value[segment]
        else:
            return MISSING
    return value


def reset(old: Any, new: Any, segments: list[str | int]) -> Any:
    """`new` with the value at `segments` set to `old`'s (removed where `old` has none), as the engine applies an
    ignoreChanges path (sdk/go/common/resource/properties_path.go, reset): a wildcard ending the path takes `old`'s
    whole object there; one inside it covers every key or index `new` has; below a key `old` lacks, the ignored value
    is removed from `new` too."""
    if not segments:
        return old
    head, rest = segments[0], segments[1:]
    if head == "*" and not rest and isinstance(new, dict) and isinstance(old, dict) and not is_secret(old):
        return dict(old)
    if isinstance(new, dict) and not is_secret(new):
        keys = list(new) if head == "*" else [head] if isinstance(head, str) else []
        result = dict(new)
        for key in keys:
            before = old.get(key, MISSING) if isinstance(old, dict) and not is_secret(old) else MISSING
            if not rest:
                if before is MISSING:
                    result.pop(key, None)
                else:
                    result[key] = before
            elif key in result:
                result[key] = reset(None if before is MISSING else before, result[key], rest)
        return result
    if isinstance(new, list):
        indexes = range(len(new)) if head == "*" else [head] if isinstance(head, int) and 0 <= head < len(new) else []
        result = list(new)
        for i in indexes:
            before = old[i] if isinstance(old, list) and i < len(old) else MISSING
            if before is not MISSING:
                result[i] = before if not rest else reset(before, result[i], rest)
        return result
    return new


def covers(pattern: list[str | int], path: list[str | int]) -> bool:
    """`path` is at or under `pattern` (`*` matching any one key or index)."""
    return len(pattern) <= len(path) and all(p == "*" or p == q for p, q in zip(pattern, path))
