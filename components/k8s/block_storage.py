"""The block StorageClass a cloud composition hands to the Kubernetes layer: the provisioner and parameters the cloud's
block storage CSI driver documents, encrypted with the region's key. Imports no Kubernetes SDK: each composition
builds it from the region's key and hands it over in the `ClusterHandle`; the layer creates it
(`storage.BlockStorageClass`) and Prometheus's and Alertmanager's volumes use it.

EBS (`ebs.csi.aws.com`, aws-ebs-csi-driver docs/parameters.md), the cluster's default class (EKS has none of its own):
`type` gp3, `encrypted` "true" with `kmsKeyId` the full ARN of the region's key (without it EBS uses the account's
`aws/ebs` key), `csi.storage.k8s.io/fstype` ext4 (the driver's default, stated: the parameter is case sensitive).
gp3's baseline of 3,000 IOPS and 125 MiB/s whatever the size.

GKE (`pd.csi.storage.gke.io`, which the GCP cluster turns on) and AKS (`disk.csi.azure.com`) come with default classes
of their own (`standard-rwo`, `default`), which the platform creates and owns, encrypted with Google- and
platform-managed keys. Un-marking them would mean editing objects the platform manages; marking ours default too
would leave two defaults, of which Kubernetes gives claims the newest (with a warning), so an unnamed claim's class
would hang on creation order. So the layer's classes there are not default: claims that want the region's key name
them (Prometheus's and Alertmanager's do), and the cloud's own class stays every other claim's:
- `pd-balanced-cmek`: `type` pd-balanced (as `standard-rwo`), `disk-encryption-kms-key` the region's Cloud KMS key
  (its full resource name; the PD CSI driver's `ParameterKeyDiskEncryptionKmsKey`, GKE docs "Use customer-managed
  encryption keys (CMEK)"), which the Compute Engine service agent may use (the GCP composition's `compute` key
  user, components/gcp/kms.py). `hyperdisk-balanced-cmek` (`type` hyperdisk-balanced) instead where the system pool's
  machine series attaches no Persistent Disk (components/gcp/cluster.py `HYPERDISK_ONLY`): Prometheus runs there.
- `managed-csi-cmk`: `skuName` StandardSSD_LRS (as AKS's `default`/`managed-csi`: every VM size attaches it, where
  Premium_LRS needs a size with premium storage, and the system pool's size is the user's), `diskEncryptionSetID` the
  region's disk encryption set (the node disks' own), which the cluster identity reads (`-aks-des-reader`: the driver
  needs `Microsoft.Compute/diskEncryptionSets/read` on it, kubernetes-sigs/azuredisk-csi-driver
  docs/driver-parameters.md, "required permissions for CSI driver controller"; learn.microsoft.com/azure/aks/
  azure-disk-customer-managed-keys: "the AKS cluster identity has read access to the DiskEncryptionSet").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi

EBS_PROVISIONER = "ebs.csi.aws.com"
EBS_CLASS = "gp3-encrypted"
PD_PROVISIONER = "pd.csi.storage.gke.io"
AZURE_DISK_PROVISIONER = "disk.csi.azure.com"
AZURE_DISK_CLASS = "managed-csi-cmk"
AZURE_DISK_SKU = "StandardSSD_LRS"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
FSTYPE = "csi.storage.k8s.io/fstype"


@dataclass(frozen=True)
class StorageClassSpec:
    """A StorageClass the layer creates."""

    name: str
    """The StorageClass's name, which claims name."""
    provisioner: str
    parameters: Mapping[str, pulumi.Input[str]]
    driver: pulumi.Resource | None = field(default=None, compare=False)
    """What installs the CSI driver (the EBS CSI add-on); the class waits for it. Default none (a managed driver)."""
    default: bool = True
    """Marked as the cluster's default class (claims without `storageClassName` get it). Default on."""


def ebs_storage_class(kms_key_arn: pulumi.Input[str], driver: pulumi.Resource | None = None) -> StorageClassSpec:
    """gp3 volumes encrypted with `kms_key_arn` (the region's key, an ARN as `kmsKeyId` requires); the default class."""
    return StorageClassSpec(EBS_CLASS, EBS_PROVISIONER, {"type": "gp3", "encrypted": "true", "kmsKeyId": kms_key_arn,
                                                          FSTYPE: "ext4"}, driver)


def pd_storage_class(kms_key_id: pulumi.Input[str], disk_type: str = "pd-balanced") -> StorageClassSpec:
    """Balanced disks (`disk_type`: pd-balanced, or hyperdisk-balanced) encrypted with `kms_key_id`, the region's key as
    `projects/<p>/locations/<region>/keyRings/<ring>/cryptoKeys/<key>`; not default."""
    return StorageClassSpec(f"{disk_type}-cmek", PD_PROVISIONER,
                            {"type": disk_type, "disk-encryption-kms-key": kms_key_id, FSTYPE: "ext4"}, default=False)


def azure_disk_storage_class(disk_encryption_set_id: pulumi.Input[str]) -> StorageClassSpec:
    """Standard SSD managed disks encrypted through `disk_encryption_set_id` (the region's DES, its ARM ID); not default."""
    return StorageClassSpec(AZURE_DISK_CLASS, AZURE_DISK_PROVISIONER,
                            {"skuName": AZURE_DISK_SKU, "diskEncryptionSetID": disk_encryption_set_id, FSTYPE: "ext4"},
                            default=False)
