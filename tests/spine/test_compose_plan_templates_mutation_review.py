"""Behaviour a hand mutation review of components/compose/answers.py, aiinfra/plan/engine_options.py,
aiinfra/plan/property_paths.py and the three `pulumi new` templates found no test pinning.

The templates, as the clouds receive them: each cloud's smallest Lustre size and tier (and the AWS file system's link
to the datasets bucket), spot GPU training pools, on-demand serving pools with one warm node per GKE zone once the
limit allows it, transit encryption enforced on AWS endpoints, a hosted zone ID pasted with spaces, the team and
budget tags on every resource, the templates' fixed address spaces, the bucket data classes, TPU slices on spot in a
GKE cluster by default and without one as TPU VMs, and the defaults a stack without azureDeployer or tpuMode gets.
The answers' errors a user sees: the fixes suggested for a team, a region typo, a list naming a region twice, a URL
as the domain, one certificate too many, a cloud without TPUs, a malformed TPU shape, an empty gcpProject.
The plan: replaceOnChanges as the program sets it; ignoreChanges paths the engine applies (an empty one, one under a
key the head dropped, one past the base's list, a wildcard over an object's keys); a printed path that reads back.
Four tests pin where reset() and format_path differed from the engine's properties_path.go (fixed since).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest
import yaml
from delivery.support import AWS_CERTIFICATES, GCP_PROJECT, render
from delivery.test_templates import refusal
from helpers import base_and_head, only_entry, plan_record

from aiinfra.cli import main
from aiinfra.plan.diff import diff_plans
from aiinfra.plan.property_paths import format_path, parse_path
from aiinfra.plan.runtime import run_program
from components.compose import answers


def _changes(base: dict, head: dict) -> list[dict]:
    """The one changed or replaced resource's changes, as `aiinfra plan --diff` lists them."""
    return only_entry(diff_plans(base, head))["changes"]


def _error(check: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(pulumi.RunError) as raised:
        check(*args, **kwargs)
    return str(raised.value)


# --- answers.py -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("team", "fix"), [("ML Platform Engineering Team", "ml-platform-engineering"), (" Vision", "vision")])
def test_a_team_name_fix_is_the_name_cut_to_24_characters_without_a_dash_at_either_end(team: str, fix: str) -> None:
    """The suggested `pulumi config set team` value must itself be a valid team (a namespace): cut at 24 characters
    and trimmed of '-', not the template's default whenever the cut or a leading space leaves a dash."""
    assert _error(answers.check_team, team).endswith(f"set it with `pulumi config set team {fix}`")


def test_a_reserved_team_is_refused_with_the_templates_default_as_the_fix() -> None:
    """Suggesting the reserved name itself (kube-system) would send the user round in a loop."""
    assert _error(answers.check_team, "kube-system").endswith("set it with `pulumi config set team research`")


@pytest.mark.parametrize(("region", "cloud", "only", "message"), [
    ("eu-wst-1", "aws", "", "'eu-wst-1' is not a region of aws; did you mean eu-west-1? All aws regions: "
     "https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html; set it with "
     "`pulumi config set region eu-west-1`"),
    ("mars-1", "aws", "", "config region: 'mars-1' is not a region of aws; aws regions are named like us-east-1. All aws "
     "regions: "),
    ("us-centrl1", "gcp", "TPU slices are GCP-only", "config region: 'us-centrl1' is not a GCP region; did you mean "
     "us-central1? All GCP regions: "),
])
def test_a_region_typo_is_answered_with_the_closest_region_or_the_clouds_naming(
        region: str, cloud: str, only: str, message: str) -> None:
    """The fix is the closest region (not the cloud's example); with none close, how the cloud names regions; a
    GCP-only template names the cloud as people write it."""
    assert message in _error(answers.check_region, region, cloud, only=only)


def test_an_empty_gcp_project_is_reported_as_unset() -> None:
    """`pulumi config set gcpProject ""` leaves the key empty: the user needs "no project is set", not that '' is
    not a project ID."""
    assert _error(answers.check_gcp_project, "").startswith("config gcpProject: no GCP project is set; give the ID")


@pytest.mark.parametrize(("name", "answers_", "message"), [
    ("inference-endpoint", {"region": "us-central1,us-central1"}, "config region: 'us-central1' is listed twice in "
     "'us-central1,us-central1'; give two or more different regions; set it with `pulumi config set region "
     "us-central1,europe-west4`\n"),
    # The other region listed is GCP's: switching cloud to azure is no fix, so the error does not offer it.
    ("inference-endpoint", {"region": "us-central1,westeurope"}, "set it with `pulumi config set region "
     "us-central1,europe-west4`\n"),
    ("inference-endpoint", {"domain": "https://api.acme.dev/v1"}, "set it with `pulumi config set domain api.acme.dev`\n"),
    ("inference-endpoint", {"cloud": "aws", "certificateArns": AWS_CERTIFICATES["certificateArns"]
                            + ",arn:aws:acm:us-west-2:123456789012:certificate/abc-3"},
     "one per region, in the order of region (us-east-1, eu-west-1); got 3 (arn:aws:acm:us-east-1:"),
    ("tpu-research", {"cloud": "aws", "region": "us-central1"}, "config cloud: 'aws' has no TPUs: TPU slices are "
     "GCP-only; allowed: gcp; set it with `pulumi config set cloud gcp`\n"),
    ("tpu-research", {"accelerator": ":2x4"}, "config accelerator: ':2x4' is not <generation>:<topology>; generations: "),
    ("tpu-research", {"accelerator": "v5p:2x4"}, "set it with `pulumi config set accelerator v5e:2x4` (`aiinfra catalog` "
     "lists the generations and shapes)\n"),
])
def test_a_templates_own_check_names_the_key_and_the_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, answers_: dict[str, str], message: str) -> None:
    """What a template user reads when an answer is wrong: the key, the problem, a fix that works (a line ending in
    "\\n" is the whole rest of the error)."""
    assert message in refusal(name, tmp_path, capsys, {**GCP_PROJECT, **answers_})


# --- the templates, planned -----------------------------------------------------------------------------------------


def _plan(factory: pytest.TempPathFactory, name: str, answers_: dict[str, str], unset: tuple[str, ...] = ()) -> list[dict]:
    """The resources of the template planned with these answers; `unset` keys removed from the stack file, as in a
    stack created from an earlier template that did not ask them."""
    program = render(name, factory.mktemp(name), answers_)
    stack = program / "Pulumi.dev.yaml"
    config = yaml.safe_load(stack.read_text())["config"]
    stack.write_text(yaml.safe_dump({"config": {k: v for k, v in config.items() if k.split(":")[1] not in unset}}))
    out = program / "plan.json"
    assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "--json", str(out), "-q"]) == 0
    return json.loads(out.read_text())["resources"]


def _inputs(resources: list[dict], type_: str) -> dict[str, dict]:
    return {r["name"]: r["inputs"] for r in resources if r["type"] == type_}


@pytest.fixture(scope="module")
def training(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """gpu-training on each cloud, team vision, 12,500 USD (5 nodes); the Azure stack has no azureDeployer."""
    return {"aws": _plan(tmp_path_factory, "gpu-training", {"cloud": "aws", "team": "vision", "monthlyBudgetUsd": "12500"}),
            "gcp": _plan(tmp_path_factory, "gpu-training", {"cloud": "gcp", "team": "vision", "monthlyBudgetUsd": "12500",
                                                             **GCP_PROJECT}),
            "azure": _plan(tmp_path_factory, "gpu-training", {"cloud": "azure", "team": "vision"}, unset=("azureDeployer",))}


def test_gpu_training_lustre_is_each_clouds_smallest_size_and_tier_linked_to_the_datasets_bucket(training) -> None:
    """LUSTRE: the smallest size and throughput tier each cloud's API accepts (a bigger one is a bigger bill), and on
    AWS the data repository link that imports the datasets bucket into the file system."""
    [fsx] = _inputs(training["aws"], "aws:fsx/lustreFileSystem:LustreFileSystem").values()
    assert (fsx["storageCapacity"], fsx["perUnitStorageThroughput"]) == (1200, 125)
    [link] = _inputs(training["aws"], "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation").values()
    datasets = _inputs(training["aws"], "aws:s3/bucket:Bucket")["dev-us-east-1-datasets-bucket"]["bucket"]
    assert link["dataRepositoryPath"] == f"s3://{datasets}/"
    [gcp] = _inputs(training["gcp"], "gcp:lustre/instance:Instance").values()
    assert (gcp["capacityGib"], gcp["perUnitStorageThroughput"]) == ("18000", "500")
    [amlfs] = _inputs(training["azure"], "azure-native:storagecache:AmlFilesystem").values()
    assert (amlfs["storageCapacityTiB"], amlfs["sku"]) == (16, {"name": "AMLFS-Durable-Premium-125"})


def test_gpu_training_pool_is_spot_scaling_from_zero_with_buckets_of_their_data_class(training) -> None:
    """Training runs on spot capacity (checkpointed jobs survive a reclaim); each bucket is tagged with, and tiered
    by, its own data class."""
    pool = _inputs(training["aws"], "aws:eks/nodeGroup:NodeGroup")["dev-us-east-1-train-nodegroup"]
    assert pool["capacityType"] == "SPOT" and pool["scalingConfig"]["minSize"] == 0
    buckets = _inputs(training["aws"], "aws:s3/bucket:Bucket")
    assert {n: b["tags"]["data-class"] for n, b in buckets.items() if "log" not in n} == {
        "dev-us-east-1-datasets-bucket": "datasets", "dev-us-east-1-checkpoints-bucket": "checkpoints"}


def test_every_resource_carries_the_team_and_its_budget_as_tags(training) -> None:
    """The template's labels: owner, team and cost-center are the team, and the monthly budget rides along, so the
    cloud bill can be split by team and checked against the budget."""
    pool = _inputs(training["gcp"], "gcp:container/nodePool:NodePool")["dev-us-central1-train-pool"]
    assert pool["nodeConfig"]["resourceLabels"] == {"environment": "dev", "owner": "vision", "team": "vision",
                                                    "cost-center": "vision", "managed-by": "ai-infra",
                                                    "monthly-budget-usd": "12500"}


def test_a_stack_without_azure_deployer_grants_the_signed_in_user_as_the_prompts_default_says(training) -> None:
    """A stack from an earlier template has no azureDeployer: it gets the prompt's default, user (Azure refuses a role
    assignment whose principalType does not match the principal)."""
    grants = [g for n, g in _inputs(training["azure"], "azure-native:authorization:RoleAssignment").items()
              if n.endswith("-deployer-admin")]
    assert grants and {g["principalType"] for g in grants} == {"User"}


@pytest.fixture(scope="module")
def endpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """inference-endpoint on AWS (hosted zone pasted with spaces) and on GCP at 15,000 USD (3 nodes per region)."""
    return {"aws": _plan(tmp_path_factory, "inference-endpoint", {"cloud": "aws", **AWS_CERTIFICATES,
                                                                  "awsHostedZoneId": " Z0123456789ABCDEFGHIJ "}),
            "gcp": _plan(tmp_path_factory, "inference-endpoint", {"monthlyBudgetUsd": "15000", **GCP_PROJECT})}


def test_an_aws_endpoint_serves_on_demand_in_vpcs_that_enforce_encryption_and_trims_the_zone_id(endpoints) -> None:
    """Serving is on-demand (a spot reclaim drops live traffic), VPC encryption control enforces transit encryption
    (monitor only on Azure), each region has its own address space, and a zone ID copied with spaces still works."""
    pools = {n: p["capacityType"] for n, p in _inputs(endpoints["aws"], "aws:eks/nodeGroup:NodeGroup").items() if "serve" in n}
    assert pools and set(pools.values()) == {"ON_DEMAND"}
    modes = [c["mode"] for c in _inputs(endpoints["aws"], "aws:ec2/vpcEncryptionControl:VpcEncryptionControl").values()]
    assert modes == ["enforce", "enforce"]
    assert {n: v["cidrBlock"] for n, v in _inputs(endpoints["aws"], "aws:ec2/vpc:Vpc").items()} == {
        "dev-us-east-1-vpc": "10.120.0.0/16", "dev-eu-west-1-vpc": "10.121.0.0/16"}
    [record] = _inputs(endpoints["aws"], "aws:route53/record:Record").values()
    assert record["zoneId"] == "Z0123456789ABCDEFGHIJ"


def test_a_gcp_serving_pool_keeps_one_warm_node_per_zone_once_its_limit_allows_it(endpoints) -> None:
    """GKE's minimum and initial count are per zone: a limit of 3 nodes over the network's 3 zones keeps one warm in
    each (no cold start for the first request); below that the pool must start empty."""
    pools = [p for n, p in _inputs(endpoints["gcp"], "gcp:container/nodePool:NodePool").items() if n.endswith("-serve-pool")]
    assert len(pools) == 2
    assert all((p["autoscaling"]["totalMinNodeCount"], p["initialNodeCount"], p["autoscaling"]["totalMaxNodeCount"])
               == (1, 1, 3) for p in pools)


@pytest.fixture(scope="module")
def tpu(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """tpu-research: a stack without tpuMode (an earlier template's), and one with tpuMode tpu_vm."""
    return {"unset": _plan(tmp_path_factory, "tpu-research", GCP_PROJECT, unset=("tpuMode",)),
            "tpu_vm": _plan(tmp_path_factory, "tpu-research", {"tpuMode": "tpu_vm", **GCP_PROJECT})}


def test_tpu_slices_default_to_spot_node_pools_in_a_gke_cluster(tpu) -> None:
    """Without tpuMode the slice is a GKE node pool (the prompt's default gke) on spot capacity; the network and the
    checkpoint bucket are the template's own."""
    assert list(_inputs(tpu["unset"], "gcp:container/cluster:Cluster")) == ["dev-us-central1-gke"]
    slice_pool = _inputs(tpu["unset"], "gcp:container/nodePool:NodePool")["dev-us-central1-research-0"]
    assert slice_pool["nodeConfig"]["spot"] is True and slice_pool["placementPolicy"]["tpuTopology"] == "2x4"
    assert _inputs(tpu["unset"], "gcp:compute/subnetwork:Subnetwork")["dev-us-central1-nodes"]["ipCidrRange"] == "10.110.0.0/17"
    buckets = _inputs(tpu["unset"], "gcp:storage/bucket:Bucket")
    assert buckets["dev-us-central1-checkpoints-bucket"]["labels"]["data-class"] == "checkpoints"


def test_tpu_vms_get_no_gke_cluster(tpu) -> None:
    """tpu_vm: Cloud TPU VMs on spot and no cluster (an idle GKE control plane is billed by the hour)."""
    assert not _inputs(tpu["tpu_vm"], "gcp:container/cluster:Cluster")
    [vm] = _inputs(tpu["tpu_vm"], "gcp:tpu/v2Vm:V2Vm").values()
    assert vm["schedulingConfig"]["spot"] is True


def test_gpu_training_has_its_own_address_space(training) -> None:
    """The training VPC is 10.100.0.0/16, apart from the endpoint's 10.120+ and the TPU template's 10.110: a team's
    stacks of different templates can be peered."""
    assert _inputs(training["aws"], "aws:ec2/vpc:Vpc")["dev-us-east-1-vpc"]["cidrBlock"] == "10.100.0.0/16"


# --- engine_options.py ----------------------------------------------------------------------------------------------


def test_the_plan_records_replace_on_changes_as_the_program_sets_it() -> None:
    """The engine replaces a resource on a change under its replaceOnChanges paths (components set them on Azure GPU
    pools and the inference TargetGroupBinding): the plan and `plan --diff` must see the program's paths."""
    def program() -> None:
        aws.s3.Bucket("data", tags={"team": "ml"}, opts=pulumi.ResourceOptions(replace_on_changes=["tags.team", "bucket"]))

    bucket = run_program(program, project="demo", stack="dev", config={"aws:region": "us-east-2"}).one("aws:s3/bucket:Bucket")
    assert bucket.replaceOnChanges == ["tags.team", "bucket"]
    assert bucket.to_json()["replaceOnChanges"] == ["tags.team", "bucket"]


# --- property_paths.py (ignoreChanges as the engine applies it) -----------------------------------------------------


def test_an_empty_ignore_changes_path_ignores_nothing() -> None:
    """The engine parses "" to an empty path, whose Reset fails and resets nothing (processIgnoreChanges): the diff
    must still show the change, not treat "" as the whole resource."""
    bucket = plan_record("aws:s3/bucket:Bucket", "data", {"bucket": "acme-data", "tags": {"team": "ml"}}, ignoreChanges=[""])
    base, head = base_and_head(bucket)
    head["resources"][1]["inputs"]["tags"]["team"] = "infra"
    assert _changes(base, head) == [{"path": "tags.team", "old": '"ml"', "new": '"infra"'}]


def test_an_ignored_path_under_a_key_the_head_dropped_is_no_crash_and_the_removal_shows() -> None:
    """ignore_changes=["tags.owner"] on a resource whose tags the head removes: the engine cannot reset below a key
    the new inputs lack (a path error, nothing reset), so the diff shows the tags removed, and does not crash."""
    role = plan_record("aws:iam/role:Role", "r", {"name": "r", "tags": {"owner": "ml", "team": "ml"}}, ignoreChanges=["tags.owner"])
    base, head = base_and_head(role)
    del head["resources"][1]["inputs"]["tags"]
    assert _changes(base, head) == [{"path": "tags", "old": '{"owner":"ml","team":"ml"}', "new": "(unset)"}]


@pytest.mark.parametrize("path", ["agentPoolProfiles[*].count", "agentPoolProfiles[1].count"])
def test_an_ignored_list_path_where_the_head_added_an_element_is_no_crash(path: str) -> None:
    """Adding an AKS agent pool while its autoscaled counts are ignored: the engine resets only the indexes the base
    has (the added pool is a change), and `plan --diff` must not fail on an index past the base's list."""
    aks = plan_record("azure-native:containerservice:ManagedCluster", "aks",
                      {"agentPoolProfiles": [{"name": "sys", "count": 2}]}, ignoreChanges=[path])
    base, head = base_and_head(aks)
    head["resources"][1]["inputs"]["agentPoolProfiles"] = [{"name": "sys", "count": 3}, {"name": "gpu", "count": 1}]
    changed = [c["path"] for c in _changes(base, head)]
    assert changed == (["agentPoolProfiles[1]"] if "*" in path else ["agentPoolProfiles[0].count", "agentPoolProfiles[1]"])


def test_a_wildcard_inside_an_ignored_path_covers_the_keys_of_an_object() -> None:
    """ignore_changes=["addonProfiles.*.config"] on an AKS cluster: the engine resets that field under every addon
    both sides have, so a config the cloud rewrote is no change; the enabled flag beside it still is."""
    aks = plan_record("azure-native:containerservice:ManagedCluster", "aks", {"addonProfiles": {
        "omsagent": {"enabled": True, "config": {"workspace": "a"}}, "azurepolicy": {"enabled": False, "config": {}}}},
        ignoreChanges=["addonProfiles.*.config"])
    base, head = base_and_head(aks)
    profiles = head["resources"][1]["inputs"]["addonProfiles"]
    profiles["omsagent"]["config"] = {"workspace": "b"}
    profiles["azurepolicy"]["config"] = {"version": "v2"}
    assert diff_plans(base, head)["counts"]["changed"] == 0
    profiles["azurepolicy"]["enabled"] = True
    assert [c["path"] for c in _changes(base, head)] == ["addonProfiles.azurepolicy.enabled"]


def test_a_wildcard_inside_an_ignored_path_leaves_a_key_only_the_head_has() -> None:
    """An addon added while addonProfiles.*.config is ignored: the engine leaves the new addon whole, so the diff must
    show the config it will send."""
    aks = plan_record("azure-native:containerservice:ManagedCluster", "aks", {"addonProfiles": {
        "omsagent": {"enabled": True, "config": {"workspace": "a"}}}}, ignoreChanges=["addonProfiles.*.config"])
    base, head = base_and_head(aks)
    head["resources"][1]["inputs"]["addonProfiles"]["azureKeyvaultSecretsProvider"] = {
        "config": {"enableSecretRotation": "true"}, "enabled": True}
    assert _changes(base, head) == [{"path": "addonProfiles.azureKeyvaultSecretsProvider", "old": "(unset)",
                                     "new": '{"config":{"enableSecretRotation":"true"},"enabled":true}'}]


def test_a_leaf_wildcard_under_a_key_the_base_lacks_leaves_the_heads_object() -> None:
    """Tags added to a role whose tags.* are ignored: the base has no tags, so the engine resets nothing and sends
    the tags; the diff must show them, not an empty object."""
    role = plan_record("aws:iam/role:Role", "r", {"name": "r"}, ignoreChanges=["tags.*"])
    base, head = base_and_head(role)
    head["resources"][1]["inputs"]["tags"] = {"team": "ml"}
    assert _changes(base, head) == [{"path": "tags", "old": "(unset)", "new": '{"team":"ml"}'}]


def test_a_leaf_wildcard_over_a_base_secret_resets_to_the_secret() -> None:
    """tags.* ignored on a role whose tags were secret: the engine sends the base's (secret) tags back, no change."""
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": {"team": "ml"}}
    role = plan_record("aws:iam/role:Role", "r", {"name": "r", "tags": secret}, ignoreChanges=["tags.*"])
    base, head = base_and_head(role)
    head["resources"][1]["inputs"]["tags"] = {"team": "ml"}
    assert diff_plans(base, head)["counts"]["changed"] == 0


def test_a_printed_path_with_a_quote_in_a_key_reads_back_as_the_same_key() -> None:
    """The diff prints the path of each change; a key with a '"' must be escaped so the path can be pasted into
    ignoreChanges/replaceOnChanges and name the same key (the engine's parser unescapes only \\")."""
    segments = ["metadata", "annotations", 'say "hi"']
    assert format_path(segments) == 'metadata.annotations["say \\"hi\\""]'
    assert parse_path(format_path(segments)) == segments


@pytest.mark.parametrize("key", ["Équipe", "C:\\data"])
def test_a_printed_path_with_a_non_ascii_or_backslash_key_reads_back_as_the_same_key(key: str) -> None:
    """AWS tag keys may hold Unicode letters: the path the diff prints for one must name that key when pasted into
    ignore_changes, as the engine's PropertyPath.String() text does (`tags["Équipe"]`)."""
    assert format_path(["tags", key]) == f'tags["{key}"]'
    assert parse_path(format_path(["tags", key])) == ["tags", key]
