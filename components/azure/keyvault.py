"""A region's customer-managed key: Key Vault (RBAC, purge protection, private endpoint, audit log), an RSA key
with a rotation policy, the managed identity that disks, storage accounts and Lustre use to reach the key, and the
disk encryption set that AKS node disks use."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from .base import AzureComponent
from .context import AzureContext, grant, send_logs
from .private_link import private_endpoint

KEY_NAME = "cmk"
# Azure Managed Lustre accepts only 2048-bit RSA keys; disks and storage accept 2048 too, so one key serves all.
_KEY_SIZE = 2048
_ROTATE_AFTER = "P1Y"
_KEY_EXPIRES_AFTER = "P2Y"
_NOTIFY_BEFORE_EXPIRY = "P30D"
_SOFT_DELETE_DAYS = {True: 90, False: 7}  # protected environments keep deleted vaults longest
# Key Vault refuses to change a vault's soft-delete retention once set ("Once set, the retention policy interval cannot
# be changed": learn.microsoft.com/azure/key-vault/general/soft-delete-overview; hashicorp/terraform-provider-azurerm
# #19006), so a vault keeps the days it was created with: turning protection on later must not fail the update.
VAULT_IGNORED_CHANGES = ["properties.softDeleteRetentionInDays"]


@dataclass(frozen=True)
class CustomerKey:
    """What a service needs to encrypt with the region's CMK."""

    identity_id: pulumi.Input[str]
    """User-assigned identity the service reads the key as."""
    vault_id: pulumi.Input[str]
    vault_uri: pulumi.Input[str]
    key_name: str
    key_url: pulumi.Input[str]
    """Versioned key URL (services that do not follow rotation by themselves)."""
    access: pulumi.Resource
    """The identity's role assignment on the vault: services check the key when they are created."""


def vault_args(ctx: AzureContext, kind: str, *, public: bool) -> azure_native.keyvault.VaultArgs:
    """A CMK vault: standard SKU, Azure RBAC, soft delete with purge protection, default-deny network rules with the
    trusted-services bypass; named `ctx.global_name(kind)` (3-24 characters whatever the environment and region);
    public network access only with `public`. Create it with `vault_options`: the retention is fixed at creation."""
    return azure_native.keyvault.VaultArgs(
        resource_group_name=ctx.group,
        location=ctx.region,
        vault_name=ctx.global_name(kind),
        properties=azure_native.keyvault.VaultPropertiesArgs(
            tenant_id=ctx.tenant_id,
            sku=azure_native.keyvault.SkuArgs(family="A", name="standard"),
            enable_rbac_authorization=True,
            enable_soft_delete=True,
            enable_purge_protection=True,
            soft_delete_retention_in_days=_SOFT_DELETE_DAYS[ctx.protected],
            # Disk encryption sets and storage accounts are trusted services, which still get in with
            # public access disabled (learn.microsoft.com/azure/key-vault/general/overview-vnet-service-endpoints#trusted-services,
            # learn.microsoft.com/azure/key-vault/general/security-features#network-security). Azure Managed
            # Lustre is not one and requires public access enabled, "Selected networks" with the trusted
            # services bypass (learn.microsoft.com/azure/azure-managed-lustre/customer-managed-encryption-keys).
            # Anything else gets in through the private endpoint only.
            public_network_access="Enabled" if public else "Disabled",
            network_acls=azure_native.keyvault.NetworkRuleSetArgs(default_action="Deny", bypass="AzureServices"),
        ),
        tags=ctx.tags(),
    )


def vault_options(ctx: AzureContext, parent: pulumi.Resource) -> pulumi.ResourceOptions:
    """A vault's options: protected outside dev, and its soft-delete retention left as it was created."""
    return ctx.stateful(parent, ignore_changes=VAULT_IGNORED_CHANGES)


def rsa_key_args(ctx: AzureContext, vault: azure_native.keyvault.Vault, key_name: str, key_ops: list[str],
                 rotation_policy: azure_native.keyvault.RotationPolicyArgs) -> azure_native.keyvault.KeyArgs:
    """An RSA key of `_KEY_SIZE` bits in `vault`, allowed only `key_ops`, rotating by `rotation_policy`."""
    return azure_native.keyvault.KeyArgs(
        resource_group_name=ctx.group,
        vault_name=vault.name,
        key_name=key_name,
        properties=azure_native.keyvault.KeyPropertiesArgs(
            kty="RSA", key_size=_KEY_SIZE, key_ops=key_ops, rotation_policy=rotation_policy),
        tags=ctx.tags(),
    )


def yearly_rotation(expires_after: str | None = None) -> azure_native.keyvault.RotationPolicyArgs:
    """A new key version every year (`_ROTATE_AFTER` after the current one's creation). With `expires_after` (an ISO
    8601 duration), each version expires that long after its creation and Key Vault sends a near-expiry event
    `_NOTIFY_BEFORE_EXPIRY` before; without it no version expires."""
    actions = [azure_native.keyvault.LifetimeActionArgs(
        action=azure_native.keyvault.ActionArgs(type="rotate"),
        trigger=azure_native.keyvault.TriggerArgs(time_after_create=_ROTATE_AFTER))]
    if expires_after is None:
        return azure_native.keyvault.RotationPolicyArgs(lifetime_actions=actions)
    actions.append(azure_native.keyvault.LifetimeActionArgs(
        action=azure_native.keyvault.ActionArgs(type="notify"),
        trigger=azure_native.keyvault.TriggerArgs(time_before_expiry=_NOTIFY_BEFORE_EXPIRY)))
    return azure_native.keyvault.RotationPolicyArgs(
        attributes=azure_native.keyvault.KeyRotationPolicyAttributesArgs(expiry_time=expires_after),
        lifetime_actions=actions)


@dataclass(frozen=True)
class KeyVaultArgs:
    context: AzureContext
    """Region, resource group, tags, tenant and protection."""
    endpoint_subnet_id: pulumi.Input[str]
    """Subnet of the vault's private endpoint."""
    dns_zone_id: pulumi.Input[str]
    """Private DNS zone `privatelink.vaultcore.azure.net` linked to the VNet."""
    workspace_id: pulumi.Input[str]
    """Log Analytics workspace that receives the vault's audit events."""
    public_endpoint: bool = True
    """Keep the vault's public endpoint (default deny, trusted services bypass): Azure Managed Lustre needs it, being
    no Key Vault trusted service. False where no file system uses the key: private endpoint and trusted services
    (disk encryption sets, storage accounts) only. Default True, so a region with Lustre is never cut off."""


class KeyVault(AzureComponent):
    """`ai-infra:azure:KeyVault`. Children: `<name>-kv`, `-key`, `-cmk-identity`, `-cmk-identity-crypto`, `-kv-pe`,
    `-kv-pe-dns`, `-kv-audit`, `-des`."""

    def __init__(self, name: str, args: KeyVaultArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:KeyVault", name, opts)
        ctx = args.context
        self.vault = azure_native.keyvault.Vault(f"{name}-kv", vault_args(ctx, "kv", public=args.public_endpoint),
                                                 opts=vault_options(ctx, self))
        self.key = azure_native.keyvault.Key(
            f"{name}-key",
            rsa_key_args(ctx, self.vault, KEY_NAME, ["wrapKey", "unwrapKey"], yearly_rotation(_KEY_EXPIRES_AFTER)),
            # azure-native deletes a key through Key Vault's data plane, from the machine running Pulumi
            # (pulumi-azure-native provider/pkg/resources/customresources/custom_keyvault.go, DeleteKey on
            # https://<vault>.vault.azure.net): that needs a data-plane role and a network path, and this vault
            # refuses public traffic. The key goes with its vault instead (soft-deleted with it), so a destroy of an
            # unprotected environment deletes only the vault, through ARM. Protected environments retain both.
            opts=ctx.stateful(self, deleted_with=self.vault),
        )
        # The vault URI as the key reports it (https://<vault>.vault.azure.net/keys/cmk), so it is right in
        # sovereign clouds too and stays unknown until the key exists.
        self.vault_uri: pulumi.Output[str] = self.key.key_uri.apply(lambda uri: uri.split("/keys/", 1)[0] + "/")

        # One identity for every service that wraps data keys with the CMK (disk encryption set, storage
        # accounts, Azure Managed Lustre): a user-assigned identity is granted access before they exist.
        # The identity and its grant unlock the encrypted data as much as the key does: protected like it outside dev
        # (a deleted identity or assignment cuts every disk, account and file system off its key).
        self.cmk_identity = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-cmk-identity",
            azure_native.managedidentity.UserAssignedIdentityArgs(
                resource_group_name=ctx.group, location=ctx.region, tags=ctx.tags()),
            opts=ctx.stateful(self),
        )
        self.cmk_access = grant(f"{name}-cmk-identity-crypto", self, ctx, "key_vault_crypto_service_encryption_user",
                                self.vault.id, self.cmk_identity.principal_id, opts=ctx.stateful(self))
        private_endpoint(f"{name}-kv", self, ctx, target_id=self.vault.id, group_id="vault",
                         subnet_id=args.endpoint_subnet_id, dns_zone_id=args.dns_zone_id)
        send_logs(f"{name}-kv-audit", self, self.vault.id, args.workspace_id, category_group="audit")
        self.disk_encryption_set = azure_native.compute.DiskEncryptionSet(
            f"{name}-des",
            azure_native.compute.DiskEncryptionSetArgs(
                resource_group_name=ctx.group,
                location=ctx.region,
                encryption_type="EncryptionAtRestWithCustomerKey",
                identity=azure_native.compute.EncryptionSetIdentityArgs(
                    type="UserAssigned", user_assigned_identities=[self.cmk_identity.id]),
                active_key=azure_native.compute.KeyForDiskEncryptionSetArgs(
                    key_url=self.key.key_uri_with_version,
                    source_vault=azure_native.compute.SourceVaultArgs(id=self.vault.id),
                ),
                # Follow the key's automatic rotation (the set moves to the newest key version within an hour).
                rotation_to_latest_key_version_enabled=True,
                tags=ctx.tags(),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cmk_access]),
        )
        self.customer_key = CustomerKey(self.cmk_identity.id, self.vault.id, self.vault_uri, KEY_NAME,
                                        self.key.key_uri_with_version, self.cmk_access)
        self.register_outputs({
            "vault_id": self.vault.id,
            "key_id": self.key.id,
            "disk_encryption_set_id": self.disk_encryption_set.id,
            "cmk_identity_id": self.cmk_identity.id,
        })
