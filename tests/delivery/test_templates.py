"""Each `pulumi new` template renders as the CLI renders it, then plans offline with the policy pack. The templates'
READMEs, pins and other files: test_template_docs.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from delivery.support import AWS_CERTIFICATES, GCP_PROJECT, TEMPLATES, render

from aiinfra.cli import main

PROMPTS = {"team", "cloud", "region", "accelerator", "monthlyBudgetUsd"}


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
    answers = {"cloud": cloud, "region": region, "team": "vision", **GCP_PROJECT}
    code, document = plan(render("gpu-training", tmp_path, answers), tmp_path)
    types = {r["type"] for r in document["resources"]}
    expected = {"aws": {"aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup", "aws:fsx/lustreFileSystem:LustreFileSystem", "aws:s3/bucket:Bucket"},
                "gcp": {"gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool", "gcp:lustre/instance:Instance", "gcp:storage/bucket:Bucket"}}[cloud]
    assert expected <= types
    assert code == 0 and "policy" in document  # no mandatory violation: the baseline pack passes a new project
    namespaces = [r for r in document["resources"] if r["type"] == "kubernetes:core/v1:Namespace" and r["inputs"]["metadata"]["name"] == "vision"]
    assert namespaces, "the team gets its namespace"


def test_inference_endpoint_spans_two_regions_behind_the_global_endpoint(tmp_path: Path) -> None:
    code, document = plan(render("inference-endpoint", tmp_path, GCP_PROJECT), tmp_path)
    pools = [r for r in document["resources"] if r["type"] == "gcp:container/nodePool:NodePool" and "serve" in r["name"]]
    assert {p["name"].split("-serve")[0] for p in pools} == {"dev-us-central1", "dev-europe-west4"}
    assert any(r["type"] == "gcp:compute/globalForwardingRule:GlobalForwardingRule" for r in document["resources"])
    assert code == 0 and "policy" in document  # no mandatory violation: the baseline pack passes a new project


def test_tpu_research_plans_slices_and_refuses_other_clouds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, document = plan(render("tpu-research", tmp_path, {"accelerator": "v5e:2x4", **GCP_PROJECT}), tmp_path)
    tpu = [r for r in document["resources"] if r["type"] == "gcp:container/nodePool:NodePool"
           and (r["inputs"].get("placementPolicy") or {}).get("tpuTopology") == "2x4"]
    assert tpu and tpu[0]["inputs"]["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
    assert code == 0
    wrong = render("tpu-research", tmp_path / "aws", {"cloud": "aws", "region": "us-east-1"})
    assert main(["plan", "--program", str(wrong), "--stack", "dev", "--no-policy", "-q"]) == 1
    assert "TPU slices are GCP-only" in capsys.readouterr().err


def refusal(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], answers: dict[str, str], stack: str = "dev") -> str:
    """The error of planning the template with these answers: one line, no traceback, and no platform.* path (a
    template user has no platform file: the template builds the platform in code from config keys)."""
    program = render(name, tmp_path, answers)
    if stack != "dev":
        (program / f"Pulumi.{stack}.yaml").write_text((program / "Pulumi.dev.yaml").read_text())
    assert main(["plan", "--program", str(program), "--stack", stack, "--no-policy", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "platform." not in err, err
    return err


@pytest.mark.parametrize(("name", "answers", "message"), [
    ("gpu-training", {"monthlyBudgetUsd": "5k"}, "config monthlyBudgetUsd: must be a positive whole number of US dollars "
     "(no unit or separator); got '5k'; set it with `pulumi config set monthlyBudgetUsd 5000`"),
    ("inference-endpoint", {"monthlyBudgetUsd": "0"}, "positive whole number of US dollars (no unit or separator); got '0'"),
    ("tpu-research", {"monthlyBudgetUsd": "-100"}, "positive whole number of US dollars (no unit or separator); got '-100'"),
    ("gpu-training", {"cloud": "oracle"}, "config cloud: 'oracle' is not a cloud ai-infra deploys to; allowed: aws, gcp, "
     "azure; set it with `pulumi config set cloud aws`"),
    ("tpu-research", {"tpuMode": "vm"}, "config tpuMode: 'vm' is not a TPU mode; allowed: gke, tpu_vm, queued_resource; "
     "set it with `pulumi config set tpuMode gke`"),
    ("inference-endpoint", {"region": "us-central1"}, "config region: a multi-region endpoint needs two or more "
     "comma-separated gcp regions; got 'us-central1'; set it with `pulumi config set region us-central1,europe-west4`"),
    ("inference-endpoint", {"domain": "https://infer.example.com/v1"}, "config domain: 'https://infer.example.com/v1' is "
     "not a host name (it is a URL)"),
    ("gpu-training", {"cloud": "gcp", "region": "us-central1", "gcpProject": "My_Project"},
     "config gcpProject: 'My_Project' is not a GCP project ID; project IDs are 6 to 30 lower-case letters"),
])
def test_a_wrong_answer_is_a_clear_error_and_plans_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, answers: dict[str, str], message: str) -> None:
    assert message in refusal(name, tmp_path, capsys, answers)


@pytest.mark.parametrize(("name", "answers", "message"), [
    ("gpu-training", {"cloud": "gcp", "region": "us-east-1"},
     "config region: 'us-east-1' is a region of aws, not of gcp (config cloud is gcp); gcp regions are named like "
     "us-central1; set it with `pulumi config set region us-central1`, or deploy to aws: `pulumi config set cloud aws`"),
    ("gpu-training", {"cloud": "aws", "region": "us-est-1"},
     "config region: 'us-est-1' is not a region of aws; did you mean us-west-1 or us-east-1?"),
    ("inference-endpoint", {"cloud": "gcp", "region": "us-central1,westeurope"},
     "config region: 'westeurope' is a region of azure, not of gcp (config cloud is gcp); gcp regions are named like "
     "us-central1; set it with `pulumi config set region us-central1,europe-west4`"),
    ("inference-endpoint", {"cloud": "gcp", "region": "us-central1,europe-wst4"},
     "did you mean europe-west4? All gcp regions: https://cloud.google.com/compute/docs/regions-zones; set it with "
     "`pulumi config set region us-central1,europe-west4`"),
    ("gpu-training", {"cloud": "azure", "region": "westus"},
     "config region: region 'westus' has no availability zones (Microsoft's Azure regions list: "),
    ("gpu-training", {"cloud": "azure", "region": "westus"}, "; set it with `pulumi config set region westus2`"),
    ("inference-endpoint", {"cloud": "azure", "region": "eastus2,westus"},
     "config region: region 'westus' has no availability zones (Microsoft's Azure regions list: "),
    ("inference-endpoint", {"cloud": "azure", "region": "eastus2,westus"},
     "; set it with `pulumi config set region eastus2,westus2`"),
    ("tpu-research", {"region": "eastus2"}, "config region: 'eastus2' is a region of azure; TPU slices are GCP-only, "
     "and GCP regions are named like us-central1; set it with `pulumi config set region us-central1`"),
])
def test_a_region_of_another_cloud_or_a_typo_names_the_region_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, answers: dict[str, str], message: str) -> None:
    assert message in refusal(name, tmp_path, capsys, answers)


@pytest.mark.parametrize(("name", "answers", "message"), [
    ("gpu-training", {"cloud": "azure", "region": "eastus2", "accelerator": "l4"},
     "config accelerator: 'l4' is not offered on azure (it is offered on aws, gcp); allowed on azure: a10, a100-40gb, "
     "a100-80gb, h100-80gb, h100-nvl-94gb, h200-141gb, t4; set it with `pulumi config set accelerator a100-80gb`"),
    ("gpu-training", {"cloud": "gcp", "region": "us-central1", "accelerator": "L4"},
     "config accelerator: 'L4' is not offered on gcp (`aiinfra catalog` lists the models); allowed on gcp: a100-40gb, "
     "a100-80gb, b200, h100-80gb, h100-mega-80gb, h200-141gb, l4; set it with `pulumi config set accelerator l4`"),
    ("inference-endpoint", {"cloud": "gcp", "accelerator": "a10g"},
     "config accelerator: 'a10g' is not offered on gcp (it is offered on aws); allowed on gcp: "),
    ("tpu-research", {"accelerator": "v5p:2x4"}, "config accelerator: 'v5p:2x4': topology '2x4' is not valid for tpu-v5p; "
     "valid: 2x2x1, 2x2x2"),
    ("tpu-research", {"accelerator": "v9:2x4"}, "config accelerator: 'v9:2x4': unknown TPU generation 'v9'; allowed: v4, "
     "v5e, v5p, v6e"),
    ("tpu-research", {"accelerator": "h100-80gb"}, "config accelerator: 'h100-80gb' is not <generation>:<topology>; "
     "generations: v4, v5e, v5p, v6e; set it with `pulumi config set accelerator v5e:2x4`"),
])
def test_an_accelerator_the_cloud_does_not_offer_names_the_accelerator_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, answers: dict[str, str], message: str) -> None:
    assert message in refusal(name, tmp_path, capsys, answers)


@pytest.mark.parametrize(("name", "team", "message"), [
    ("gpu-training", "Vision_1", "config team: 'Vision_1' is not a valid team name; team names are lower-case letters, "
     "digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters; set it with "
     "`pulumi config set team vision-1`"),
    ("inference-endpoint", "computer-vision-research-group", "config team: 'computer-vision-research-group' is not a "
     "valid team name"),
    ("tpu-research", "3d-vision", "set it with `pulumi config set team research`"),
    ("tpu-research", "kube-system", "config team: 'kube-system' is reserved"),
    ("gpu-training", "monitoring", "config team: 'monitoring' is reserved: the team becomes a Kubernetes namespace"),
])
def test_an_invalid_team_name_names_the_team_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, team: str, message: str) -> None:
    assert message in refusal(name, tmp_path, capsys, {"team": team})


@pytest.mark.parametrize("name", ["gpu-training", "inference-endpoint", "tpu-research"])
@pytest.mark.parametrize(("stack", "fix"), [("Dev", "dev"), ("my_dev", "my-dev"), ("team-vision-sandbox-1", "team-vision-sand"),
                                            ("x", "dev")])
def test_a_stack_name_that_cannot_be_an_environment_says_how_to_rename_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, stack: str, fix: str) -> None:
    err = refusal(name, tmp_path, capsys, {}, stack=stack)
    assert (f"stack '{stack}': this template uses the stack name as the environment name, and environment names are 2 to "
            "16 lower-case letters, digits and '-', starting with a letter; rename the stack with "
            f"`pulumi stack rename {fix}`") in err


@pytest.mark.parametrize(("certificates", "message"), [
    ("", "config certificateArns: on AWS each region's TLS listener needs an ACM certificate ARN from its region: one per "
         "region, in the order of region (us-east-1, eu-west-1); got none; set it with `pulumi config set certificateArns "
         "arn:aws:acm:us-east-1:<account>:certificate/<id>,arn:aws:acm:eu-west-1:<account>:certificate/<id>`"),
    ("arn:aws:acm:us-east-1:123456789012:certificate/abc-1", "got 1 (arn:aws:acm:us-east-1:123456789012:certificate/abc-1)"),
    ("arn:aws:acm:us-east-1:123456789012:certificate/abc-1,my-cert",
     "config certificateArns: 'my-cert' is not an ACM certificate ARN (arn:aws:acm:eu-west-1:<account>:certificate/<id>)"),
    ("arn:aws:acm:eu-west-1:123456789012:certificate/abc-2,arn:aws:acm:us-east-1:123456789012:certificate/abc-1",
     "config certificateArns: certificate 'arn:aws:acm:eu-west-1:123456789012:certificate/abc-2' is in eu-west-1, but the "
     "listener in us-east-1"),
])
def test_aws_endpoints_need_one_certificate_arn_per_region(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], certificates: str, message: str) -> None:
    answers = {"cloud": "aws", "region": "us-east-1,eu-west-1", "certificateArns": certificates}
    assert message in refusal("inference-endpoint", tmp_path, capsys, answers)


AWS_ENDPOINT_ARNS = ["arn:aws:acm:us-east-1:123456789012:certificate/abc-1", "arn:aws:acm:eu-west-1:123456789012:certificate/abc-2"]
AWS_ENDPOINT = {"cloud": "aws", "region": "us-east-1,eu-west-1", "certificateArns": ",".join(AWS_ENDPOINT_ARNS)}


def test_an_aws_endpoint_with_its_certificates_plans_with_one_per_regional_listener(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, document = plan(render("inference-endpoint", tmp_path, AWS_ENDPOINT), tmp_path)
    assert code == 0
    listeners = {r["name"]: r["inputs"]["certificateArn"] for r in document["resources"]
                 if r["type"] == "aws:lb/listener:Listener" and "certificateArn" in r["inputs"]}
    assert listeners == {"dev-us-east-1-inference-https": AWS_ENDPOINT_ARNS[0], "dev-eu-west-1-inference-https": AWS_ENDPOINT_ARNS[1]}
    # Without a hosted zone the domain gets no record, and the preview says so rather than dropping it silently.
    assert not [r for r in document["resources"] if r["type"] == "aws:route53/record:Record"]
    assert "domain infer.example.com gets no DNS record on AWS without awsHostedZoneId" in capsys.readouterr().err


def test_an_aws_endpoint_with_a_hosted_zone_publishes_the_domain_as_an_alias_to_the_accelerator(tmp_path: Path) -> None:
    answers = {**AWS_ENDPOINT, "awsHostedZoneId": "Z0123456789ABCDEFGHIJ", "domain": "api.acme.dev"}
    code, document = plan(render("inference-endpoint", tmp_path, answers), tmp_path)
    assert code == 0
    [record] = [r["inputs"] for r in document["resources"] if r["type"] == "aws:route53/record:Record"]
    assert (record["name"], record["zoneId"], record["type"]) == ("api.acme.dev", "Z0123456789ABCDEFGHIJ", "A")


def test_an_aws_hosted_zone_answer_that_is_not_a_zone_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal("inference-endpoint", tmp_path, capsys, {**AWS_ENDPOINT, "awsHostedZoneId": "acme.dev"})
    assert "config awsHostedZoneId: 'acme.dev' is not a Route 53 hosted zone ID" in err
    assert "`pulumi config set awsHostedZoneId Z0123456789ABCDEFGHIJ`" in err


def test_queued_tpu_slices_are_blocked_until_the_rule_is_accepted_in_a_policy_config(tmp_path: Path) -> None:
    # The template's README: the default service account of queued resources is a mandatory finding in the baseline
    # config; a copy of that config with the rule advisory lets the plan through, and still reports it.
    program = render("tpu-research", tmp_path, {"tpuMode": "queued_resource", **GCP_PROJECT})
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


GROUPS = ["00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000b"]


@pytest.mark.parametrize(("name", "answers"), [("gpu-training", {"region": "eastus2"}),
                                               ("inference-endpoint", {"region": "eastus2,westeurope"})])
@pytest.mark.parametrize("groups", [",".join(GROUPS), f" {GROUPS[0]} , {GROUPS[1]}", json.dumps(GROUPS)])
def test_azure_templates_reach_clusters_through_an_admin_group(
        tmp_path: Path, name: str, answers: dict[str, str], groups: str) -> None:
    """azureDeployer admin_group: no role assignment to the deployer; the groups of azureAdminGroupObjectIds
    (comma-separated or a JSON list) are each cluster's admin groups, and the baseline pack passes."""
    answers = {"cloud": "azure", "accelerator": "h100-80gb", "azureDeployer": "admin_group",
               "azureAdminGroupObjectIds": groups, **answers}
    code, document = plan(render(name, tmp_path, answers), tmp_path)
    assert code == 0 and "policy" in document
    clusters = [r["inputs"] for r in document["resources"] if r["type"] == "azure-native:containerservice:ManagedCluster"]
    assert clusters and all(c["aadProfile"]["adminGroupObjectIDs"] == GROUPS for c in clusters)
    assert not [r for r in document["resources"] if r["type"] == "azure-native:authorization:RoleAssignment"
                and r["name"].endswith("-deployer-admin")]


@pytest.mark.parametrize(("name", "region"), [("gpu-training", "eastus2"), ("inference-endpoint", "eastus2,westeurope")])
@pytest.mark.parametrize(("answers", "message"), [
    ({"azureDeployer": "admin_group"},
     "config azureAdminGroupObjectIds: azureDeployer is admin_group (you reach the clusters as a member of an Entra admin "
     "group, with no role assignment), but no group is given; give the object ID of a group you are in (`az ad group "
     "show --group <name> --query id -o tsv`); set it with `pulumi config set azureAdminGroupObjectIds <group-object-id>`, "
     "or let the deployer get its own role assignment: `pulumi config set azureDeployer user`"),
    ({"azureDeployer": "admin_group", "azureAdminGroupObjectIds": "platform-admins"},
     "config azureAdminGroupObjectIds: 'platform-admins' is not an Entra group object ID; object IDs are 32 hex digits"),
    ({"azureAdminGroupObjectIds": '["00000000-0000-0000-0000-00000000000a", 7]'},
     "is neither a comma-separated list nor a JSON list of Entra group object IDs"),
    ({"azureDeployer": "admins"}, "config azureDeployer: 'admins' is not a deployer kind; allowed: service_principal, "
     "user, admin_group; set it with `pulumi config set azureDeployer user`"),
])
def test_an_admin_group_deployer_without_a_valid_group_names_the_key_to_set(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, region: str, answers: dict[str, str], message: str) -> None:
    answers = {"cloud": "azure", "region": region, "accelerator": "h100-80gb", **answers}
    assert message in refusal(name, tmp_path, capsys, answers)


@pytest.mark.parametrize(("name", "budget", "nodes"), [
    ("gpu-training", 1000, 1), ("gpu-training", 12500, 5), ("gpu-training", 99999, 8),
    ("inference-endpoint", 1000, 1), ("inference-endpoint", 15000, 3), ("inference-endpoint", 99999, 8),
])
def test_the_budget_sets_the_pool_node_limit_as_the_prompt_says(tmp_path: Path, name: str, budget: int, nodes: int) -> None:
    """budget // USD per node, at least 1, at most 8, whatever the accelerator: what Pulumi.yaml and the README say."""
    per_node = {"gpu-training": 2500, "inference-endpoint": 5000}[name]
    prompt = yaml.safe_load((TEMPLATES / name / "Pulumi.yaml").read_text())["template"]["config"]["monthlyBudgetUsd"]
    assert f"budget / {per_node} (rounded down), at least 1 and at most 8, whatever the accelerator" in prompt["description"]
    readme = " ".join((TEMPLATES / name / "README.md").read_text().split())
    assert f"one node per {per_node:,} USD (`monthlyBudgetUsd / {per_node}`, rounded down), at least 1 and at most 8" in readme
    answers = {"cloud": "gcp", "region": "us-central1" if name == "gpu-training" else "us-central1,europe-west4",
               "monthlyBudgetUsd": str(budget), **GCP_PROJECT}
    program = render(name, tmp_path, answers)
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "--json", str(out), "-q"]) == 0
    pools = [r["inputs"]["autoscaling"]["totalMaxNodeCount"] for r in json.loads(out.read_text())["resources"]
             if r["type"] == "gcp:container/nodePool:NodePool" and r["name"].endswith(("-train-pool", "-serve-pool"))]
    assert pools and set(pools) == {nodes}


def cloud_defaults(name: str, key: str) -> dict[str, str]:
    """What the prompt of `key` says an empty answer gives on each cloud: "empty: the cloud's default (<v> on <cloud>, ...)"."""
    prompt = yaml.safe_load((TEMPLATES / name / "Pulumi.yaml").read_text())["template"]["config"][key]
    assert prompt["default"] == "", "the CLI asks accelerator before cloud: a fixed default would be another cloud's"
    listed = re.search(r"empty: the cloud's default \((.*)\)$", prompt["description"])[1]
    return {cloud: value for value, cloud in re.findall(r"(\S+) on (\w+)", listed)}


def values_of(key: str, node: object) -> set[str]:
    """Every value of `key` anywhere in a JSON document."""
    if isinstance(node, dict):
        return ({node[key]} if key in node else set()).union(*(values_of(key, v) for v in node.values()))
    return set().union(*(values_of(key, v) for v in node)) if isinstance(node, list) else set()


@pytest.mark.parametrize(("name", "cloud"), [(n, c) for n in ("gpu-training", "inference-endpoint") for c in ("aws", "gcp", "azure")])
def test_an_empty_region_and_accelerator_take_the_chosen_clouds_defaults_the_prompts_name(
        tmp_path: Path, name: str, cloud: str) -> None:
    """Enter at every prompt but cloud (and what that cloud requires): the CLI saves no region or accelerator, the
    program takes the cloud's, and the baseline pack passes."""
    regions, accelerator = cloud_defaults(name, "region")[cloud].split(","), cloud_defaults(name, "accelerator")[cloud]
    assert set(cloud_defaults(name, "region")) == set(cloud_defaults(name, "accelerator")) == {"aws", "gcp", "azure"}
    required = {"aws": AWS_CERTIFICATES if name == "inference-endpoint" else {}, "gcp": GCP_PROJECT, "azure": {}}[cloud]
    program = render(name, tmp_path, {"cloud": cloud, **required})
    assert not {"region", "accelerator"} & {k.split(":")[1] for k in yaml.safe_load((program / "Pulumi.dev.yaml").read_text())["config"]}
    code, document = plan(program, tmp_path)
    assert code == 0
    clusters = {"aws": "aws:eks/cluster:Cluster", "gcp": "gcp:container/cluster:Cluster",
                "azure": "azure-native:containerservice:ManagedCluster"}[cloud]
    names = [r["name"] for r in document["resources"] if r["type"] == clusters]  # e.g. dev-us-east-1-eks
    assert len(names) == len(regions) and all(any(n.startswith(f"dev-{r}-") for n in names) for r in regions)
    assert values_of("ai-infra/accelerator", document["resources"]) == {accelerator}


def test_tpu_research_plans_with_every_default_but_the_gcp_project(tmp_path: Path) -> None:
    code, document = plan(render("tpu-research", tmp_path, GCP_PROJECT), tmp_path)
    clusters = [r["inputs"]["name"] for r in document["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    assert code == 0 and clusters == ["dev-us-central1"]


@pytest.mark.parametrize(("name", "answers", "message"), [
    ("gpu-training", {"cloud": "gcp"}, "config gcpProject: no GCP project is set; give the ID of the project to deploy to "
     "(`gcloud projects list` lists the IDs of yours); set it with `pulumi config set gcpProject <your-project-id>`"),
    ("inference-endpoint", {}, "config gcpProject: no GCP project is set"),
    ("tpu-research", {}, "config gcpProject: no GCP project is set"),
    ("tpu-research", {"gcpProject": "my-gcp-project"}, "config gcpProject: 'my-gcp-project' is the template's placeholder, "
     "not a project of yours (`gcloud projects list` lists the IDs of yours); set it with `pulumi config set gcpProject "
     "<your-project-id>`"),
])
def test_a_gcp_stack_without_its_project_stops_before_any_preview_asks_gcp(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, answers: dict[str, str], message: str) -> None:
    assert yaml.safe_load((TEMPLATES / name / "Pulumi.yaml").read_text())["template"]["config"]["gcpProject"]["default"] == ""
    assert message in refusal(name, tmp_path, capsys, answers)


@pytest.mark.parametrize(("accelerator", "fix"), [("v6e:16x16", "v6e:8x8"), ("v5p:8x8x8", "v5p:4x4x4"),
                                                  ("tpu-v4:4x4x8", "tpu-v4:4x4x4"), ("v5e:8x16", "v5e:8x8")])
def test_a_slice_above_the_chip_cap_names_the_accelerator_key_and_the_largest_that_fits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], accelerator: str, fix: str) -> None:
    err = refusal("tpu-research", tmp_path, capsys, {"accelerator": accelerator, **GCP_PROJECT})
    assert f"config accelerator: '{accelerator}' is a slice of " in err
    assert ("chips; this template's slices have at most 64 (the policy pack's per-pool cap, maxGpusPerPool, and the "
            f"team's tpu_quota); set it with `pulumi config set accelerator {fix}`") in err


def test_the_chip_cap_is_the_policy_packs_per_pool_cap_and_the_largest_slice_passes_it(tmp_path: Path) -> None:
    import ast

    from aiinfra_policy.registry import RULES
    import aiinfra_policy.accelerators  # noqa: F401  (registers the rule)

    source = ast.parse((TEMPLATES / "tpu-research" / "__main__.py").read_text())
    [cap] = [n.value.value for n in source.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "MAX_CHIPS"]
    [rule] = [r for r in RULES if r.name == "gpu-cap-per-pool"]
    baseline = json.loads((TEMPLATES.parent / "policies" / "config" / "baseline.json").read_text())["gpu-cap-per-pool"]
    assert baseline == "mandatory" and rule.config["maxGpusPerPool"]["default"] == cap == 64
    code, document = plan(render("tpu-research", tmp_path, {"accelerator": "v6e:8x8", **GCP_PROJECT}), tmp_path)
    assert code == 0 and not document["policy"]["violations"]
    quotas = [r["inputs"]["spec"]["hard"] for r in document["resources"]
              if r["type"] == "kubernetes:core/v1:ResourceQuota" and not r["name"].endswith("-priority-quota")]
    assert quotas and {q["requests.google.com/tpu"] for q in quotas} == {str(cap)}


@pytest.mark.parametrize(("name", "answers", "gpus", "cpus", "memory"), [
    # 8 nodes (budget) x p5.48xlarge (8 GPUs, 192 vCPUs, 2048 GiB): the whole pool, not the 8 GPUs of one node.
    ("gpu-training", {"cloud": "aws", "accelerator": "h100-80gb", "monthlyBudgetUsd": "99999"}, 64, 1536, "16Ti"),
    # 2 nodes x a2-ultragpu-1g (1 GPU, 12 vCPUs, 170 GiB): CPU and memory stay at the spec's defaults.
    ("gpu-training", {"cloud": "gcp", "accelerator": "a100-80gb", **GCP_PROJECT}, 2, 64, "512Gi"),
    # In each region 8 nodes x a3-highgpu-1g (the smallest h100-80gb type on GCP: 1 GPU, 26 vCPUs, 234 GiB).
    ("inference-endpoint", {"accelerator": "h100-80gb", "monthlyBudgetUsd": "40000", **GCP_PROJECT}, 8, 208, "1872Gi"),
])
def test_the_team_quota_covers_the_whole_gpu_pool_the_budget_allows(
        tmp_path: Path, name: str, answers: dict[str, str], gpus: int, cpus: int, memory: str) -> None:
    program = render(name, tmp_path, {"team": "vision", **answers})
    out = tmp_path / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "--json", str(out), "-q"]) == 0
    resources = json.loads(out.read_text())["resources"]
    queues = [r["inputs"]["spec"] for r in resources if r["type"].endswith(":ClusterQueue") and r["inputs"]["metadata"]["name"] == "vision"]
    assert queues and len(queues) == (2 if name == "inference-endpoint" else 1)  # one per cluster, each the whole pool
    for queue in queues:
        nominal = {q["name"]: q["nominalQuota"] for g in queue["resourceGroups"] for f in g["flavors"] for q in f["resources"]}
        # Canonical Kubernetes quantities, as Kueue's webhook stores them (16384Gi prints as 16Ti).
        assert nominal == {"cpu": str(cpus), "memory": memory, "nvidia.com/gpu": str(gpus)}


