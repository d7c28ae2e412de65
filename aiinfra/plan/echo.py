"""What the mock engine answers for a registration: its inputs echoed back as outputs, worked out on the wire form.

A preview of a create answers each resource's known inputs as its outputs. The SDK's MockMonitor computes that answer
by deserializing the request into Python values (`rpc.deserialize_properties`), handing them to the mocks and
serializing the answer again on an event loop of its own; for a plan of ~800 resources with large inputs that
round trip cost as much as the rest of the plan. `echo_properties` gives the same answer from the JSON form of the
request, which the plan records anyway: pure data, no Pulumi import.
"""

from __future__ import annotations

from typing import Any

SIG = "4dabf18193072939515e22adb298388d"
"""The key that marks a special value on the wire (pulumi.runtime.rpc._special_sig_key)."""
SECRET = "1b47061264138c4ac30d75fd1eb44270"
"""The signature of a secret (rpc._special_secret_sig)."""


class SpecialValue(Exception):
    """The inputs hold a resource reference, asset, archive or output value: only the SDK can rebuild those."""


def echo_properties(wire: dict[str, Any]) -> dict[str, Any]:
    """The outputs the SDK's mock round trip gives for `wire` inputs, followed by `known_only`: nulls dropped from
    objects, a secret inside an object or list hoisted to mark the whole object or list (as
    `rpc.deserialize_property` does), unknowns kept. Raises SpecialValue for what only the SDK can rebuild."""
    return _properties(wire)


def _properties(wire: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in wire.items():
        v = _echo(v)
        if v is not None:  # the SDK treats values that deserialize to None as absent
            out[k] = v
    return out


def _echo(value: Any) -> Any:
    if isinstance(value, dict):
        sig = value.get(SIG)
        if sig is None:
            props = _properties(value)
            if any(is_secret_value(v) for v in props.values()):
                return _wrap({k: v for k, v in ((k, _unwrap(v)) for k, v in props.items()) if v is not None})
            return props
        if sig == SECRET:
            return _wrap(_echo(value.get("value")))
        raise SpecialValue(sig)
    if isinstance(value, list):
        items = [_echo(v) for v in value]
        if any(is_secret_value(v) for v in items):
            return _wrap([_unwrap(v) for v in items])
        return items
    return value


def is_secret_value(value: Any) -> bool:
    """A secret value (not an output value, whose secretness is a flag on it)."""
    return isinstance(value, dict) and value.get(SIG) == SECRET


def _wrap(value: Any) -> Any:
    """A secret of `value`; one whose value is null keeps only its signature (`known_only` drops the null)."""
    if is_secret_value(value):
        return value
    return {SIG: SECRET} if value is None else {SIG: SECRET, "value": value}


def _unwrap(value: Any) -> Any:
    return value.get("value") if is_secret_value(value) else value


def known_only(value: Any) -> Any:
    """Drop the nulls left inside objects, as the plan's mocks do before they answer (`PlanMocks.new_resource`)."""
    if isinstance(value, dict):
        return {k: known_only(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [known_only(v) for v in value]
    return value
