"""Which input changes make a provider replace a resource rather than update it, for bridged types and azure-native
types that hold data or take long to create, and for Kubernetes objects. An azure-native class does not list them
(the pinned SDK sets no replaceOnChanges): the azure-native provider decides at Diff time, from its own metadata, so
those types have entries too (force_new_azure.py).
"""

from __future__ import annotations

from .force_new_azure import AZURE_NATIVE_FORCE_NEW

# Input properties a change to which makes the provider replace the resource, for bridged (and, below, azure-native)
# types that hold data or take long to create (wire names, as the plan records them). Each entry was read in the
# provider's source; what could not be confirmed for the provider versions this project pins is left out (and shows
# as an update):
#   aws:eks/nodeGroup:NodeGroup: ForceNew in
#     https://github.com/hashicorp/terraform-provider-aws/blob/012e0a32f0686212f447447fd3d81c3d0ce256ad/internal/service/eks/node_group.go
#   aws:eks/cluster:Cluster: ForceNew in
#     https://github.com/hashicorp/terraform-provider-aws/blob/00555dc5b38f92abbfa230badea0ed0754cea81e/internal/service/eks/cluster.go
#     (vpcConfig.subnetIds is updatable there)
#   aws:ec2/flowLog:FlowLog: every argument but tags is ForceNew (its Update handles tags only) in
#     https://github.com/hashicorp/terraform-provider-aws/blob/86475b48ed749daf986b84c0f92591eddcced1ba/internal/service/ec2/vpc_flow_log.go
#   aws:fsx/lustreFileSystem:LustreFileSystem: ForceNew in
#     https://github.com/hashicorp/terraform-provider-aws/blob/06ee53d9fed4877dc55cefbe3ba1423b863eda61/internal/service/fsx/lustre_file_system.go
#     (perUnitStorageThroughput is left out: ForceNew there, but pulumi-aws 7.51's own docs say it can be changed
#     unless efaEnabled is set; a smaller storageCapacity replaces too: SHRINK_REPLACES below)
#   aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation: ForceNew in
#     https://github.com/hashicorp/terraform-provider-aws/blob/a0edd9bd24d4d2b75c517880f2c149c8994bd02c/internal/service/fsx/data_repository_association.go
#   aws:s3/bucket:Bucket, aws:s3/bucketV2:BucketV2 (both aws_s3_bucket): ForceNew in
#     https://github.com/hashicorp/terraform-provider-aws/blob/0070bcd12c952f14c5434a6f351ef7b6fa791226/internal/service/s3/bucket.go
#   gcp:storage/bucket:Bucket: ForceNew in
#     https://github.com/hashicorp/terraform-provider-google/blob/e03b7622a26cf4e878f90bdccaca6aa3d03a7999/google/services/storage/resource_storage_bucket.go
#   gcp:container/cluster:Cluster: ForceNew in
#     https://github.com/hashicorp/terraform-provider-google/blob/e03b7622a26cf4e878f90bdccaca6aa3d03a7999/google/services/container/resource_container_cluster.go
#   gcp:container/nodePool:NodePool: ForceNew in .../google/services/container/resource_container_node_pool.go and,
#     for nodeConfig, .../google/services/container/node_config.go (same commit). nodeConfig.machineType, diskSizeGb
#     and diskType are not: GKE updates them in place
#   gcp:lustre/instance:Instance: ForceNew in .../google/services/lustre/resource_lustre_instance.go (same commit)
#   kubernetes: pulumi-kubernetes' force-new table, every kind's metadata.name and metadata.namespace plus the kinds'
#     own fields, and a Helm release's name and namespace:
#     https://github.com/pulumi/pulumi-kubernetes/blob/94977969d64112b04e19945818a7d5d5f38f631d/provider/pkg/provider/diff.go
#     https://github.com/pulumi/pulumi-kubernetes/blob/94977969d64112b04e19945818a7d5d5f38f631d/provider/pkg/provider/helm_release.go
_AWS_BUCKET = ("bucket", "bucketPrefix")
FORCE_NEW: dict[str, tuple[str, ...]] = {
    "aws:eks/nodeGroup:NodeGroup": ("amiType", "capacityType", "clusterName", "diskSize", "instanceTypes",
                                    "launchTemplate.id", "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix",
                                    "nodeRoleArn", "remoteAccess", "subnetIds"),
    "aws:eks/cluster:Cluster": ("name", "roleArn", "bootstrapSelfManagedAddons",
                                "accessConfig.bootstrapClusterCreatorAdminPermissions",
                                "kubernetesNetworkConfig.ipFamily", "kubernetesNetworkConfig.serviceIpv4Cidr"),
    "aws:fsx/lustreFileSystem:LustreFileSystem": ("deploymentType", "kmsKeyId", "subnetIds", "securityGroupIds",
                                                  "storageType", "backupId", "importPath", "exportPath",
                                                  "importedFileChunkSize", "driveCacheType", "copyTagsToBackups"),
    "aws:ec2/flowLog:FlowLog": ("destinationOptions", "eniId", "iamRoleArn", "logDestination", "logDestinationType",
                                "logFormat", "logGroupName", "maxAggregationInterval", "subnetId", "trafficType", "vpcId"),
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": ("dataRepositoryPath", "fileSystemId",
                                                                    "fileSystemPath"),
    "aws:s3/bucket:Bucket": _AWS_BUCKET,
    "aws:s3/bucketV2:BucketV2": _AWS_BUCKET,
    "gcp:storage/bucket:Bucket": ("name", "location", "project", "enableObjectRetention"),
    "gcp:container/cluster:Cluster": ("name", "location", "project", "network", "subnetwork", "networkingMode",
                                      "datapathProvider", "enableAutopilot", "enableTpu", "ipAllocationPolicy"),
    "gcp:container/nodePool:NodePool": ("name", "namePrefix", "location", "cluster", "project", "maxPodsPerNode",
                                        "placementPolicy.policyName", "nodeConfig.guestAccelerators",
                                        "nodeConfig.spot", "nodeConfig.preemptible", "nodeConfig.serviceAccount",
                                        "nodeConfig.oauthScopes", "nodeConfig.reservationAffinity",
                                        "nodeConfig.bootDiskKmsKey", "nodeConfig.localSsdCount", "nodeConfig.metadata",
                                        "nodeConfig.shieldedInstanceConfig"),
    "gcp:lustre/instance:Instance": ("instanceId", "location", "project", "network", "filesystem",
                                     "perUnitStorageThroughput", "kmsKey"),
    "kubernetes:core/v1:PersistentVolumeClaim": ("spec.accessModes", "spec.selector", "spec.storageClassName",
                                                 "spec.volumeName"),
    "kubernetes:core/v1:PersistentVolume": ("spec.csi", "spec.nfs", "spec.hostPath"),
    "kubernetes:storage.k8s.io/v1:StorageClass": ("parameters", "provisioner"),
    "kubernetes:apps/v1:Deployment": ("spec.selector",),
    "kubernetes:apps/v1:DaemonSet": ("spec.selector",),
    "kubernetes:apps/v1:StatefulSet": ("spec.podManagementPolicy", "spec.revisionHistoryLimit", "spec.selector",
                                       "spec.serviceName", "spec.volumeClaimTemplates"),
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": ("roleRef",),
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": ("roleRef",),
    "kubernetes:core/v1:Service": ("spec.clusterIP",),
    # Replaced unless the provider sets enableConfigMapMutable, which this project's providers do not (default off).
    "kubernetes:core/v1:ConfigMap": ("data", "binaryData"),
    "kubernetes:core/v1:ResourceQuota": ("spec.scopes",),
    "kubernetes:helm.sh/v3:Release": ("name", "namespace"),
    # azure-native: sources and what was left out in force_new_azure.py.
    **AZURE_NATIVE_FORCE_NEW,
}
_KUBERNETES_IDENTITY = ("metadata.name", "metadata.namespace")

SHRINK_REPLACES: dict[str, tuple[str, ...]] = {
    # resourceLustreFileSystemSchemaCustomizeDiff (lustre_file_system.go, same commit as above): "force a new resource
    # if the new storage capacity is less than the old one"; FSx grows a file system in place and cannot shrink it.
    "aws:fsx/lustreFileSystem:LustreFileSystem": ("storageCapacity",),
}
"""Numeric inputs a smaller value of which replaces the resource, while a larger one updates it."""


def force_new_paths(type_: str) -> tuple[str, ...]:
    """The table's paths for `type_`; for any Kubernetes object (not a patch, not a Helm release) its name and
    namespace too."""
    paths = FORCE_NEW.get(type_, ())
    if type_.startswith("kubernetes:") and type_ != "kubernetes:helm.sh/v3:Release" and not type_.endswith("Patch"):
        paths = _KUBERNETES_IDENTITY + paths
    return paths
