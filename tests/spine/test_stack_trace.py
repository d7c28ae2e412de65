"""The plan's stack traces are the SDK's own, frame for frame (aiinfra/plan/stacktrace.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pulumi.runtime import resource as sdk_resource

from aiinfra.plan import stacktrace
from aiinfra.plan.runtime import RecordingMonitor, run_program

SDK_STACK_TRACE = sdk_resource._get_stack_trace


def _both() -> tuple[Any, Any]:
    """The SDK's trace and ours, taken from the same frame, so every frame outside it is the same."""
    return SDK_STACK_TRACE(), stacktrace.stack_trace()


class _Init:
    """A frame named `__init__` in this (absolute) file."""

    def __init__(self, inner: Callable[[], Any]) -> None:
        self.result = inner()


def _plain(inner: Callable[[], Any]) -> Any:
    return inner()


def _named(filename: str) -> Callable[[Callable[[], Any]], Any]:
    """A frame whose code comes from `filename`: "" and "<string>" have no file URI, so the SDK gives no position."""
    scope: dict[str, Any] = {}
    exec(compile("def hop(inner):\n    return inner()\n", filename, "exec"), scope)
    return scope["hop"]


FRAMES: dict[str, Callable[[Callable[[], Any]], Any]] = {
    "__init__": lambda inner: _Init(inner).result,
    "plain": _plain,
    "<string>": _named("<string>"),
    "empty filename": _named(""),
}


def _chain(kinds: list[str]) -> tuple[Any, Any]:
    """Call `_both` under frames of the given kinds, outermost first."""
    call: Callable[[], Any] = _both
    for kind in reversed(kinds):
        call = (lambda hop, inner: lambda: hop(inner))(FRAMES[kind], call)
    return call()


@given(st.lists(st.sampled_from(sorted(FRAMES)), max_size=12))
def test_same_trace_as_the_sdk_for_any_chain_of_frames(kinds: list[str]) -> None:
    sdk, ours = _chain(kinds)
    assert ours == sdk


def test_the_trace_starts_at_the_code_that_built_the_resource() -> None:
    sdk, ours = _chain(["plain", "__init__", "__init__", "__init__"])
    assert ours == sdk
    top = ours.frames[0].pc
    assert top.uri == Path(__file__).as_uri()  # the `_chain` frame that called the third __init__'s lambda
    assert len(ours.frames) > 3


def test_fewer_than_three_inits_give_an_empty_trace() -> None:
    sdk, ours = _chain(["__init__", "plain", "__init__"])
    assert ours == sdk and len(ours.frames) == 0


@pytest.mark.parametrize("limit", [0, 3, 40])
def test_a_traceback_limit_cuts_the_stack_as_extract_stack_does(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr("sys.tracebacklimit", limit, raising=False)
    kinds = ["__init__"] * 4
    if limit == 0:  # the SDK itself fails on an empty stack; ours gives an empty trace
        assert len(FRAMES["__init__"](stacktrace.stack_trace).frames) == 0
        return
    sdk, ours = _chain(kinds)
    assert ours == sdk


class _Layer(pulumi.ComponentResource):
    def __init__(self, name: str) -> None:
        super().__init__("test:index:Layer", name)
        aws.s3.Bucket(f"{name}-bucket", opts=pulumi.ResourceOptions(parent=self))


def _requests(monkeypatch: pytest.MonkeyPatch, implementation: Callable[[], Any]) -> list[tuple[str, Any, Any]]:
    """Plan a typed resource inside a component with `implementation` swapped in for the SDK's stack traces;
    return each registration's trace and position."""
    seen: list[tuple[str, Any, Any]] = []
    register = RecordingMonitor.RegisterResource

    def recording(self: RecordingMonitor, request: Any) -> Any:
        seen.append((request.name, request.stackTrace, request.sourcePosition))
        if request.name == "data-bucket":
            assert sdk_resource._get_stack_trace is implementation, "the plan did not swap in the implementation"
        return register(self, request)

    with monkeypatch.context() as patch:
        patch.setattr(RecordingMonitor, "RegisterResource", recording)
        patch.setattr(stacktrace, "stack_trace", implementation)
        run_program(lambda: _Layer("data"), project="p", stack="s")
    return seen


def test_a_plan_sends_the_same_traces_as_the_sdk_would(monkeypatch: pytest.MonkeyPatch) -> None:
    # one line, so the frames of this test are the same in both runs
    ours, sdk = [_requests(monkeypatch, f) for f in (stacktrace.stack_trace, SDK_STACK_TRACE)]
    assert sdk_resource._get_stack_trace is SDK_STACK_TRACE  # restored after each plan
    assert ours == sdk
    positions = {name: position for name, _, position in ours}
    # the bucket's position is the line in _Layer that created it; the component's, the lambda that built it
    assert positions["data-bucket"].uri == Path(__file__).as_uri()
    assert positions["data-bucket"].line == _Layer.__init__.__code__.co_firstlineno + 2
    assert positions["data"].uri == Path(__file__).as_uri()
