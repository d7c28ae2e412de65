"""Property paths as the engine reads them (pulumi/pulumi sdk/go/common/resource/properties_path.go): parsed
(ParsePropertyPath), printed (PropertyPath.String), matched (Contains) and reset to a base's value as an ignoreChanges
path is (reset). Each function follows the Go one it names, case for case; where the Go code walks a map, whose order
Go randomises, this walks the base's keys in their order.
"""

from __future__ import annotations

from typing import Any

from .echo import SECRET, SIG, is_secret_value
from .masking import SECRET_SHOWN, is_secret

_INT64 = 2**63


def parse_path(path: str) -> list[str | int] | None:
    """The segments of a property path (`*` a wildcard); None where ParsePropertyPath returns an error. An empty
    path parses to no segments, as in Go: it contains every path and resets nothing."""
    if path.startswith("."):
        return None  # "expected property path to start with a name or index"
    segments: list[str | int] = []
    while path:
        if path[0] == ".":
            path = path[1:]
            if not path:
                return None  # "expected property path to end with a name or index"; `.[` is tolerated
        elif path[0] == "[" and path[1:2] == '"':
            key, i = [], 2
            while True:
                if i >= len(path):
                    return None  # "missing closing quote in property name"
                if path[i] == '"':
                    i += 1
                    break
                if path[i] == "\\" and path[i + 1:i + 2] == '"':  # the only escape the parser knows
                    key.append('"')
                    i += 2
                else:
                    key.append(path[i])
                    i += 1
            if path[i:i + 1] != "]":
                return None  # "missing closing bracket in property access"
            segments.append("".join(key))
            path = path[i + 1:]
        elif path[0] == "[":
            close = path.find("]")
            if close == -1:
                return None  # "missing closing bracket in array index"
            index = _parse_int(path[1:close])
            if index is None and path[1:close] != "*":
                return None  # "invalid array index"
            segments.append("*" if index is None else index)
            path = path[close + 1:]
        else:
            end = min((i for i in (path.find("."), path.find("[")) if i != -1), default=len(path))
            segments.append(path[:end])
            path = path[end:]
    return segments


def _parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 0): an optional sign and ASCII digits, within int64."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


def format_path(segments: list[str | int]) -> str:
    """PropertyPath.String(): a key of letters, digits and `_` bare (after a `.` unless first), any other in `["…"]`
    with only `"` escaped, so the printed text parses back to the same key (but for a key ending in `\\`, which reads
    as an escaped quote, in Go too). An empty key is quoted (Go prints it bare, which does not read back); no segments
    print as `(value)`."""
    text = ""
    for i, segment in enumerate(segments):
        if isinstance(segment, int):
            text += f"[{segment}]"
        elif segment and all(c.isascii() and (c.isalnum() or c == "_") for c in segment):
            text += f".{segment}" if i else segment
        else:
            text += '["' + segment.replace('"', '\\"') + '"]'
    return text or "(value)"


MISSING = object()
"""No value at a path (an absent key or index), unlike a null one."""


def get_at(value: Any, segments: list[str | int]) -> Any:
    """The value at `segments` in `value`, or MISSING. Values inside a secret are opaque: no path reaches into one."""
    for segment in segments:
        if isinstance(value, dict) and not is_secret(value) and isinstance(segment, str) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and isinstance(segment, int) and 0 <= segment < len(value):
            value = value[segment]
        else:
            return MISSING
    return value


def covers(pattern: list[str | int], path: list[str | int]) -> bool:
    """Contains: `path` is at or under `pattern`, `*` matching any one key or index (an empty pattern, every path)."""
    return len(pattern) <= len(path) and all(
        p == "*" or (type(p) is type(q) and p == q) for p, q in zip(pattern, path))


def reset(old: Any, new: Any, segments: list[str | int]) -> tuple[Any, bool]:
    """`new` with the value at `segments` set to `old`'s, as processIgnoreChanges applies an ignoreChanges path, and
    whether the engine finds the path (False: it logs "cannot ignore changes in added or removed elements of the
    path" and keeps what it reset before it stopped). A wildcard ending the path takes `old`'s whole object there (or
    each index both lists have); one inside it follows every key `old` has; below a key `old` lacks, the ignored
    value is removed from `new`. Secrets are looked through, and a value copied out of one is kept secret. A secret
    the plan has masked (`[secret]`: its value is not in the plan) is taken whole where the path enters it."""
    return _reset(segments, old, new, False, False)


def _secret(value: Any) -> Any:
    return {SIG: SECRET, "value": value}


def _unwrap(value: Any) -> tuple[Any, bool]:
    secret = False
    while is_secret_value(value):  # not an output value: the engine does not unwrap one
        value, secret = value.get("value"), True
    return value, secret


def _rewrap(wrapper: Any, inner: Any) -> Any:
    """`inner` in the secret wrappers `wrapper` had."""
    return {**wrapper, "value": _rewrap(wrapper.get("value"), inner)} if is_secret_value(wrapper) else inner


def _reset(path: list[str | int], old: Any, new: Any, old_secret: bool, new_secret: bool) -> tuple[Any, bool]:
    if not path:
        return new, False
    old_value, unwrapped = _unwrap(old)
    if unwrapped and old_value == SECRET_SHOWN:
        return old, True  # the base's secret, whatever it held
    new_value, new_wrapped = _unwrap(new)
    value, found = _reset_unwrapped(path, old_value, new_value, old_secret or unwrapped, new_secret or new_wrapped)
    return (_rewrap(new, value) if new_wrapped else value), found


def _reset_unwrapped(path: list[str | int], old: Any, new: Any, old_secret: bool,
                     new_secret: bool) -> tuple[Any, bool]:
    def kept(value: Any) -> Any:  # a value from a secret base, put where the head is not secret, stays secret
        return _secret(value) if old_secret and not new_secret else value

    key, rest = path[0], path[1:]
    if isinstance(key, int):
        if key < 0:
            return new, False
        if not isinstance(old, list) or not isinstance(new, list):
            return new, not isinstance(old, list) and not isinstance(new, list)
        if key >= len(old) or key >= len(new):
            return new, not rest and key >= len(old) and key >= len(new)
        value, found = (kept(old[key]), True) if not rest else _reset(rest, old[key], new[key], old_secret, new_secret)
        return [*new[:key], value, *new[key + 1:]], found
    if key == "*" and not rest:
        if isinstance(new, dict):
            return ({k: kept(v) for k, v in old.items()} if isinstance(old, dict) else new), True
        if isinstance(new, list):
            if not isinstance(old, list):
                return new, True
            shared = min(len(old), len(new))
            return [*map(kept, old[:shared]), *new[shared:]], len(old) == len(new)
        return new, False
    if key == "*":
        if isinstance(old, dict) and isinstance(new, dict):
            result = dict(new)
            for k in old:
                if k not in result:
                    return result, False
                result[k], found = _reset(rest, old[k], result[k], old_secret, new_secret)
                if not found:
                    return result, False
            return result, True
        if isinstance(old, list) and isinstance(new, list):
            result = list(new)
            for i in range(min(len(old), len(new))):
                result[i], found = _reset(rest, old[i], result[i], old_secret, new_secret)
                if not found:
                    return result, False
            return result, len(old) == len(new)
        return new, False
    if not rest:
        if isinstance(old, dict) and key in old:
            return ({**new, key: kept(old[key])}, True) if isinstance(new, dict) else (new, False)
        return ({k: v for k, v in new.items() if k != key} if isinstance(new, dict) else new), True
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new, not isinstance(old, dict) and not isinstance(new, dict)
    if key not in new:
        return new, key not in old
    value, found = _reset(rest, old.get(key), new[key], old_secret, new_secret)
    return {**new, key: value}, found
