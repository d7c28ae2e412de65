"""`aiinfra plan --program DIR --stack NAME` plans any Pulumi Python project offline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pulumi
import pytest
import yaml
from helpers import write_program

from aiinfra.cli import main
from aiinfra.plan.project import ProjectError, load_project
from aiinfra.plan.program import plan_stack
from aiinfra.plan.echo import SIG as SECRET_SIG
from aiinfra.plan.runtime import UNKNOWN

PROGRAM = Path(__file__).resolve().parents[1] / "data" / "programs" / "invokes"
RECORD_FIELDS = {"urn", "type", "name", "parent", "provider", "custom", "protect", "retainOnDelete",
                 "ignoreChanges", "dependencies", "inputs", "aliases", "deleteBeforeReplace", "replaceOnChanges", "replaceWith", "deletedWith", "additionalSecretOutputs",
                 "customTimeouts", "propertyDependencies"}


def test_program_with_invokes_plans_from_its_own_directory() -> None:
    result = plan_stack(load_project(PROGRAM), "demo")
    subnets = result.of_type("aws:ec2/subnet:Subnet")
    # zones come from the availability-zones invoke, for the stack's configured region
    assert sorted(s.inputs["availabilityZone"] for s in subnets) == ["eu-west-1a", "eu-west-1b"]
    # names come from the program's own helper module, imported from the program directory
    assert sorted(s.name for s in subnets) == ["demo-subnet-0", "demo-subnet-1"]
    instance = result.one("aws:ec2/instance:Instance")
    assert instance.inputs["ami"].startswith("ami-")
    assert instance.inputs["tags"]["account"] == "123456789012"
    assert instance.inputs["associatePublicIpAddress"] is True
    # the subnet depends on the VPC through vpc_id
    vpc = result.one("aws:ec2/vpc:Vpc")
    assert all(vpc.urn in s.dependencies for s in subnets)


def test_secure_config_becomes_a_secret_not_a_value() -> None:
    result = plan_stack(load_project(PROGRAM), "demo")
    assert result.outputs["password"][SECRET_SIG]
    assert "AAAB" not in json.dumps(result.to_json())  # the ciphertext is never decrypted or echoed


def test_plans_are_isolated_from_each_other() -> None:
    first = plan_stack(load_project(PROGRAM), "demo")
    second = plan_stack(load_project(PROGRAM), "demo")
    assert sorted(r.urn for r in first.resources) == sorted(r.urn for r in second.resources)
    assert len(second.of_type("aws:ec2/subnet:Subnet")) == 2  # the program's modules ran again


def test_cli_writes_json_with_the_documented_fields(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(PROGRAM), "--stack", "demo", "--no-policy", "--json", str(out), "-q"]) == 0
    document = json.loads(out.read_text())
    assert document["project"] == "invokes-demo" and document["stack"] == "demo"
    assert document["resources"], "resources missing"
    for record in document["resources"]:
        assert set(record) == RECORD_FIELDS
    stack = [r for r in document["resources"] if r["type"] == "pulumi:pulumi:Stack"]
    assert len(stack) == 1 and stack[0]["custom"] is False
    assert document["outputs"]["zone"] == "eu-west-1a"


def test_unknown_stack_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    # A stack without a stack file plans with empty config, as the CLI does (test_plan_fidelity2.py); the warning names
    # the stacks that have one, and this program's required config then fails it.
    assert main(["plan", "--program", str(PROGRAM), "--stack", "nope", "--no-policy"]) == 1
    err = capsys.readouterr().err
    assert "stack 'nope' has no config file" in err and "stacks with a file there: demo" in err
    assert "Traceback" not in err


def test_missing_project_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="no Pulumi.yaml"):
        load_project(tmp_path)


def test_a_relative_policy_pack_path_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "plan.json"
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the repository root, which holds policies/
    code = main(["plan", "--program", str(PROGRAM), "--stack", "demo", "--policy-pack", "policies",
                 "--json", str(out), "-q"])
    document = json.loads(out.read_text())
    assert document["policy"]["pack"].startswith("ai-infra-compliance@v")
    assert "aws-launch-template-imdsv2" in {v["policy"] for v in document["policy"]["violations"]}
    assert code == 2  # that rule is mandatory in the baseline config
    # A project other than the pack's own gets the baseline config, and the report names it.
    assert document["policy"]["config"] == "policies/config/baseline.json"


@pytest.mark.parametrize(("stack", "own_project", "given", "chosen"), [
    ("prod", True, None, "config/prod.json"),          # ai-infra's own environments: their own settings
    ("dev", True, None, "config/dev.json"),
    ("qa", True, "config/staging.json", "config/staging.json"),  # a new stack, until gen_config writes its own
    ("prod", False, None, "config/baseline.json"),     # another project's `prod` is not ai-infra's prod
    ("prod", False, "config/staging.json", "config/staging.json"),  # --policy-config always wins
])
def test_the_policy_config_is_the_packs_own_environments_only_for_its_own_project(
        tmp_path: Path, stack: str, own_project: bool, given: str | None, chosen: str) -> None:
    import argparse

    from aiinfra.cli import _policy_setup

    pack = Path(__file__).resolve().parents[2] / "policies"
    args = argparse.Namespace(no_policy=False, policy_pack=None, program=None, stack=stack,
                              policy_config=str(pack / given) if given else None)
    _, config, path = _policy_setup(args, pack.parent if own_project else tmp_path)
    assert path.resolve() == (pack / chosen).resolve()
    assert config == json.loads((pack / chosen).read_text())


def test_a_stack_of_the_packs_own_project_without_its_config_is_refused_not_given_baseline() -> None:
    """A new environment planned with baseline.json would pass its soc2/hipaa/gdpr rules unseen."""
    import argparse

    from aiinfra.cli import UserError, _policy_setup

    pack = Path(__file__).resolve().parents[2] / "policies"
    args = argparse.Namespace(no_policy=False, policy_pack=None, program=None, stack="qa", policy_config=None)
    with pytest.raises(UserError) as err:
        _policy_setup(args, pack.parent)
    message = str(err.value)
    assert message.startswith("no policy config for stack 'qa': ") and "config/qa.json does not exist" in message
    assert "gen_config.py" in message and "ENVIRONMENTS" in message and "--policy-config FILE or --no-policy" in message


def test_a_policy_config_naming_unknown_rules_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"no-such-rule": "mandatory"}))
    assert main(["plan", "--program", str(PROGRAM), "--stack", "demo", "--policy-config", str(config), "-q"]) == 1
    err = capsys.readouterr().err
    assert "policy config names unknown policies: no-such-rule" in err and "required-tags" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--diff", "{missing}"], "--diff {missing}: cannot read it (No such file or directory)"),
    (["--diff", "{not_json}"], "--diff {not_json}: not JSON"),
    (["--diff", "{not_a_plan}"], "--diff {not_a_plan}: not a plan from `aiinfra plan --json`"),
    (["--diff", "{other_stack}"], "--diff {other_stack}: a plan of invokes-demo/prod, not of invokes-demo/demo"),
    (["--json", "{no_dir}/plan.json"], "--json {no_dir}/plan.json: directory {no_dir} does not exist"),
    (["--markdown", "{no_dir}/comment.md"], "--markdown {no_dir}/comment.md: directory {no_dir} does not exist"),
    (["--policy-pack", "{no_dir}"], "no policy pack at {no_dir} (PulumiPolicy.yaml missing)"),
    (["--policy-config", "{missing}"], "policy config {missing} does not exist"),
    (["--policy-config", "{not_json}"], "policy config {not_json} is not readable JSON"),
    (["--policy-config", "{not_a_plan}"], "policy config {not_a_plan}: expected a JSON object of policy settings by name, got list"),
])
def test_bad_plan_files_are_clear_errors_before_anything_is_planned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        argv: list[str], message: str) -> None:
    paths = {"missing": tmp_path / "missing.json", "not_json": tmp_path / "bad.json",
             "not_a_plan": tmp_path / "list.json", "no_dir": tmp_path / "nowhere", "other_stack": tmp_path / "prod.json"}
    paths["not_json"].write_text("{bad")
    paths["not_a_plan"].write_text("[1, 2]")
    paths["other_stack"].write_text(json.dumps({"project": "invokes-demo", "stack": "prod", "resources": []}))
    monkeypatch.setattr("aiinfra.plan.program.plan_stack", lambda *_: pytest.fail("planned despite a bad file"))
    argv = [a.format(**paths) for a in argv]
    assert main(["plan", "--program", str(PROGRAM), "--stack", "demo", "-q", *argv]) == 1
    err = capsys.readouterr().err
    assert message.format(**paths) in err and "Traceback" not in err


def test_the_project_is_found_in_a_parent_directory_as_the_pulumi_cli_does(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root / "components" / "spec")
    assert main(["validate", "--stack", "dev"]) == 0
    assert capsys.readouterr().out.startswith("ok: dev")


@pytest.mark.parametrize(("project", "stack", "project_text", "stack_text"), [
    ("Pulumi.yml", "Pulumi.dev.yml", "name: x\nruntime: python\n", "config:\n  x:greeting: hi\n"),
    ("Pulumi.json", "Pulumi.dev.json", '{"name": "x", "runtime": "python"}', '{"config": {"x:greeting": "hi"}}'),
])
def test_a_yml_or_json_project_plans_with_its_stack_file_of_the_same_extension(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: str, stack: str, project_text: str,
        stack_text: str) -> None:
    """The CLI looks for Pulumi.json, Pulumi.yaml, then Pulumi.yml, and reads Pulumi.<stack> with the project
    file's extension (sdk/go/common/workspace/paths.go)."""
    (tmp_path / project).write_text(project_text)
    (tmp_path / stack).write_text(stack_text)
    (tmp_path / "__main__.py").write_text("import pulumi\npulumi.export('greeting', pulumi.Config().get('greeting'))\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  x:greeting: from the wrong file\n")  # not this project's
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"greeting": "hi"}
    assert load_project(tmp_path).stacks() == ["dev"]
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "--stack", "dev", "--no-policy", "-q"]) == 0


def test_pulumi_json_comes_first_and_bad_json_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: from-yaml\nruntime: python\n")
    (tmp_path / "Pulumi.json").write_text('{"name": "from-json", "runtime": "python"}')
    assert load_project(tmp_path).name == "from-json"
    (tmp_path / "Pulumi.json").write_text('{"name": "x",\n "runtime": python}')
    with pytest.raises(ProjectError, match=r"Pulumi\.json:2:13: not valid JSON: Expecting value"):
        load_project(tmp_path)


def test_no_project_anywhere_up_the_tree_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--stack", "dev"]) == 1
    assert f"no Pulumi.yaml in {tmp_path.resolve()} or any parent" in capsys.readouterr().err


@pytest.mark.parametrize(("project", "stack", "message"), [
    (b"", b"config: {}\n", "Pulumi.yaml: 'name' is required"),
    (b"- name: x\n", b"config: {}\n", "Pulumi.yaml: expected a mapping of settings (name: ..., config: ...), got list"),
    (b"name: x\nruntime: python\nmain: 5\n", b"", "Pulumi.yaml: 'main' must be a path relative to the project, got 5"),
    (b"name: x\nruntime: python\nmain: app.py\n", b"", "Pulumi.yaml: main {root}/app.py does not exist"),
    (b"name: x\nruntime: python\nmain: src\n", b"", "Pulumi.yaml: main directory {root}/src has no __main__.py"),
    (b"name: x\nruntime: python\n", b"\xff\xfeconfig: {}\n", "Pulumi.dev.yaml is not UTF-8 text: byte 0xff at offset 0"),
    (b"name: x\nruntime: python\n", b"just text\n", "Pulumi.dev.yaml: expected a mapping of settings (name: ..., config: ...), got str"),
])
def test_malformed_project_files_are_clear_errors_and_run_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], project: bytes, stack: bytes, message: str) -> None:
    (tmp_path / "Pulumi.yaml").write_bytes(project)
    (tmp_path / "Pulumi.dev.yaml").write_bytes(stack)
    (tmp_path / "src").mkdir()
    (tmp_path / "__main__.py").write_text("raise SystemExit('the program ran')\n")
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    assert message.format(root=tmp_path.resolve()) in err
    assert "Traceback" not in err and "the program ran" not in err


@pytest.mark.parametrize(("exit_call", "code", "message"), [
    ("sys.exit('no region configured')", 1, "error: the program called sys.exit: no region configured"),
    ("sys.exit(3)", 1, "error: the program exited with status 3"),
    ("sys.exit(0)", 0, ""),
])
def test_sys_exit_in_a_program_ends_it_as_the_language_host_would(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], exit_call: str, code: int, message: str) -> None:
    write_program(tmp_path, f"import sys\nimport pulumi\npulumi.export('before', 1)\n{exit_call}\npulumi.export('after', 2)\n")
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q", "--json", str(out)]) == code
    err = capsys.readouterr().err
    assert err.strip() == message
    if code == 0:  # what ran before the exit is the plan
        assert json.loads(out.read_text())["outputs"] == {"before": 1}


@pytest.mark.parametrize(("value", "message"), [
    ("hello", "stack 'x': ai-infra:platform must be a mapping of platform settings; got 'hello'"),
    ("\n    secure: AAABAxyz", "stack 'x': ai-infra:platform is a secure value, which aiinfra never decrypts"),
    ("[1, 2]", "platform: expected a mapping of platform settings, got a list"),
])
def test_validate_names_a_platform_value_that_is_not_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str, message: str) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text(f"config:\n  ai-infra:platform: {value}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--stack", "x"]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_missing_sdk_says_where_to_install_the_programs_requirements(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_program(tmp_path, "import pulumi_not_installed_anywhere\n")
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    assert "ModuleNotFoundError: No module named 'pulumi_not_installed_anywhere'" in err
    assert f"aiinfra runs the program in its own Python environment ({sys.prefix}); install the program's requirements into it" in err


def test_ctrl_c_during_a_plan_exits_130_without_a_traceback(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("aiinfra.plan.program.plan_stack", interrupted)
    assert main(["plan", "--program", str(PROGRAM), "--stack", "demo", "-q"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_a_stack_that_imports_esc_environments_is_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_program(tmp_path, "import pulumi\npulumi.Config().require('dbUrl')\n",
                  stack_file="environment:\n  - acme/aws-creds\n  - acme/db\nconfig:\n  x:plain: 1\n")
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("warning: stack 'dev' imports Pulumi ESC environments (acme/aws-creds, acme/db); an offline "
                          "plan cannot open them, so the config they provide is missing\n")
    assert "Missing required configuration variable 'x:dbUrl'" in err


def test_validate_says_when_the_platform_may_come_from_an_esc_environment(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    (tmp_path / "Pulumi.x.yaml").write_text("environment: [acme/platform]\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--stack", "x"]) == 1
    assert capsys.readouterr().err == ("error: stack 'x' has no ai-infra:platform config (it imports Pulumi ESC "
                                       "environments acme/platform, which aiinfra cannot open offline)\n")


@pytest.mark.parametrize(("source", "first_frame", "error"), [
    # an apply callback: the frames start at the program's function
    ("import pulumi\n\ndef check(zones):\n    raise ValueError(f'no zones in {zones}')\n\n"
     "pulumi.Output.from_input('eu-west-1').apply(check)\n", "__main__.py", "ValueError: no zones in eu-west-1"),
    # the same, exported: Python 3.11's event loop re-raises it without the frames it was raised in
    ("import pulumi\n\ndef check(zones):\n    raise ValueError(f'no zones in {zones}')\n\n"
     "pulumi.export('zones', pulumi.Output.from_input('eu-west-1').apply(check))\n", "__main__.py",
     "ValueError: no zones in eu-west-1"),
    # a transform, which the engine calls while it registers a resource: only the transform's own frame
    ("import pulumi\n\ndef broken(args):\n    return args.props['nope']\n\n"
     "pulumi.runtime.register_resource_transform(broken)\npulumi.CustomResource('demo:index:Thing', 't', {})\n",
     "__main__.py", "KeyError: 'nope'"),
])
def test_a_program_error_shows_the_programs_own_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, first_frame: str, error: str) -> None:
    """The traceback starts in the program (or in SDK code it called), not in this CLI, runpy, the event loop, the
    thread pool or the SDK runtime that led to it."""
    program = write_program(tmp_path, source)
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    frames = [line.split('"')[1] for line in err.splitlines() if line.startswith('  File "')]
    assert frames[0].endswith(first_frame) and frames[-1] == str(tmp_path / "__main__.py"), frames
    assert not [f for f in frames if any(part in f for part in ("/aiinfra/", "/asyncio/", "runpy", "pulumi/runtime/"))]
    assert err.rstrip().endswith(f"the program of stack 'dev' failed: {error}")


def test_a_main_directory_runs_from_that_directory_and_imports_from_it(tmp_path: Path) -> None:
    """The CLI runs the program from its `main` directory (pkg/engine/project.go getPwdMain), so a relative path in it
    is relative to `main`, and runpy puts the directory on sys.path; both are undone afterwards."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nmain: src/\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "sizes.json").write_text('{"replicas": 3}\n')
    (tmp_path / "src" / "helper.py").write_text("NAME = 'from-helper'\n")
    (tmp_path / "src" / "__main__.py").write_text(
        "import json, os, pulumi\nimport helper\n"
        "pulumi.export('sizes', json.load(open('sizes.json')))\npulumi.export('cwd', os.getcwd())\n"
        "pulumi.export('helper', helper.NAME)\n")
    before_cwd, before_path = Path.cwd(), list(sys.path)
    outputs = plan_stack(load_project(tmp_path), "dev").outputs
    assert outputs == {"sizes": {"replicas": 3}, "cwd": str(tmp_path / "src"), "helper": "from-helper"}
    assert (Path.cwd(), sys.path) == (before_cwd, before_path)


def test_a_main_file_runs_from_its_directory_as_a_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `main` file runs from its parent directory, and pulumi-language-python-exec runs it with runpy.run_path, which
    adds nothing to sys.path for a file: its neighbours are not importable (pulumi/pulumi#7360)."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nmain: infra/app.py\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "infra").mkdir()
    (tmp_path / "infra" / "name.txt").write_text("web\n")
    (tmp_path / "infra" / "app.py").write_text(
        "import os, sys, pulumi\npulumi.export('name', open('name.txt').read().strip())\n"
        "pulumi.export('on_path', os.path.dirname(os.path.abspath(__file__)) in sys.path)\n")
    assert plan_stack(load_project(tmp_path), "dev").outputs == {"name": "web", "on_path": False}
    (tmp_path / "infra" / "helper.py").write_text("NAME = 'x'\n")
    (tmp_path / "infra" / "app.py").write_text("import helper\n")
    assert main(["plan", "--program", str(tmp_path), "--stack", "dev", "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.rstrip().endswith(
        "error: the program of stack 'dev' failed: ModuleNotFoundError: No module named 'helper'\n"
        f"  main is the file {tmp_path / 'infra' / 'app.py'}: the Python language host runs it as a script from its "
        "directory without putting that directory on sys.path, so its neighbours are not importable "
        "(pulumi/pulumi#7360); set main to the directory, with a __main__.py, to import them")


def test_a_component_method_call_resolves_unknown(tmp_path: Path) -> None:
    """A method call (pulumi-eks Cluster.get_kubeconfig(), pulumi.runtime.call) runs in the provider plugin, which a
    plan cannot run: the result is unknown, as in a preview, and callbacks on it do not run."""
    write_program(tmp_path, """import pulumi

class Cluster(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("eks:index:Cluster", name, {}, None, remote=True)

    def get_kubeconfig(self):
        return pulumi.runtime.call("eks:index:Cluster/getKubeconfig", {"profileName": "dev"}, res=self)

kubeconfig = Cluster("cluster").get_kubeconfig()
kubeconfig.apply(lambda value: pulumi.CustomResource("demo:index:Thing", "from-kubeconfig", {"v": value}))
pulumi.export("kubeconfig", kubeconfig)
pulumi.export("known", pulumi.runtime.call("demo:index:Fn/method", {}).is_known())
""")
    result = plan_stack(load_project(tmp_path), "dev")
    assert result.outputs == {"kubeconfig": UNKNOWN, "known": False}
    # the apply never ran; the remote component gets its package's default provider, as in the engine
    assert [r.name for r in result.resources] == ["x-dev", "default", "cluster"]


@pytest.mark.parametrize(("stack", "organization"), [
    ("dev", "organization"), ("acme/dev", "acme"), ("acme/x/dev", "acme"),
])
def test_the_stack_names_the_organization_the_program_sees(tmp_path: Path, stack: str, organization: str) -> None:
    write_program(tmp_path, "import pulumi\npulumi.export('org', pulumi.get_organization())\n"
                            "pulumi.export('stack', pulumi.get_stack())\n")
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(tmp_path), "--stack", stack, "--no-policy", "-q", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["outputs"] == {"org": organization, "stack": "dev"}


PROVIDER_SDK = """import pulumi


class _Package(pulumi.runtime.ResourcePackage):  # what a provider SDK registers when it is imported
    def version(self):
        return None

    def construct_provider(self, name, typ, urn):
        raise NotImplementedError


pulumi.runtime.register_resource_package("fakeprov", _Package())
"""


def test_a_virtualenv_inside_the_project_is_not_reimported_by_the_next_plan(tmp_path: Path) -> None:
    """The templates keep their virtualenv in the project (`virtualenv: venv`); a provider SDK imported from there
    registers its package once per process, and importing it again for the next plan (or the policy evaluation) would
    fail with "Cannot re-register package". The program's own modules are still run afresh each time."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "fakeprov").mkdir(parents=True)
    (site / "fakeprov" / "__init__.py").write_text(PROVIDER_SDK)
    (tmp_path / "naming.py").write_text("import pulumi\npulumi.CustomResource('x:index:Thing', 'from-helper', {})\n")
    program = write_program(tmp_path, f"import sys\nsys.path.insert(0, {str(site)!r})\nimport fakeprov\nimport naming\n")
    try:
        for _ in range(2):
            result = plan_stack(load_project(program), "dev")
            assert [r.name for r in result.of_type("x:index:Thing")] == ["from-helper"]
        assert "fakeprov" in sys.modules and "naming" not in sys.modules
    finally:
        sys.modules.pop("fakeprov", None)


def test_two_resources_with_one_urn_fail_the_plan_as_the_engine_fails_the_preview(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = write_program(tmp_path, "import pulumi_aws as aws\naws.s3.Bucket('logs')\naws.s3.Bucket('logs', force_destroy=True)\n")
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    assert err == ("error: Duplicate resource URN 'urn:pulumi:dev::x::aws:s3/bucket:Bucket::logs'; "
                   "try giving it a unique name\n")


BOXES = """import pulumi, pulumi_aws as aws
class Box(pulumi.ComponentResource):
    def __init__(self, name, child):
        super().__init__('x:index:Box', name)
        aws.s3.Bucket(child, opts=pulumi.ResourceOptions(parent=self))
Box('a', 'a-logs'); Box('b', {second!r})
aws.s3.Bucket('logs')
aws.sqs.Queue('logs')
"""


def test_the_same_name_under_a_parent_or_of_another_type_is_not_a_duplicate(tmp_path: Path) -> None:
    result = plan_stack(load_project(write_program(tmp_path, BOXES.format(second="b-logs"))), "dev")
    assert len(result.of_type("aws:s3/bucket:Bucket")) == 3


def test_children_of_two_components_of_one_type_need_names_of_their_own(tmp_path: Path) -> None:
    """A URN holds the parent's type, not its name: two Boxes' children named alike collide, as in the engine."""
    with pytest.raises(pulumi.RunError, match=re.escape("Duplicate resource URN 'urn:pulumi:dev::x::x:index:Box$aws:s3/bucket:Bucket::a-logs'")):
        plan_stack(load_project(write_program(tmp_path, BOXES.format(second="a-logs"))), "dev")


def test_an_invoke_given_a_value_the_preview_does_not_know_yet_answers_unknown(tmp_path: Path) -> None:
    """A policy document naming a bucket the preview creates: the SDK sends the unknown ARN inside a list (its own
    check looks only at top-level values and objects), and the plan answers the invoke wholly unknown, as the engine
    does, instead of failing on the placeholder."""
    program = write_program(tmp_path, (
        "import pulumi, pulumi_aws as aws\n"
        "bucket = aws.s3.Bucket('data')\n"
        "doc = aws.iam.get_policy_document_output(statements=[{'actions': ['s3:GetObject'],\n"
        "      'resources': [bucket.arn.apply(lambda a: f'{a}/*')]}])\n"
        "aws.iam.Policy('read', policy=doc.json)\n"
        "plain = aws.iam.get_policy_document(statements=[{'actions': ['s3:ListBucket'], 'resources': ['arn:aws:s3:::x']}])\n"
        "aws.iam.Policy('list', policy=plain.json)\n"))
    result = plan_stack(load_project(program), "dev")
    policies = {r.name: r.inputs for r in result.of_type("aws:iam/policy:Policy")}
    assert policies["read"]["policy"] == UNKNOWN
    assert json.loads(policies["list"]["policy"])["Statement"][0]["Action"] in ("s3:ListBucket", ["s3:ListBucket"])


def test_a_program_error_raised_while_registrations_wait_is_reported_alone(tmp_path: Path) -> None:
    """A config error found once a lookup answers (here more zones than us-west-1 has) stops the program with
    registrations still waiting; the plan prints that error only, not asyncio's "Task was destroyed but it is pending!"
    for each task it left (seen at interpreter exit, hence a process of its own)."""
    root = Path(__file__).resolve().parents[2]
    dev = yaml.safe_load((root / "stacks" / "Pulumi.dev.yaml").read_text())
    platform = dev["config"]["ai-infra:platform"]
    region = platform["clouds"]["aws"]["regions"]["us-east-1"]
    region["network"]["zones"] = 3
    platform["clouds"] = {"aws": {"regions": {"us-west-1": region}}}
    (tmp_path / "Pulumi.yaml").write_text(f"name: ai-infra\nruntime: python\nmain: {root / 'stacks'}\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": {"aws:region": "us-west-1", "ai-infra:platform": platform}}))
    run = subprocess.run([sys.executable, "-m", "aiinfra.cli", "plan", "--program", str(tmp_path), "--stack", "dev",
                          "--no-policy", "-q"], capture_output=True, text=True, cwd=root)
    assert run.returncode == 1
    assert run.stderr == ("error: platform.clouds.aws.regions.us-west-1.network.zones: 3, but us-west-1 has 2 standard "
                          "availability zones (us-west-1a, us-west-1b); allowed: 2\n")


def test_a_failed_programs_leftover_futures_log_nothing_when_collected(caplog: pytest.LogCaptureFixture) -> None:
    """The outputs of the resources a refused registration stopped fail with its error and are never awaited; in a
    process that goes on after the plan (a test run, the bench) asyncio would log each, once collected, as "Future
    exception was never retrieved" under the error the plan already raised."""
    import gc

    import pulumi_aws as aws

    from aiinfra.plan.runtime import run_program

    config = {"aws:region": "us-east-1", "pulumi:disable-default-providers": '["aws"]'}
    with pytest.raises(pulumi.RunError, match="Default provider for 'aws' disabled"):
        run_program(lambda: [aws.s3.Bucket(f"b{i}") for i in range(3)], project="p", stack="s", config=config)
    with caplog.at_level("ERROR", logger="asyncio"):
        gc.collect()
    assert [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()] == []
