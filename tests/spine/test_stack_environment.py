"""A platform deploys only as its own environment's stack, and `aiinfra validate` and the stack program (`aiinfra plan`,
`pulumi up`) word the same config mistake the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest
import yaml

from aiinfra.cli import main
from aiinfra.plan.runtime import run_program
from components.spec import StackConfigError, check_stack_environment

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"

COPIED_DEV_IN_PROD = (
    "platform.environment: 'dev' does not match the stack 'prod': the environment names the stack's resources and "
    "sets their protection (dev leaves file systems, buckets and keys unprotected), so a stack file copied from another "
    "environment would deploy as that one; set environment: prod, or deploy it as stack 'dev' or 'dev-<suffix>'")


def project(root: Path, stacks: dict[str, str]) -> Path:
    """A copy of ai-infra's own project (its name and its stack program) with the given stack files."""
    (root / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    (root / "__main__.py").write_text((STACKS / "__main__.py").read_text())
    for stack, text in stacks.items():
        (root / f"Pulumi.{stack}.yaml").write_text(text)
    return root


def platform_of(stack: str) -> dict:
    return yaml.safe_load((STACKS / f"Pulumi.{stack}.yaml").read_text())["config"]["ai-infra:platform"]


@pytest.mark.parametrize(("environment", "stack"), [
    ("prod", "prod"), ("prod", "prod-eu"), ("dev", "dev-alice"), ("prod", "prod-eu-2"), ("dev", "dev-")])
def test_the_stack_is_the_environment_or_starts_with_it_and_a_dash(environment: str, stack: str) -> None:
    check_stack_environment(environment, stack)


@pytest.mark.parametrize(("environment", "stack"), [
    ("dev", "prod"), ("prod", "production"), ("prod", "dev-prod"), ("prod-eu", "prod"), ("prod", "prod_eu"), ("prod", "Prod")])
def test_any_other_stack_is_refused(environment: str, stack: str) -> None:
    with pytest.raises(StackConfigError, match=rf"^platform\.environment: '{environment}' does not match the stack '{stack}': "):
        check_stack_environment(environment, stack)


def test_validate_refuses_a_dev_file_copied_to_prod(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = project(tmp_path, {"prod": (STACKS / "Pulumi.dev.yaml").read_text()})
    assert main(["validate", "--program", str(program), "--stack", "prod"]) == 1
    assert capsys.readouterr() == ("", f"error: {COPIED_DEV_IN_PROD}\n")


def test_plan_refuses_it_before_anything_is_registered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = project(tmp_path, {"prod": (STACKS / "Pulumi.dev.yaml").read_text()})
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "prod", "--no-policy", "-q", "--json", str(out)]) == 1
    assert capsys.readouterr() == ("", f"error: {COPIED_DEV_IN_PROD}\n")
    assert not out.exists()


def test_pulumi_up_refuses_it_too() -> None:
    """`pulumi up -s prod`: the stack program reads the config from the engine and the stack from pulumi.get_stack()."""
    from components.compose import build_platform, load_from_config

    registered = []
    with pytest.raises(pulumi.RunError) as caught:
        run_program(lambda: registered.append(build_platform(load_from_config())), project="ai-infra", stack="prod",
                    config={"ai-infra:platform": json.dumps(platform_of("dev"))})
    assert str(caught.value) == COPIED_DEV_IN_PROD and not registered


def test_a_regional_stack_may_carry_its_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = project(tmp_path, {"prod-eu": (STACKS / "Pulumi.prod.yaml").read_text()})
    assert main(["validate", "--program", str(program), "--stack", "prod-eu"]) == 0
    assert capsys.readouterr() == ("ok: prod-eu (aws, gcp, azure)\n", "")

    from components.compose import load_from_config

    result = run_program(lambda: pulumi.export("environment", load_from_config().environment), project="ai-infra",
                         stack="prod-eu", config={"ai-infra:platform": json.dumps(platform_of("prod"))})
    assert result.outputs == {"environment": "prod"}


@pytest.mark.parametrize("command", ["validate", "plan"])
@pytest.mark.parametrize(("stack", "bare"), [("acme/ai-infra/prod", "prod"), ("acme/prod", "prod")])
def test_the_rule_reads_the_bare_stack_name(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
                                            stack: str, bare: str) -> None:
    program = project(tmp_path, {"prod": (STACKS / "Pulumi.dev.yaml").read_text(),
                                 "prod-eu": (STACKS / "Pulumi.prod.yaml").read_text()})
    extra = ["--no-policy", "-q"] if command == "plan" else []
    assert main([command, "--program", str(program), "--stack", stack, *extra]) == 1
    assert capsys.readouterr().err == f"error: {COPIED_DEV_IN_PROD}\n"
    assert main(["validate", "--program", str(program), "--stack", f"{stack}-eu"]) == 0
    assert capsys.readouterr().out == "ok: prod-eu (aws, gcp, azure)\n"


@pytest.mark.parametrize(("file", "message"), [
    ("config: {}\n", "stack 'x' has no ai-infra:platform config; see README 'Config reference'"),
    ("config:\n  ai-infra:platfrom: {environment: x}\n",
     "stack 'x' has no ai-infra:platform config, but has 'ai-infra:platfrom': did you mean ai-infra:platform? Config keys "
     "are exact and case-sensitive; rename it to ai-infra:platform"),
    ("config:\n  ai-infra:platform:\n    secure: AAABAxyz\n",
     "stack 'x': ai-infra:platform is a secure value, which aiinfra never decrypts; keep the platform in plain config and "
     "put secrets in keys of their own"),
    ("config:\n  ai-infra:platform:\n    environment: x\n    labels: {secure: AAABAxyz}\n",  # a secure value inside it
     "stack 'x': platform.labels is a secure value; secure values are not allowed inside ai-infra:platform (aiinfra never "
     "decrypts them): keep the platform in plain config and put secrets in keys of their own"),
    ("config:\n  ai-infra:platform:\n    labels: {owner: {secure: v1:abc}, team: {secure: v1:def}}\n    teams: [{secure: x}]\n",
     "stack 'x': platform.labels.owner, platform.labels.team, platform.teams[0] are secure values; secure values are not "
     "allowed inside ai-infra:platform (aiinfra never decrypts them): keep the platform in plain config and put secrets "
     "in keys of their own"),
    ("config:\n  ai-infra:platform: hello\n", "stack 'x': ai-infra:platform must be a mapping of platform settings; got 'hello'"),
    ("config:\n  ai-infra:platform: [1, 2]\n",
     "invalid platform config (1 problem):\n  platform: expected a mapping of platform settings, got a list"),
])
def test_validate_and_plan_word_the_same_mistake_the_same_way(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, message: str) -> None:
    program = project(tmp_path, {"x": file})
    assert main(["validate", "--program", str(program), "--stack", "x"]) == 1
    assert capsys.readouterr() == ("", f"error: {message}\n")
    assert main(["plan", "--program", str(program), "--stack", "x", "--no-policy", "-q"]) == 1
    assert capsys.readouterr() == ("", f"error: {message}\n")


@pytest.mark.parametrize("value", ["null", "", "~"])
def test_a_platform_key_without_a_value_is_named_so_after_the_clis_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    """The CLI gives a key with no value to the program as the empty string, and warns (workspace/loaders.go)."""
    program = project(tmp_path, {"x": f"config:\n  ai-infra:platform: {value}\n"})
    expected = ('warning: stack \'x\': no value for configuration key "ai-infra:platform" in Pulumi.x.yaml; the CLI treats '
                'it as an empty string "" (a future Pulumi will read null): set it to "" to avoid this warning\n'
                "error: stack 'x': ai-infra:platform has no value; it must be a mapping of platform settings\n")
    assert main(["validate", "--program", str(program), "--stack", "x"]) == 1
    assert capsys.readouterr() == ("", expected)
    assert main(["plan", "--program", str(program), "--stack", "x", "--no-policy", "-q"]) == 1
    assert capsys.readouterr() == ("", expected)


def test_an_esc_import_is_named_by_each_path_as_it_can(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Validate names the import in the error; the plan has warned about it before its program reports the missing key."""
    program = project(tmp_path, {"x": "environment: [acme/platform]\n"})
    assert main(["validate", "--program", str(program), "--stack", "x"]) == 1
    assert capsys.readouterr().err == ("error: stack 'x' has no ai-infra:platform config (it imports Pulumi ESC "
                                       "environments acme/platform, which aiinfra cannot open offline)\n")
    assert main(["plan", "--program", str(program), "--stack", "x", "--no-policy", "-q"]) == 1
    assert capsys.readouterr().err == (
        "warning: stack 'x' imports Pulumi ESC environments (acme/platform); an offline plan cannot open them, so the "
        "config they provide is missing\nerror: stack 'x' has no ai-infra:platform config; see README 'Config reference'\n")


def test_programs_that_build_their_own_platform_are_not_checked() -> None:
    """The templates validate a platform they build (environment = the stack's name, whatever it is) with
    compose.validate: the stack rule belongs to reading `ai-infra:platform`, in load_from_config."""
    from components.compose import validate

    result = run_program(lambda: pulumi.export("environment", validate(platform_of("dev")).environment),
                         project="team-a", stack="sandbox")
    assert result.outputs == {"environment": "dev"}


def test_the_offline_secure_placeholder_is_the_one_the_platform_looks_for() -> None:
    from aiinfra.plan.project import SECRET_PLACEHOLDER
    from components.spec.stack import SECURE_PLACEHOLDER

    assert SECURE_PLACEHOLDER == SECRET_PLACEHOLDER


@pytest.mark.parametrize(("text", "message"), [
    # Offline (validate, plan): each secure value is the placeholder, so its path is known (fuzz review F10).
    ('{"labels": {"owner": "[secret]"}}', "stack 'x': platform.labels.owner is a secure value; secure values are not allowed "
     "inside ai-infra:platform (aiinfra never decrypts them): keep the platform in plain config and put secrets in keys of their own"),
    # `pulumi up`: the engine decrypts, and says only that the key holds a secret.
    ('{"labels": {"owner": "jane"}}', "stack 'x': ai-infra:platform is a secure value or holds one; secure values are not "
     "allowed inside it: keep the platform in plain config and put secrets in keys of their own"),
    ("[secret]", "stack 'x': ai-infra:platform is a secure value, which aiinfra never decrypts; keep the platform in plain "
     "config and put secrets in keys of their own"),
])
def test_a_secure_value_in_the_platform_is_named_where_it_can_be(text: str, message: str) -> None:
    from components.spec import platform_config_value

    with pytest.raises(StackConfigError) as caught:
        platform_config_value(text, stack="x", secret=True)
    assert str(caught.value) == message
