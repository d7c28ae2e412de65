"""IRSA roles of the EKS controllers (Cluster Autoscaler, AWS Load Balancer Controller): trust scoped to one service
account and the STS audience, the autoscaler's writes only on this cluster's Auto Scaling groups, the controller's
documented policy, and one set per EKS cluster with the Service the inference target group is bound to exported."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import run_platform

from aws.conftest import aws_platform

from aiinfra.plan.runtime import PlanResult, run_program
from components.aws import controller_policies
from components.aws.context import AwsContext
from components.aws.controllers import (
    AUTOSCALER_NAMESPACE,
    AUTOSCALER_SERVICE_ACCOUNT,
    LB_CONTROLLER_NAMESPACE,
    LB_CONTROLLER_SERVICE_ACCOUNT,
    ControllerRoles,
    ControllerRolesArgs,
)
from components.spec import load_platform

CLUSTER = "prod-us-east-1"
OIDC_ARN = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D"
ISSUER = "https://oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D"
ISSUER_KEY = "oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D"


@pytest.fixture(scope="module")
def roles_plan() -> PlanResult:
    """The component alone, with known inputs, so the documents AWS would receive are plain JSON."""
    def program() -> None:
        ctx = AwsContext(environment="prod", region="us-east-1", labels={}, account_id="123456789012", partition="aws-us-gov",
                         dns_suffix="amazonaws.com", dns_prefix="com.amazonaws", protected=True)
        ControllerRoles(CLUSTER, ControllerRolesArgs(ctx, CLUSTER, OIDC_ARN, ISSUER))
    return run_program(program, project="ai-infra", stack="prod")


def actions(statement: dict[str, Any]) -> list[str]:
    return [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]


def document(plan: PlanResult, type_: str, name: str, key: str) -> dict[str, Any]:
    return json.loads(plan.one(type_, name).inputs[key])


@pytest.mark.parametrize(("suffix", "namespace", "account"), [
    ("autoscaler", AUTOSCALER_NAMESPACE, AUTOSCALER_SERVICE_ACCOUNT),
    ("lb-controller", LB_CONTROLLER_NAMESPACE, LB_CONTROLLER_SERVICE_ACCOUNT),
])
def test_each_role_trusts_exactly_its_service_account(roles_plan: PlanResult, suffix: str, namespace: str, account: str) -> None:
    trust = document(roles_plan, "aws:iam/role:Role", f"{CLUSTER}-{suffix}-role", "assumeRolePolicy")
    [statement] = trust["Statement"]
    assert statement["Principal"] == {"Federated": OIDC_ARN}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {"StringEquals": {
        f"{ISSUER_KEY}:sub": f"system:serviceaccount:{namespace}:{account}", f"{ISSUER_KEY}:aud": "sts.amazonaws.com"}}
    record = roles_plan.one("aws:iam/role:Role", f"{CLUSTER}-{suffix}-role")
    assert record.parent.endswith(f"ai-infra:aws:ControllerRoles::{CLUSTER}")


def test_the_autoscaler_writes_only_to_this_clusters_groups(roles_plan: PlanResult) -> None:
    policy = document(roles_plan, "aws:iam/rolePolicy:RolePolicy", f"{CLUSTER}-autoscaler-policy", "policy")
    writes = ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
    for statement in policy["Statement"]:
        if any(a in writes for a in actions(statement)):
            assert sorted(actions(statement)) == sorted(writes)
            assert statement["Condition"] == {"StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{CLUSTER}": "owned"}}
        else:  # reads only
            assert all(a.split(":")[1].startswith(("Describe", "Get")) for a in actions(statement)), statement
    assert {a for s in policy["Statement"] for a in s["Action"]} >= {"eks:DescribeNodegroup", "ec2:DescribeInstanceTypes"}


def test_lb_controller_policy_keys_its_writes_on_its_cluster_tag(roles_plan: PlanResult) -> None:
    policy = document(roles_plan, "aws:iam/rolePolicy:RolePolicy", f"{CLUSTER}-lb-controller-policy", "policy")
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    assert by_sid["CreateTaggedLoadBalancers"]["Condition"] == {"Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"}}
    owned = {"Null": {"aws:ResourceTag/elbv2.k8s.aws/cluster": "false"}}
    assert by_sid["ModifyOwnedLoadBalancers"]["Condition"] == owned
    assert "elasticloadbalancing:DeleteLoadBalancer" in by_sid["ModifyOwnedLoadBalancers"]["Action"]
    assert by_sid["ManageOwnedSecurityGroups"]["Condition"] == owned
    assert by_sid["ElbServiceLinkedRole"]["Condition"] == {
        "StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}}
    # ARNs in the deploying partition, and target registration limited to target groups.
    assert by_sid["RegisterTargets"]["Resource"] == "arn:aws-us-gov:elasticloadbalancing:*:*:targetgroup/*/*"
    # Every write outside those keyed statements is one the documented policy also leaves unkeyed.
    unkeyed = {a for s in policy["Statement"] if "Condition" not in s for a in actions(s)
               if not a.split(":")[1].startswith(("Describe", "Get", "List"))}
    assert unkeyed == {
        "ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:CreateSecurityGroup",
        "elasticloadbalancing:CreateListener", "elasticloadbalancing:DeleteListener", "elasticloadbalancing:CreateRule",
        "elasticloadbalancing:DeleteRule", "elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags",
        "elasticloadbalancing:RegisterTargets", "elasticloadbalancing:DeregisterTargets",
        "elasticloadbalancing:SetWebAcl", "elasticloadbalancing:ModifyListener",
        "elasticloadbalancing:AddListenerCertificates", "elasticloadbalancing:RemoveListenerCertificates",
        "elasticloadbalancing:ModifyRule", "elasticloadbalancing:SetRulePriorities",
        "waf-regional:AssociateWebACL", "waf-regional:DisassociateWebACL", "wafv2:AssociateWebACL",
        "wafv2:DisassociateWebACL", "shield:CreateProtection", "shield:DeleteProtection"}
    assert by_sid["TagListenersAndRules"]["Resource"][0].startswith("arn:aws-us-gov:elasticloadbalancing:*:*:listener/")


@pytest.mark.parametrize("build", [lambda: controller_policies.cluster_autoscaler(CLUSTER),
                                   lambda: controller_policies.load_balancer_controller("aws")])
def test_no_statement_allows_a_whole_service(build) -> None:  # noqa: ANN001
    for statement in build()["Statement"]:
        assert statement["Effect"] == "Allow" and not any(a == "*" or a.endswith(":*") for a in actions(statement)), statement


def exported(aws: dict[str, Any]) -> PlanResult:
    """The AWS platform with the Kubernetes layer on (it creates the inference Service the target group binds)."""
    return run_platform(load_platform(aws_platform(aws, environment="prod", addons={"enabled": True})), stack="prod")


def test_one_role_pair_per_eks_cluster_and_the_bound_service_exported(prod_config) -> None:  # noqa: ANN001
    plan = exported(prod_config)
    assert sorted(r.name for r in plan.of_type("ai-infra:aws:ControllerRoles")) == ["prod-eu-west-1", "prod-us-east-1"]
    for region in ("us-east-1", "eu-west-1"):
        assert {"autoscaler_role_arn", "lb_controller_role_arn"} <= set(plan.outputs["aws"][region]["cluster"])
        # The documented defaults: Service inference/inference on the endpoint's port (8080), selecting its name.
        inference = plan.outputs["kubernetes"][f"prod-{region}"]["inference"]
        assert (inference["service"], inference["port"]) == ("inference/inference", 8080)
        assert inference["selector"] == {"app.kubernetes.io/name": "inference"}
    role = plan.one("aws:iam/role:Role", "prod-us-east-1-autoscaler-role")
    assert any("aws:iam/openIdConnectProvider:OpenIdConnectProvider::prod-us-east-1-oidc" in d for d in role.dependencies)


def test_the_inference_service_is_configurable(prod_config) -> None:  # noqa: ANN001
    prod_config["regions"]["eu-west-1"]["inference"] |= {"service_namespace": "serving", "service_name": "llm-gateway",
                                                         "pod_selector": {"app": "gateway", "tier": "llm"}}
    plan = exported(prod_config)
    inference = plan.outputs["kubernetes"]["prod-eu-west-1"]["inference"]
    assert (inference["service"], inference["selector"]) == ("serving/llm-gateway", {"app": "gateway", "tier": "llm"})
    service = plan.one("kubernetes:core/v1:Service", "prod-eu-west-1-inference-service").inputs
    assert service["spec"]["selector"] == {"app": "gateway", "tier": "llm"}
    binding = plan.one("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding", "prod-eu-west-1-inference-binding").inputs
    assert (binding["metadata"]["namespace"], binding["spec"]["serviceRef"]) == ("serving", {"name": "llm-gateway", "port": 8080})
