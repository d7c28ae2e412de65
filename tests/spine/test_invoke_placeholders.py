"""Placeholder invoke results as a program sees them: every declared field shaped (also for the lookups with special
values), distinct list items, the region's real zone count and zone IDs, the stack's configured project and
subscription, and encoded strings that decode."""

from __future__ import annotations

import base64
import re

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest
import yaml
from pulumi_azure_native import authorization, containerservice

from aiinfra.plan.invokes import _result_properties, _result_type, placeholder_result
from aiinfra.plan.runtime import PlanResult, run_program
from components.gcp.offerings import offered_master_version
from components.spec.gcp import SIGNED_MODULES_VERSION, gke_version_key


def plan(program, config: dict[str, str] | None = None) -> PlanResult:  # noqa: ANN001
    return run_program(program, project="p", stack="s", config=config or {"aws:region": "us-east-1"})


@pytest.mark.parametrize("token", [
    "aws:ec2/getAmi:getAmi", "aws:ssm/getParameter:getParameter", "aws:index/getAvailabilityZones:getAvailabilityZones",
    "aws:iam/getPolicyDocument:getPolicyDocument", "gcp:compute/getZones:getZones",
    "gcp:organizations/getClientConfig:getClientConfig"])
def test_special_values_keep_every_other_declared_field(token: str) -> None:
    """Special values are laid over the typed placeholder: ami.root_device_name, parameter.arn are not None."""
    result = placeholder_result(token, {"name": "/app/db-url"})
    assert set(_result_properties(_result_type(token))) <= set(result)
    assert [key for key, value in result.items() if value is None] == []


def test_an_ami_and_a_parameter_have_the_fields_a_launch_template_reads() -> None:
    def program() -> None:
        ami = aws.ec2.get_ami(most_recent=True, owners=["amazon"])
        param = aws.ssm.get_parameter(name="/app/db-url")
        pulumi.export("root", ami.root_device_name)
        pulumi.export("snapshots", [m.ebs["snapshot_id"] for m in ami.block_device_mappings])
        pulumi.export("arn", param.arn)
        pulumi.export("version", param.version)

    outputs = plan(program).outputs
    assert outputs["root"] == "/dev/xvda" and outputs["snapshots"] == ["snap-0123456789abcdef0"]
    assert outputs["arn"] == "arn:aws:ssm:us-east-1:123456789012:parameter/app/db-url" and outputs["version"] == 1


def test_resources_named_after_listed_ids_get_distinct_names() -> None:
    def program() -> None:
        fs = aws.efs.FileSystem("shared")
        for subnet_id in aws.ec2.get_subnets().ids:
            aws.efs.MountTarget(f"mount-{subnet_id}", file_system_id=fs.id, subnet_id=subnet_id)

    names = [r.name for r in plan(program).of_type("aws:efs/mountTarget:MountTarget")]
    assert names == ["mount-placeholder-ids-0", "mount-placeholder-ids-1", "mount-placeholder-ids-2"]


def test_items_of_listed_objects_differ_too() -> None:
    zones = placeholder_result("aws:ec2/getVpc:getVpc", {})["cidrBlockAssociations"]
    assert [z["associationId"] for z in zones] == [f"placeholder-associationId-{i}" for i in range(3)]
    assert [z["cidrBlock"] for z in zones] == ["10.0.0.0/16", "10.1.0.0/16", "10.2.0.0/16"]


@pytest.mark.parametrize(("region", "names", "zone_ids"), [
    ("us-west-1", ["us-west-1a", "us-west-1b"], ["usw1-az1", "usw1-az3"]),
    ("us-west-2", [f"us-west-2{c}" for c in "abcd"], [f"usw2-az{i}" for i in range(1, 5)]),
    ("eu-central-1", ["eu-central-1a", "eu-central-1b", "eu-central-1c"], ["euc1-az1", "euc1-az2", "euc1-az3"]),
    ("ap-southeast-2", ["ap-southeast-2a", "ap-southeast-2b", "ap-southeast-2c"], ["apse2-az1", "apse2-az2", "apse2-az3"]),
    ("eu-west-2", ["eu-west-2a", "eu-west-2b", "eu-west-2c"], ["euw2-az1", "euw2-az2", "euw2-az3"]),
    ("ap-northeast-1", ["ap-northeast-1a", "ap-northeast-1b", "ap-northeast-1c"], ["apne1-az1", "apne1-az2", "apne1-az3"]),
    ("us-gov-west-1", ["us-gov-west-1a", "us-gov-west-1b", "us-gov-west-1c"], ["usgw1-az1", "usgw1-az2", "usgw1-az3"]),
    ("ca-central-1", ["ca-central-1a", "ca-central-1b", "ca-central-1c"], ["cac1-az1", "cac1-az2", "cac1-az3"]),
    ("sa-east-1", ["sa-east-1a", "sa-east-1b", "sa-east-1c"], ["sae1-az1", "sae1-az2", "sae1-az3"]),
])
def test_zones_have_the_regions_count_and_zone_ids(region: str, names: list[str], zone_ids: list[str]) -> None:
    """us-east-1 (six zones, use1-az1..6) is in test_invokes.py; the others have their own count and AZ ID prefix."""
    def program() -> None:
        zones = aws.get_availability_zones(state="available")
        pulumi.export("names", zones.names)
        pulumi.export("ids", zones.zone_ids)

    outputs = plan(program, {"aws:region": region}).outputs
    assert (outputs["names"], outputs["ids"]) == (names, zone_ids)


def test_one_subnet_per_zone_fits_a_three_entry_list() -> None:
    def program() -> None:
        cidrs = ["10.0.0.0/19", "10.0.32.0/19", "10.0.64.0/19"]
        west = pulumi.InvokeOptions(provider=aws.Provider("west", region="eu-west-2"))
        for i, az in enumerate(aws.get_availability_zones(opts=west).names):
            aws.ec2.Subnet(f"private-{az}", vpc_id="vpc-1", availability_zone=az, cidr_block=cidrs[i])

    subnets = plan(program).of_type("aws:ec2/subnet:Subnet")
    assert [r.inputs["availabilityZone"] for r in subnets] == ["eu-west-2a", "eu-west-2b", "eu-west-2c"]


CONFIGURED = {"gcp:project": "acme-data-prod", "gcp:region": "us-east4", "gcp:zone": "us-east4-c",
              "azure-native:location": "uksouth", "azure-native:subscriptionId": "3f2c1a7e-9d4b-4c1e-8a55-2b7d9e0c1f42",
              "azure-native:tenantId": "8e1d2c3b-4a5f-4e6d-9c7b-0a1b2c3d4e5f"}


def test_client_configs_answer_with_the_stacks_project_zone_and_subscription() -> None:
    def program() -> None:
        az, g = authorization.get_client_config(), gcp.organizations.get_client_config()
        europe = pulumi.InvokeOptions(provider=gcp.Provider("eu", project="acme-eu", region="europe-west4"))
        pulumi.export("azure", [az.subscription_id, az.tenant_id])
        pulumi.export("gcp", [g.project, g.region, g.zone])
        pulumi.export("projectId", gcp.organizations.get_project().project_id)
        pulumi.export("network", gcp.compute.get_network(name="default").project)
        eu = gcp.organizations.get_client_config(opts=europe)
        pulumi.export("europe", [eu.project, eu.region, eu.zone])

    outputs = plan(program, CONFIGURED).outputs
    assert outputs["azure"] == ["3f2c1a7e-9d4b-4c1e-8a55-2b7d9e0c1f42", "8e1d2c3b-4a5f-4e6d-9c7b-0a1b2c3d4e5f"]
    assert outputs["gcp"] == ["acme-data-prod", "us-east4", "us-east4-c"]
    assert outputs["projectId"] == outputs["network"] == "acme-data-prod"
    assert outputs["europe"] == ["acme-eu", "europe-west4", "europe-west4-a"]  # the provider's, not the stack's


def test_an_ecr_token_decodes_to_a_docker_login() -> None:
    def program() -> None:
        token = aws.ecr.get_authorization_token()
        user, password = base64.b64decode(token.authorization_token).decode().split(":")
        pulumi.export("login", [user, password, token.password, token.proxy_endpoint])

    user, password, declared, server = plan(program).outputs["login"]
    assert (user, password) == ("AWS", declared) and server == "https://123456789012.dkr.ecr.us-east-1.amazonaws.com"


def test_an_aks_kubeconfig_decodes_to_a_kubeconfig() -> None:
    def program() -> None:
        creds = containerservice.list_managed_cluster_user_credentials(resource_group_name="rg", resource_name="aks")
        pulumi.export("kubeconfig", yaml.safe_load(base64.b64decode(creds.kubeconfigs[0].value)))

    config = plan(program, {"azure-native:location": "eastus"}).outputs["kubeconfig"]
    assert (config["apiVersion"], config["kind"], config["current-context"]) == ("v1", "Config", "aks")
    assert config["clusters"][0]["cluster"]["server"] == "https://aks-placeholder.hcp.eastus.azmk8s.io:443"
    assert [len(config[k]) for k in ("clusters", "contexts", "users")] == [1, 1, 1]


def test_only_an_image_parameter_holds_an_ami_id() -> None:
    def program() -> None:
        for key, name in [("al2023", "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"),
                          ("eks", "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"),
                          ("db", "/platform/db/host")]:
            pulumi.export(key, aws.ssm.get_parameter(name=name).value)

    assert plan(program).outputs == {"al2023": "ami-0123456789abcdef0", "eks": "ami-0123456789abcdef0",
                                     "db": "placeholder-value"}


GKE_VERSION = re.compile(r"\d+\.\d+\.\d+-gke\.\d+")


def test_gke_versions_are_gke_shaped_and_our_version_check_stays_unanswered() -> None:
    def program() -> None:
        versions = gcp.container.get_engine_versions(location="us-east1")
        pulumi.export("defaults", versions.release_channel_default_version)
        pulumi.export("latest", [versions.latest_master_version, versions.default_cluster_version])
        pulumi.export("nodes", versions.valid_node_versions)
        pulumi.export("prefixed", gcp.container.get_engine_versions(version_prefix="1.30.").latest_master_version)
        pulumi.export("masters", versions.valid_master_versions)
        # components/gcp/offerings.py: offline, GKE reports no versions, so no version is refused.
        pulumi.export("checked", offered_master_version("p", "us-east1", "1.99", "STABLE", "path",
                                                        pulumi.InvokeOutputOptions()))

    outputs = plan(program, {"gcp:project": "p", "gcp:region": "us-east1"}).outputs
    assert sorted(outputs["defaults"]) == ["EXTENDED", "RAPID", "REGULAR", "STABLE"]
    assert all(GKE_VERSION.fullmatch(v) for v in [*outputs["defaults"].values(), *outputs["latest"], *outputs["nodes"]])
    assert outputs["nodes"] and outputs["prefixed"].startswith("1.30.")
    assert outputs["masters"] == [] and outputs["checked"] == "1.99"
    # A GKE cluster without kubernetes_version in a Lustre region takes its channel's default, which must reach the
    # secure kernel module loading floor (components/gcp/offerings.py signed_modules_channel): offline, every one does.
    floor = gke_version_key(SIGNED_MODULES_VERSION)
    assert all(gke_version_key(v) >= floor for v in outputs["defaults"].values())


def test_a_module_named_like_a_python_keyword_has_typed_placeholders_and_computed_outputs() -> None:
    """`aws:lambda/...` lives in `pulumi_aws.lambda_` (the codegen appends "_" to keywords): a looked-up function's
    ARN is a placeholder a Permission can take, not None, and a Function's computed outputs are unknown in a plan."""
    from aiinfra.plan.outputs import computed_properties

    def program() -> None:
        fn = aws.lambda_.get_function(function_name="rotate")
        aws.lambda_.Permission("invoke", function=fn.arn, action="lambda:InvokeFunction", principal="sns.amazonaws.com")
        pulumi.export("arn", fn.arn)

    result = plan(program)
    assert result.outputs["arn"].startswith("arn:aws:lambda:us-east-1:123456789012:function:")
    [permission] = [r for r in result.resources if r.type == "aws:lambda/permission:Permission"]
    assert permission.inputs["function"] == result.outputs["arn"]
    assert "arn" in computed_properties("aws:lambda/function:Function")
