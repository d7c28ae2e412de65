"""Test helpers: run the pack's validators the way the policy SDK does (props wrapped in its unknown proxy)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pulumi_policy import PolicyProviderResource, PolicyResource, PolicyResourceOptions, ResourceValidationArgs, StackValidationArgs
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from aiinfra_policy import load_rules
from aiinfra_policy.pack import resource_validator, stack_validator
from aiinfra_policy.props import Unknown
from aiinfra_policy.registry import Rule

RULES = {r.name: r for r in load_rules()}
UNKNOWN = UNKNOWN_STRING_VALUE
"""The engine's unknown string: what a plan's inputs and the policy SDK carry for a value unknown during preview."""


def defaults(rule: Rule) -> dict[str, Any]:
    return {k: v["default"] for k, v in rule.config.items() if "default" in v}


def options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, [], False, [], None, [])


def _provider(type_: str, provider: dict | None) -> PolicyProviderResource | None:
    """The provider resource (of the type's package, with these inputs) a resource is deployed through, if any."""
    if provider is None:
        return None
    return PolicyProviderResource(type_.split(":")[0], unknown_checking_proxy(provider), "urn:prov", "prov")


def run_resource(name: str, type_: str, props: dict, config: dict | None = None, protect: bool = False,
                 resource_name: str = "res", provider: dict | None = None) -> list[str]:
    rule = RULES[name]
    args = ResourceValidationArgs(type_, unknown_checking_proxy(props), f"urn:pulumi:s::p::{type_}::{resource_name}",
                                  resource_name, options(protect), _provider(type_, provider),
                                  {**defaults(rule), **(config or {})})
    found: list[str] = []
    resource_validator(rule)(args, lambda message, urn=None: found.append(message))
    return found


def unknown_reported(name: str, type_: str, props: dict, config: dict | None = None) -> str:
    """The message of the UnknownValueError rule `name` raises on `props` (the SDK shows it as "can't run policy ...
    during preview"); the test fails if the rule passes or flags instead."""
    with pytest.raises(UnknownValueError) as caught:
        run_resource(name, type_, props, config)
    return caught.value.message


def resource(type_: str, props: dict, name: str = "r", provider: dict | None = None, deps: list | None = None) -> PolicyResource:
    return PolicyResource(type_, unknown_checking_proxy(props), f"urn:pulumi:s::p::{type_}::{name}", name, options(),
                          _provider(type_, provider), None, deps or [], {})


def run_stack(name: str, resources: list[PolicyResource], config: dict | None = None,
              found: list[tuple[str | None, str]] | None = None) -> list[tuple[str | None, str]]:
    """The violations reported, in `found` if given (so they can be read after the validator raised)."""
    rule = RULES[name]
    args = StackValidationArgs(resources, {**defaults(rule), **(config or {})})
    found = [] if found is None else found
    stack_validator(rule)(args, lambda message, urn=None: found.append((urn, message)))
    return found


__all__ = ["RULES", "UNKNOWN", "Unknown", "resource", "run_resource", "run_stack"]


def preview_stack(build: Callable[[], None]) -> list[PolicyResource]:
    """The custom resources `build` registers, as AnalyzeStack gets them in a preview: outputs (inputs, and unknown
    what the provider computes), dependencies and property dependencies."""
    from aiinfra.plan.outputs import preview_outputs
    from aiinfra.plan.runtime import run_program

    # As the first preview of a new stack: a new resource's ID is unknown, so rules must find owners by dependency.
    records = [r for r in run_program(build, project="p", stack="s", named_ids=False).resources if r.custom]
    found = {r.urn: PolicyResource(r.type, unknown_checking_proxy(preview_outputs(r.type, r.inputs)), r.urn, r.name,
                                   options(), None, None, [], {}) for r in records}
    for r in records:
        found[r.urn].dependencies.extend(found[u] for u in r.dependencies if u in found)
        found[r.urn].property_dependencies.update({k: [found[u] for u in v if u in found] for k, v in r.propertyDependencies.items()})
    return list(found.values())
