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

# Go's time.ParseDuration units, in nanoseconds (µs is U+00B5 and μs U+03BC: Go takes both).
_UNITS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9,
          "h": 3600 * 10**9}
# One "<number><unit>" element: ASCII digits before or after the point (Go reads no other digits), and a unit that runs
# up to the next digit or point (Go reads "5mm" as the unknown unit "mm", not 5m then m).
_ELEMENT = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)", re.ASCII)
_MAX_NS = 1 << 63  # a Go Duration is an int64 count of nanoseconds


def go_duration_seconds(text: str) -> float:
    """Seconds of a Go duration string such as "1h30m", "90s" or "1.5h", as the engine keeps them: time.ParseDuration's
    whole nanoseconds, then Duration.Seconds(); ValueError for what Go refuses ("", "10", "5 m", "1d")."""
    rest, negative = text, text[:1] == "-"
    if rest[:1] in ("-", "+"):
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise _invalid(text)
    total, pos = 0, 0
    while pos < len(rest):
        element = _ELEMENT.match(rest, pos)
        whole, fraction, unit = element[1], element[2], element[3]  # the pattern always matches, maybe empty
        if not (whole or fraction) or unit not in _UNITS:
            raise _invalid(text)
        scale = _UNITS[unit]
        value = int(whole or "0") * scale
        if fraction:  # Go adds int64(float64(fraction) * (float64(unit) / 10^digits)): truncated, not rounded
            value += int(float(int(fraction)) * (scale / 10 ** len(fraction)))
        total, pos = total + value, element.end()
        if total > _MAX_NS - (0 if negative else 1):
            raise ValueError(f"invalid duration {text!r}: longer than Go's maximum duration (about 292 years)")
    seconds = float(total // 10**9) + float(total % 10**9) / 1e9  # Duration.Seconds()
    return -seconds if negative else seconds


def _invalid(text: str) -> ValueError:
    return ValueError(f"invalid duration {text!r}: give numbers with units ns, us, ms, s, m or h, such as 1h30m")


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
    replaceOnChanges, replaceWith and deletedWith (URNs), additionalSecretOutputs, customTimeouts (seconds) and
    propertyDependencies (the properties that have any)."""
    return {
        "deleteBeforeReplace": request.deleteBeforeReplace if request.deleteBeforeReplaceDefined else None,
        "replaceOnChanges": list(request.replaceOnChanges),
        "replaceWith": sorted(request.replace_with),
        "deletedWith": request.deletedWith,
        "additionalSecretOutputs": list(request.additionalSecretOutputs),
        # The engine parses timeouts only for resources it registers itself; a remote component's go to its provider.
        "customTimeouts": custom_timeouts(request) if not request.remote else {},
        "propertyDependencies": {key: sorted(deps.urns) for key, deps in sorted(request.propertyDependencies.items())
                                 if deps.urns},
    }
