"""A bucket on Azure: a StorageV2 account (HTTPS and TLS 1.2 only, no public blob access, no shared keys,
no public network, private endpoint, CMK), versioning and soft delete, a container named after the
bucket's data class, and a lifecycle policy from the tiering thresholds.

Redundancy is chosen when the account is created (ZRS, or LRS when the lifecycle archives: lifecycle.py) and kept:
Azure changes an account between LRS and ZRS only by a redundancy conversion, never by an update ("the SKU name cannot
be updated to Standard_ZRS ... nor can accounts of those SKU names be updated to any other value", Storage
StorageAccountUpdateParameters.sku), so a later tiering change must not send a new SKU. An archive step on an account
created zone-redundant is left out of its lifecycle policy, with a warning (convert the account to LRS to archive)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from components.spec import BucketSpec
from components.spec.storage import linked_tiering

from .base import AzureComponent
from .context import AzureContext, grant
from .keyvault import CustomerKey
from .lifecycle import ARCHIVE_SKUS, BlobLifecycle, account_sku, blob_lifecycle
from .private_link import private_endpoint

LUSTRE_LOG_CONTAINER = "lustre-logs"


@dataclass(frozen=True)
class BlobStorageArgs:
    context: AzureContext
    bucket_name: str
    bucket: BucketSpec
    endpoint_subnet_id: pulumi.Input[str]
    dns_zone_id: pulumi.Input[str]
    """Private DNS zone `privatelink.blob.core.windows.net` linked to the VNet."""
    cmk: CustomerKey
    lustre_principal_id: str | None = None
    """Object ID of the HPC Cache Resource Provider when a Lustre file system links this bucket. Then the
    account keeps shared-key access on (Azure Managed Lustre's blob integration requires it), gains a
    `lustre-logs` container, the provider gets the two roles it needs, and the lifecycle has no archive step unless the
    spec sets one (which the spec checks refuse: AMLFS cannot read archived blobs). Default None: no link."""


class BlobStorage(AzureComponent):
    """`ai-infra:azure:BlobStorage`. Children: `<name>-account`, `-blob-service`, `-container`, `-lifecycle`,
    `-pe`, `-pe-dns`, and with a Lustre link `-lustre-logs`, `-lustre-account-access`, `-lustre-data-access`."""

    def __init__(self, name: str, args: BlobStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:BlobStorage", name, opts)
        ctx, bucket = args.context, args.bucket
        linked = args.lustre_principal_id is not None
        if linked:
            bucket = bucket.model_copy(update={"tiering": linked_tiering(bucket.tiering)})
        self.account = secure_account(
            f"{name}-account", self, ctx, args.cmk,
            account_name=ctx.global_name("st", args.bucket_name),
            sku=account_sku(bucket),
            shared_key=linked,
            # Reachable only through the private endpoint.
            public_network_access="Disabled",
            bypass="None",
            tags=ctx.tags({"data-zone": bucket.data_zone} if bucket.data_zone else None),
        )
        self.blob_service = azure_native.storage.BlobServiceProperties(
            f"{name}-blob-service",
            azure_native.storage.BlobServicePropertiesArgs(
                resource_group_name=ctx.group,
                account_name=self.account.name,
                blob_services_name="default",
                is_versioning_enabled=bucket.versioning,
                delete_retention_policy=azure_native.storage.DeleteRetentionPolicyArgs(enabled=True, days=bucket.soft_delete_days),
                container_delete_retention_policy=azure_native.storage.DeleteRetentionPolicyArgs(enabled=True, days=bucket.soft_delete_days),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.container = self._container(f"{name}-container", ctx, bucket.data_class.value)
        self.logging_container = self._container(f"{name}-lustre-logs", ctx, LUSTRE_LOG_CONTAINER) if linked else None
        lustre_grants = tuple(
            grant(f"{name}-lustre-{suffix}", self, ctx, role, self.account.id, args.lustre_principal_id)
            for suffix, role in (("account-access", "storage_account_contributor"), ("data-access", "storage_blob_data_contributor"))
        ) if linked else ()
        plan = blob_lifecycle(bucket)
        where = f"bucket '{args.bucket_name}' ({name})"
        policy = (self.account.sku.apply(lambda sku: _archive_policy(where, bucket, plan, sku.name))
                  if plan.tier_to_archive is not None else _lifecycle_policy(bucket, plan))
        if policy is not None:
            azure_native.storage.ManagementPolicy(
                f"{name}-lifecycle",
                azure_native.storage.ManagementPolicyArgs(
                    resource_group_name=ctx.group, account_name=self.account.name, management_policy_name="default", policy=policy),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.blob_service]),
            )
        private_dns = private_endpoint(name, self, ctx, target_id=self.account.id, group_id="blob",
                                       subnet_id=args.endpoint_subnet_id, dns_zone_id=args.dns_zone_id)
        # What a linked file system waits for: the HPC Cache grants, and (public access being off) the endpoint's DNS
        # record, the only way AMLFS reaches the containers; creation fails if it can't (AMLFS prerequisites).
        self.lustre_access: tuple[pulumi.Resource, ...] = (*lustre_grants, private_dns) if linked else ()
        self.register_outputs({"account_id": self.account.id, "container_id": self.container.id})

    def _container(self, name: str, ctx: AzureContext, container: str) -> azure_native.storage.BlobContainer:
        return azure_native.storage.BlobContainer(
            name,
            azure_native.storage.BlobContainerArgs(
                resource_group_name=ctx.group, account_name=self.account.name, container_name=container, public_access="None"),
            opts=ctx.stateful(self, depends_on=[self.blob_service]),
        )


def secure_account(name: str, parent: pulumi.Resource, ctx: AzureContext, cmk: CustomerKey, *, account_name: pulumi.Input[str],
                   sku: str, public_network_access: str, bypass: str, shared_key: bool = False,
                   tags: dict[str, str] | None = None) -> azure_native.storage.StorageAccount:
    """A StorageV2 account: HTTPS and TLS 1.2 only, no anonymous blobs, Entra ID auth (shared keys only when
    asked), default-deny network rules, and the region's CMK plus infrastructure (double) encryption, which can
    only be chosen at creation. No key version: the account follows the key's rotation."""
    enabled = azure_native.storage.EncryptionServiceArgs(enabled=True, key_type="Account")
    return azure_native.storage.StorageAccount(
        name,
        azure_native.storage.StorageAccountArgs(
            resource_group_name=ctx.group,
            location=ctx.region,
            account_name=account_name,
            kind="StorageV2",
            sku=azure_native.storage.SkuArgs(name=sku),
            access_tier="Hot",
            enable_https_traffic_only=True,
            minimum_tls_version="TLS1_2",
            allow_blob_public_access=False,
            allow_shared_key_access=shared_key,
            allow_cross_tenant_replication=False,
            default_to_o_auth_authentication=True,
            public_network_access=public_network_access,
            network_rule_set=azure_native.storage.NetworkRuleSetArgs(default_action="Deny", bypass=bypass),
            identity=azure_native.storage.IdentityArgs(type="UserAssigned", user_assigned_identities=[cmk.identity_id]),
            encryption=azure_native.storage.EncryptionArgs(
                key_source="Microsoft.Keyvault",
                key_vault_properties=azure_native.storage.KeyVaultPropertiesArgs(key_name=cmk.key_name, key_vault_uri=cmk.vault_uri),
                encryption_identity=azure_native.storage.EncryptionIdentityArgs(encryption_user_assigned_identity=cmk.identity_id),
                require_infrastructure_encryption=True,
                services=azure_native.storage.EncryptionServicesArgs(blob=enabled, file=enabled),
            ),
            tags=tags or ctx.tags(),
        ),
        # The SKU chosen at creation stays (see the module docstring): a new one would be refused, not applied.
        opts=ctx.stateful(parent, depends_on=[cmk.access], ignore_changes=["sku"]),
    )


def _archive_policy(where: str, bucket: BucketSpec, plan: BlobLifecycle,
                    sku: str) -> azure_native.storage.ManagementPolicySchemaArgs | None:
    """The policy of a lifecycle with an archive step, for an account of `sku` (known once the account exists): without
    the archive step on a zone-redundant account, which cannot archive, and a warning that says so."""
    if sku in ARCHIVE_SKUS:
        return _lifecycle_policy(bucket, plan)
    pulumi.log.warn(f"{where}: tiering.archive_after_days {plan.tier_to_archive} is not applied: the storage account is "
                    f"{sku}, its redundancy since creation, and Blob Archive needs {', '.join(ARCHIVE_SKUS)}. Convert the "
                    "account's redundancy in Azure (learn.microsoft.com/azure/storage/common/redundancy-migration) to "
                    "archive, or set archive_after_days to null")
    runnable = plan.without_archive()
    if runnable.empty:
        # Nothing else left: the rule stays, disabled (the policy was declared before the SKU was known; it needs a
        # rule), with an action a zone-redundant account takes: Azure refuses a tierToArchive there even in a rule
        # that is off (hashicorp/terraform-provider-azurerm#6031).
        return _lifecycle_policy(bucket, dataclasses.replace(runnable, tier_to_cool=plan.tier_to_archive), enabled=False)
    return _lifecycle_policy(bucket, runnable)


def _lifecycle_policy(bucket: BucketSpec, plan: BlobLifecycle,
                      enabled: bool = True) -> azure_native.storage.ManagementPolicySchemaArgs | None:
    """One rule for the data container: tier current blobs by age and delete old versions. None: nothing to do."""
    actions = {action: azure_native.storage.DateAfterModificationArgs(days_after_creation_greater_than=days)
               for action, days in plan.base_blob_actions.items()}
    versions = None
    if plan.delete_versions is not None:
        versions = azure_native.storage.ManagementPolicyVersionArgs(
            delete=azure_native.storage.DateAfterCreationArgs(days_after_creation_greater_than=plan.delete_versions))
    if not actions and versions is None:
        return None
    return azure_native.storage.ManagementPolicySchemaArgs(rules=[
        azure_native.storage.ManagementPolicyRuleArgs(
            name="tiering",
            enabled=enabled,
            type="Lifecycle",
            definition=azure_native.storage.ManagementPolicyDefinitionArgs(
                filters=azure_native.storage.ManagementPolicyFilterArgs(
                    blob_types=["blockBlob"], prefix_match=[f"{bucket.data_class.value}/"]),
                actions=azure_native.storage.ManagementPolicyActionArgs(
                    base_blob=azure_native.storage.ManagementPolicyBaseBlobArgs(**actions) if actions else None,
                    version=versions),
            ),
        )
    ])

