"""Kubernetes version upgrades on EKS: node groups and add-ons follow the control plane's version, kube-proxy and
CoreDNS are EKS add-ons (EKS never upgrades its self-managed copies), the support policy is explicit; and the Cluster
Autoscaler's GPU label on NVIDIA pools."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from aiinfra.plan import runtime
from aiinfra.plan.runtime import PlanResult
from components import catalog
from components.aws.node_group import AUTOSCALER_GPU_LABEL, autoscaler_gpu_labels
from components.spec import GpuPoolSpec, MigStrategy

EAST = "prod-us-east-1"
WEST = "prod-eu-west-1"
ADDON = "aws:eks/addon:Addon"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ADDON_VERSION = "aws:eks/getAddonVersion:getAddonVersion"


def default_build(addon: str, version: str, region: str = "us-east-1") -> str:
    """What the plan's getAddonVersion answers for the add-on's default build on `version`."""
    args = {"addonName": addon, "kubernetesVersion": version, "region": region}
    return runtime.PlanMocks().call(pulumi.runtime.MockCallArgs(ADDON_VERSION, args, ""))["version"]


def test_every_node_group_runs_the_clusters_kubernetes_version(prod_plan: PlanResult) -> None:
    """Without `version` EKS takes the cluster's at creation and the provider never updates it: after a control-plane
    upgrade the groups stay a minor behind, and EKS refuses the next minor ("Nodegroups must be updated to match
    cluster version")."""
    groups = prod_plan.of_type(NODE_GROUP)
    assert len(groups) == 6  # system, h100-train, trn2-train, l4-spot; system and serve in eu-west-1
    assert {g.name: g.inputs["version"] for g in groups} == {g.name: "1.35" for g in groups}


def test_pools_on_reserved_capacity_are_updated_terminate_first(prod_plan: PlanResult) -> None:
    """A full Capacity Block or reservation has no room for the extra instances EKS's default strategy launches before
    terminating the old ones: those pools update MINIMAL (terminate first); the others keep EKS's default."""
    strategies = {g.name: g.inputs["updateConfig"].get("updateStrategy") for g in prod_plan.of_type(NODE_GROUP)}
    assert strategies.pop("prod-us-east-1-h100-train-nodegroup") == "MINIMAL"  # capacity_block
    assert set(strategies.values()) == {None}
    assert all(g.inputs["updateConfig"]["maxUnavailable"] == 1 for g in prod_plan.of_type(NODE_GROUP))


def test_a_kubernetes_upgrade_moves_node_groups_and_add_ons(plan_aws) -> None:  # noqa: ANN001
    calls: list[dict[str, Any]] = []
    answer = runtime.PlanMocks.call

    def recording(self, args):  # type: ignore[no-untyped-def]
        if args.token == ADDON_VERSION:
            calls.append(dict(args.args))
        return answer(self, args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime.PlanMocks, "call", recording)
        plan = plan_aws({"regions": {"us-west-2": {
            "network": {"cidr": "10.9.0.0/16"}, "cluster": {"kubernetes_version": "1.34"},
            "gpu_pools": {"l4": {"accelerator": "l4", "max_nodes": 2}}}}})
    assert plan.one("aws:eks/cluster:Cluster").inputs["version"] == "1.34"
    assert {g.inputs["version"] for g in plan.of_type(NODE_GROUP)} == {"1.34"}
    assert sorted(c["addonName"] for c in calls) == ["aws-ebs-csi-driver", "coredns", "kube-proxy", "vpc-cni"]
    assert {(c["kubernetesVersion"], c["region"]) for c in calls} == {("1.34", "us-west-2")}
    assert not [c for c in calls if "mostRecent" in c]  # EKS's default build for that version, never a newer one
    versions = {a.inputs["addonName"]: a.inputs["addonVersion"] for a in plan.of_type(ADDON)}
    assert versions == {name: default_build(name, "1.34", "us-west-2")
                        for name in ("vpc-cni", "kube-proxy", "coredns", "aws-ebs-csi-driver")}


def test_kube_proxy_and_coredns_are_eks_add_ons_taking_over_the_bootstrap_copies(prod_plan: PlanResult) -> None:
    for name in ("kube-proxy", "coredns"):
        addon = prod_plan.one(ADDON, f"{EAST}-{name}")
        assert addon.inputs["addonName"] == name and addon.inputs["addonVersion"] == default_build(name, "1.35")
        # OVERWRITE adopts the copy EKS installed with the cluster (existing clusters too); PRESERVE keeps in-cluster
        # tuning through later version updates; removing the add-on from code leaves DNS and kube-proxy running.
        assert addon.inputs["resolveConflictsOnCreate"] == "OVERWRITE"
        assert addon.inputs["resolveConflictsOnUpdate"] == "PRESERVE"
        assert addon.inputs["preserve"] is True and addon.inputs["region"] == "us-east-1"
        assert "serviceAccountRoleArn" not in addon.inputs and "configurationValues" not in addon.inputs
    assert {a.name for a in prod_plan.of_type(ADDON)} == {
        f"{region}-{name}" for region in (EAST, WEST) for name in ("vpc-cni", "kube-proxy", "coredns", "ebs-csi")} | {
        f"{EAST}-fsx-csi"}


def test_the_vpc_cni_gets_the_default_build_of_the_clusters_version(prod_plan: PlanResult) -> None:
    cni = prod_plan.one(ADDON, f"{EAST}-vpc-cni").inputs
    assert cni["addonVersion"] == default_build("vpc-cni", "1.35")
    assert (cni["resolveConflictsOnCreate"], cni["resolveConflictsOnUpdate"]) == ("OVERWRITE", "OVERWRITE")


def test_coredns_waits_for_the_system_nodes_and_every_group_for_kube_proxy(prod_plan: PlanResult) -> None:
    # CoreDNS created without nodes stays DEGRADED until the create times out; kube-proxy serves every node.
    system = prod_plan.one(NODE_GROUP, f"{EAST}-system-nodegroup")
    assert system.urn in prod_plan.one(ADDON, f"{EAST}-coredns").dependencies
    kube_proxy = prod_plan.one(ADDON, f"{EAST}-kube-proxy").urn
    assert [g.name for g in prod_plan.of_type(NODE_GROUP) if g.name.startswith(EAST) and kube_proxy not in g.dependencies] == []


def test_the_support_policy_is_explicit_extended(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    # EXTENDED is EKS's default; STANDARD would let EKS upgrade the cluster at the end of standard support, outside Pulumi.
    for plan, name in ((prod_plan, f"{EAST}-eks"), (dev_plan, "dev-us-east-1-eks")):
        assert plan.one("aws:eks/cluster:Cluster", name).inputs["upgradePolicy"] == {"supportType": "EXTENDED"}


def test_nvidia_pools_carry_the_autoscalers_gpu_label(prod_plan: PlanResult) -> None:
    labels = {g.name: g.inputs["labels"] for g in prod_plan.of_type(NODE_GROUP)}
    assert labels[f"{EAST}-h100-train-nodegroup"][AUTOSCALER_GPU_LABEL] == "nvidia-h100-80gb"
    assert labels[f"{EAST}-l4-spot-nodegroup"][AUTOSCALER_GPU_LABEL] == "nvidia-l4"
    assert labels[f"{WEST}-serve-nodegroup"][AUTOSCALER_GPU_LABEL] == "nvidia-l40s"
    # Neuron devices are not GPUs to the autoscaler; the system pool has no accelerator.
    assert AUTOSCALER_GPU_LABEL not in labels[f"{EAST}-trn2-train-nodegroup"]
    assert AUTOSCALER_GPU_LABEL not in labels[f"{EAST}-system-nodegroup"]


def test_the_gpu_label_key_is_the_autoscalers() -> None:
    # kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/aws_cloud_provider.go: GPULabel
    assert AUTOSCALER_GPU_LABEL == "k8s.amazonaws.com/accelerator"


@pytest.mark.parametrize(("sharing", "strategy", "labelled"), [
    ({"mode": "mig", "mig_profile": "1g.10gb"}, MigStrategy.SINGLE, True),
    # Mixed MIG advertises nvidia.com/mig-<profile> only: labelled, the nodes would count as unready for good.
    ({"mode": "mig", "mig_profile": "1g.10gb"}, MigStrategy.MIXED, False),
    ({"mode": "time_slicing", "replicas_per_gpu": 4}, MigStrategy.MIXED, True),
    ({}, MigStrategy.MIXED, True),
])
def test_the_gpu_label_under_mig_strategies(sharing: dict, strategy: MigStrategy, labelled: bool) -> None:
    pool = GpuPoolSpec.model_validate({"accelerator": "h100-80gb", "accelerators_per_node": 8, "sharing": sharing})
    row = catalog.resolve_instance("aws", "h100-80gb", 8)
    assert autoscaler_gpu_labels(row, pool, strategy) == ({AUTOSCALER_GPU_LABEL: "nvidia-h100-80gb"} if labelled else {})


def test_mixed_mig_pools_go_without_the_gpu_label_in_the_plan(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}, "gpu_pools": {
        "mig": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 1,
                "sharing": {"mode": "mig", "mig_profile": "1g.10gb"}}}}}},
        addons={"enabled": False, "mig_strategy": "mixed"})
    assert AUTOSCALER_GPU_LABEL not in plan.one(NODE_GROUP, "test-us-east-1-mig-nodegroup").inputs["labels"]
