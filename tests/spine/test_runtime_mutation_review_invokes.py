"""Invoke placeholders a mutation review found untested, as a program reads them: ARNs shaped by partition, service
and the kind of resource a field names, lookups that answer with what the program asked for (a registry, a project,
a version prefix), the stack's configured identity and region, and list items a program can name resources after."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest
from pulumi_azure_native import authorization, resources

from aiinfra.plan.invoke_values import GKE_CHANNEL_VERSIONS
from aiinfra.plan.runtime import PlanResult, run_program
from components.spec.gcp import gke_version_key


def plan(program, config: dict[str, str] | None = None) -> PlanResult:  # noqa: ANN001
    return run_program(program, project="p", stack="s", config=config if config is not None else {"aws:region": "us-east-2"})


# AWS ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("region", "partition"), [("cn-north-1", "aws-cn"), ("us-gov-west-1", "aws-us-gov"),
                                                   ("eu-west-1", "aws")])
def test_arns_carry_the_regions_partition(region: str, partition: str) -> None:
    """China and GovCloud ARNs start arn:aws-cn: and arn:aws-us-gov:; policies and IAM conditions compare them."""
    outputs = plan(lambda: pulumi.export("key", aws.kms.get_key(key_id="alias/data").arn), {"aws:region": region}).outputs
    assert outputs["key"] == f"arn:{partition}:kms:{region}:123456789012:key/placeholder-arn"


def test_a_field_that_ends_in_a_kind_names_that_kinds_arn_and_secret_arns_use_a_colon() -> None:
    """A node group's `nodeRoleArn` is an IAM role's (a trust policy names it); a secret's ARN is
    arn:aws:secretsmanager:<region>:<account>:secret:<name> (reference-arns.html), which programs split on ':'."""
    def program() -> None:
        pulumi.export("role", aws.eks.get_node_group(cluster_name="gpu", node_group_name="a").node_role_arn)
        pulumi.export("secret", aws.secretsmanager.get_secret(name="db").arn)

    outputs = plan(program).outputs
    assert outputs["role"] == "arn:aws:iam::123456789012:role/placeholder-nodeRoleArn"
    assert outputs["secret"] == "arn:aws:secretsmanager:us-east-2:123456789012:secret:placeholder-arn"


def test_an_ecr_token_for_another_registry_logs_in_to_that_registry() -> None:
    """Cross-account pulls ask for the other account's registry: docker logs in to the endpoint the token names."""
    token = plan(lambda: pulumi.export("endpoint", aws.ecr.get_authorization_token(registry_id="210987654321")
                                       .proxy_endpoint)).outputs
    assert token["endpoint"] == "https://210987654321.dkr.ecr.us-east-2.amazonaws.com"


def test_the_region_lookup_names_the_configured_region_and_an_unconfigured_stack_answers_for_us_east_1() -> None:
    """`get_region().name` (older programs) and `.region` agree with the provider's region; with no aws:region the
    placeholders answer for us-east-1, where us-east-1's six zones come from."""
    def program() -> None:
        here = aws.get_region()
        pulumi.export("region", [here.name, here.region, here.endpoint])
        pulumi.export("zones", aws.get_availability_zones().zone_ids)

    assert plan(program, {"aws:region": "eu-west-1"}).outputs["region"] == ["eu-west-1", "eu-west-1",
                                                                            "ec2.eu-west-1.amazonaws.com"]
    unconfigured = plan(program, {}).outputs
    assert unconfigured["region"][:2] == ["us-east-1", "us-east-1"]
    assert unconfigured["zones"] == [f"use1-az{i}" for i in range(1, 7)]


def test_a_policy_statement_without_an_effect_allows() -> None:
    """IAM's default: a statement that names no effect in aws.iam.get_policy_document is "Allow"."""
    document = plan(lambda: pulumi.export("json", aws.iam.get_policy_document(statements=[
        {"actions": ["s3:GetObject"], "resources": ["arn:aws:s3:::logs/*"]}]).json)).outputs["json"]
    assert json.loads(document)["Statement"] == [
        {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::logs/*"]}]


def test_a_session_context_of_a_user_or_role_is_its_own_issuer() -> None:
    """Only an assumed-role session resolves to a role; a user's ARN is its own issuer (programs put the issuer in a
    key policy or an EKS access entry)."""
    user = "arn:aws:iam::123456789012:user/deployer"

    def program() -> None:
        context = aws.iam.get_session_context(arn=user)
        pulumi.export("issuer", [context.issuer_arn, context.issuer_name])

    assert plan(program).outputs["issuer"] == [user, "deployer"]


def test_a_list_of_numbers_has_distinct_numbers_that_resources_can_be_named_after() -> None:
    """A listener or firewall rule per port: equal numbers would give equal names, which the engine refuses."""
    def program() -> None:
        for cores in aws.ec2.get_instance_type(instance_type="m5.large").valid_cores:
            aws.ec2.SecurityGroup(f"sg-{cores}")

    assert len(plan(program).of_type("aws:ec2/securityGroup:SecurityGroup")) == 3


def test_a_flag_the_program_did_not_ask_about_is_false_and_one_it_asked_for_is_echoed() -> None:
    """Placeholder booleans answer False, so resources a program creates only `if vpc.default:` (or any looked-up
    flag) do not appear offline from a value nobody knows; a filter the program passed is repeated in the result."""
    def program() -> None:
        pulumi.export("unknown", [aws.ec2.get_vpc(id="vpc-1").default, aws.ec2.get_vpc(id="vpc-1").enable_dns_support])
        pulumi.export("asked", aws.ec2.get_vpc(default=True).default)

    assert plan(program).outputs == {"unknown": [False, False], "asked": True}


# Azure and GCP ------------------------------------------------------------------------------------------------------

def test_the_azure_client_config_names_the_configured_client_and_lookups_answer_for_the_configured_location() -> None:
    """A role assignment for the deploying identity reads `client_id`; a resource group looked up is in the stack's
    location (azure-native:location), which residency checks read."""
    def program() -> None:
        pulumi.export("client", authorization.get_client_config().client_id)
        pulumi.export("location", resources.get_resource_group(resource_group_name="rg").location)

    client = "5b0e6c2a-1f3d-4e8b-9a7c-2d4e6f8a0b1c"
    outputs = plan(program, {"azure-native:location": "uksouth", "azure-native:clientId": client}).outputs
    assert outputs == {"client": client, "location": "uksouth"}


def test_gcp_lookups_answer_for_the_project_the_program_names() -> None:
    """A shared VPC host project or another project's lookup: the project asked for, not the stack's gcp:project."""
    def program() -> None:
        pulumi.export("project", gcp.organizations.get_project(project_id="acme-host").project_id)
        pulumi.export("network", gcp.compute.get_network(name="shared", project="acme-host").project)

    outputs = plan(program, {"gcp:project": "acme-ml", "gcp:region": "us-east4"}).outputs
    assert (outputs["project"], outputs["network"]) == ("acme-host", "acme-host")


def test_gke_versions_answer_a_full_prefix_and_latest_is_the_newest() -> None:
    """A version prefix with a patch ("1.31.4") lists that patch; the default cluster version is the REGULAR channel's
    default (GKE's rule for a cluster without a channel); the latest master version is the newest listed."""
    def program() -> None:
        versions = gcp.container.get_engine_versions(location="us-east4")
        pulumi.export("prefixed", gcp.container.get_engine_versions(location="us-east4", version_prefix="1.31.4")
                      .latest_master_version)
        pulumi.export("default", versions.default_cluster_version)
        pulumi.export("latest", versions.latest_master_version)
        pulumi.export("nodes", versions.valid_node_versions)

    outputs = plan(program, {"gcp:project": "p", "gcp:region": "us-east4"}).outputs
    assert outputs["prefixed"].startswith("1.31.4-gke.")
    assert outputs["default"] == GKE_CHANNEL_VERSIONS["REGULAR"]
    assert outputs["latest"] == max(outputs["nodes"], key=gke_version_key)

