"""The `aiinfra` CLI surface: catalog JSON, fast help, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aiinfra.cli import main

ROOT = Path(__file__).resolve().parents[2]

REQUIRED_ROW_KEYS = {"cloud", "instance_type", "accelerator", "accelerator_count", "accelerator_memory_gib"}


def test_catalog_json_lists_every_cloud_with_required_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["cloud"] for r in rows} == {"aws", "gcp", "azure"}
    for row in rows:
        assert REQUIRED_ROW_KEYS <= set(row), row
        assert row["accelerator"] == row["accelerator"].lower()
        assert row["accelerator_count"] >= 1 and row["accelerator_memory_gib"] >= 1
    by_type = {(r["cloud"], r["instance_type"]): r for r in rows}
    assert by_type[("gcp", "a3-highgpu-8g")]["accelerator"] == "h100-80gb"
    assert by_type[("aws", "p5.48xlarge")]["accelerator_count"] == 8
    assert any(r["accelerator"] == "tpu-v5e" for r in rows)
    assert any(r["accelerator"] == "trainium2" for r in rows)


def test_catalog_filters_by_cloud(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--json", "--cloud", "azure"]) == 0
    assert {r["cloud"] for r in json.loads(capsys.readouterr().out)} == {"azure"}


def test_catalog_lustre_json_lists_the_tiers_with_their_sources(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--json", "--lustre", "--cloud", "aws"]) == 0
    tiers = json.loads(capsys.readouterr().out)
    assert {(t["service_name"], t["throughput_mbps_per_tib"]) for t in tiers} >= {("PERSISTENT_2", 125), ("PERSISTENT_2", 1000)}
    assert all(t["cloud"] == "aws" and t["source"].startswith("https://docs.aws.amazon.com/") for t in tiers)
    persistent = next(t for t in tiers if t["service_name"] == "PERSISTENT_2")
    assert (persistent["min_gib"], persistent["step_gib"]) == (1200, 2400)


def test_catalog_text_shows_each_facts_source_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--cloud", "gcp"]) == 0
    assert "source:" not in capsys.readouterr().out
    assert main(["catalog", "--cloud", "gcp", "--sources"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.split()[:2] == ["gcp", "a3-highgpu-8g"])
    assert lines[row + 1].strip().startswith("source: https://")
    tier = next(i for i, line in enumerate(lines) if "managed-lustre" in line)
    assert lines[tier + 1].strip().startswith("source: https://docs.cloud.google.com/managed-lustre/")


def test_help_imports_no_pulumi_or_pydantic() -> None:
    # `aiinfra --help` must start fast: argparse only, heavy imports happen inside commands.
    code = ("import sys, aiinfra.cli as c\n"
            "try:\n    c.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pulumi', 'pydantic', 'grpc', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("argv", [[], ["plan"], ["catalog", "--cloud", "oracle"]])
def test_usage_errors_exit_1_not_the_policy_code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 1  # 2 is reserved for mandatory policy violations
    assert "usage: aiinfra" in capsys.readouterr().err


def _console(*argv: str) -> subprocess.CompletedProcess[str]:
    """`aiinfra ...` as the console script runs it (`aiinfra.cli:run`, which leaves with os._exit)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as on most machines
    return subprocess.run([sys.executable, "-c", "from aiinfra.cli import run; run()", *argv],
                          capture_output=True, text=True, timeout=300, env=env)


def test_the_console_script_flushes_everything_before_its_fast_exit(capsys: pytest.CaptureFixture[str]) -> None:
    # Many small prints through a pipe: what sits in stdout's buffer (here all of it) os._exit would drop unflushed.
    assert main(["catalog"]) == 0
    expected = capsys.readouterr().out
    done = _console("catalog")
    assert done.returncode == 0, done.stderr
    assert len(expected) > 4000 and done.stdout == expected


def test_the_console_script_keeps_the_exit_codes() -> None:
    missing = _console("plan", "--stack", "nope", "--no-policy")
    assert missing.returncode == 1
    # planned with empty config, as the CLI plans a stack without a file: ai-infra's program then stops on the missing platform
    assert missing.stderr.startswith("warning: stack 'nope' has no config file")
    assert "error: stack 'nope' has no ai-infra:platform config" in missing.stderr
    usage = _console("catalog", "--cloud", "oracle")  # argparse's SystemExit takes the normal way out
    assert usage.returncode == 1 and "usage: aiinfra" in usage.stderr


def test_a_reader_that_leaves_early_gets_no_traceback() -> None:
    # `aiinfra catalog | head -1`: the pipe is closed before aiinfra writes, so every write fails with EPIPE.
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run([sys.executable, "-c", "from aiinfra.cli import run; run()", "catalog"], stdout=write,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize(("stack", "error"), [
    ("acme/dev", None), ("acme/ai-infra/dev", None),
    ("acme/other/dev", "error: --stack acme/other/dev: a stack of project 'other', but this project is 'ai-infra'\n"),
    ("a/b/c/d", "error: --stack 'a/b/c/d': a stack name, org/stack or org/project/stack\n"),
    ("", "error: --stack '': a stack name, org/stack or org/project/stack\n"),  # an unset $STACK in a script
])
def test_stack_names_as_the_pulumi_cli_takes_them(stack: str, error: str | None, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["validate", "--stack", stack]) == (0 if error is None else 1)
    captured = capsys.readouterr()
    assert captured.err == (error or "") and (error is not None or captured.out.startswith("ok: dev "))
    if error is not None:  # plan refuses the same names the same way, before it plans (no program traceback)
        assert main(["plan", "--stack", stack, "--no-policy", "-q"]) == 1
        assert capsys.readouterr().err == error


def test_a_missing_policy_sdk_is_reported_before_the_plan_runs(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    import aiinfra.plan.program

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pulumi_policy" else real(name, *a))
    monkeypatch.setattr(aiinfra.plan.program, "plan_stack", lambda *a: pytest.fail("planned before checking the pack"))
    monkeypatch.chdir(ROOT)
    assert main(["plan", "--stack", "dev", "-q"]) == 1
    assert capsys.readouterr().err == (f"error: the policy pack needs pulumi_policy in {sys.prefix}: install "
                                       "'ai-infra[policy]' (every cloud extra includes it), or plan with --no-policy\n")


def test_validate_takes_a_program_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: team-platform\nruntime: python\n")
    (tmp_path / "Pulumi.dev-lab.yaml").write_text((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    assert main(["validate", "--program", str(tmp_path), "--stack", "dev-lab"]) == 0
    assert capsys.readouterr().out == "ok: dev-lab (aws, gcp)\n"
