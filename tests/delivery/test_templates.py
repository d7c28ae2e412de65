"""Each `pulumi new` template renders as the CLI renders it, then plans offline with the policy pack."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from aiinfra.cli import main

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
PROMPTS = {"team", "cloud", "region", "accelerator", "monthlyBudgetUsd"}


def render(name: str, tmp_path: Path, answers: dict[str, str]) -> Path:
    """Copy the template, replace ${PROJECT}/${DESCRIPTION} everywhere, write the answers into Pulumi.dev.yaml."""
    project = f"team-{name}"
    target = tmp_path / project
    shutil.copytree(TEMPLATES / name, target)
    for path in target.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("${PROJECT}", project).replace("${DESCRIPTION}", f"{name} for the vision team"))
    template = yaml.safe_load((target / "Pulumi.yaml").read_text())["template"]["config"]
    config = {f"{project}:{key}": str(answers.get(key, spec.get("default", ""))) for key, spec in template.items()}
    (target / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    return target


def plan(program: Path, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / "plan.json"
    code = main(["plan", "--program", str(program), "--stack", "dev", "--json", str(out), "-q"])
    return code, json.loads(out.read_text())


@pytest.mark.parametrize("name", ["gpu-training", "inference-endpoint", "tpu-research"])
def test_template_prompts_for_the_required_answers(name: str) -> None:
    document = yaml.safe_load((TEMPLATES / name / "Pulumi.yaml").read_text())
    assert document["name"] == "${PROJECT}" and document["description"] == "${DESCRIPTION}"
    assert PROMPTS <= set(document["template"]["config"])


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_gpu_training_plans_with_cluster_gpu_pool_lustre_and_buckets(cloud: str, tmp_path: Path) -> None:
    region = {"aws": "us-east-1", "gcp": "us-central1"}[cloud]
    code, document = plan(render("gpu-training", tmp_path, {"cloud": cloud, "region": region, "team": "vision"}), tmp_path)
    types = {r["type"] for r in document["resources"]}
    expected = {"aws": {"aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup", "aws:fsx/lustreFileSystem:LustreFileSystem", "aws:s3/bucket:Bucket"},
                "gcp": {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool", "gcp:lustre/instance:Instance", "gcp:storage/bucket:Bucket"}}[cloud]
    assert expected <= types
    assert code == 0 and "policy" in document  # no mandatory violation: the baseline pack passes a new project
    namespaces = [r for r in document["resources"] if r["type"] == "kubernetes:core/v1:Namespace" and r["inputs"]["metadata"]["name"] == "vision"]
    assert namespaces, "the team gets its namespace"


def test_inference_endpoint_spans_two_regions_behind_the_global_endpoint(tmp_path: Path) -> None:
    code, document = plan(render("inference-endpoint", tmp_path, {}), tmp_path)
    pools = [r for r in document["resources"] if r["type"] == "gcp:container/nodePool:NodePool" and "serve" in r["name"]]
    assert {p["name"].split("-serve")[0] for p in pools} == {"dev-us-central1", "dev-europe-west4"}
    assert any(r["type"] == "gcp:compute/globalForwardingRule:GlobalForwardingRule" for r in document["resources"])
    assert code == 0 and "policy" in document  # no mandatory violation: the baseline pack passes a new project


def test_tpu_research_plans_slices_and_refuses_other_clouds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, document = plan(render("tpu-research", tmp_path, {"accelerator": "v5e:2x4"}), tmp_path)
    tpu = [r for r in document["resources"] if r["type"] == "gcp:container/nodePool:NodePool"
           and (r["inputs"].get("placementPolicy") or {}).get("tpuTopology") == "2x4"]
    assert tpu and tpu[0]["inputs"]["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
    assert code == 0
    wrong = render("tpu-research", tmp_path / "aws", {"cloud": "aws", "region": "us-east-1"})
    assert main(["plan", "--program", str(wrong), "--stack", "dev", "--no-policy", "-q"]) == 1
    assert "TPU slices are GCP-only" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "answers", "message"), [
    ("gpu-training", {"monthlyBudgetUsd": "5k"}, "Configuration 'team-gpu-training:monthlyBudgetUsd' value '5k' is not a valid 'int'"),
    ("inference-endpoint", {"monthlyBudgetUsd": "0"}, "monthlyBudgetUsd: a positive number of US dollars; got 0"),
    ("tpu-research", {"monthlyBudgetUsd": "-100"}, "monthlyBudgetUsd: a positive number of US dollars; got -100"),
    ("gpu-training", {"cloud": "oracle"}, "platform.clouds.oracle: unknown field; allowed fields: aws, gcp, azure"),
    ("inference-endpoint", {"cloud": "aws", "region": "us-east-1,eu-west-1"},
     "platform.clouds.aws.regions.us-east-1.inference.certificate: AWS inference listeners need an ACM certificate ARN"),
])
def test_a_wrong_answer_is_a_clear_error_and_plans_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, answers: dict[str, str], message: str) -> None:
    program = render(name, tmp_path, answers)
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_queued_tpu_slices_are_blocked_until_the_rule_is_accepted_in_a_policy_config(tmp_path: Path) -> None:
    # The template's README: the default service account of queued resources is a mandatory finding in the baseline
    # config; a copy of that config with the rule advisory lets the plan through, and still reports it.
    program = render("tpu-research", tmp_path, {"tpuMode": "queued_resource"})
    assert main(["plan", "--program", str(program), "--stack", "dev", "-q"]) == 2
    baseline = json.loads((TEMPLATES.parent / "policies" / "config" / "baseline.json").read_text())
    accepted = tmp_path / "policy.json"
    accepted.write_text(json.dumps({**baseline, "gcp-tpu-vm-explicit-service-account": "advisory"}))
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "dev", "--policy-config", str(accepted), "--json", str(out), "-q"]) == 0
    findings = [v["policy"] for v in json.loads(out.read_text())["policy"]["violations"]]
    assert "gcp-tpu-vm-explicit-service-account" in findings


def test_an_azure_lustre_template_stack_passes_the_baseline_pack_outside_dev(tmp_path: Path) -> None:
    # Protected outside dev (its stateful resources), and the Azure Lustre CSI node plugin, which must run privileged,
    # is exempt by name in the baseline config as in the reference environments'.
    program = render("gpu-training", tmp_path, {"cloud": "azure", "region": "eastus2", "accelerator": "h100-80gb"})
    (program / "Pulumi.staging.yaml").write_text((program / "Pulumi.dev.yaml").read_text())
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "staging", "--json", str(out), "-q"]) == 0
    document = json.loads(out.read_text())
    assert any(r["name"].endswith("azure-lustre-csi-node-jammy") for r in document["resources"])
    assert all(r["protect"] for r in document["resources"] if r["type"] == "azure-native:storagecache:AmlFilesystem")


@pytest.mark.parametrize(("name", "answers"), [("gpu-training", {"region": "eastus2"}),
                                               ("inference-endpoint", {"region": "eastus2,westeurope"})])
@pytest.mark.parametrize(("deployer", "principal_type"), [(None, "User"), ("service_principal", "ServicePrincipal")])
def test_azure_templates_grant_cluster_admin_to_whoever_deploys(
        tmp_path: Path, name: str, answers: dict[str, str], deployer: str | None, principal_type: str) -> None:
    """`pulumi new` users deploy from a workstation: the default grants the signed-in user (Azure refuses a role
    assignment whose principalType is wrong); CI sets service_principal."""
    answers = {"cloud": "azure", "accelerator": "h100-80gb", **answers, **({"azureDeployer": deployer} if deployer else {})}
    program = render(name, tmp_path, answers)
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "--json", str(out), "-q"]) == 0
    grants = [r["inputs"] for r in json.loads(out.read_text())["resources"]
              if r["type"] == "azure-native:authorization:RoleAssignment" and r["name"].endswith("-deployer-admin")]
    assert grants and {g["principalType"] for g in grants} == {principal_type}
