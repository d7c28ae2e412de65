"""A Managed Lustre instance: capacity and throughput tier from the catalog, CMEK, GKE support (port 6988, the
cluster's Lustre CSI driver matches it), in the region's zone on the private services access range.

Import from Cloud Storage: Managed Lustre has no declarative data link; ImportData / ExportData are
operations on an existing instance. The component grants the Lustre service agent object read and write on the linked
bucket, and exports the `gcloud lustre instances import-data` command to run.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components import catalog
from components.spec import LustreSpec
from components.spec.storage import bucket_folder

from .context import GcpContext
from .naming import lustre_filesystem, resource_id

# The service agent's role on a bucket it imports from and exports to (Managed Lustre "Transfer data to and from
# Cloud Storage": objectUser for both directions, objectViewer for import only). Export rewrites changed files, and
# overwriting an object needs storage.objects.delete, which objectCreator lacks.
BUCKET_ROLE = "roles/storage.objectUser"


def gcs_path(bucket: str, prefix: str) -> str:
    """The ImportData/ExportData Cloud Storage path: the bucket, or a folder in it, which "must end with a forward
    slash" (ImportDataRequest.gcs_path). `prefix` may be written with or without slashes."""
    folder = bucket_folder(prefix)
    return f"gs://{bucket}/{folder}" if folder else f"gs://{bucket}"


def import_command(instance_id: str, zone: str, bucket: str, prefix: str) -> str:
    """The gcloud command that imports the linked bucket (prefix) into the file system root."""
    return (f"gcloud lustre instances import-data {instance_id} --location={zone} "
            f"--gcs-path-uri={gcs_path(bucket, prefix)} --lustre-path=/")


@dataclass(frozen=True)
class BucketLink:
    bucket_name: pulumi.Input[str]
    prefix: str = ""
    """Prefix inside the bucket linked to the file system root. Default: the whole bucket."""


@dataclass(frozen=True)
class LustreArgs:
    context: GcpContext
    fs_name: str
    spec: LustreSpec
    tier: catalog.LustreTier
    """The catalog tier of size and throughput (validated by the spec checks)."""
    zone: pulumi.Input[str]
    network_id: pulumi.Input[str]
    """`projects/<project>/global/networks/<name>`, with a private services access peering (`peering`)."""
    peering: pulumi.Resource
    kms_key_id: pulumi.Input[str]
    """Key in the instance's region; the Lustre service agent must hold Encrypter/Decrypter (`Kms.key_id`)."""
    service_agent: pulumi.Input[str]
    """IAM member of the Managed Lustre service agent."""
    bucket: BucketLink | None = None
    """Bucket to import from and export to. Default: none."""


class Lustre(pulumi.ComponentResource):
    """`ai-infra:gcp:Lustre`. Children: `<name>-lustre`, and with a bucket `<name>-bucket-access`."""

    instance: gcp.lustre.Instance

    def __init__(self, name: str, args: LustreArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:Lustre", name, None, opts)
        ctx, spec = args.context, args.spec
        instance_id = resource_id(ctx.environment, ctx.region, args.fs_name)
        extra = {"data-zone": spec.data_zone} if spec.data_zone else {}
        self.instance = gcp.lustre.Instance(f"{name}-lustre", gcp.lustre.InstanceArgs(
            project=ctx.project, location=args.zone, instance_id=instance_id,
            filesystem=lustre_filesystem(args.fs_name), network=args.network_id,
            # The API takes both numbers as strings (provider docs and examples).
            capacity_gib=str(spec.size_gib), per_unit_storage_throughput=str(args.tier.throughput_mbps_per_tib),
            kms_key=args.kms_key_id, gke_support_enabled=True, labels=extra or None,
            description=f"{args.fs_name} ({ctx.environment}, {ctx.region})"),
            # instance_id is fixed, so a replacement (tier, file system name, network and KMS key are immutable) must
            # delete the old instance first or fail with ALREADY_EXISTS; `protect` still refuses it outside dev.
            opts=ctx.stateful(self, depends_on=[args.peering], delete_before_replace=True))
        outputs: dict[str, object] = {"instance_id": instance_id, "mount_point": self.instance.mount_point}
        if args.bucket is not None:
            link = args.bucket
            # Formerly `-bucket-read` (objectViewer) beside `-bucket-write` (objectCreator): the alias turns the role
            # change into a create-before-delete replacement, so the objectUser grant exists before the old read grant
            # goes; the engine deletes the dropped `-bucket-write` last, after every create.
            gcp.storage.BucketIAMMember(f"{name}-bucket-access", gcp.storage.BucketIAMMemberArgs(
                bucket=link.bucket_name, role=BUCKET_ROLE, member=args.service_agent),
                opts=pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(name=f"{name}-bucket-read")]))
            outputs["import_command"] = pulumi.Output.all(args.zone, link.bucket_name).apply(
                lambda v: import_command(instance_id, v[0], v[1], link.prefix))
        self.outputs = outputs
        self.register_outputs(outputs)
