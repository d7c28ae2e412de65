"""The plan's echo of a registration (aiinfra/plan/echo.py) against the SDK's own mock round trip.

The SDK's MockMonitor answers a registration by deserializing its inputs (as a preview: unknowns kept), handing them
to the mocks and serializing the answer; the plan's mocks drop nulls left inside objects. The recording monitor
computes that answer from the JSON form of the request instead. These tests hold the two to the same bytes."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest
from google.protobuf import json_format, struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from pulumi.runtime import rpc
from pulumi.runtime import settings as sdk_settings

from aiinfra.plan.echo import SECRET, SIG, SpecialValue, echo_properties, known_only
from aiinfra.plan.runtime import PlanMocks, run_program, wire_to_plain

UNKNOWN = rpc.UNKNOWN


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def _sdk_answer(wire: dict[str, Any]) -> dict[str, Any]:
    """What the SDK's MockMonitor sends back for these inputs in a preview, with the plan's mocks in between."""
    dry_run = sdk_settings.SETTINGS.dry_run
    sdk_settings.SETTINGS.dry_run = True  # a preview keeps unknowns, inside secrets too
    try:
        inputs = rpc.deserialize_properties(_struct(wire))
    finally:
        sdk_settings.SETTINGS.dry_run = dry_run
    struct = asyncio.run(rpc.serialize_properties(known_only(inputs), {}))
    return json_format.MessageToDict(struct)


def _echo_answer(wire: dict[str, Any]) -> dict[str, Any]:
    return json_format.MessageToDict(_struct(echo_properties(wire)))


_keys = st.text(st.characters(codec="utf-8", exclude_characters=SIG), min_size=1, max_size=6)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.text(max_size=5), st.just(UNKNOWN),
                     st.floats(allow_nan=False, allow_infinity=False, width=32))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(_keys, inner, max_size=4),
    inner.map(lambda v: {SIG: SECRET, "value": v}),  # a secret
), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=6))
def test_echo_matches_the_sdk_round_trip(wire: dict[str, Any]) -> None:
    assert _echo_answer(wire) == _sdk_answer(wire)


@pytest.mark.parametrize(("wire", "answer"), [
    # Nulls leave objects, stay in lists; unknowns stay, so the output is unknown as in a real preview.
    ({"a": None, "b": [None, 1], "c": {"d": None, "e": UNKNOWN}}, {"b": [None, 1], "c": {"e": UNKNOWN}}),
    # A secret inside an object or list marks the whole top-level property secret, as the SDK deserializes it.
    ({"tags": {"k": {SIG: SECRET, "value": "v"}, "j": "w"}}, {"tags": {SIG: SECRET, "value": {"k": "v", "j": "w"}}}),
    ({"l": [1, {SIG: SECRET, "value": 2}]}, {"l": {SIG: SECRET, "value": [1, 2]}}),
    # A secret whose value is null keeps only its signature.
    ({"s": {SIG: SECRET, "value": None}}, {"s": {SIG: SECRET}}),
])
def test_echo_examples(wire: dict[str, Any], answer: dict[str, Any]) -> None:
    assert echo_properties(wire) == answer
    assert _echo_answer(wire) == _sdk_answer(wire)


def test_special_values_are_left_to_the_sdk() -> None:
    reference = {SIG: "5cf8f73096256a8f31e491e813e4eb8e", "urn": "urn:pulumi:s::p::t::n"}
    with pytest.raises(SpecialValue):
        echo_properties({"ref": [reference]})


def test_a_resource_reference_input_still_plans_through_the_sdk_round_trip() -> None:
    """A registration the echo cannot answer (a resource reference input) goes through the SDK's MockMonitor, and its
    outputs still resolve: the referenced resource comes back as itself."""
    seen: list[Any] = []

    def program() -> None:
        target = pulumi.CustomResource("test:index:Target", "target", {"size": 1})
        holder = pulumi.CustomResource("test:index:Holder", "holder", {"ref": target, "size": 2, "ref_urn": None})
        pulumi.Output.all(holder.urn, target.urn).apply(seen.append)

    plan = run_program(program, project="p", stack="s")
    holder = plan.one("test:index:Holder")
    assert holder.inputs["ref"][SIG] == "5cf8f73096256a8f31e491e813e4eb8e"
    assert holder.inputs["ref"]["urn"] == plan.one("test:index:Target").urn
    assert holder.inputs["size"] == 2
    assert seen and seen[0][1] == plan.one("test:index:Target").urn


def test_plan_mocks_answer_known_outputs_for_a_typed_resource() -> None:
    """End to end: an output the SDK resolves from the echoed answer is known, with the input's value."""
    import pulumi_aws as aws

    seen: list[Any] = []

    def program() -> None:
        log_group = aws.cloudwatch.LogGroup("logs", name="flow-logs", retention_in_days=365,
                                            tags={"team": pulumi.Output.secret("ml")})
        pulumi.Output.all(log_group.name, log_group.retention_in_days, log_group.tags).apply(seen.append)

    run_program(program, project="p", stack="s", mocks_=PlanMocks())
    assert seen == [["flow-logs", 365, {"team": "ml"}]]


def test_wire_to_plain_keeps_the_numbers_the_struct_carried() -> None:
    assert echo_properties(wire_to_plain(json_format.MessageToDict(_struct({"n": 3, "f": 1.5})))) == {"n": 3, "f": 1.5}
