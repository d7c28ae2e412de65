"""The default StorageClass the layer makes on EKS clusters (which have none of their own): gp3 encrypted with the
region's key, bound where the first pod runs, expandable, volumes kept after their claims outside dev; none on GKE and
AKS, whose clusters bring theirs."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
from k8s.layer import KMS_KEY_ARN, LUSTRE_CLOUDS, plan_clouds

from aiinfra.plan.runtime import PlanResult
from components.k8s.block_storage import DEFAULT_CLASS_ANNOTATION, EBS_CLASS, EBS_PROVISIONER

STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"


def test_eks_gets_a_default_gp3_class_encrypted_with_the_regions_key(three_cloud_plan: PlanResult) -> None:
    record = three_cloud_plan.one(STORAGE_CLASS, f"{AWS}-block-storage-default-class")
    inputs = record.inputs
    assert inputs["metadata"] == {"name": "gp3-encrypted", "labels": {"app.kubernetes.io/managed-by": "ai-infra"},
                                  "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}
    assert DEFAULT_CLASS_ANNOTATION == "storageclass.kubernetes.io/is-default-class" and EBS_CLASS == "gp3-encrypted"
    assert inputs["provisioner"] == EBS_PROVISIONER == "ebs.csi.aws.com"
    # aws-ebs-csi-driver docs/parameters.md: kmsKeyId must be the key's full ARN; fstype is case sensitive.
    assert inputs["parameters"] == {"type": "gp3", "encrypted": "true", "kmsKeyId": KMS_KEY_ARN,
                                    "csi.storage.k8s.io/fstype": "ext4"}
    # An EBS volume lives in one zone: created where the first pod is scheduled, not before.
    assert inputs["volumeBindingMode"] == "WaitForFirstConsumer"
    assert inputs["allowVolumeExpansion"] is True
    # `test` is protected (not dev): deleting a claim keeps its volume.
    assert inputs["reclaimPolicy"] == "Retain"
    # After the driver (the EBS CSI add-on), and gone with the cluster rather than deleted through its API.
    addon = three_cloud_plan.one("test:index:Addon", f"{AWS}-ebs-csi")
    assert addon.urn in record.dependencies
    assert record.deletedWith == three_cloud_plan.one("test:index:Cluster", AWS).urn
    assert record.parent.endswith(f"ai-infra:kubernetes:DefaultStorageClass::{AWS}-block-storage")
    assert three_cloud_plan.outputs["kubernetes"][AWS]["default_storage_class"] == {
        "name": "gp3-encrypted", "reclaim_policy": "Retain"}


def test_in_dev_a_deleted_claim_deletes_its_volume(planner: Callable[..., PlanResult]) -> None:
    for top in ({"environment": "dev"}, {"protect_stateful": False}):
        plan = planner(clouds=("aws",), **top)
        assert plan.one(STORAGE_CLASS).inputs["reclaimPolicy"] == "Delete", top
    # A protected dev keeps them.
    plan = planner(clouds=("aws",), environment="dev", protect_stateful=True)
    assert plan.one(STORAGE_CLASS).inputs["reclaimPolicy"] == "Retain"


def test_gke_and_aks_keep_their_own_default_class(three_cloud_plan: PlanResult) -> None:
    # GKE's standard-rwo and AKS's default: the layer makes no class there, and claims name none.
    assert [r.name for r in three_cloud_plan.of_type(STORAGE_CLASS)] == [f"{AWS}-block-storage-default-class"]
    for cluster in (GCP, AZURE):
        assert "default_storage_class" not in three_cloud_plan.outputs["kubernetes"][cluster]


@pytest.fixture(scope="module")
def composed() -> PlanResult:
    """One cluster per cloud through the real compositions."""
    clouds = copy.deepcopy(LUSTRE_CLOUDS)
    for cloud in clouds.values():
        for region in cloud["regions"].values():
            del region["lustre"]
    return plan_clouds(clouds, {"research": {"gpu_quota": 8}})


def test_only_the_aws_composition_hands_over_a_class(composed: PlanResult) -> None:
    [record] = composed.of_type(STORAGE_CLASS)
    assert record.name == f"{AWS}-block-storage-default-class"
    key = composed.one("aws:kms/key:Key", f"{AWS}-key").urn
    assert record.propertyDependencies["parameters"] == [key]  # kmsKeyId: the region's key
    assert composed.one("aws:eks/addon:Addon", f"{AWS}-ebs-csi").urn in record.dependencies
    kubernetes = composed.outputs["kubernetes"]
    assert [c for c in kubernetes if "default_storage_class" in kubernetes[c]] == [AWS]
