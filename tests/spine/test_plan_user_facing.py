"""What a user sees of a plan: secrets masked everywhere, a reader that leaves early, output paths checked up front,
the policy config's forms, and the summary's TPU and AKS system pool facts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import resource_record

from aiinfra.cli import main
from aiinfra.plan.runtime import PlanResult, ResourceRecord
from aiinfra.plan.summary import render_summary

ROOT = Path(__file__).resolve().parents[2]
INVOKES = ROOT / "tests" / "data" / "programs" / "invokes"
SIG, SECRET = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"

SECRET_PROGRAM = '''
import pulumi
import pulumi_aws as aws

vpc = aws.ec2.Vpc("vpc", cidr_block=pulumi.Output.secret("10.77.0.0/16"),
                  tags={"owner": pulumi.Output.secret("{owner}"), "team": "ml"})
pulumi.export("token", pulumi.Output.secret("tok-{owner}"))
'''


def _secret_program(tmp_path: Path, name: str, owner: str) -> Path:
    program = tmp_path / name
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: secrets-demo\nruntime: python\n")
    (program / "Pulumi.demo.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (program / "__main__.py").write_text(SECRET_PROGRAM.replace("{owner}", owner))
    return program


def test_known_secret_values_are_masked_in_the_summary_the_markdown_and_the_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "base.json"
    assert main(["plan", "--program", str(_secret_program(tmp_path, "base", "alice-s3cret")), "--stack", "demo",
                 "--no-policy", "--json", str(base), "-q"]) == 0
    capsys.readouterr()
    head, comment = tmp_path / "head.json", tmp_path / "comment.md"
    assert main(["plan", "--program", str(_secret_program(tmp_path, "head", "bob-s3cret")), "--stack", "demo",
                 "--no-policy", "--diff", str(base), "--json", str(head), "--markdown", str(comment)]) == 0
    out = capsys.readouterr().out
    for text in (out, base.read_text(), head.read_text(), comment.read_text()):
        assert "s3cret" not in text and "10.77.0.0/16" not in text
    assert "      - Vpc vpc: [secret]" in out.splitlines()  # the summary's fact, masked
    document = json.loads(head.read_text())
    vpc = next(r for r in document["resources"] if r["name"] == "vpc")
    # Still marked secret, so a reader of the JSON knows it is one.
    assert vpc["inputs"]["cidrBlock"] == {SIG: SECRET, "value": "[secret]"}
    assert vpc["inputs"]["tags"] == {"owner": {SIG: SECRET, "value": "[secret]"}, "team": "ml"}
    assert document["outputs"]["token"] == {SIG: SECRET, "value": "[secret]"}


def test_the_policy_pack_still_gets_the_secret_values(tmp_path: Path) -> None:
    """Masking is for what a person reads: the records the pack analyzes keep the values, as the engine sends them."""
    from aiinfra.plan.program import plan_stack
    from aiinfra.plan.project import load_project

    result = plan_stack(load_project(_secret_program(tmp_path, "p", "carol-s3cret")), "demo")
    vpc = next(r for r in result.resources if r.name == "vpc")
    assert vpc.to_json()["inputs"]["tags"]["owner"] == {SIG: SECRET, "value": "carol-s3cret"}
    assert "carol-s3cret" not in json.dumps(result.to_json())


@pytest.mark.parametrize("stderr_too", [False, True], ids=["stdout", "stdout-and-stderr"])
def test_a_reader_that_leaves_mid_plan_still_gets_the_policy_verdict_json_and_exit_code(
        tmp_path: Path, stderr_too: bool) -> None:
    """`aiinfra plan ... | head -1` (or `2>&1 | head -1`): the pipe breaks while the summary is printed. The plan goes
    on: the policy pack runs, --json is written, and the exit code is the plan's own (2: the demo instance breaks
    mandatory rules)."""
    program = tmp_path / "program"
    shutil.copytree(INVOKES, program)
    out = tmp_path / "plan.json"
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write to the pipe fails with EPIPE
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # each print reaches the pipe at once, as a long summary does
    done = subprocess.run([sys.executable, "-c", "from aiinfra.cli import run; run()", "plan", "--program", str(program),
                           "--stack", "demo", "--json", str(out)], stdout=write,
                          stderr=write if stderr_too else subprocess.PIPE, text=True, timeout=300, env=env, cwd=ROOT)
    os.close(write)
    assert done.returncode == 2, done.stderr
    if not stderr_too:
        assert "Traceback" not in done.stderr and "mandatory policy violation(s)" in done.stderr
    assert json.loads(out.read_text())["policy"]["violations"]


def test_a_reader_that_reads_one_line_and_leaves(tmp_path: Path) -> None:
    """The same with a real reader: it takes the first line and closes the pipe (as `head -1` does)."""
    program = tmp_path / "program"
    shutil.copytree(INVOKES, program)
    out = tmp_path / "plan.json"
    process = subprocess.Popen([sys.executable, "-c", "from aiinfra.cli import run; run()", "plan", "--program",
                                str(program), "--stack", "demo", "--json", str(out), "--no-policy"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=300) == 0, stderr
    assert first.startswith("Plan for invokes-demo/demo") and "Traceback" not in stderr
    assert json.loads(out.read_text())["resources"]


@pytest.mark.parametrize("option", ["--json", "--markdown"])
def test_an_output_path_that_is_a_directory_is_refused_before_planning(
        option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import aiinfra.plan.program as program

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("planned before checking the output path")

    monkeypatch.setattr(program, "plan_stack", never)
    assert main(["plan", "--program", str(INVOKES), "--stack", "demo", "--no-policy", option, str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"error: {option} {tmp_path}: is a directory; give a file path\n"


# --- the policy config's `all`, as the engine reads it ----------------------------------------------------------------

def _info():  # noqa: ANN202
    from pulumi.runtime.proto import analyzer_pb2

    return analyzer_pb2.AnalyzerInfo(name="pack", policies=[
        analyzer_pb2.PolicyInfo(name="a", enforcementLevel=analyzer_pb2.ADVISORY),
        analyzer_pb2.PolicyInfo(name="b", enforcementLevel=analyzer_pb2.ADVISORY)])


@pytest.mark.parametrize("all_", ["mandatory", {"enforcementLevel": "mandatory"}])
def test_all_takes_a_level_or_an_object_with_one(all_: object) -> None:
    from pulumi.runtime.proto import analyzer_pb2

    from aiinfra.policy_eval import _policy_config

    config = _policy_config(_info(), {"all": all_, "b": {"enforcementLevel": "disabled"}})
    assert config["a"].enforcementLevel == analyzer_pb2.MANDATORY
    assert config["b"].enforcementLevel == analyzer_pb2.DISABLED  # a policy's own entry wins over `all`


@pytest.mark.parametrize(("all_", "error"), [
    ({"enforcementLevel": "strict"}, "policy config 'all': enforcement level 'strict'; allowed: advisory, mandatory"),
    ({"enforcementLevel": 1}, "policy config 'all': enforcementLevel 1 is not a valid enforcement level"),
    (3, "policy config 'all': 3 is not a valid value; give an enforcement level or an object"),
])
def test_an_invalid_all_is_refused(all_: object, error: str) -> None:
    from aiinfra.policy_eval import PolicyError, _policy_config

    with pytest.raises(PolicyError) as caught:
        _policy_config(_info(), {"all": all_})
    assert str(caught.value).startswith(error)


@pytest.mark.parametrize(("entry", "error"), [
    ({"enforcementLevel": None}, "policy 'a': enforcementLevel None is not a valid enforcement level"),
    ("strict", "policy 'a': enforcement level 'strict'; allowed: advisory, mandatory"),
    ({"enforcementLevel": "strict"}, "policy 'a': enforcement level 'strict'; allowed: advisory, mandatory"),
])
def test_an_invalid_policy_entry_is_refused_as_all_is(entry: object, error: str) -> None:
    from aiinfra.policy_eval import PolicyError, _policy_config

    with pytest.raises(PolicyError) as caught:
        _policy_config(_info(), {"all": "advisory", "a": entry})
    assert str(caught.value).startswith(error)


# --- the summary: TPU chips and the AKS system pool -------------------------------------------------------------------

STACK = "urn:pulumi:prod::ai-infra::pulumi:pulumi:Stack::ai-infra-prod"


def _record(type_: str, name: str, inputs: dict, parent: str = STACK, custom: bool = True) -> ResourceRecord:
    return resource_record(type_, name, inputs, parent, custom)


def test_tpu_pools_show_their_chips_and_slice_and_aks_its_system_pool() -> None:
    tpu = _record("ai-infra:gcp:TpuSlice", "prod-us-central1-v5e", {}, custom=False)
    aks = _record("ai-infra:azure:Cluster", "prod-eastus2", {}, custom=False)
    text = render_summary(PlanResult(project="ai-infra", stack="prod", resources=[
        _record("pulumi:pulumi:Stack", "ai-infra-prod", {}, parent="", custom=False), tpu, aks,
        _record("gcp:container/nodePool:NodePool", "v5e-0", {
            "location": "us-central1", "nodeConfig": {"machineType": "ct5lp-hightpu-4t"},
            "placementPolicy": {"type": "COMPACT", "tpuTopology": "4x4"},
            "autoscaling": {"minNodeCount": 0, "maxNodeCount": 4}}, parent=tpu.urn),
        _record("gcp:container/nodePool:NodePool", "v5e-single", {
            "location": "us-central1", "nodeConfig": {"machineType": "ct5lp-hightpu-1t"}, "nodeCount": 1}, parent=tpu.urn),
        _record("azure-native:containerservice:ManagedCluster", "aks", {
            "location": "eastus2", "autoUpgradeProfile": {"upgradeChannel": "stable"},
            "apiServerAccessProfile": {"enablePrivateCluster": True},
            "agentPoolProfiles": [{"name": "system", "mode": "System", "vmSize": "Standard_D4ds_v5",
                                   "enableAutoScaling": True, "minCount": 2, "maxCount": 5, "count": 2}]},
                parent=aks.urn),
    ]))
    lines = text.splitlines()
    assert "      - NodePool v5e-0: ct5lp-hightpu-4t (4x tpu-v5e) tpu slice 4x4 (16 chips) 0..4 nodes" in lines
    assert "      - NodePool v5e-single: ct5lp-hightpu-1t (1x tpu-v5e) 1 nodes" in lines
    assert ("      - ManagedCluster aks: k8s AKS default, upgrade channel=stable, private=True; "
            "system pool: Standard_D4ds_v5 2..5 nodes") in lines


@pytest.mark.parametrize(("type_", "inputs", "fact"), [
    ("gcp:container/nodePool:NodePool", {"nodeConfig": "SECRET", "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2}},
     "? 0..2 nodes"),
    ("aws:eks/nodeGroup:NodeGroup", {"instanceTypes": "SECRET", "scalingConfig": "SECRET"}, "? ON_DEMAND ?..? nodes"),
    ("azure-native:containerservice:ManagedCluster", {"agentPoolProfiles": "SECRET"}, "k8s AKS default"),
    ("azure-native:network:VirtualNetwork", {"addressSpace": {"addressPrefixes": "SECRET"}}, ""),
])
def test_a_secret_object_reads_as_missing_in_the_summary_facts(type_: str, inputs: dict, fact: str) -> None:
    """A whole object or list given as a secret is `[secret]` once masked: the facts treat it as missing instead of
    indexing a string."""
    from aiinfra.plan.summary import _facts

    secret = {SIG: SECRET, "value": {"machineType": "n2-standard-8"}}
    record = ResourceRecord(urn=f"urn:pulumi:s::p::{type_}::r", type=type_, name="r", parent="", provider="", custom=True,
                            protect=False, retainOnDelete=False, ignoreChanges=[], dependencies=[],
                            inputs={k: (secret if v == "SECRET" else
                                        {kk: (secret if vv == "SECRET" else vv) for kk, vv in v.items()} if isinstance(v, dict) else v)
                                    for k, v in inputs.items()})
    [line] = [line for line in _facts([record]) if not line[0].isdigit()]
    assert fact in line and "n2-standard" not in line


def test_a_policy_message_quoting_a_secret_value_is_scrubbed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The pack gets the plaintext (it must judge it) and may quote it; what the plan prints, writes to --json and puts in
    the PR comment shows `[secret]` instead."""
    program = tmp_path / "sg"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: sg\nruntime: python\n")
    (program / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (program / "__main__.py").write_text(
        "import pulumi, pulumi_aws as aws\n"
        "aws.ec2.SecurityGroup('sg', vpc_id='vpc-1', description='x', ingress=[aws.ec2.SecurityGroupIngressArgs(\n"
        "    protocol='tcp', from_port=22, to_port=22, cidr_blocks=[pulumi.Output.secret('0.0.0.0/0')])])\n")
    report, comment = tmp_path / "p.json", tmp_path / "c.md"
    assert main(["plan", "--program", str(program), "--stack", "dev", "--json", str(report), "--markdown", str(comment)]) == 2
    out = capsys.readouterr().out
    assert "ingress from [secret] to port 22" in out
    for text in (out, report.read_text(), comment.read_text()):
        assert "0.0.0.0/0" not in text


def test_secret_texts_finds_every_scalar_inside_secrets_only() -> None:
    from aiinfra.plan.masking import scrub, secret_texts

    inputs = {"a": {SIG: SECRET, "value": {"k": "alpha-1", "n": [12345, "no"]}}, "b": "plain-text", "c": [{SIG: SECRET, "value": "beta-22"}]}
    assert secret_texts(inputs) == {"alpha-1", "12345", "beta-22"}  # "no": too short to scrub safely
    assert scrub("alpha-1 and beta-22 but plain-text", secret_texts(inputs)) == "[secret] and [secret] but plain-text"


def test_a_secret_quoted_json_escaped_is_scrubbed_too() -> None:
    from aiinfra.plan.masking import scrub

    pem = "-----BEGIN KEY-----\nabc\n-----END KEY-----"
    assert scrub('key "-----BEGIN KEY-----\\nabc\\n-----END KEY-----" is weak', {pem}) == 'key "[secret]" is weak'
