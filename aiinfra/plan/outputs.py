"""What a preview reports as the outputs of a resource it creates, for the policy pack's stack analysis.

The engine's AnalyzeStack is called on each resource's outputs, not its inputs (pulumi/pulumi
pkg/resource/deploy/step_generator.go, AnalyzeResources). In a preview, a resource being created reports its
inputs plus, unknown, every property the provider computes that the program did not set. The typed provider SDK
says which those are: an output property whose type is not Optional is always present, so when the program set no
value the provider computes it (pulumi_aws.s3.Bucket.versioning, pulumi_gcp.container.Cluster.node_pools).
"""

from __future__ import annotations

import functools
import typing
from typing import Any

from pulumi._types import _py_properties
from pulumi.runtime.rpc import UNKNOWN

from .sdk import sdk_class


# Computed properties the bridged providers fill in while planning, from the provider's configuration: the AWS
# provider's region and merged default tags, the Google provider's project, region/zone and merged labels. They are
# known in a preview; they stay absent here, and policies fall back to the provider's configuration, as it does.
PLANNED = {"aws": frozenset({"region", "tagsAll"}),
           "gcp": frozenset({"project", "region", "zone", "location", "effectiveLabels", "terraformLabels"})}


def preview_outputs(type_: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs, and each computed output property they leave unset, as unknown."""
    planned = PLANNED.get(type_.split(":", 1)[0], frozenset())
    return {**{name: UNKNOWN for name in computed_properties(type_) if name not in inputs and name not in planned},
            **inputs}


@functools.cache
def computed_properties(type_: str) -> tuple[str, ...]:
    """Wire names of the output properties the typed class of resource `type_` always has; none for a type without
    a typed class (components, CustomResource kinds)."""
    cls = sdk_class(type_)
    if cls is None:
        return ()
    names = []
    for _, wire, prop in _py_properties(cls):
        # The annotation as written, unresolved (Output[ForwardRef('outputs.X')]): only Optional[...] matters, and
        # resolving every forward reference (typing.get_type_hints) costs about a second over a platform's types.
        returned = getattr(prop.fget, "__annotations__", {}).get("return")
        inner = typing.get_args(returned)  # Output[T] -> (T,)
        if inner and not _optional(inner[0]):
            names.append(wire)
    return tuple(names)


def _optional(tp: Any) -> bool:
    return typing.get_origin(tp) is typing.Union and type(None) in typing.get_args(tp)
