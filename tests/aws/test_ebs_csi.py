"""Block storage on EKS: the EBS CSI driver add-on on every cluster (EKS's default build, its controller on an IRSA role
trusting only its service account, pinned to the system pool, its node plugin on every node), and the Kubernetes
layer's default StorageClass, encrypted with the region's key, which Prometheus's claims wait for."""

from __future__ import annotations

import json
from ipaddress import IPv4Network
from typing import Any

import pulumi
import pytest

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.aws.cluster import EBS_CSI_ADDON, EBS_CSI_CONTROLLER, EBS_CSI_POLICY, Cluster, ClusterArgs
from components.aws.context import AwsContext
from components.aws.policies import ebs_csi_kms
from components.spec import ClusterSpec

EAST, WEST = "prod-us-east-1", "prod-eu-west-1"
ADDON = "aws:eks/addon:Addon"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ROLE = "aws:iam/role:Role"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
RELEASE = "kubernetes:helm.sh/v3:Release"
KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
OIDC_ARN = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D"
ISSUER = "https://oidc.eks.us-east-1.amazonaws.com/id/0A1B2C3D"
TAGS = {"environment": "prod", "owner": "ml-platform", "team": "ml-platform", "cost-center": "cc-1234", "managed-by": "ai-infra"}
SMALL = {"regions": {"us-west-2": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {},
                                   "gpu_pools": {"l4": {"accelerator": "l4", "max_nodes": 2}}}}}


def default_build(addon: str, version: str, region: str) -> str:
    args = {"addonName": addon, "kubernetesVersion": version, "region": region}
    return PlanMocks().call(pulumi.runtime.MockCallArgs("aws:eks/getAddonVersion:getAddonVersion", args, ""))["version"]


def named(plan: PlanResult, type_: str, name: str) -> str:
    return plan.one(type_, name).urn


# --- The add-on -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("cluster", "region"), [(EAST, "us-east-1"), (WEST, "eu-west-1")])
def test_every_eks_cluster_gets_the_ebs_csi_add_on_on_its_own_role(prod_plan: PlanResult, cluster: str, region: str) -> None:
    addon = prod_plan.one(ADDON, f"{cluster}-ebs-csi")
    inputs = addon.inputs
    assert inputs["addonName"] == EBS_CSI_ADDON == "aws-ebs-csi-driver"
    assert (inputs["clusterName"], inputs["region"]) == (cluster, region)
    # EKS's default build for the cluster's version, as the other add-ons: a Kubernetes upgrade moves it along.
    assert inputs["addonVersion"] == default_build("aws-ebs-csi-driver", "1.35", region)
    # Its configuration is this code's; dropped from code, EKS removes it (volumes stay in EC2).
    assert (inputs["resolveConflictsOnCreate"], inputs["resolveConflictsOnUpdate"]) == ("OVERWRITE", "OVERWRITE")
    assert "preserve" not in inputs and "podIdentityAssociations" not in inputs
    role = named(prod_plan, ROLE, f"{cluster}-ebs-csi-role")
    assert addon.propertyDependencies["serviceAccountRoleArn"] == [role]
    # The controller's pods need nodes, and its permissions must be attached before they start.
    assert {named(prod_plan, NODE_GROUP, f"{cluster}-system-nodegroup"), role,
            named(prod_plan, "aws:iam/rolePolicy:RolePolicy", f"{cluster}-ebs-csi-role-kms"),
            named(prod_plan, "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
                  f"{cluster}-ebs-csi-role-AmazonEBSCSIDriverPolicyV2")} <= set(addon.dependencies)
    assert addon.parent.endswith(f"ai-infra:aws:Cluster::{cluster}")


def test_the_controller_runs_on_the_system_pool_and_the_node_plugin_on_every_node(prod_plan: PlanResult) -> None:
    values = json.loads(prod_plan.one(ADDON, f"{EAST}-ebs-csi").inputs["configurationValues"])
    assert values == {"controller": {"nodeSelector": {"ai-infra/pool": "system"}, "extraVolumeTags": TAGS},
                      "node": {"tolerateAllTaints": True}}
    groups = {g.name: g.inputs for g in prod_plan.of_type(NODE_GROUP) if g.name.startswith(EAST)}
    system = groups.pop(f"{EAST}-system-nodegroup")
    # The selector picks the system pool's nodes and no GPU pool's (they carry their own pool label) ...
    assert system["labels"].items() >= values["controller"]["nodeSelector"].items()
    assert groups and all(g["labels"].get("ai-infra/pool") != "system" for g in groups.values())
    # ... and every GPU pool is tainted NoSchedule, which the controller does not tolerate (no `tolerations` given:
    # the chart's CriticalAddonsOnly and NoExecute-for-300s stay), while the node plugin tolerates every taint.
    assert all(any(t["effect"] == "NO_SCHEDULE" for t in g["taints"]) for g in groups.values())
    assert "tolerations" not in values["controller"]


def test_the_volumes_it_creates_carry_the_platform_tags(prod_plan: PlanResult) -> None:
    """The provider's default tags never reach them: the driver creates them."""
    values = json.loads(prod_plan.one(ADDON, f"{EAST}-ebs-csi").inputs["configurationValues"])
    provider_tags = json.loads(prod_plan.one("pulumi:providers:aws").inputs["defaultTags"])["tags"]
    assert values["controller"]["extraVolumeTags"] == provider_tags == TAGS


def test_the_most_labels_the_spec_allows_leave_room_for_the_drivers_tags(plan_aws) -> None:  # noqa: ANN001
    from components.spec.common import CLOUD_TAG_LIMIT, MAX_EXTRA_LABELS, MOST_RESOURCE_TAGS

    extra = {f"label-{i}": "x" for i in range(MAX_EXTRA_LABELS)}  # the spec refuses one more (tests/spine)
    plan = plan_aws(SMALL, labels={"owner": "a", "team": "b", "cost_center": "c", "extra": extra})
    values = json.loads(plan.one(ADDON, "test-us-west-2-ebs-csi").inputs["configurationValues"])
    # The platform's 5 tags and the extra labels, and the driver's own 7 on each volume: within EC2's 50.
    assert len(values["controller"]["extraVolumeTags"]) == 5 + MAX_EXTRA_LABELS
    assert len(values["controller"]["extraVolumeTags"]) + MOST_RESOURCE_TAGS == CLOUD_TAG_LIMIT


# --- Its role ---------------------------------------------------------------------------------------------------


class _KnownIssuer(PlanMocks):
    """The cluster's OIDC issuer and provider ARN known, as on an update, so the trust policy is plain JSON."""

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict]:
        if type_ == "aws:eks/cluster:Cluster":
            outputs = {**outputs, "identities": [{"oidcs": [{"issuer": ISSUER}]}]}
        elif type_ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
            outputs = {**outputs, "arn": OIDC_ARN}
        return super().answer(type_, name, outputs)


@pytest.fixture(scope="module")
def cluster_plan() -> PlanResult:
    """The cluster component alone, with the region's key and the OIDC issuer known."""
    def program() -> None:
        ctx = AwsContext(environment="prod", region="us-east-1", labels=TAGS, account_id="123456789012", partition="aws-us-gov",
                         dns_suffix="amazonaws.com", dns_prefix="com.amazonaws", protected=True)
        Cluster(EAST, ClusterArgs(ctx, ClusterSpec(), ["subnet-a", "subnet-b"], KEY, IPv4Network("172.20.0.0/16"),
                                  IPv4Network("10.60.0.0/16"), 30))
    return run_program(program, project="ai-infra", stack="prod", mocks_=_KnownIssuer())


def test_the_role_trusts_only_the_controllers_service_account(cluster_plan: PlanResult) -> None:
    trust = json.loads(cluster_plan.one(ROLE, f"{EAST}-ebs-csi-role").inputs["assumeRolePolicy"])
    issuer = ISSUER.removeprefix("https://")
    assert trust == {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Federated": OIDC_ARN}, "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {f"{issuer}:sub": "system:serviceaccount:kube-system:ebs-csi-controller-sa",
                                       f"{issuer}:aud": "sts.amazonaws.com"}}}]}
    assert EBS_CSI_CONTROLLER == ("kube-system", "ebs-csi-controller-sa")  # the add-on's (EKS user guide)


def test_the_role_has_the_managed_policy_and_the_regions_key_only(cluster_plan: PlanResult) -> None:
    [attachment] = [a for a in cluster_plan.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                    if a.name.startswith(f"{EAST}-ebs-csi-role-")]
    # AWS's tag-scoped policy (only volumes the driver created), in the deployment's partition.
    assert EBS_CSI_POLICY == "AmazonEBSCSIDriverPolicyV2"
    assert attachment.inputs["policyArn"] == "arn:aws-us-gov:iam::aws:policy/AmazonEBSCSIDriverPolicyV2"
    kms = cluster_plan.one("aws:iam/rolePolicy:RolePolicy", f"{EAST}-ebs-csi-role-kms")
    assert json.loads(kms.inputs["policy"]) == ebs_csi_kms(KEY) == {"Version": "2012-10-17", "Statement": [
        # EKS user guide, "Create an Amazon EBS CSI driver IAM role", custom KMS key.
        {"Effect": "Allow", "Action": ["kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"], "Resource": [KEY],
         "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}}},
        {"Effect": "Allow", "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*",
                                       "kms:DescribeKey"], "Resource": [KEY]}]}
    role = cluster_plan.one(ROLE, f"{EAST}-ebs-csi-role").urn
    assert kms.propertyDependencies["role"] == [role]


# --- The default StorageClass and what waits for it ---------------------------------------------------------------


@pytest.fixture(scope="module")
def layer_plan(plan_aws) -> PlanResult:  # noqa: ANN001
    return plan_aws(SMALL, environment="prod", addons={"enabled": True})


def test_the_layer_makes_the_regions_key_encrypted_gp3_class_the_default(layer_plan: PlanResult) -> None:
    record = layer_plan.one(STORAGE_CLASS, "prod-us-west-2-block-storage-class")
    inputs = record.inputs
    assert inputs["provisioner"] == "ebs.csi.aws.com"
    assert inputs["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    assert (inputs["volumeBindingMode"], inputs["allowVolumeExpansion"], inputs["reclaimPolicy"]) == (
        "WaitForFirstConsumer", True, "Retain")
    params = inputs["parameters"]
    assert {k: v for k, v in params.items() if k != "kmsKeyId"} == {
        "type": "gp3", "encrypted": "true", "csi.storage.k8s.io/fstype": "ext4"}
    # The key's ARN is known once the key exists: the parameter comes from the region's key.
    assert "kmsKeyId" in params
    assert record.propertyDependencies["parameters"] == [named(layer_plan, "aws:kms/key:Key", "prod-us-west-2-key")]


def test_the_class_and_prometheus_come_after_the_driver(layer_plan: PlanResult) -> None:
    addon = named(layer_plan, ADDON, "prod-us-west-2-ebs-csi")
    storage_class = layer_plan.one(STORAGE_CLASS)
    assert addon in storage_class.dependencies
    # Every object of the layer: its provider waits for the whole cluster component, the add-on included.
    assert addon in layer_plan.one("pulumi:providers:kubernetes").dependencies
    prometheus = layer_plan.one(RELEASE, "prod-us-west-2-prometheus-stack")
    assert storage_class.urn in prometheus.dependencies
    values = prometheus.inputs["values"]
    assert "storageSpec" in values["prometheus"]["prometheusSpec"] and "storage" in values["alertmanager"]["alertmanagerSpec"]


def test_without_the_layer_the_driver_is_there_but_no_class(prod_plan: PlanResult) -> None:
    """`addons.enabled: false`: nothing of the platform is created through the Kubernetes API, the class included."""
    assert prod_plan.one(ADDON, f"{EAST}-ebs-csi") and not prod_plan.of_type(STORAGE_CLASS)
    assert not prod_plan.of_type("pulumi:providers:kubernetes")
