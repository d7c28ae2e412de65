"""The base of every Azure component: it drops azure-native's aliases to API-versioned resource types.

pulumi-azure-native v3's typed classes alias each resource to every API-versioned type it ever had, e.g.
`azure-native:network/v20230201:Subnet` (60 aliases on a Subnet, 113 on a ManagedCluster). They exist so that a
stack which once used an explicitly versioned module keeps its resources. This toolkit has only ever registered
the unversioned types (`azure-native:network:Subnet`), so these aliases can never match a resource in its state.
They still cost time: the Python SDK builds URN outputs for each alias when the resource is constructed (about
1.4 s of a 3 s prod plan, measured with `bench/plan_speed.py`; a real `pulumi preview` runs the same SDK code),
and each is sent to the engine.

The aliases are dropped by a `transformations` option on the component, which its children inherit. It is the
only hook that runs before the SDK looks at the aliases: the engine calls `transforms` back after the SDK has
built the alias outputs. (Pulumi's docs say `transformations` "will be deprecated in the future in favor of
Transforms"; if it goes, this module goes and plans get slower, nothing else changes.) Aliases the toolkit sets
itself, and any other alias, are kept.
"""

from __future__ import annotations

import copy

import pulumi


def is_versioned_type_alias(alias: object) -> bool:
    """True for a type-only alias to an API-versioned azure-native type (`azure-native:<module>/v<version>:<Name>`)."""
    if not isinstance(alias, pulumi.Alias):
        return False
    others = (alias.name, alias.parent, alias.stack, alias.project)
    type_ = alias.type_
    if any(v is not ... for v in others) or not isinstance(type_, str):
        return False
    package, _, rest = type_.partition(":")
    module = rest.partition(":")[0]
    return package == "azure-native" and "/v" in module


def _drop_versioned_type_aliases(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
    aliases = args.opts.aliases
    if not aliases or not any(is_versioned_type_alias(a) for a in aliases):
        return None
    opts = copy.copy(args.opts)  # shallow: the same parent object, as a transformation must keep
    opts.aliases = [a for a in aliases if not is_versioned_type_alias(a)]
    return pulumi.ResourceTransformationResult(args.props, opts)


class AzureComponent(pulumi.ComponentResource):
    """A ComponentResource whose descendants register without azure-native's versioned-type aliases."""

    def __init__(self, type_: str, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        own = pulumi.ResourceOptions(transformations=[_drop_versioned_type_aliases])
        super().__init__(type_, name, None, pulumi.ResourceOptions.merge(opts, own))
