"""The block StorageClass the layer makes on every cluster, encrypted with the region's key: EKS's default class (the
cluster has none of its own), and on GKE and AKS a named class beside the platform's default one (`pd-balanced-cmek`,
`managed-csi-cmk`). All bind where the first pod runs, expand, and keep volumes after their claims outside dev."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from k8s.layer import DISK_ENCRYPTION_SET, GCP_KMS_KEY, KMS_KEY_ARN, LUSTRE_CLOUDS, plan_clouds

from aiinfra.plan.runtime import PlanResult
from components.k8s.block_storage import DEFAULT_CLASS_ANNOTATION, EBS_CLASS, EBS_PROVISIONER

STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"
MANAGED_BY = {"app.kubernetes.io/managed-by": "ai-infra"}


def test_eks_gets_a_default_gp3_class_encrypted_with_the_regions_key(three_cloud_plan: PlanResult) -> None:
    record = three_cloud_plan.one(STORAGE_CLASS, f"{AWS}-block-storage-class")
    inputs = record.inputs
    assert inputs["metadata"] == {"name": "gp3-encrypted", "labels": MANAGED_BY,
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
    assert record.parent.endswith(f"ai-infra:kubernetes:BlockStorageClass::{AWS}-block-storage")
    assert three_cloud_plan.outputs["kubernetes"][AWS]["storage_class"] == {
        "name": "gp3-encrypted", "default": True, "reclaim_policy": "Retain"}


@pytest.mark.parametrize(("cluster", "name", "provisioner", "parameters"), [
    # pd.csi.storage.gke.io: `disk-encryption-kms-key` is the key's resource name (the driver's
    # ParameterKeyDiskEncryptionKmsKey); pd-balanced as GKE's own standard-rwo.
    (GCP, "pd-balanced-cmek", "pd.csi.storage.gke.io",
     {"type": "pd-balanced", "disk-encryption-kms-key": GCP_KMS_KEY, "csi.storage.k8s.io/fstype": "ext4"}),
    # disk.csi.azure.com: the region's disk encryption set by ARM ID; Standard SSD as AKS's own `default`.
    (AZURE, "managed-csi-cmk", "disk.csi.azure.com",
     {"skuName": "StandardSSD_LRS", "diskEncryptionSetID": DISK_ENCRYPTION_SET, "csi.storage.k8s.io/fstype": "ext4"}),
])
def test_gke_and_aks_get_a_named_class_encrypted_with_the_regions_key(
        three_cloud_plan: PlanResult, cluster: str, name: str, provisioner: str, parameters: dict[str, Any]) -> None:
    record = three_cloud_plan.one(STORAGE_CLASS, f"{cluster}-block-storage-class")
    inputs = record.inputs
    # Not default: GKE's standard-rwo and AKS's default keep that, so no claim's class hangs on creation order.
    assert inputs["metadata"] == {"name": name, "labels": MANAGED_BY}
    assert (inputs["provisioner"], inputs["parameters"]) == (provisioner, parameters)
    assert inputs["volumeBindingMode"] == "WaitForFirstConsumer" and inputs["allowVolumeExpansion"] is True
    assert inputs["reclaimPolicy"] == "Retain"
    assert record.deletedWith == three_cloud_plan.one("test:index:Cluster", cluster).urn
    assert record.parent.endswith(f"ai-infra:kubernetes:BlockStorageClass::{cluster}-block-storage")
    kubernetes = three_cloud_plan.outputs["kubernetes"][cluster]
    assert kubernetes["storage_class"] == {"name": name, "default": False, "reclaim_policy": "Retain"}


def test_in_dev_a_deleted_claim_deletes_its_volume(planner: Callable[..., PlanResult]) -> None:
    for top in ({"environment": "dev"}, {"protect_stateful": False}):
        plan = planner(**top)
        assert {r.inputs["reclaimPolicy"] for r in plan.of_type(STORAGE_CLASS)} == {"Delete"}, top
    # A protected dev keeps them.
    plan = planner(environment="dev", protect_stateful=True)
    assert {r.inputs["reclaimPolicy"] for r in plan.of_type(STORAGE_CLASS)} == {"Retain"}


@pytest.fixture(scope="module")
def composed() -> PlanResult:
    """One cluster per cloud through the real compositions."""
    clouds = copy.deepcopy(LUSTRE_CLOUDS)
    for cloud in clouds.values():
        for region in cloud["regions"].values():
            del region["lustre"]
    return plan_clouds(clouds, {"research": {"gpu_quota": 8}})


def test_every_composition_hands_over_a_class_of_the_regions_key(composed: PlanResult) -> None:
    classes = {r.name: r for r in composed.of_type(STORAGE_CLASS)}
    assert set(classes) == {f"{AWS}-block-storage-class", f"{GCP}-block-storage-class", f"{AZURE}-block-storage-class"}
    eks = classes[f"{AWS}-block-storage-class"]
    assert eks.propertyDependencies["parameters"] == [composed.one("aws:kms/key:Key", f"{AWS}-key").urn]  # kmsKeyId
    assert composed.one("aws:eks/addon:Addon", f"{AWS}-ebs-csi").urn in eks.dependencies
    # GKE: the key, resolved once its users hold their grants, the Compute Engine service agent's among them (PD CMEK).
    gke = classes[f"{GCP}-block-storage-class"]
    key = composed.one("gcp:kms/cryptoKey:CryptoKey", f"{GCP}-key")
    compute_grant = composed.one("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", f"{GCP}-key-compute")
    assert compute_grant.inputs["member"].endswith("@compute-system.iam.gserviceaccount.com")
    assert compute_grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    assert {key.urn, compute_grant.urn} <= set(gke.propertyDependencies["parameters"])
    assert gke.inputs["parameters"]["type"] == "pd-balanced"  # the default system pool, e2-standard-4
    # AKS: the node disks' encryption set, which the cluster identity may read (the driver's only need on it).
    aks = classes[f"{AZURE}-block-storage-class"]
    des = composed.one("azure-native:compute:DiskEncryptionSet")
    assert aks.propertyDependencies["parameters"] == [des.urn]
    reader = composed.one("azure-native:authorization:RoleAssignment", f"{AZURE}-aks-des-reader")
    assert reader.propertyDependencies["scope"] == [des.urn]
    assert reader.inputs["roleDefinitionId"].endswith("/acdd72a7-3385-48ef-bd42-f606fba81ae7")  # Reader
    kubernetes = composed.outputs["kubernetes"]
    assert {c: kubernetes[c]["storage_class"]["default"] for c in kubernetes} == {AWS: True, GCP: False, AZURE: False}


def test_a_hyperdisk_only_system_pool_gets_hyperdisk_balanced() -> None:
    """Prometheus runs on the system pool: where its machine series attaches no Persistent Disk (C4, N4, ...), the
    class makes Hyperdisk Balanced volumes, as the pool's boot disks are."""
    clouds = {"gcp": copy.deepcopy(LUSTRE_CLOUDS["gcp"])}
    region = clouds["gcp"]["regions"]["us-central1"]
    del region["lustre"]
    region["cluster"] = {"system_pool": {"instance_type": "n4-standard-8"}}
    plan = plan_clouds(clouds, {"research": {"gpu_quota": 8}})
    record = plan.one(STORAGE_CLASS, f"{GCP}-block-storage-class")
    assert record.inputs["metadata"]["name"] == "hyperdisk-balanced-cmek"
    assert record.inputs["parameters"]["type"] == "hyperdisk-balanced"
    values = plan.one("kubernetes:helm.sh/v3:Release", f"{GCP}-prometheus-stack").inputs["values"]
    claim = values["prometheus"]["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim["storageClassName"] == "hyperdisk-balanced-cmek"
