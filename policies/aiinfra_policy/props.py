"""Reading resource props safely: the SDK wraps them in a proxy that raises on unknown (preview) values."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from pulumi_policy.proxy import (
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
)

UNKNOWNS = {UNKNOWN_STRING_VALUE, UNKNOWN_NUMBER_VALUE, UNKNOWN_BOOLEAN_VALUE, UNKNOWN_ARRAY_VALUE, UNKNOWN_OBJECT_VALUE}


class Unknown(Exception):
    """A value a rule must read is not known during preview; the message names it."""

    def __init__(self, path: str):
        super().__init__(f"{path} is unknown during preview, so it cannot be verified; the check runs again on `pulumi up`")
        self.path = path


class Unknowns:
    """For stack rules: go on past a resource whose needed value is unknown during preview, and raise the first such
    value once every other resource was checked, so the SDK's "can't run during preview" advisory still shows but
    no decidable violation is hidden behind it.

        unknowns = Unknowns()
        for r in resources:
            with unknowns.skip():
                ...  # need(...), yield violations
        unknowns.raise_first()
    """

    def __init__(self) -> None:
        self.first: Unknown | None = None

    @contextmanager
    def skip(self) -> Iterator[None]:
        try:
            yield
        except Unknown as err:
            self.first = self.first or err

    def raise_first(self) -> None:
        if self.first is not None:
            raise self.first


_PLAIN = frozenset({dict, list, str, tuple, int, float, bool, type(None)})


def raw(node: Any) -> Any:
    """The plain value behind the SDK's unknown-checking proxy (the proxy exposes it as `__target`)."""
    if type(node) in _PLAIN:  # the common case, without the slower ABC checks below (hot in stack rules)
        return node
    if isinstance(node, Mapping) and not isinstance(node, dict):
        return node["__target"]
    if isinstance(node, Sequence) and not isinstance(node, (list, str, tuple)):
        return node["__target"]
    return node


def plain(value: Any) -> Any:
    """The value with every proxy inside it unwrapped (for json.dumps and the like)."""
    value = raw(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value in UNKNOWNS


def get(props: Any, path: str, default: Any = None) -> Any:
    """Value at a dotted path, or `default` if absent. Unknown values come back as they are (see `is_unknown`)."""
    node = raw(props)
    for part in path.split("."):
        node = raw(node)
        if is_unknown(node):
            return node
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return default
        if node is None:
            return default
    return raw(node)


def need(props: Any, path: str, default: Any = None) -> Any:
    """Like `get`, but a value that is unknown during preview raises `Unknown` naming the path."""
    value = get(props, path, default)
    if is_unknown(value):
        raise Unknown(path)
    return value


def items(props: Any, path: str) -> Iterator[Any]:
    """The elements of a list at `path` (none if absent); an unknown list or element raises `Unknown`, since a
    list with an unknown element can't be told to hold (or lack) a value."""
    value = need(props, path, [])
    for index, element in enumerate(raw(value) or []):
        if is_unknown(raw(element)):
            raise Unknown(f"{path}.{index}")
        yield raw(element)


def named_entries(props: Any, path: str, kind: str) -> list[tuple[str, Any]]:
    """(label for messages, element) of each element of the list at `path`, such as the node pools a cluster declares
    inline: "<kind> <the element's name, else its index>: "."""
    return [(f"{kind} {get(entry, 'name') or index}: ", entry) for index, entry in enumerate(items(props, path))]


def as_json(value: Any, path: str) -> Any:
    """Policy documents arrive as JSON strings (or objects); unknown raises `Unknown`."""
    if is_unknown(value):
        raise Unknown(path)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def log_named(name: str) -> bool:
    """Whether a resource name has a `log` or `logs` segment (split on '-', '_', '.'): `access-logs`, `log-archive`;
    not `catalog` or `blog`. Marks the log buckets some rules exempt."""
    return bool({"log", "logs"} & set(re.split(r"[-_.]", name.lower())))


def urns(refs: Any) -> set[str]:
    """The URNs of stack resources or of dependency references (resources with `urn`, or URN strings); none for None."""
    return {getattr(r, "urn", str(r)) for r in refs or []}


def of_type(resources: list[Any], *types: str) -> list[Any]:
    """The stack resources of the given types, in the stack's order."""
    return [r for r in resources if r.resource_type in types]


def refs(resource: Any, *keys: str) -> set[str]:
    """What another resource may name `resource` by: its URN and the known values of its `keys` (an ARN, an ID, a
    name), for `owner_of`. Not its ID: a preview has a new resource's ID unknown, so what names it by ID depends on it."""
    found = {resource.urn}
    found.update(v for k in keys if isinstance(v := get(resource.props, k), str) and v and not is_unknown(v))
    return found


def owner_of(holder: Any, prop: str, ref: Any, candidates: list[Any], refs: Callable[[Any], set[str]]) -> Any:
    """The one resource among `candidates` that `holder` names in `prop` (`ref`: its value there, an id, name or ARN;
    maybe unknown). First the one candidate that property depends on; else, when `ref` is known, the one whose `refs`
    hold it; else (an output of a resource made in the same update, unknown in preview) the one candidate among all
    of holder's dependencies. None when none or several are (an owner outside the stack). The property's own
    dependencies come before the others: a bucket policy also depends on the buckets whose ARNs it names."""
    by_urn = {c.urn: c for c in candidates}
    by_property = urns((getattr(holder, "property_dependencies", None) or {}).get(prop)) & set(by_urn)
    if len(by_property) == 1:
        return by_urn[by_property.pop()]
    if isinstance(ref, str) and not is_unknown(ref):
        named = [c for c in candidates if ref in refs(c)]
        return named[0] if len(named) == 1 else None
    by_dependency = urns(getattr(holder, "dependencies", None)) & set(by_urn)
    return by_urn[by_dependency.pop()] if len(by_dependency) == 1 else None


def provider_props(resource: Any) -> Any:
    """The inputs of the provider a stack resource deploys through; None for a resource without one."""
    provider = getattr(resource, "provider", None)
    return provider.props if provider is not None else None
