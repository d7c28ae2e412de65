"""Azure components drop azure-native's aliases to API-versioned types (never matched: the toolkit only registers
unversioned types) and keep every other alias. What the engine receives is checked on the RegisterResource requests."""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_azure_native as azure_native
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.runtime import PlanResult
from components.azure.base import AzureComponent, is_versioned_type_alias

_IDENT = st.from_regex(r"[a-z][a-zA-Z0-9]{0,15}", fullmatch=True)


@given(module=_IDENT, version=st.from_regex(r"[0-9]{8}(preview)?", fullmatch=True), name=_IDENT)
def test_a_type_only_alias_to_a_versioned_module_is_recognised(module: str, version: str, name: str) -> None:
    versioned = f"azure-native:{module}/v{version}:{name}"
    assert is_versioned_type_alias(pulumi.Alias(type_=versioned))
    assert not is_versioned_type_alias(pulumi.Alias(type_=f"azure-native:{module}:{name}"))
    assert not is_versioned_type_alias(pulumi.Alias(type_=f"azure:{module}/v{version}:{name}"))
    # Anything more than a type change is a real alias of someone's, never dropped.
    assert not is_versioned_type_alias(pulumi.Alias(type_=versioned, name="old"))
    assert not is_versioned_type_alias(pulumi.Alias(type_=versioned, parent=pulumi.ROOT_STACK_RESOURCE))
    assert not is_versioned_type_alias(f"urn:pulumi:s::p::{versioned}::n")



class _Probe(AzureComponent):
    def __init__(self, name: str) -> None:
        super().__init__("ai-infra:azure:Probe", name)
        azure_native.resources.ResourceGroup(f"{name}-rg", location="westeurope",
                                             opts=pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(name="old-rg")]))
        pulumi.ComponentResource("ai-infra:azure:Nested", f"{name}-nested", None, pulumi.ResourceOptions(parent=self))
        self.register_outputs({})


def _types(aliases: list) -> list[str]:
    return [a.spec.type for a in aliases if a.spec.type]


def test_components_send_no_versioned_type_aliases_and_keep_their_own(
        plan: Callable[..., PlanResult], aliases_sent: dict[str, list]) -> None:
    def program() -> None:
        _Probe("probe")
        azure_native.resources.ResourceGroup("outside", location="westeurope")  # not under a component: untouched

    result = plan(program)
    inside = result.one("azure-native:resources:ResourceGroup", "probe-rg").urn
    outside = result.one("azure-native:resources:ResourceGroup", "outside").urn
    # azure-native 3.x aliases ResourceGroup to its versioned types; outside a component they all still go out.
    assert any("/v" in t for t in _types(aliases_sent[outside]))
    assert not any("/v" in t for t in _types(aliases_sent[inside]))
    assert [a.spec.name for a in aliases_sent[inside]] == ["old-rg"]


def test_the_azure_platform_sends_no_versioned_type_aliases(
        plan_azure: Callable[..., PlanResult], prod_config: dict, aliases_sent: dict[str, list]) -> None:
    result = plan_azure(prod_config, environment="prod")
    azure = [r.urn for r in result.resources if r.type.startswith("azure-native:") and r.custom]
    assert len(azure) > 40
    leaked = {urn: _types(aliases_sent[urn]) for urn in azure if any("/v" in t for t in _types(aliases_sent[urn]))}
    assert leaked == {}
