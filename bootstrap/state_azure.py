"""Azure Blob state container (HTTPS, TLS 1.2, no public or shared-key access, versioning, CMK) and a Key Vault
key for azurekeyvault://."""

import pulumi
import pulumi_azure_native as azure

KEEP = pulumi.ResourceOptions(protect=True, retain_on_delete=True)


def build(prefix: str, location: str) -> None:
    client = azure.authorization.get_client_config()
    short = "".join(ch for ch in prefix.lower() if ch.isalnum())[:16]
    vault_name, account_name = f"kv{short}state"[:24], f"{short}state"[:24]
    group = azure.resources.ResourceGroup("state-rg", resource_group_name=f"{prefix}-pulumi-state", location=location)
    vault = azure.keyvault.Vault("state-vault", vault_name=vault_name, resource_group_name=group.name, location=location,
        properties=azure.keyvault.VaultPropertiesArgs(
            tenant_id=client.tenant_id, sku=azure.keyvault.SkuArgs(family="A", name="standard"),
            enable_rbac_authorization=True, enable_purge_protection=True, enable_soft_delete=True,
            soft_delete_retention_in_days=90), opts=KEEP)
    key = azure.keyvault.Key("state-key", key_name="pulumi-state", vault_name=vault.name, resource_group_name=group.name,
        properties=azure.keyvault.KeyPropertiesArgs(kty="RSA", key_size=2048, rotation_policy=azure.keyvault.RotationPolicyArgs(
            lifetime_actions=[azure.keyvault.LifetimeActionArgs(action=azure.keyvault.ActionArgs(type="rotate"),
                                                                trigger=azure.keyvault.TriggerArgs(time_after_create="P90D"))])),
        opts=KEEP)
    identity = azure.managedidentity.UserAssignedIdentity("state-identity", resource_group_name=group.name, location=location)
    azure.authorization.RoleAssignment("state-identity-crypto", scope=vault.id, principal_id=identity.principal_id, principal_type="ServicePrincipal",
        # Key Vault Crypto Service Encryption User (built-in role)
        role_definition_id=f"/subscriptions/{client.subscription_id}/providers/Microsoft.Authorization/roleDefinitions/e147488a-f6f5-4113-8e2d-b22465e65bf6")
    account = azure.storage.StorageAccount("state-account", account_name=account_name, resource_group_name=group.name,
        location=location, kind="StorageV2", sku=azure.storage.SkuArgs(name="Standard_ZRS"),
        enable_https_traffic_only=True, minimum_tls_version="TLS1_2", allow_blob_public_access=False, allow_shared_key_access=False,
        identity=azure.storage.IdentityArgs(type="UserAssigned", user_assigned_identities=[identity.id]),
        encryption=azure.storage.EncryptionArgs(key_source="Microsoft.Keyvault", require_infrastructure_encryption=True,
            encryption_identity=azure.storage.EncryptionIdentityArgs(encryption_user_assigned_identity=identity.id),
            key_vault_properties=azure.storage.KeyVaultPropertiesArgs(key_vault_uri=vault.properties.vault_uri, key_name=key.name)),
        opts=KEEP)
    azure.storage.BlobServiceProperties("state-blob-service", account_name=account.name, resource_group_name=group.name,
        blob_services_name="default", is_versioning_enabled=True,
        delete_retention_policy=azure.storage.DeleteRetentionPolicyArgs(enabled=True, days=30))
    container = azure.storage.BlobContainer("state-container", container_name="pulumi-state", account_name=account.name,
                                            resource_group_name=group.name, public_access="None", opts=KEEP)
    pulumi.export("azure_login", container.id.apply(lambda _: f"azblob://pulumi-state?storage_account={account_name}"))
    pulumi.export("azure_secrets_provider", key.id.apply(lambda _: f"azurekeyvault://{vault_name}.vault.azure.net/keys/pulumi-state"))
