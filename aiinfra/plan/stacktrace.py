"""The stack trace the SDK sends with each registration, built without re-reading source files.

Pulumi's Python SDK (`pulumi.runtime.resource._get_stack_trace`) builds it with `traceback.extract_stack()`,
which stats and reads the source line of every frame on the stack and turns every filename into a URI, once per
resource: 13% of a prod plan (`bench/plan_speed.py --profile`). While a plan runs, `sdk_stack_traces()` swaps in
`stack_trace`, which walks the same frames and returns the same `StackTrace` message, frame for frame. Nothing
else in the SDK's registration path changes. tests/spine/test_stack_trace.py compares the two on the SDK version
in uv.lock, so an SDK upgrade that changes the rule fails there, not silently in a plan.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import FrameType

from pulumi.runtime import resource as _sdk_resource
from pulumi.runtime.proto import source_pb2


@cache
def _uri(filename: str) -> str | None:
    """The file URI of a frame's filename, or None where the SDK gives no position."""
    try:
        return Path(filename).as_uri() if filename else None
    except ValueError:  # a relative name such as "<frozen runpy>" or "<string>" has no file URI
        return None


def _frame(frame: FrameType) -> source_pb2.StackFrame:
    uri = _uri(frame.f_code.co_filename)
    line = frame.f_lineno
    if uri is None or line is None:
        return source_pb2.StackFrame()
    return source_pb2.StackFrame(pc=source_pb2.SourcePosition(uri=uri, line=line))


def stack_trace() -> source_pb2.StackTrace:
    """The SDK's rule: the frames outside the third `__init__` from the top (Resource, then Custom- or
    ComponentResource, then the concrete class), innermost first; empty when there is no third `__init__` or
    nothing outside it. Like `extract_stack`, it sees only the innermost `sys.tracebacklimit` frames if that is set."""
    limit = getattr(sys, "tracebacklimit", None)
    stack: list[FrameType] = []  # innermost first; this function's frame stands where the SDK's own would be
    frame: FrameType | None = sys._getframe()
    while frame is not None and (limit is None or len(stack) < limit):
        stack.append(frame)
        frame = frame.f_back
    inits = 0
    for index, frame in enumerate(stack):
        if frame.f_code.co_name == "__init__":
            inits += 1
            if inits == 3:
                return source_pb2.StackTrace(frames=[_frame(outer) for outer in stack[index + 1:]])
    return source_pb2.StackTrace()


_sdk_stack_trace = getattr(_sdk_resource, "_get_stack_trace", None)


@contextmanager
def sdk_stack_traces() -> Iterator[None]:
    """Inside the block, the SDK builds its registration stack traces with `stack_trace`. An SDK without
    `_get_stack_trace` is left as it is."""
    if _sdk_stack_trace is None:
        yield
        return
    _sdk_resource._get_stack_trace = stack_trace
    try:
        yield
    finally:
        _sdk_resource._get_stack_trace = _sdk_stack_trace


ORIGIN = "_aiinfra_origin"
"""Attribute holding the traceback an exception had when it left an `Output.apply` callback."""


@contextmanager
def apply_error_origins() -> Iterator[None]:
    """Inside the block, an exception raised by an `Output.apply` callback keeps the traceback it left the callback
    with (attribute ORIGIN). The event loop re-raises it from a finished task, and on Python 3.11 that raise drops the
    frames it was raised in, so the report would not show where in the program it happened."""
    import pulumi

    original = pulumi.Output.apply

    def apply(self, func, run_with_unknowns: bool = False):  # noqa: ANN001, ANN202 (the SDK's signature)
        def callback(value):  # noqa: ANN001, ANN202
            try:
                return func(value)
            except BaseException as err:
                if getattr(err, ORIGIN, None) is None:
                    setattr(err, ORIGIN, err.__traceback__)
                raise

        return original(self, callback, run_with_unknowns)

    pulumi.Output.apply = apply
    try:
        yield
    finally:
        pulumi.Output.apply = original
