"""Tests from a second mutation review of the `aiinfra` CLI (aiinfra/cli.py): what a changed line left every other test
passing on. They pin what the user sees: the blocked-plan message's count of mandatory violations, the layout of the
JSON files `plan --json` and `schema --output` write, a `--diff` base of another project refused before planning, the
policy SDK modules a plan says are missing, and a `--diff` base whose records are not JSON objects refused with a
one-line error.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from helpers import write_program
from spine.test_cli_mutation_review import BUCKET_PROGRAM, OPEN_SSH

from aiinfra.cli import main


def test_the_blocked_message_counts_only_the_mandatory_violations(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two violations, one of them mandatory: the plan exits 2 and says one mandatory violation blocks it."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", OPEN_SSH, "config:\n  aws:region: us-east-1\n")
    config = tmp_path / "levels.json"
    config.write_text(json.dumps({"all": "advisory", "required-tags": "mandatory"}))
    assert main(["plan", "--program", str(program), "--stack", "dev", "-q", "--policy-config", str(config)]) == 2
    assert capsys.readouterr().err == "\n1 mandatory policy violation(s): the plan would be blocked\n"


@pytest.mark.parametrize("argv", [["plan", "--stack", "dev", "--no-policy", "-q", "--json"], ["schema", "--output"]])
def test_a_json_file_is_indented_and_ends_with_a_newline(
        tmp_path: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`plan --json` and `schema --output` write text files a reviewer can read and diff line by line: two-space
    indents and a final newline."""
    monkeypatch.chdir(write_program(tmp_path, BUCKET_PROGRAM))
    assert main([*argv, "out.json"]) == 0
    text = (tmp_path / "out.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\n"


@pytest.mark.parametrize(("project", "stack"), [("y", "dev"), ("x", "prod"), ("y", "prod")])
def test_a_diff_base_of_another_stack_or_project_is_refused_before_planning(
        tmp_path: Path, project: str, stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A base plan of the same stack name in another project (or another stack) is not diffed against this one."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", "raise SystemExit('the program ran')\n")
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"project": project, "stack": stack, "resources": []}))
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q", "--diff", str(base)]) == 1
    assert capsys.readouterr().err == (f"error: --diff {base}: a plan of {project}/{stack}, not of x/dev; diff a plan "
                                       "of the same stack\n")


@pytest.mark.parametrize(("absent", "named"), [({"jsonschema"}, "jsonschema"),
                                               ({"pulumi_policy", "jsonschema"}, "pulumi_policy and jsonschema")])
def test_every_missing_policy_module_is_named_before_the_plan_runs(
        tmp_path: Path, absent: set[str], named: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pack needs jsonschema as well as pulumi_policy; when both are missing the error names both."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in absent else real(name, *a))
    program = write_program(tmp_path, "raise SystemExit('the program ran')\n")
    assert main(["plan", "--program", str(program), "--stack", "dev", "-q"]) == 1
    assert capsys.readouterr().err == (f"error: the policy pack needs {named} in {sys.prefix}: install "
                                       "'ai-infra[policy]' (every cloud extra includes it), or plan with --no-policy\n")


def test_a_package_next_to_a_main_file_gets_the_main_file_hint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A neighbour package (a directory with __init__.py) of a `main` file is not importable either
    (pulumi/pulumi#7360): the error says so, as for a neighbour module."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nmain: infra/app.py\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "infra" / "helperpkg").mkdir(parents=True)
    (tmp_path / "infra" / "helperpkg" / "__init__.py").write_text("NAME = 'x'\n")
    (tmp_path / "infra" / "app.py").write_text("import helperpkg.names\n")
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q"]) == 1
    assert capsys.readouterr().err.rstrip().endswith(
        "error: the program of stack 'dev' failed: ModuleNotFoundError: No module named 'helperpkg'\n"
        f"  main is the file {tmp_path / 'infra' / 'app.py'}: the Python language host runs it as a script from its "
        "directory without putting that directory on sys.path, so its neighbours are not importable "
        "(pulumi/pulumi#7360); set main to the directory, with a __main__.py, to import them")


@pytest.mark.parametrize("neighbour", ["mylib_not_installed.py", "mylib_not_installed"])
def test_a_directory_programs_missing_module_gets_the_install_hint_whatever_lies_beside_the_project(
        tmp_path: Path, neighbour: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The main-file hint is for a `main` file's neighbours only: a project run as a directory that misses a module
    is told to install its requirements, even when a file or directory of that name lies beside the project."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", "import mylib_not_installed\n")
    if neighbour.endswith(".py"):
        (tmp_path / neighbour).write_text("X = 1\n")
    else:
        (tmp_path / neighbour).mkdir()
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q"]) == 1
    assert capsys.readouterr().err.rstrip().endswith(
        "error: the program of stack 'dev' failed: ModuleNotFoundError: No module named 'mylib_not_installed'\n"
        f"  aiinfra runs the program in its own Python environment ({sys.prefix}); install the program's requirements "
        "into it")


TWO_OPEN_SSH = ("import pulumi, pulumi_aws as aws\n"
                "for name in ('a', 'b'):\n"
                "    aws.ec2.SecurityGroup(name, vpc_id='vpc-1', description='x', ingress=[aws.ec2.SecurityGroupIngressArgs(\n"
                "        protocol='tcp', from_port=22, to_port=22, cidr_blocks=['0.0.0.0/0'])])\n")


def test_violations_of_one_level_are_listed_by_policy_then_resource(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Within a level the report groups by policy (each policy's resources together), not by resource."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", TWO_OPEN_SSH, "config:\n  aws:region: us-east-1\n")
    config = tmp_path / "levels.json"
    config.write_text(json.dumps({"all": "advisory"}))
    assert main(["plan", "--program", str(program), "--stack", "dev", "-q", "--policy-config", str(config)]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("  [")] == [
        "  [advisory] aws-security-group-no-open-admin-ingress: a",
        "  [advisory] aws-security-group-no-open-admin-ingress: b",
        "  [advisory] required-tags: a", "  [advisory] required-tags: b"]


def test_a_quiet_plan_with_a_diff_prints_the_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--diff` shows what is added against the base on stdout, even with -q (which drops only the summary)."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", BUCKET_PROGRAM)
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"project": "x", "stack": "dev", "resources": []}))
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q", "--diff", str(base)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\nDiff against base: ") and "\n    + logs (aws:s3/bucket:Bucket)\n" in out


@pytest.mark.parametrize("inside", [True, False])
def test_the_policy_config_is_shown_relative_to_the_working_directory_when_under_it(
        tmp_path: Path, inside: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's header and the JSON's policy.config name the config relative to the working directory when it
    is under it (however it was given), else by its absolute path."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", BUCKET_PROGRAM, "config:\n  aws:region: us-east-1\n")
    (tmp_path / "cfg").mkdir()
    config = tmp_path / "cfg" / "levels.json"
    config.write_text(json.dumps({"all": "advisory"}))
    monkeypatch.chdir(tmp_path if inside else program)
    shown = "cfg/levels.json" if inside else str(config)
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "dev", "-q", "--policy-config", str(config),
                 "--json", str(out)]) == 0
    assert f" with config {shown}: " in capsys.readouterr().out.splitlines()[0]
    assert json.loads(out.read_text())["policy"]["config"] == shown


def test_the_policy_report_is_set_apart_from_the_summary_by_a_blank_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without -q the summary comes first, then a blank line, then the policy report's header (with -q the header is
    the first line: test_cli_mutation_review.py)."""
    (tmp_path / "p").mkdir()
    program = write_program(tmp_path / "p", BUCKET_PROGRAM, "config:\n  aws:region: us-east-1\n")
    config = tmp_path / "levels.json"
    config.write_text(json.dumps({"all": "advisory"}))
    assert main(["plan", "--program", str(program), "--stack", "dev", "--policy-config", str(config)]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(out) if line.startswith("Policy pack "))
    assert header > 1 and out[header - 1] == "" and out[header - 2] != ""


@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_catalog_lustre_text_lists_only_the_tiers_each_with_its_maximum(
        cloud: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`catalog --lustre` prints the Lustre tiers alone (no machine-type table, header or blank line before them),
    each with its documented maximum size or, where none is documented (AWS), says so."""
    from components import catalog

    assert main(["catalog", "--lustre", "--cloud", cloud]) == 0
    lines = capsys.readouterr().out.splitlines()
    tiers = catalog.lustre_tiers(cloud)
    assert lines[0] == "Lustre tiers:" and len(lines) == 1 + len(tiers)
    for line, tier in zip(lines[1:], tiers, strict=True):
        assert line.startswith(f"  {cloud:6} {tier.service_name} ")
        assert line.endswith(f", max {tier.max_gib} GiB" if tier.max_gib else ", max no documented max")
