"""An Azure Managed Lustre file system: SKU from the throughput tier, capacity from the catalog's increments,
the region's customer-managed key, the HSM link to a blob container for import and export, and a weekly
maintenance window that opens with the region's AKS window."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from components import catalog
from components.spec import Cloud, LustreSpec
from components.spec.maintenance import Window, default_window

from .base import AzureComponent
from .context import AzureContext
from .keyvault import CustomerKey

_GIB_PER_TIB = 1024
ZONE = "1"  # AMLFS is zonal: one zone per file system


@dataclass(frozen=True)
class BlobLink:
    """The blob container a file system imports from and exports to (Lustre HSM)."""

    container_id: pulumi.Input[str]
    logging_container_id: pulumi.Input[str]
    """A second container of the same account for import/export logs (Azure requires a separate one)."""
    import_prefix: str = "/"
    access: tuple[pulumi.Resource, ...] = ()
    """What the file system waits for: the HPC Cache Resource Provider's role assignments on the account and the
    account's private endpoint DNS record; creation fails without them. Default: nothing."""


@dataclass(frozen=True)
class LustreArgs:
    context: AzureContext
    spec: LustreSpec
    tier: catalog.LustreTier
    """Catalog tier: `service_name` is the AMLFS SKU, the spec checks validated the size against it."""
    subnet_id: pulumi.Input[str]
    """The file system's own subnet (Azure requires one subnet per file system)."""
    cmk: CustomerKey
    """The region's customer-managed key (AMLFS reads the versioned key as the CMK identity)."""
    blob: BlobLink | None = None
    """Default None: no blob integration."""
    maintenance_window: Window = default_window(Cloud.AZURE)
    """The weekly window Azure applies file system updates in; AMLFS takes its opening (day and UTC time) only. The
    region's AKS window, so training meets one maintenance window a week there, not two. Default: Sunday 03:00 UTC."""


class Lustre(AzureComponent):
    """`ai-infra:azure:Lustre`. Children: `<name>-amlfs`."""

    def __init__(self, name: str, args: LustreArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:Lustre", name, opts)
        ctx, spec, tier = args.context, args.spec, args.tier
        if spec.size_gib % _GIB_PER_TIB:
            # The spec checks guarantee whole TiB through the catalog increments; fail loudly if that ever changes.
            raise ValueError(f"Azure Managed Lustre capacity is set in whole TiB; got {spec.size_gib} GiB")
        hsm = None
        if args.blob is not None:
            hsm = azure_native.storagecache.AmlFilesystemHsmArgs(settings=azure_native.storagecache.AmlFilesystemHsmSettingsArgs(
                container=args.blob.container_id,
                logging_container=args.blob.logging_container_id,
                import_prefix=args.blob.import_prefix,
            ))
        self.filesystem = azure_native.storagecache.AmlFilesystem(
            f"{name}-amlfs",
            azure_native.storagecache.AmlFilesystemArgs(
                resource_group_name=ctx.group,
                location=ctx.region,
                sku=azure_native.storagecache.SkuNameArgs(name=tier.service_name),
                storage_capacity_ti_b=spec.size_gib // _GIB_PER_TIB,
                zones=[ZONE],
                filesystem_subnet=args.subnet_id,
                # Updated in place (azurerm's managed_lustre_file_system marks maintenance_window updatable, unlike
                # its sku, capacity, subnet and zones).
                maintenance_window=azure_native.storagecache.AmlFilesystemMaintenanceWindowArgs(
                    day_of_week=args.maintenance_window.day.value.capitalize(),
                    time_of_day_utc=args.maintenance_window.start_utc),
                identity=azure_native.storagecache.AmlFilesystemIdentityArgs(
                    type="UserAssigned", user_assigned_identities=[args.cmk.identity_id]),
                # AMLFS takes a versioned key URL only (learn.microsoft.com/azure/azure-managed-lustre/customer-managed-encryption-keys;
                # azurerm validates it as versioned) and is rotated by updating that URL in place: AmlFilesystemUpdate
                # takes encryptionSettings, which is not create-only (azure-rest-api-specs, storagecache 2024-03-01
                # amlfilesystem.json). So no ignore_changes: once the key rotates, refresh + up moves it to the new version.
                encryption_settings=azure_native.storagecache.AmlFilesystemEncryptionSettingsArgs(
                    key_encryption_key=azure_native.storagecache.KeyVaultKeyReferenceArgs(
                        key_url=args.cmk.key_url,
                        source_vault=azure_native.storagecache.KeyVaultKeyReferenceSourceVaultArgs(id=args.cmk.vault_id))),
                hsm=hsm,
                tags=ctx.tags({"data-zone": spec.data_zone} if spec.data_zone else None),
            ),
            # The blob link (container, logging container, import prefix) is taken at creation only: AmlFilesystemUpdate
            # has no hsm, and the import prefix "is only used during initial creation". A later change is not sent;
            # linking another bucket or prefix needs a new file system.
            opts=ctx.stateful(self, depends_on=[args.cmk.access, *(args.blob.access if args.blob else ())],
                              ignore_changes=["hsm"]),
        )
        self.mgs_address: pulumi.Output[str] = self.filesystem.client_info.apply(lambda c: c.mgs_address if c else None)
        """The management server's address clients mount (`clientInfo.mgsAddress`, known once the file system exists)."""
        self.register_outputs({"filesystem_id": self.filesystem.id, "mgs_address": self.mgs_address})
