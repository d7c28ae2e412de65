"""The messages a program logs (`pulumi.log.info/warn/error`), kept for the plan as `pulumi preview` shows them.

The SDK sends each one to the engine's `Log` RPC. Under mocks that is `MockEngine`, which hands it to Python's root
logger: the message lost the resource it was logged on, and the plan's report did not show it. `RecordingEngine`
keeps severity, message and URN; the summary prints them under "Diagnostics:", grouped by resource like the CLI.
As in the CLI, an error message does not fail the plan (pulumi/pulumi#6090): a program stops a preview by raising.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pulumi.runtime.proto import engine_pb2

SHOWN = {engine_pb2.INFO: "info", engine_pb2.WARNING: "warning", engine_pb2.ERROR: "error"}
"""Severities a preview shows by default; debug messages need `pulumi preview --debug`, and the plan leaves them out."""


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    """info, warning or error."""
    message: str
    urn: str
    """The resource the message was logged on; empty for the stack."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class RecordingEngine:
    """The engine service as a program under mocks sees it: it records log messages and accepts any CLI version
    range (`pulumi.runtime.require_pulumi_version`), which a plan has no CLI to check against."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def Log(self, request: engine_pb2.LogRequest) -> None:  # noqa: N802 (the RPC's name)
        if request.severity in SHOWN:
            self.diagnostics.append(Diagnostic(SHOWN[request.severity], request.message, request.urn))

    def RequirePulumiVersion(self, request: engine_pb2.RequirePulumiVersionRequest) -> None:  # noqa: N802
        return None


def render_diagnostics(diagnostics: list[Diagnostic], stack_urn: str) -> list[str]:
    """The "Diagnostics:" block of `pulumi preview`: per resource (`<type> (<name>):`), its messages in order."""
    if not diagnostics:
        return []
    by_urn: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_urn.setdefault(diagnostic.urn or stack_urn, []).append(diagnostic)
    lines = ["", "Diagnostics:"]
    for urn, messages in by_urn.items():
        # urn:pulumi:<stack>::<project>::<parent types$><type>::<name>
        qualified, _, name = urn.rpartition("::")
        lines.append(f"  {qualified.rpartition('::')[2].rpartition('$')[2]} ({name}):")
        for diagnostic in messages:
            first, *rest = diagnostic.message.splitlines() or [""]
            lines.append(f"    {diagnostic.severity}: {first}")
            lines.extend(f"    {line}" for line in rest)
    return lines
