"""Behaviour of aws/controllers, azure/etcd_key and azure/private_link that a third hand mutation review found no test
pinning, as the clouds would receive it: the EKS controllers get their role's ARN only once the role's permissions
are attached (a pod starting earlier would run without them), and every private endpoint sits in its region's
resource group and location with the region's tags, its DNS zone group naming the endpoint Azure created and waiting
for it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import pulumi
from aws.conftest import PROD_AWS
from aws.test_controllers_plan import CLUSTER, ISSUER, OIDC_ARN, exported
from azure.conftest import PROD_AZURE, azure_platform, plan_platform

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.aws.context import AwsContext
from components.aws.controllers import ControllerRoles, ControllerRolesArgs

ENDPOINT = "azure-native:network:PrivateEndpoint"
ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"


# --- aws/controllers -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def aws_plan() -> PlanResult:
    return exported(copy.deepcopy(PROD_AWS))


@pytest.mark.parametrize(("controller", "role"), [("cluster-autoscaler", "autoscaler"), ("lb-controller", "lb-controller")])
def test_each_controller_gets_its_role_once_the_roles_policy_is_attached(aws_plan: PlanResult, controller: str,
                                                                        role: str) -> None:
    """The chart's service account carries the role's ARN; its pods may start as soon as the release is installed,
    and a pod whose role has no policy yet fails its first AWS calls (IRSA credentials are cached for their lifetime)."""
    for cluster in ("prod-us-east-1", "prod-eu-west-1"):
        release = aws_plan.one("kubernetes:helm.sh/v3:Release", f"{cluster}-{controller}-release")
        policy = aws_plan.one("aws:iam/rolePolicy:RolePolicy", f"{cluster}-{role}-policy")
        assert policy.urn in release.propertyDependencies["values"], cluster
        assert aws_plan.one("aws:iam/role:Role", f"{cluster}-{role}-role").urn in release.propertyDependencies["values"]


class RoleArns(PlanMocks):
    """IAM reports a role's ARN (the default plan leaves it unknown)."""

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if type_ == "aws:iam/role:Role":
            outputs = {**outputs, "arn": f"arn:aws:iam::123456789012:role/{name}"}
        return super().answer(type_, name, outputs)


def test_the_role_arns_handed_to_the_controllers_are_the_roles_arns() -> None:
    def program() -> None:
        ctx = AwsContext(environment="prod", region="us-east-1", labels={}, account_id="123456789012", partition="aws",
                         dns_suffix="amazonaws.com", dns_prefix="com.amazonaws", protected=True)
        roles = ControllerRoles(CLUSTER, ControllerRolesArgs(ctx, CLUSTER, OIDC_ARN, ISSUER))
        pulumi.export("autoscaler", roles.autoscaler_role_arn)
        pulumi.export("lb_controller", roles.lb_controller_role_arn)

    plan = run_program(program, project="ai-infra", stack="prod", mocks_=RoleArns())
    assert plan.outputs == {"autoscaler": f"arn:aws:iam::123456789012:role/{CLUSTER}-autoscaler-role",
                            "lb_controller": f"arn:aws:iam::123456789012:role/{CLUSTER}-lb-controller-role"}


# --- azure/private_link ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def azure_plan() -> PlanResult:
    return plan_platform(azure_platform(PROD_AZURE, environment="prod"), stack="prod")


def test_private_endpoints_sit_in_their_regions_group_and_location_with_its_tags(azure_plan: PlanResult) -> None:
    endpoints = azure_plan.of_type(ENDPOINT)
    assert endpoints
    for endpoint in endpoints:
        region = endpoint.name.split("-")[1]
        vault = azure_plan.one("azure-native:keyvault:Vault", f"prod-{region}-kv").inputs  # the region's own vault
        assert endpoint.inputs["location"] == region, endpoint.name
        assert endpoint.inputs["resourceGroupName"] == vault["resourceGroupName"], endpoint.name
        assert endpoint.inputs["tags"] == vault["tags"] and endpoint.inputs["tags"], endpoint.name


def test_each_dns_zone_group_names_its_endpoint_and_waits_for_it(azure_plan: PlanResult) -> None:
    """The zone group is a child of the endpoint Azure created (its name may carry azure-native's random suffix): it
    must name that endpoint, which therefore exists before the group is written."""
    for endpoint in azure_plan.of_type(ENDPOINT):
        group = azure_plan.one(ZONE_GROUP, f"{endpoint.name}-dns")
        assert group.propertyDependencies["privateEndpointName"] == [endpoint.urn]
        assert group.inputs["resourceGroupName"] == endpoint.inputs["resourceGroupName"]
