"""FSx for Lustre: PERSISTENT_2 (or SCRATCH_2 for dev) in one private subnet, KMS-encrypted, Lustre ports open to
the cluster only, logs in a KMS-encrypted log group, daily backups when protected and not linked to a bucket, and a
data repository association to an S3 prefix with automatic import and export (deletions are imported, never
exported)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components import catalog
from components.spec import LustreSpec
from components.spec.storage import bucket_folder

from .context import AwsContext

LUSTRE_VERSION = "2.15"
# Lustre traffic: 988 (LNet) and 1018-1023 (FSx for Lustre "Security group rules" in the Lustre user guide).
LUSTRE_PORTS = ((988, 988), (1018, 1023))
# The bucket's changes reach the file system, deletions too (the file system is the bucket's working copy)...
IMPORT_EVENTS = ["NEW", "CHANGED", "DELETED"]
# ...but a deletion on the file system never deletes from the bucket (FSx's DELETED export event would): a job that
# clears its scratch space, or an `rm -r` in the wrong directory, must not remove the dataset the bucket holds.
EXPORT_EVENTS = ["NEW", "CHANGED"]
PERSISTENT = "PERSISTENT_2"
# Automatic daily backups of a protected file system without a bucket, the only copy of its data: FSx keeps none
# unless asked (CreateFileSystemLustreConfiguration AutomaticBackupRetentionDays: "The default is 0"). A week of
# daily backups to restore from after a bad write. Linked file systems get none: FSx backs up only persistent file
# systems "not linked to a data repository" (CreateBackup); their bucket holds the data.
BACKUP_RETENTION_DAYS = 7


@dataclass(frozen=True)
class BucketLink:
    bucket: pulumi.Input[str]
    """Physical name of the linked bucket."""
    prefix: str
    """Prefix inside the bucket linked to the file system root ('' = the whole bucket)."""


@dataclass(frozen=True)
class LustreArgs:
    context: AwsContext
    spec: LustreSpec
    tier: catalog.LustreTier
    """The catalog tier (deployment type, throughput), validated by the spec checks."""
    vpc_id: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    """FSx for Lustre file systems live in one subnet (one zone). Used at creation only: a later value is ignored."""
    kms_key_arn: pulumi.Input[str]
    log_retention_days: int
    client_security_group_id: pulumi.Input[str] | None = None
    """The cluster's security group: the only clients admitted. Default: none (see `client_cidrs`)."""
    client_cidrs: Sequence[str] = ()
    """Client ranges when the region has no cluster (its private node subnets). Default none."""
    link: BucketLink | None = None
    """S3 data repository association. Default: none."""


class Lustre(pulumi.ComponentResource):
    """`ai-infra:aws:Lustre`. Children: `<name>-sg`, `<name>-nodes-from-lustre-<port>` (cluster side), `<name>-logs`,
    `<name>-fs` (protected and kept outside dev; its subnet is fixed at creation), `<name>-s3-link`."""

    filesystem: aws.fsx.LustreFileSystem

    def __init__(self, name: str, args: LustreArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:Lustre", name, None, opts)
        ctx, spec, tier = args.context, args.spec, args.tier
        child = pulumi.ResourceOptions(parent=self)
        clients = [args.client_security_group_id] if args.client_security_group_id is not None else []

        def rules(kind: type, description: str) -> list:  # noqa: ANN001
            return [kind(protocol="tcp", from_port=low, to_port=high, self=True, security_groups=clients or None,
                         cidr_blocks=list(args.client_cidrs) or None, description=description)
                    for low, high in LUSTRE_PORTS]

        group = aws.ec2.SecurityGroup(f"{name}-sg", aws.ec2.SecurityGroupArgs(
            vpc_id=args.vpc_id, description=f"Lustre traffic of {name}: its servers and the cluster only",
            ingress=rules(aws.ec2.SecurityGroupIngressArgs, "Lustre from its servers and the cluster"),
            egress=rules(aws.ec2.SecurityGroupEgressArgs, "Lustre to its servers and the cluster"),
            tags={"Name": f"{name}-lustre"}, region=ctx.region), opts=child)
        if args.client_security_group_id is not None:
            # Lustre servers also open connections to their clients (Lustre client rules in the FSx guide).
            for low, high in LUSTRE_PORTS:
                aws.vpc.SecurityGroupIngressRule(f"{name}-nodes-from-lustre-{low}", aws.vpc.SecurityGroupIngressRuleArgs(
                    security_group_id=args.client_security_group_id, referenced_security_group_id=group.id,
                    ip_protocol="tcp", from_port=low, to_port=high, description=f"Lustre from {name}", region=ctx.region),
                    opts=child)
        logs = aws.cloudwatch.LogGroup(f"{name}-logs", aws.cloudwatch.LogGroupArgs(
            name=f"/aws/fsx/lustre/{name}", kms_key_id=args.kms_key_arn, retention_in_days=args.log_retention_days,
            region=ctx.region), opts=ctx.stateful(self))
        persistent = tier.service_name == PERSISTENT
        backups = persistent and ctx.protected and args.link is None
        self.filesystem = aws.fsx.LustreFileSystem(f"{name}-fs", aws.fsx.LustreFileSystemArgs(
            storage_capacity=spec.size_gib, storage_type="SSD", deployment_type=tier.service_name,
            # subnet_ids is one ID in pulumi-aws v7 (FSx for Lustre supports one subnet).
            # SCRATCH_2 takes none of the next three: its throughput is fixed, FSx encrypts it with an AWS-owned key,
            # and it has no backups (copy_tags_to_backups applies to PERSISTENT_1/2 only, per the provider docs).
            per_unit_storage_throughput=tier.throughput_mbps_per_tib if persistent else None,
            kms_key_id=args.kms_key_arn if persistent else None,
            copy_tags_to_backups=True if persistent else None,
            # 0 spelled out where no backups are kept: the provider keeps the last value of an unset (computed) field,
            # so a file system linked after it had backups would otherwise keep them.
            automatic_backup_retention_days=(BACKUP_RETENTION_DAYS if backups else 0) if persistent else None,
            subnet_ids=args.subnet_id, security_group_ids=[group.id], file_system_type_version=LUSTRE_VERSION,
            data_compression_type="LZ4",
            log_configuration=aws.fsx.LustreFileSystemLogConfigurationArgs(level="WARN_ERROR", destination=logs.arn),
            tags={"Name": name, **({"data-zone": spec.data_zone} if spec.data_zone else {})},
            # FSx cannot move a file system: a new subnet replaces it, data and all. The zone is chosen at creation
            # (compose: where the zone-pinned pools are), and a later change of pools must not replace it.
            region=ctx.region), opts=ctx.stateful(self, ignore_changes=["subnetIds"]))
        if args.link is not None:
            # A new bucket or prefix replaces the association (data_repository_path is ForceNew in terraform-provider-aws
            # fsx/data_repository_association.go), and the new one can't exist beside the old: "/" takes "only one data
            # repository" (FSx DataRepositoryAssociation FileSystemPath). So delete first; delete_data_in_filesystem
            # False keeps the files, and the new association imports the new path's metadata.
            aws.fsx.DataRepositoryAssociation(f"{name}-s3-link", aws.fsx.DataRepositoryAssociationArgs(
                file_system_id=self.filesystem.id, file_system_path="/",
                data_repository_path=pulumi.Output.concat("s3://", args.link.bucket, "/", bucket_folder(args.link.prefix)),
                batch_import_meta_data_on_create=True, delete_data_in_filesystem=False,
                s3=aws.fsx.DataRepositoryAssociationS3Args(
                    auto_import_policy=aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(events=IMPORT_EVENTS),
                    auto_export_policy=aws.fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(events=EXPORT_EVENTS)),
                region=ctx.region), opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True))
        self.register_outputs({"id": self.filesystem.id, "dns_name": self.filesystem.dns_name,
                               "mount_name": self.filesystem.mount_name})
