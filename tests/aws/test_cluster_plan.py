"""The EKS cluster: private API, envelope-encrypted secrets, control-plane logs, access entries, IRSA, least-privilege
node roles, the system node group and a kubeconfig without static credentials."""

from __future__ import annotations

import json

import pytest

from aiinfra.plan import runtime
from aiinfra.plan.runtime import PlanResult, run_program
from components.compose import aws as compose_aws
from components.spec import load_platform

EAST = "prod-us-east-1"
CLUSTER = "aws:eks/cluster:Cluster"
ADMIN = "arn:aws:iam::123456789012:role/platform-admins"
# The plan runs as an assumed role's session (`arn:aws:sts::...:assumed-role/deployer/aiinfra-plan`), whose issuer is this role.
DEPLOYER = "arn:aws:iam::123456789012:role/deployer"


def test_api_endpoint_is_private_and_secrets_are_encrypted(prod_plan: PlanResult) -> None:
    cluster = prod_plan.one(CLUSTER, f"{EAST}-eks").inputs
    assert cluster["name"] == EAST
    assert cluster["vpcConfig"]["endpointPrivateAccess"] is True and cluster["vpcConfig"]["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in cluster["vpcConfig"]
    assert cluster["vpcConfig"]["subnetIds"] == [f"{EAST}-private-{i}-id" for i in range(3)]
    assert cluster["encryptionConfig"]["resources"] == ["secrets"]
    assert cluster["encryptionConfig"]["provider"]["keyArn"]  # the region's key (its ARN is known after create)
    assert cluster["enabledClusterLogTypes"] == ["api", "audit", "authenticator"]
    assert cluster["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}
    assert cluster["kubernetesNetworkConfig"]["serviceIpv4Cidr"] == "172.28.0.0/16"
    assert cluster["deletionProtection"] is True


def test_public_endpoint_only_by_opt_in_with_an_allowlist(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16"},
        "cluster": {"api_access": "public_restricted", "authorized_cidrs": ["203.0.113.0/24"]}}}})
    vpc = plan.one(CLUSTER).inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is True and vpc["endpointPrivateAccess"] is True
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"]
    # Public egress ranges reach the public endpoint; only the VPC is admitted to the private one.
    assert list(ingress_sources(plan, "test-us-west-2")) == ["test-us-west-2-api-from-vpc"]
    assert plan.one(CLUSTER).inputs["deletionProtection"] is True  # "test" is not dev


def ingress_sources(plan: PlanResult, cluster: str) -> dict[str, dict]:
    rules = plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    return {r.name: r.inputs for r in rules if r.name.startswith(f"{cluster}-api-from-")}


def test_private_endpoint_admits_the_vpc_on_443(prod_plan: PlanResult) -> None:
    """EKS's cluster security group admits only itself: without a rule a deployer elsewhere in the VPC (a self-hosted
    runner) could not reach the API server that the Kubernetes layer installs through."""
    rules = ingress_sources(prod_plan, EAST)
    assert list(rules) == [f"{EAST}-api-from-vpc"]
    rule = rules[f"{EAST}-api-from-vpc"]
    assert (rule["ipProtocol"], rule["fromPort"], rule["toPort"], rule["cidrIpv4"]) == ("tcp", 443, 443, "10.60.0.0/16")
    assert rule["region"] == "us-east-1"  # on the cluster security group EKS creates (its ID is known after create)


def test_private_endpoint_admits_authorized_private_networks(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16"},
        "cluster": {"authorized_cidrs": ["10.250.0.0/24", "192.168.8.0/22"]}}}})
    rules = ingress_sources(plan, "test-us-west-2")
    assert {name: r["cidrIpv4"] for name, r in rules.items()} == {
        "test-us-west-2-api-from-vpc": "10.9.0.0/16",
        "test-us-west-2-api-from-10-250-0-0-24": "10.250.0.0/24",
        "test-us-west-2-api-from-192-168-8-0-22": "192.168.8.0/22"}
    assert all((r["fromPort"], r["toPort"]) == (443, 443) for r in rules.values())
    vpc = plan.one(CLUSTER).inputs["vpcConfig"]
    assert vpc["endpointPublicAccess"] is False and "publicAccessCidrs" not in vpc


def test_control_plane_logs_go_to_an_encrypted_group_created_first(prod_plan: PlanResult) -> None:
    group = prod_plan.one("aws:cloudwatch/logGroup:LogGroup", f"{EAST}-control-plane-logs")
    assert group.inputs["name"] == f"/aws/eks/{EAST}/cluster" and group.inputs["kmsKeyId"]
    assert group.inputs["retentionInDays"] == 365 and group.protect
    assert group.urn in prod_plan.one(CLUSTER, f"{EAST}-eks").dependencies


def test_admins_and_the_deployer_get_access_entries_not_aws_auth(prod_plan: PlanResult) -> None:
    entries = prod_plan.of_type("aws:eks/accessEntry:AccessEntry")
    east = [e for e in entries if e.inputs["clusterName"] == EAST]
    # The deployer's entry is a managed one (EKS's own creator entry is off): the session's role, not its STS ARN.
    assert sorted(e.inputs["principalArn"] for e in east) == [DEPLOYER, ADMIN]
    assert all(e.inputs["type"] == "STANDARD" and e.name.startswith(f"{EAST}-admin-") for e in east)
    associations = prod_plan.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert len(associations) == len(entries) == 3  # both admins in us-east-1, the deployer in eu-west-1
    for association in associations:
        assert association.inputs["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
        assert association.inputs["accessScope"] == {"type": "cluster"}
    assert not [r for r in prod_plan.resources if r.type.startswith("kubernetes:") and "aws-auth" in r.name]


def test_a_deployer_listed_in_admins_gets_one_entry(plan_aws) -> None:  # noqa: ANN001
    # EKS refuses a second access entry for a principal; the deployer's entry and its admin entry are the same one.
    plan = plan_aws({"regions": {"us-west-2": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {"admins": [DEPLOYER]}}}})
    entries = plan.of_type("aws:eks/accessEntry:AccessEntry")
    assert [e.inputs["principalArn"] for e in entries] == [DEPLOYER]


CI = "arn:aws:iam::123456789012:role/ci/github-deploy"
SSO = "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_PlatformAdmin_0123456789abcdef"


def _entries_and_session_lookups(plan_aws, aws_config: dict) -> tuple[list[str], int]:  # noqa: ANN001
    calls: list[str] = []
    answer = runtime.PlanMocks.call

    def recording(self, args):  # type: ignore[no-untyped-def]
        calls.append(args.token)
        return answer(self, args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime.PlanMocks, "call", recording)
        plan = plan_aws(aws_config)
    entries = sorted(e.inputs["principalArn"] for e in plan.of_type("aws:eks/accessEntry:AccessEntry"))
    return entries, calls.count("aws:iam/getSessionContext:getSessionContext")


def test_listed_deployers_get_entries_instead_of_the_running_role(plan_aws) -> None:  # noqa: ANN001
    """A run by another role must not move the deployer's entry: with `deployers` the entries are the listed roles,
    whoever runs `pulumi up`, and the caller's session is not even read."""
    entries, lookups = _entries_and_session_lookups(plan_aws, {"deployers": [CI, SSO, ADMIN], "regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16"}, "cluster": {"admins": [ADMIN]}}}})
    assert entries == sorted([ADMIN, CI, SSO]) and DEPLOYER not in entries  # one entry for the deployer also in admins
    assert lookups == 0


def test_no_deployers_leaves_the_admins_only(plan_aws) -> None:  # noqa: ANN001
    entries, lookups = _entries_and_session_lookups(plan_aws, {"deployers": [], "regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16"}, "cluster": {"admins": [ADMIN]}}}})
    assert (entries, lookups) == ([ADMIN], 0)


def test_without_deployers_the_running_role_gets_the_entry(plan_aws) -> None:  # noqa: ANN001
    entries, lookups = _entries_and_session_lookups(plan_aws, {"regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16"}, "cluster": {}}}})
    assert (entries, lookups) == ([DEPLOYER], 1)


def test_the_kubernetes_provider_waits_for_the_deployers_access(plan_aws) -> None:  # noqa: ANN001
    # Its first call would be refused before the entry's policy is associated (it depends on the whole cluster component).
    plan = plan_aws({"regions": {"us-west-2": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}}}}, addons={"enabled": True})
    association = plan.one("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    provider = plan.one("pulumi:providers:kubernetes")
    assert association.urn in provider.dependencies


def test_oidc_provider_for_irsa_and_the_cni_on_its_own_role(prod_plan: PlanResult) -> None:
    oidc = prod_plan.one("aws:iam/openIdConnectProvider:OpenIdConnectProvider", f"{EAST}-oidc").inputs
    assert oidc["clientIdLists"] == ["sts.amazonaws.com"]
    addon = prod_plan.one("aws:eks/addon:Addon", f"{EAST}-vpc-cni").inputs
    assert addon["addonName"] == "vpc-cni" and addon["serviceAccountRoleArn"]
    assert json.loads(addon["configurationValues"]) == {"enableNetworkPolicy": "true"}
    policies = {r.name.removeprefix(f"{EAST}-"): r.inputs["policyArn"] for r in prod_plan.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                if r.name.startswith(EAST)}
    assert policies == {
        "cluster-role-AmazonEKSClusterPolicy": "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
        "node-role-AmazonEKSWorkerNodePolicy": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "node-role-AmazonEC2ContainerRegistryPullOnly": "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "vpc-cni-role-AmazonEKS_CNI_Policy": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
        "ebs-csi-role-AmazonEBSCSIDriverPolicyV2": "arn:aws:iam::aws:policy/AmazonEBSCSIDriverPolicyV2",
    }
    # No admin or wildcard policy on any role.
    assert not [p for p in policies.values() if "Administrator" in p or "FullAccess" in p]


def test_system_node_group_is_encrypted_on_demand_and_autoscaled(prod_plan: PlanResult) -> None:
    group = prod_plan.one("aws:eks/nodeGroup:NodeGroup", f"{EAST}-system-nodegroup")
    assert group.inputs["instanceTypes"] == ["m6i.xlarge"] and group.inputs["amiType"] == "AL2023_x86_64_STANDARD"
    assert group.inputs["scalingConfig"] == {"minSize": 3, "maxSize": 6, "desiredSize": 3}
    assert group.ignoreChanges == ["scalingConfig.desiredSize"]
    assert group.inputs["labels"] == {"ai-infra/pool": "system"}
    template = prod_plan.one("aws:ec2/launchTemplate:LaunchTemplate", f"{EAST}-system-lt").inputs
    assert template["metadataOptions"]["httpTokens"] == "required"
    assert template["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"
    cni = prod_plan.one("aws:eks/addon:Addon", f"{EAST}-vpc-cni").urn
    assert cni in group.dependencies


def test_every_node_group_waits_for_the_cni_and_the_node_role_policies(prod_plan: PlanResult) -> None:
    """And so outlives them on destroy: with the policies detached first, EKS could not clean up a draining group's
    instances and ENIs (pulumi-aws's NodeGroup example puts the same depends_on)."""
    needed = {prod_plan.one("aws:eks/addon:Addon", f"{EAST}-vpc-cni").urn} | {
        r.urn for r in prod_plan.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment") if r.name.startswith(f"{EAST}-node-role-")}
    assert len(needed) == 3  # the add-on and the two node policies (the CNI has its own IRSA role)
    groups = [g for g in prod_plan.of_type("aws:eks/nodeGroup:NodeGroup") if g.name.startswith(EAST)]
    assert len(groups) >= 4  # the system group and the GPU pools
    assert [g.name for g in groups if not needed <= set(g.dependencies)] == []


@pytest.mark.parametrize("environment", ["prod", "dev"])
def test_kubeconfig_is_secret_and_uses_aws_eks_get_token(environment: str) -> None:
    spec = load_platform({"environment": environment, "labels": {"owner": "a", "team": "b", "cost_center": "c"},
                          "addons": {"enabled": False},
                          "clouds": {"aws": {"regions": {"eu-west-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}}}}}})
    seen: dict[str, object] = {}

    async def program() -> None:
        result = compose_aws.build(spec, spec.clouds.aws)
        handle = result.clusters[0]
        seen["secret"] = await handle.kubeconfig.is_secret()
        seen["name"], seen["region"] = handle.name, handle.region

    run_program(program, project="ai-infra", stack=environment)
    assert seen == {"secret": True, "name": f"{environment}-eu-west-1", "region": "eu-west-1"}


def test_kubeconfig_content() -> None:
    from components.aws.cluster import kubeconfig

    config = json.loads(kubeconfig("prod-us-east-1", "us-east-1", "https://ABC.gr7.us-east-1.eks.amazonaws.com", "Q0E="))
    user = config["users"][0]["user"]
    assert "token" not in user and "client-key-data" not in user
    assert user["exec"]["command"] == "aws"
    assert user["exec"]["args"] == ["eks", "get-token", "--cluster-name", "prod-us-east-1", "--region", "us-east-1", "--output", "json"]
    assert config["clusters"][0]["cluster"] == {"server": "https://ABC.gr7.us-east-1.eks.amazonaws.com", "certificate-authority-data": "Q0E="}


def test_cluster_is_protected_outside_dev_but_not_retained(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    # deletion_protection stops the EKS API; protect stops `pulumi destroy` and refactors before they get there.
    # Not retained: a teardown of a non-dev stack must fail, not leave a cluster running outside the stack.
    prod = prod_plan.one(CLUSTER, f"{EAST}-eks")
    assert prod.protect and not prod.retainOnDelete and prod.inputs["deletionProtection"] is True
    dev = dev_plan.one(CLUSTER, "dev-us-east-1-eks")
    assert not dev.protect and not dev.retainOnDelete and dev.inputs["deletionProtection"] is False
