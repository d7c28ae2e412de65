"""The default StorageClass a cloud composition hands to the Kubernetes layer where the cluster has none (EKS): the
provisioner and parameters the cloud's block storage CSI driver documents. Imports no Kubernetes SDK: the AWS
composition builds it from the region's key and the driver add-on, and hands it over in the `ClusterHandle`.

GKE and AKS need none: their clusters come with a default class (GKE `standard-rwo`, the Compute Engine persistent
disk CSI driver; AKS `default`, Azure Disk CSI).

EBS (`ebs.csi.aws.com`, aws-ebs-csi-driver docs/parameters.md): `type` gp3, `encrypted` "true" with `kmsKeyId` the
full ARN of the region's key (without it EBS uses the account's `aws/ebs` key), `csi.storage.k8s.io/fstype` ext4 (the
driver's default, stated: the parameter is case sensitive). gp3's baseline of 3,000 IOPS and 125 MiB/s whatever the size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi

EBS_PROVISIONER = "ebs.csi.aws.com"
EBS_CLASS = "gp3-encrypted"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


@dataclass(frozen=True)
class StorageClassSpec:
    """A StorageClass the layer creates as the cluster's default."""

    name: str
    """The StorageClass's name: claims without `storageClassName` get it; others may name it."""
    provisioner: str
    parameters: Mapping[str, pulumi.Input[str]]
    driver: pulumi.Resource | None = field(default=None, compare=False)
    """What installs the CSI driver (the EBS CSI add-on); the class waits for it. Default none."""


def ebs_storage_class(kms_key_arn: pulumi.Input[str], driver: pulumi.Resource | None = None) -> StorageClassSpec:
    """gp3 volumes encrypted with `kms_key_arn` (the region's key, an ARN as `kmsKeyId` requires)."""
    return StorageClassSpec(EBS_CLASS, EBS_PROVISIONER, {"type": "gp3", "encrypted": "true", "kmsKeyId": kms_key_arn,
                                                          "csi.storage.k8s.io/fstype": "ext4"}, driver)
