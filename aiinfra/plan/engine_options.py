"""Resource options as the engine keeps them from a registration request, for the plan's records and the policy pack.

The engine turns `customTimeouts` strings into seconds with Go's time.ParseDuration and fails the registration on a
string it cannot parse (pulumi/pulumi pkg/resource/deploy/source_eval.go, generateTimeoutInSeconds), so a plan does
too. It keeps `deleteBeforeReplace` only when the program set it, and each property's dependencies.
"""

from __future__ import annotations

import re
from typing import Any

import pulumi
from pulumi.runtime.proto import resource_pb2

# Go's time.ParseDuration units, in seconds (µs is U+00B5 and μs U+03BC: Go takes both).
_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
# One "<number><unit>" element: a number with digits before or after its point, and a unit that runs up to the next
# digit or point (Go reads "5mm" as the unknown unit "mm", not 5m then m).
_ELEMENT = re.compile(r"(\d+\.?\d*|\.\d+)([^\d.]*)")
_MAX_SECONDS = (1 << 63) / 1e9  # a Go Duration is int64 nanoseconds


def go_duration_seconds(text: str) -> float:
    """Seconds of a Go duration string such as "1h30m", "90s" or "1.5h", as time.ParseDuration reads it; ValueError
    for what it refuses ("", "10", "5 m", "1d")."""
    rest, sign = text, 1.0
    if rest[:1] in ("-", "+"):
        sign, rest = (-1.0 if rest[0] == "-" else 1.0), rest[1:]
    if rest == "0":
        return 0.0
    total, pos = 0.0, 0
    while pos < len(rest) or not rest:
        element = _ELEMENT.match(rest, pos)
        if element is None or element[2] not in _UNITS:
            raise ValueError(f"invalid duration {text!r}: give numbers with units ns, us, ms, s, m or h, such as 1h30m")
        total, pos = total + float(element[1]) * _UNITS[element[2]], element.end()
    if total > _MAX_SECONDS:
        raise ValueError(f"invalid duration {text!r}: longer than Go's maximum duration (about 292 years)")
    return sign * total


def custom_timeouts(request: resource_pb2.RegisterResourceRequest) -> dict[str, float]:
    """The request's custom timeouts in seconds, those it sets only; pulumi.RunError with the engine's message for a
    value Go cannot parse."""
    if not request.HasField("customTimeouts"):
        return {}
    timeouts: dict[str, float] = {}
    for operation in ("create", "update", "delete", "read"):
        value = getattr(request.customTimeouts, operation)
        if not value:
            continue
        try:
            timeouts[operation] = go_duration_seconds(value)
        except ValueError:
            raise pulumi.RunError(f"{request.type} {request.name}: unable to parse customTimeout Value {value} "
                                  f"(custom_timeouts.{operation}; Go durations such as 10m or 1h30m)") from None
    return timeouts


def options_of(request: resource_pb2.RegisterResourceRequest) -> dict[str, Any]:
    """The options a plan records beyond protect, ignoreChanges and aliases: deleteBeforeReplace (None when unset),
    additionalSecretOutputs, customTimeouts (seconds) and propertyDependencies (the properties that have any)."""
    return {
        "deleteBeforeReplace": request.deleteBeforeReplace if request.deleteBeforeReplaceDefined else None,
        "additionalSecretOutputs": list(request.additionalSecretOutputs),
        "customTimeouts": custom_timeouts(request),
        "propertyDependencies": {key: sorted(deps.urns) for key, deps in sorted(request.propertyDependencies.items())
                                 if deps.urns},
    }
