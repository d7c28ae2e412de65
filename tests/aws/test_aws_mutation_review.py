"""Tests from a hand mutation review of the AWS components and their composition: each pins what AWS would receive
(or the order the engine creates and deletes things in) where a changed line of components/aws or components/compose
went unnoticed before: EFA interfaces on the cluster security group, the cluster after its role's policy, the key
policy's statements and conditions, the log bucket's S3 access log prefix, the Load Balancer Controller's tag
conditions, the load balancer open to Global Accelerator clients, GA's internet gateway without NAT, and previewer
access entries only with the Kubernetes layer."""

from __future__ import annotations

import copy

from aws.conftest import aws_platform, plan_platform

from aiinfra.plan.runtime import PlanResult
from components.aws import controller_policies, policies

EAST = "prod-us-east-1"
CLUSTER = "aws:eks/cluster:Cluster"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"


def test_efa_interfaces_carry_the_cluster_security_group(prod_plan: PlanResult) -> None:
    """A launch template's network interfaces replace the node group's default one, security group included: each EFA
    interface must carry the EKS cluster security group (the group EFA traffic between nodes is allowed in)."""
    template = prod_plan.one(TEMPLATE, f"{EAST}-trn2-train-lt")
    interfaces = template.inputs["networkInterfaces"]
    assert len(interfaces) == 16 and all(len(i["securityGroups"]) == 1 for i in interfaces)
    # The group is the cluster's output (unknown offline): the property records the cluster it comes from.
    eks = prod_plan.one(CLUSTER, f"{EAST}-eks")
    assert eks.urn in template.propertyDependencies["networkInterfaces"]


def test_the_cluster_is_created_after_and_deleted_before_its_roles_policy(prod_plan: PlanResult) -> None:
    """EKS needs AmazonEKSClusterPolicy on its role to create the cluster's network interfaces and security groups, and
    to delete them again: the attachment comes first and goes last."""
    attachment = prod_plan.one(ATTACHMENT, f"{EAST}-cluster-role-AmazonEKSClusterPolicy")
    assert attachment.urn in prod_plan.one(CLUSTER, f"{EAST}-eks").dependencies


def test_the_key_admits_cloudwatch_logs_for_this_accounts_log_groups_and_ebs_grants_for_aws_resources() -> None:
    """Two key policy statements with no other test on their conditions: CloudWatch Logs may use the key only under
    the encryption context of a log group of this account and Region, and EBS may create grants only for AWS resources
    (the attached volume), never a grant a principal could use directly."""
    statements = {s["Sid"]: s for s in policies.key_policy("123456789012", "aws", "eu-west-1", "amazonaws.com")["Statement"]}
    logs = statements["CloudWatchLogsEncryptsThisAccountsLogGroups"]
    assert logs["Principal"] == {"Service": "logs.eu-west-1.amazonaws.com"}
    assert logs["Condition"] == {"ArnLike": {
        "kms:EncryptionContext:aws:logs:arn": "arn:aws:logs:eu-west-1:123456789012:log-group:*"}}
    grants = statements["EbsGrantsForAttachedVolumes"]
    assert grants["Action"] == "kms:CreateGrant"
    assert grants["Condition"] == {
        "StringEquals": {"kms:CallerAccount": "123456789012", "kms:ViaService": "ec2.eu-west-1.amazonaws.com"},
        "Bool": {"kms:GrantIsForAWSResource": "true"}}


def test_the_key_lets_ebs_and_s3_of_this_account_use_it_for_any_of_its_principals() -> None:
    """Every statement of the key policy is there: without `S3ObjectsOfThisAccount` only principals with an IAM grant on
    the key could read SSE-KMS objects, and FSx's S3 service-linked role (no such grant) could not import a bucket."""
    statements = policies.key_policy("123456789012", "aws", "us-east-1", "amazonaws.com")["Statement"]
    assert [s["Sid"] for s in statements] == ["AccountAdministersKeyThroughIam", "CloudWatchLogsEncryptsThisAccountsLogGroups",
                                              "EbsVolumesOfThisAccount", "EbsGrantsForAttachedVolumes", "S3ObjectsOfThisAccount"]
    s3 = statements[-1]
    assert s3["Action"] == ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"]
    assert s3["Condition"] == {"StringEquals": {"kms:CallerAccount": "123456789012", "kms:ViaService": "s3.us-east-1.amazonaws.com"}}


def test_s3_server_access_logs_land_under_their_prefix_only() -> None:
    """S3's logging service may write into the log bucket under `s3/` only, where the data buckets' logging targets:
    not over the flow, load balancer or Global Accelerator logs beside them."""
    bucket = "arn:aws:s3:::prod-logs-0123abcd"
    statements = {s["Sid"]: s for s in policies.log_bucket_policy(bucket, "123456789012")["Statement"]}
    assert statements["S3ServerAccessLogs"]["Resource"] == f"{bucket}/s3/*"
    assert statements["S3ServerAccessLogs"]["Action"] == "s3:PutObject"


def test_the_lb_controller_tags_security_groups_only_as_it_creates_them_and_never_moves_ownership() -> None:
    """The documented policy's two tag conditions on security groups: tags go on at CreateSecurityGroup with the
    cluster tag, and later tag changes are allowed on owned groups only when the request leaves the ownership tag
    alone (otherwise the controller could adopt any security group by tagging it)."""
    groups = "arn:aws:ec2:*:*:security-group/*"
    statements = {s["Sid"]: s for s in controller_policies.load_balancer_controller("aws")["Statement"]}
    on_create = statements["TagSecurityGroupOnCreate"]
    assert (on_create["Action"], on_create["Resource"]) == ("ec2:CreateTags", groups)
    assert on_create["Condition"] == {"StringEquals": {"ec2:CreateAction": "CreateSecurityGroup"},
                                      "Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"}}
    owned = {"Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "true", "aws:ResourceTag/elbv2.k8s.aws/cluster": "false"}}
    assert statements["RetagOwnedSecurityGroups"]["Condition"] == owned
    assert statements["RetagOwnedLoadBalancers"]["Condition"] == owned


def test_behind_global_accelerator_the_load_balancer_admits_clients_from_anywhere(prod_plan: PlanResult, plan_aws,  # noqa: ANN001
                                                                                   prod_config) -> None:  # noqa: ANN001
    """Global Accelerator preserves client addresses, so the internal ALB sees the client's own IP: its security group
    admits HTTPS from any address. Without a global endpoint it admits the VPC only."""
    def ingress(plan: PlanResult, region: str) -> list[dict]:
        return plan.one("aws:ec2/securityGroup:SecurityGroup", f"{region}-inference-lb-sg").inputs["ingress"]

    for region in (EAST, "prod-eu-west-1"):
        [rule] = ingress(prod_plan, region)
        assert (rule["fromPort"], rule["toPort"], rule["cidrBlocks"]) == (443, 443, ["0.0.0.0/0"])
    config = copy.deepcopy(prod_config)
    del config["global_endpoint"]
    [rule] = ingress(plan_aws(config, environment="prod"), EAST)
    assert rule["cidrBlocks"] == ["10.60.0.0/16"]


def test_a_serving_region_without_nat_still_gets_the_internet_gateway_global_accelerator_needs(prod_config) -> None:  # noqa: ANN001
    """GA reaches an internal load balancer only through its VPC's internet gateway: a region with `nat: none` (no
    public subnets) gets one anyway when it serves behind the accelerator, and its endpoint group waits for it."""
    config = copy.deepcopy(prod_config)
    config["regions"]["eu-west-1"]["network"]["nat"] = "none"
    plan = plan_platform(aws_platform(config, environment="prod"), stack="prod")
    gateway = plan.one("aws:ec2/internetGateway:InternetGateway", "prod-eu-west-1-igw")
    assert not [s for s in plan.of_type("aws:ec2/subnet:Subnet") if s.name.startswith("prod-eu-west-1-public-")]
    assert gateway.urn in plan.one("aws:globalaccelerator/endpointGroup:EndpointGroup", "prod-global-eu-west-1").dependencies


def test_previewers_get_access_entries_only_for_the_kubernetes_layer(prod_config) -> None:  # noqa: ANN001
    """A previewer's access entry has no access policy: it exists for the Kubernetes layer's RBAC alone. With the layer
    off (as `aws_platform` leaves it), no principal gets an entry it cannot use (and no entry lingers to be granted
    something later)."""
    config = copy.deepcopy(prod_config)
    config.update(deployers=["arn:aws:iam::123456789012:role/deployer"],
                  previewers=["arn:aws:iam::123456789012:role/previewer"])
    entries = plan_platform(aws_platform(config, environment="prod"), stack="prod").of_type("aws:eks/accessEntry:AccessEntry")
    assert entries and not [e for e in entries if "-previewer-" in e.name]
