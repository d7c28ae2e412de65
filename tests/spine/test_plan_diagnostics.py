"""What a program logs (pulumi.log) reaches the plan's report as `pulumi preview` shows it: grouped by resource, and
without failing the plan, as an error message does not fail a preview (pulumi/pulumi#6090)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write_program

from aiinfra.cli import main
from aiinfra.plan.diagnostics import Diagnostic
from aiinfra.plan.project import load_project
from aiinfra.plan.program import plan_stack

LOGGING = """
import pulumi
pulumi.runtime.require_pulumi_version(">=3.100.0")  # the plan has no CLI whose version it could refuse
pulumi.log.info("starting")
bucket = pulumi.CustomResource("aws:s3/bucket:Bucket", "logs", {"bucket": "logs"})
pulumi.log.warn("no lifecycle rule\\nobjects are kept forever", resource=bucket)
pulumi.log.error("quota exceeded")
pulumi.log.debug("only with --debug")
"""

BUCKET = "urn:pulumi:dev::x::aws:s3/bucket:Bucket::logs"


def test_log_messages_are_kept_with_their_resource_and_debug_left_out(tmp_path: Path) -> None:
    result = plan_stack(load_project(write_program(tmp_path, LOGGING)), "dev")
    assert sorted(result.diagnostics, key=lambda d: d.message) == [
        Diagnostic("warning", "no lifecycle rule\nobjects are kept forever", BUCKET),
        Diagnostic("error", "quota exceeded", ""),
        Diagnostic("info", "starting", ""),
    ]


def test_the_summary_and_json_show_them_and_the_plan_still_succeeds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(write_program(tmp_path, LOGGING)), "--stack", "dev", "--no-policy",
                 "--json", str(out)]) == 0
    shown = capsys.readouterr().out
    block = shown[shown.index("Diagnostics:"):].splitlines()
    assert block[1:3] == ["  pulumi:pulumi:Stack (x-dev):", "    info: starting"]
    assert "    error: quota exceeded" in block and "only with --debug" not in shown
    at = block.index("  aws:s3/bucket:Bucket (logs):")
    assert block[at + 1:at + 3] == ["    warning: no lifecycle rule", "    objects are kept forever"]
    logged = json.loads(out.read_text())["diagnostics"]
    assert {"severity": "warning", "message": "no lifecycle rule\nobjects are kept forever", "urn": BUCKET} in logged
    assert {d["urn"] for d in logged} == {BUCKET, ""}


def test_quiet_plans_still_print_warnings_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--program", str(write_program(tmp_path, LOGGING)), "--stack", "dev", "--no-policy", "-q"]) == 0
    err = capsys.readouterr().err
    assert "error: quota exceeded" in err and "warning: no lifecycle rule" in err and "starting" not in err


def test_a_plan_without_messages_has_no_diagnostics_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = write_program(tmp_path, "import pulumi\npulumi.CustomResource('x:index:Thing', 'a', {})\n")
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy"]) == 0
    assert "Diagnostics:" not in capsys.readouterr().out
