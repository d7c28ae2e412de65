"""Lustre file systems mountable from the clusters, through the real cloud compositions: the FSx CSI add-on on EKS
clusters of regions with Lustre, and in every team's namespace a claim named after each file system of the region,
bound to a statically provisioned, Retain-policy PersistentVolume carrying the attributes its driver documents."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest
from k8s.layer import LUSTRE_CLOUDS, plan_clouds
from k8s.validation import validate
from pulumi.runtime import rpc

from aiinfra.plan.runtime import PlanResult
from aiinfra.plan import runtime
from components.aws.cluster import FSX_CSI_ADDON
from components.k8s import lustre
from components.k8s.storage import volume_name

pytestmark = pytest.mark.slow

PV, PVC = "kubernetes:core/v1:PersistentVolume", "kubernetes:core/v1:PersistentVolumeClaim"
ADDON = "aws:eks/addon:Addon"
TEAMS = {"research": {"gpu_quota": 0}, "vision": {"gpu_quota": 0}}
CLUSTER = {"aws": "test-us-east-1", "gcp": "test-us-central1", "azure": "test-eastus2"}
FS = {"aws": "train", "gcp": "scratch", "azure": "shared"}


def plan_lustre(clouds: dict[str, Any]) -> PlanResult:
    return plan_clouds(clouds, TEAMS)


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return plan_lustre(LUSTRE_CLOUDS)


@pytest.fixture(scope="module")
def no_lustre() -> PlanResult:
    clouds = copy.deepcopy(LUSTRE_CLOUDS)
    for cloud in clouds.values():
        for region in cloud["regions"].values():
            del region["lustre"]
    return plan_lustre(clouds)


def volume(plan: PlanResult, cloud: str, team: str) -> dict[str, Any]:
    return plan.one(PV, f"{CLUSTER[cloud]}-lustre-{FS[cloud]}-{team}-pv").inputs


def test_fsx_csi_add_on_on_eks_only_where_a_lustre_file_system_exists(plan, no_lustre):
    addon = plan.one(ADDON, "test-us-east-1-fsx-csi")
    inputs = addon.inputs
    assert inputs["addonName"] == FSX_CSI_ADDON == "aws-fsx-csi-driver"
    assert inputs["clusterName"] == "test-us-east-1" and inputs["region"] == "us-east-1"
    assert inputs["resolveConflictsOnCreate"] == inputs["resolveConflictsOnUpdate"] == "OVERWRITE"
    # Static provisioning only: the controller gets no IAM role (no service account role, no pod identity).
    assert "serviceAccountRoleArn" not in inputs and "podIdentityAssociations" not in inputs
    nodes = plan.one("aws:eks/nodeGroup:NodeGroup", "test-us-east-1-system-nodegroup")
    assert nodes.urn in addon.dependencies  # its pods need somewhere to run before EKS reports it active
    assert sorted(a.name for a in no_lustre.of_type(ADDON)) == [
        "test-us-east-1-coredns", "test-us-east-1-ebs-csi", "test-us-east-1-kube-proxy", "test-us-east-1-vpc-cni"]  # no fsx-csi


def test_gke_cluster_enables_the_managed_lustre_csi_driver_only_with_lustre(plan, no_lustre):
    def config(p: PlanResult) -> dict[str, Any]:
        return p.one("gcp:container/cluster:Cluster").inputs["addonsConfig"]["lustreCsiDriverConfig"]
    # Port 6988, as instances created with gke_support_enabled listen on.
    assert config(plan) == {"enabled": True, "enableLegacyLustrePort": True}
    assert config(no_lustre) == {"enabled": False}


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_every_team_gets_a_claim_named_after_the_file_system_bound_to_its_own_volume(plan, cloud):
    fs = FS[cloud]
    for team in TEAMS:
        pv = volume(plan, cloud, team)
        claim_record = plan.one(PVC, f"{CLUSTER[cloud]}-lustre-{fs}-{team}-pvc")
        claim = claim_record.inputs
        assert claim["metadata"]["name"] == fs and claim["metadata"]["namespace"] == team
        assert claim["spec"]["volumeName"] == pv["metadata"]["name"] == volume_name("test", team, fs)
        assert pv["spec"]["claimRef"] == {"namespace": team, "name": fs}
        assert claim["spec"]["storageClassName"] == pv["spec"]["storageClassName"] == ""
        assert claim["spec"]["accessModes"] == pv["spec"]["accessModes"] == ["ReadWriteMany"]
        assert claim["spec"]["resources"]["requests"] == pv["spec"]["capacity"]
        # A grown file system updates the volume's capacity; the bound claim keeps its size: Kubernetes refuses to
        # resize a statically provisioned claim, and would fail the whole `pulumi up`.
        assert claim_record.ignoreChanges == ["spec.resources"]
        assert plan.one(PV, f"{CLUSTER[cloud]}-lustre-{fs}-{team}-pv").ignoreChanges == []
        # Deleting a claim never deletes data: the driver is never asked to delete the volume.
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        namespace = plan.one("kubernetes:core/v1:Namespace", f"{CLUSTER[cloud]}-{team}-namespace")
        assert namespace.urn in claim_record.dependencies
        assert f"::{CLUSTER[cloud]}-k8s::" in claim_record.provider
        validate(pv)
        validate(claim)
    assert plan.outputs["kubernetes"][CLUSTER[cloud]]["lustre_claims"] == {team: [fs] for team in TEAMS}


def test_fsx_volumes_carry_the_file_system_id_dns_name_and_mount_name(plan):
    fs = plan.one("aws:fsx/lustreFileSystem:LustreFileSystem", "test-us-east-1-train-fs")
    pv = volume(plan, "aws", "research")
    csi = pv["spec"]["csi"]
    assert csi["driver"] == lustre.FSX_DRIVER == "fsx.csi.aws.com"
    assert csi["volumeHandle"] == "test-us-east-1-train-fs-id"  # the file system's ID (the mock's ID for it)
    # dnsName and mountName are computed by FSx: unknown in a preview of a new file system, as here.
    assert csi["volumeAttributes"] == {"dnsname": rpc.UNKNOWN, "mountname": rpc.UNKNOWN}
    assert pv["spec"]["mountOptions"] == ["flock"]
    assert fs.urn in plan.one(PV, "test-us-east-1-lustre-train-research-pv").dependencies


def test_gke_volumes_carry_the_instance_handle_ip_and_file_system_name(plan):
    instance = plan.one("gcp:lustre/instance:Instance", "test-us-central1-scratch-lustre").inputs
    csi = volume(plan, "gcp", "vision")["spec"]["csi"]
    assert csi["driver"] == lustre.GKE_DRIVER == "lustre.csi.storage.gke.io"
    assert csi["volumeHandle"] == f"acme-ml-test/{instance['location']}/{instance['instanceId']}"
    assert csi["volumeAttributes"]["filesystem"] == instance["filesystem"] == "scratch"
    # The IP comes from the instance's mountPoint (IP@tcp:/fs), an output only the API knows.
    assert csi["volumeAttributes"]["ip"] == rpc.UNKNOWN


def test_amlfs_volumes_carry_the_mgs_address_and_a_handle_unique_per_file_system(plan):
    csi = volume(plan, "azure", "research")["spec"]["csi"]
    assert csi["driver"] == lustre.AZURE_DRIVER == "azurelustre.csi.azure.com"
    assert csi["volumeHandle"] == "test-eastus2-shared"
    # clientInfo.mgsAddress is computed by Azure: unknown in a preview of a new file system.
    assert csi["volumeAttributes"] == {"mgs-ip-address": rpc.UNKNOWN}
    assert volume(plan, "azure", "research")["spec"]["mountOptions"] == ["noatime", "flock"]


def test_teams_share_one_volume_handle_per_file_system(plan):
    # kubelet names a CSI volume driver^handle: one staged mount per node, whichever teams' pods use it.
    for cloud in CLUSTER:
        handles = {str(volume(plan, cloud, team)["spec"]["csi"]["volumeHandle"]) for team in TEAMS}
        assert len(handles) == 1


def test_nothing_without_lustre(no_lustre):
    assert not no_lustre.of_type(PV) and not no_lustre.of_type(PVC)
    assert not no_lustre.of_type("ai-infra:kubernetes:LustreVolumes")
    assert all("lustre_claims" not in c for c in no_lustre.outputs["kubernetes"].values())


def test_fsx_csi_add_on_takes_eks_default_build_for_the_cluster_kubernetes_version(monkeypatch):
    """Not a pinned build, which EKS stops offering for later Kubernetes versions: the version EKS's getAddonVersion
    gives as the default (not `mostRecent`) for this add-on and the cluster's own Kubernetes version."""
    calls: list[tuple[str, dict[str, Any]]] = []
    answer = runtime.PlanMocks.call

    def recording(self, args):  # type: ignore[no-untyped-def]
        calls.append((args.token, dict(args.args)))
        return answer(self, args)

    monkeypatch.setattr(runtime.PlanMocks, "call", recording)
    plan = plan_lustre({"aws": LUSTRE_CLOUDS["aws"]})
    asked = [a for token, a in calls
             if token == "aws:eks/getAddonVersion:getAddonVersion" and a["addonName"] == FSX_CSI_ADDON]
    assert asked == [{"addonName": FSX_CSI_ADDON, "kubernetesVersion": "1.35", "region": "us-east-1"}]
    eks = plan.one("aws:eks/cluster:Cluster", "test-us-east-1-eks").inputs
    assert eks["version"] == "1.35"
    expected = runtime.PlanMocks().call(pulumi.runtime.MockCallArgs("aws:eks/getAddonVersion:getAddonVersion", asked[0], ""))
    assert plan.one(ADDON, "test-us-east-1-fsx-csi").inputs["addonVersion"] == expected["version"]
