"""What a program, the policy pack and a reviewer see of an offline plan, in the cases a mutation review of esc.py,
config_keys.py, stack_tags.py, stacktrace.py, invokes.py and force_new_azure.py found no other test pinning
down: which inline ESC values are merged into the stack's config, which config keys the CLI refuses, the stack tags
the pack gets, that a plan leaves the Pulumi SDK as it found it, the values data-source lookups answer with, and which
azure-native input changes the diff calls a replacement."""

from __future__ import annotations

import base64
import ipaddress
import json
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest
import yaml
from helpers import base_and_head, plan_record, write_program
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.rpc import UNKNOWN as UNKNOWN_OUTPUT
from pulumi_azure_native import Provider as AzureProvider
from pulumi_azure_native import containerservice, resources

from aiinfra.plan.diff import diff_plans
from aiinfra.plan.outputs import preview_outputs
from aiinfra.plan.project import ProjectError, load_project, load_stack_config, stack_environment
from aiinfra.plan.runtime import PlanResult, run_program
from aiinfra.plan.stack_tags import stack_tags


def _plan(program, config: dict[str, str] | None = None) -> PlanResult:  # noqa: ANN001
    return run_program(program, project="p", stack="s", config={"aws:region": "us-east-1"} if config is None else config)


# esc.py: a stack file's inline environment ---------------------------------------------------------------------------

def test_an_interpolation_inside_a_list_keeps_the_list_out_and_a_float_is_merged(tmp_path: Path) -> None:
    """ESC evaluates a `${...}` anywhere in a value, a list item too: that list is not merged but reported. A float is
    as plain as an integer: merged as written."""
    write_program(tmp_path, "import pulumi\n",
                  "environment:\n  values:\n    pulumiConfig:\n      zones: [us-east-1a, '${region}b']\n"
                  "      sizes: [1, 2]\n      ratio: 0.5\n"
                  "config: {}\n")
    project = load_project(tmp_path)
    assert load_stack_config(project, "dev")[0] == {"x:sizes": "[1,2]", "x:ratio": "0.5"}
    assert stack_environment(project, "dev").unevaluated == ["zones"]


# config_keys.py ------------------------------------------------------------------------------------------------------

def test_a_key_with_three_colons_is_refused_even_in_the_older_config_form(tmp_path: Path) -> None:
    """config.ParseKey takes `<namespace>:config:<name>` only with exactly two colons: `aws:config:region:x` is no
    key, not `aws:region`."""
    write_program(tmp_path, "import pulumi\n", "config:\n  aws:config:region:x: eu-west-1\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "dev")
    assert str(caught.value) == (f"{tmp_path / 'Pulumi.dev.yaml'}: config key 'aws:config:region:x' is not a "
                                 "configuration key: keys are <namespace>:<name> (or the older <namespace>:config:<name>)")


# stack_tags.py -------------------------------------------------------------------------------------------------------

def test_pulumi_tags_override_the_tags_taken_from_the_project_file(tmp_path: Path) -> None:
    """GetEnvironmentTagsForCurrentStack sets the project's tags first, then each `pulumi:tags` entry over them: a
    stack that sets `pulumi:project` in its tags is seen by the pack with that value."""
    write_program(tmp_path, "import pulumi\n", "config:\n  pulumi:tags: {pulumi:project: renamed, team: ml}\n")
    assert stack_tags(load_project(tmp_path), "dev") == {
        "pulumi:project": "renamed", "pulumi:runtime": "python", "team": "ml"}


# stacktrace.py -------------------------------------------------------------------------------------------------------

def test_a_plan_leaves_the_sdk_as_it_found_it() -> None:
    """The plan swaps in its stack-trace builder and wraps Output.apply only while the program runs: afterwards a
    program in the same process (another plan, a test) gets the SDK's own, and wrappers do not pile up plan after
    plan."""
    stack_trace, apply = sdk_resource._get_stack_trace, pulumi.Output.apply
    _plan(lambda: pulumi.export("n", pulumi.Output.from_input(1).apply(lambda n: n + 1)))
    assert sdk_resource._get_stack_trace is stack_trace
    assert pulumi.Output.apply is apply


# sdk.py --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("type_", "computed"), [
    ("kubernetes:core/v1:Service", "spec"),
    ("kubernetes:networking.k8s.io/v1:Ingress", "spec"),
    ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "rules"),
])
def test_kubernetes_kinds_in_dotted_api_groups_report_their_computed_outputs(type_: str, computed: str) -> None:
    """networking.k8s.io/v1 is pulumi_kubernetes.networking.v1: a kind in a dotted API group is found in the SDK like a
    core kind, so the stack policies see what it leaves to the API server as unknown in a preview, not as absent."""
    assert preview_outputs(type_, {"metadata": {"name": "x"}})[computed] == UNKNOWN_OUTPUT


# invokes.py ----------------------------------------------------------------------------------------------------------

def test_an_explicit_azure_provider_answers_lookups_for_its_location() -> None:
    """An azure-native Provider's region is its `location` input: a lookup through it is in that location, not the
    stack's azure-native:location."""
    def program() -> None:
        uk = pulumi.InvokeOptions(provider=AzureProvider("uk", location="uksouth"))
        pulumi.export("location", resources.get_resource_group(resource_group_name="rg", opts=uk).location)

    assert _plan(program, {"azure-native:location": "eastus"}).outputs == {"location": "uksouth"}


def test_without_a_configured_region_gcp_and_azure_lookups_answer_for_their_providers_default() -> None:
    def program() -> None:
        pulumi.export("zones", gcp.compute.get_zones().names)
        pulumi.export("location", resources.get_resource_group(resource_group_name="rg").location)

    outputs = _plan(program, {}).outputs
    assert outputs["zones"][:3] == ["us-central1-a", "us-central1-b", "us-central1-c"]
    assert outputs["location"] == "eastus2"


def test_gcp_zones_include_the_f_zone_and_the_ai_zones() -> None:
    """us-central1 has zones a, b, c and f and AI zones (us-central1-ai1a): a config listing them passes the zone
    check offline."""
    zones = _plan(lambda: pulumi.export("zones", gcp.compute.get_zones().names), {"gcp:region": "us-central1"}).outputs
    assert {"us-central1-f", "us-central1-ai1a"} <= set(zones["zones"])


def test_instance_type_offerings_list_one_location_type_per_offering() -> None:
    """getInstanceTypeOfferings answers parallel lists: one type, location and location type per offering."""
    def program() -> None:
        found = aws.ec2.get_instance_type_offerings(
            filters=[{"name": "instance-type", "values": ["p5.48xlarge", "p4d.24xlarge"]}],
            location_type="availability-zone")
        pulumi.export("found", [found.instance_types, found.locations, found.location_types])

    types, locations, location_types = _plan(program, {"aws:region": "eu-west-2"}).outputs["found"]
    assert len(types) == len(locations) == len(location_types) == 6
    assert set(location_types) == {"availability-zone"}


def test_a_policy_document_keeps_not_actions_and_every_principal() -> None:
    """`not_actions` is IAM's NotAction, and a statement's principals of two types are both in its Principal."""
    def program() -> None:
        document = aws.iam.get_policy_document(statements=[aws.iam.GetPolicyDocumentStatementArgs(
            effect="Deny", not_actions=["iam:*"], resources=["*"],
            principals=[aws.iam.GetPolicyDocumentStatementPrincipalArgs(type="Service", identifiers=["ec2.amazonaws.com"]),
                        aws.iam.GetPolicyDocumentStatementPrincipalArgs(type="AWS",
                                                                        identifiers=["arn:aws:iam::123456789012:root"])])])
        pulumi.export("json", document.json)
        pulumi.export("minified", document.minified_json)

    outputs = _plan(program).outputs
    assert json.loads(outputs["json"])["Statement"] == [{
        "Effect": "Deny", "NotAction": ["iam:*"], "Resource": ["*"],
        "Principal": {"Service": ["ec2.amazonaws.com"], "AWS": ["arn:aws:iam::123456789012:root"]}}]
    assert json.loads(outputs["minified"]) == json.loads(outputs["json"])


def test_an_assumed_role_session_resolves_to_its_role_in_its_partition() -> None:
    """A GovCloud assumed-role session's issuer is the role, `arn:aws-us-gov:iam::<account>:role/<role>`, and the
    session name is the ARN's last part (programs grant the role, not the session)."""
    session = "arn:aws-us-gov:sts::123456789012:assumed-role/deployer/ci-run"

    def program() -> None:
        context = aws.iam.get_session_context(arn=session)
        pulumi.export("context", [context.issuer_arn, context.issuer_name, context.session_name])

    assert _plan(program, {"aws:region": "us-gov-west-1"}).outputs["context"] == [
        "arn:aws-us-gov:iam::123456789012:role/deployer", "deployer", "ci-run"]


@pytest.mark.parametrize(("region", "partition", "dns_suffix", "reverse_dns_prefix"), [
    ("us-east-1", "aws", "amazonaws.com", "com.amazonaws"),
    ("us-gov-west-1", "aws-us-gov", "amazonaws.com", "com.amazonaws"),
    ("cn-north-1", "aws-cn", "amazonaws.com.cn", "cn.com.amazonaws"),
])
def test_the_partition_lookup_answers_the_partition_of_the_providers_region(region: str, partition: str, dns_suffix: str,
                                                                            reverse_dns_prefix: str) -> None:
    """A GovCloud or China program builds ARNs and endpoints from get_partition(): they must agree with the ARNs other
    lookups answer with there (the caller's, a KMS key's), as the AWS provider's do."""
    def program() -> None:
        found = aws.get_partition()
        pulumi.export("partition", [found.partition, found.id, found.dns_suffix, found.reverse_dns_prefix])
        pulumi.export("caller", aws.get_caller_identity().arn)
        pulumi.export("key", aws.kms.get_key(key_id="alias/x").arn)
        pulumi.export("endpoint", aws.get_region().endpoint)

    outputs = _plan(program, {"aws:region": region}).outputs
    assert outputs["partition"] == [partition, partition, dns_suffix, reverse_dns_prefix]
    assert outputs["caller"].startswith(f"arn:{partition}:sts::123456789012:assumed-role/")
    assert outputs["key"].startswith(f"arn:{partition}:kms:{region}:123456789012:key/")
    assert outputs["endpoint"] == f"ec2.{region}.{dns_suffix}"


def test_a_looked_up_number_is_one() -> None:
    """A number nobody knows offline is 1, not 0: a program that sizes resources by it (one per node) or divides by
    it still plans something."""
    def program() -> None:
        group = aws.eks.get_node_group(cluster_name="gpu", node_group_name="train")
        for i in range(group.scaling_configs[0].desired_size):
            aws.ec2.SecurityGroup(f"node-{i}")

    assert [r.name for r in _plan(program).of_type("aws:ec2/securityGroup:SecurityGroup")] == ["node-0"]


def test_a_listed_projects_number_is_digits() -> None:
    """gcp.projects.get_project lists projects whose `number` programs format into service agent emails
    (service-<number>@...): digits, as GCP's project numbers are."""
    def program() -> None:
        pulumi.export("number", gcp.projects.get_project(filter="name:ml-*").projects[0].number)

    assert _plan(program, {"gcp:project": "p"}).outputs["number"].isdigit()


def test_a_field_named_like_a_cidr_holds_a_network() -> None:
    """An EKS cluster's serviceIpv4Cidr is a CIDR block a program can parse (to pick the DNS service address)."""
    def program() -> None:
        cluster = aws.eks.get_cluster(name="gpu")
        pulumi.export("cidr", cluster.kubernetes_network_configs[0].service_ipv4_cidr)

    assert ipaddress.ip_network(_plan(program).outputs["cidr"]).prefixlen == 16


def test_a_tpu_lookup_answers_for_the_zone_asked() -> None:
    def program() -> None:
        pulumi.export("zone", gcp.tpu.get_v2_accelerator_types(zone="us-east5-b").zone)

    assert _plan(program, {"gcp:project": "p", "gcp:region": "us-central1"}).outputs == {"zone": "us-east5-b"}


def test_admin_credentials_decode_to_an_admin_kubeconfig() -> None:
    def program() -> None:
        creds = containerservice.list_managed_cluster_admin_credentials(resource_group_name="rg", resource_name="aks")
        pulumi.export("kubeconfig", yaml.safe_load(base64.b64decode(creds.kubeconfigs[0].value)))

    config = _plan(program, {"azure-native:location": "eastus"}).outputs["kubeconfig"]
    assert config["users"][0]["name"] == "clusterAdmin_rg_aks"


# force_new_azure.py --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("type_", "path", "old", "new"), [
    ("azure-native:storage:StorageAccount", "isHnsEnabled", False, True),
    ("azure-native:storagecache:AmlFilesystem", "zones", ["1"], ["2"]),
    ("azure-native:cdn:Profile", "sku.name", "Standard_AzureFrontDoor", "Premium_AzureFrontDoor"),
    ("azure-native:authorization:RoleAssignment", "principalId", "a", "b"),
    ("azure-native:containerservice:AgentPool", "networkProfile.nodePublicIPTags", [{"tag": "a"}], [{"tag": "b"}]),
    ("azure-native:network:PublicIPAddress", "location", "eastus2", "westus3"),
    ("azure-native:keyvault:Key", "keyName", "a", "b"),
    ("azure-native:containerservice:ManagedCluster", "networkProfile.podCidr", "10.244.0.0/16", "10.245.0.0/16"),
    ("azure-native:network:PrivateEndpoint", "subnet", {"id": "a"}, {"id": "b"}),
    ("azure-native:containerservice:ManagedCluster", "dnsPrefix", "a", "b"),
    ("azure-native:storage:BlobContainer", "containerName", "a", "b"),
    ("azure-native:managedidentity:UserAssignedIdentity", "location", "eastus2", "westus3"),
])
def test_an_azure_native_create_only_input_change_is_a_replacement(type_: str, path: str, old: object,
                                                                  new: object) -> None:
    """The azure-native provider replaces these at Diff time (a path parameter, forceNewMap or a create-only
    property: force_new_azure.py's sources); the diff must say so, naming the input."""
    def inputs(value: object) -> dict:
        if "." in path:
            parent, child = path.split(".")
            return {parent: {child: value}}
        return {path: value}

    base, head = base_and_head(plan_record(type_, "r", inputs(old)))
    head["resources"][1]["inputs"] = inputs(new)
    [entry] = [e for group in diff_plans(base, head)["components"].values() for e in group["replaced"]]
    assert entry["action"] == "replace" and entry["replaceBecause"]
    assert all(because == path or because.startswith((f"{path}.", f"{path}[")) for because in entry["replaceBecause"])
