"""Azure Blob state container (HTTPS, TLS 1.2, no public or shared-key access, versioning, blob and container soft
delete, a delete lock on the account, CMK) and a Key Vault key for azurekeyvault://, with the data-plane roles the
principals in `azureStateAdmins` need to use them and the read-only ones the principals in `azureStateReaders` need to
preview."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import pulumi
import pulumi_azure_native as azure

ADMINS = "azureStateAdmins"
READERS = "azureStateReaders"
PRINCIPAL_TYPES = ("User", "Group", "ServicePrincipal")
_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ALLOWED = ("a list of {principalId: <Microsoft Entra object ID, a GUID>, principalType: "
            + " | ".join(PRINCIPAL_TYPES) + "}")

# Built-in role definitions (Azure built-in roles, Security and Storage categories).
KEY_VAULT_CRYPTO_USER = "12338af0-0e69-4776-bea7-57ae8d297424"  # encrypt/decrypt: what azurekeyvault:// calls
KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER = "e147488a-f6f5-4113-8e2d-b22465e65bf6"  # wrap/unwrap: storage CMK
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"  # read/write/delete blobs: what azblob:// needs
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"  # read/list blobs: what a preview's azblob:// reads need


@dataclass(frozen=True)
class Principal:
    principal_id: str
    principal_type: str


def keep(**options) -> pulumi.ResourceOptions:
    """Protected and retained: the state of every stack, and the key that decrypts its secrets, live here."""
    return pulumi.ResourceOptions(protect=True, retain_on_delete=True, **options)


def read_admins(config: pulumi.Config) -> list[Principal]:
    """The principals to grant data-plane access, from `azureStateAdmins`; a pulumi.RunError naming the key, the
    value and what is allowed when it is malformed (raised before anything is registered)."""
    return _read_principals(config, ADMINS)


def read_readers(config: pulumi.Config, admins: list[Principal]) -> list[Principal]:
    """The principals to grant read-only data-plane access (a CI preview identity), from `azureStateReaders`, checked
    as `read_admins` checks its list; a principal that is an admin already reads and writes, so it is refused here."""
    readers = _read_principals(config, READERS)
    admin_ids = {a.principal_id for a in admins}
    for i, reader in enumerate(readers):
        if reader.principal_id in admin_ids:
            raise pulumi.RunError(f"{config.full_key(READERS)}[{i}].principalId: got {reader.principal_id!r}, which "
                                  f"{config.full_key(ADMINS)} lists too; allowed: principals that are not admins "
                                  "(an admin can already read)")
    return readers


def _read_principals(config: pulumi.Config, name: str) -> list[Principal]:
    key = config.full_key(name)
    try:
        raw = config.get_object(name)
    except pulumi.ConfigTypeError as err:
        raise pulumi.RunError(f"{key}: got {err.value!r}, which is not a list; allowed: {_ALLOWED}") from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise pulumi.RunError(f"{key}: got {raw!r}; allowed: {_ALLOWED}")
    principals: list[Principal] = []
    for i, entry in enumerate(raw):
        where = f"{key}[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"principalId", "principalType"}:
            raise pulumi.RunError(f"{where}: got {entry!r}; allowed: an object with exactly principalId and "
                                  f"principalType ({_ALLOWED})")
        principal_id, principal_type = entry["principalId"], entry["principalType"]
        if not isinstance(principal_id, str) or not _GUID.fullmatch(principal_id):
            raise pulumi.RunError(f"{where}.principalId: got {principal_id!r}; allowed: the object ID (a GUID) of a "
                                  "user, group or service principal, e.g. `az ad user show --id <upn> --query id -o tsv`, "
                                  "`az ad group show -g <name> --query id -o tsv` or `az ad sp show --id <app id> "
                                  "--query id -o tsv` (the service principal's object ID, not its application ID)")
        if principal_type not in PRINCIPAL_TYPES:
            raise pulumi.RunError(f"{where}.principalType: got {principal_type!r}; allowed: {', '.join(PRINCIPAL_TYPES)}")
        if any(p.principal_id == principal_id.lower() for p in principals):
            raise pulumi.RunError(f"{where}.principalId: got {principal_id!r} a second time; allowed: each principal once")
        principals.append(Principal(principal_id.lower(), principal_type))
    return principals


def secrets_provider_url(key_uri_with_version: str) -> str:
    """`azurekeyvault://<vault host>/keys/<name>/<version>` from the key's versioned URI
    (https://<vault host>/keys/<name>/<version>).

    The version matters: gocloud's azurekeyvault keeper, which Pulumi's secrets provider uses, takes the URL with the
    scheme replaced by https as the Key Vault key ID, "You can add an optional "/{key-version}" to the path to use a
    specific version of the key; it defaults to the latest version" (gocloud.dev/secrets/azurekeyvault, OpenFromURL
    example), and it decrypts with that version too. Versionless, a stack's data key, wrapped with the version current
    when the stack was created, stops decrypting once the rotation policy makes a newer version the latest
    ("Unable to decrypt specified value with this key", pulumi/pulumi#22338). Pinned, each stack keeps using the version
    it was created with: rotation adds versions and leaves the old ones enabled, so they keep decrypting (never disable
    or expire an old version a stack still names). Moving a stack to a newer version is
    `pulumi stack change-secrets-provider "<this output after a refresh>"`, which re-wraps its data key.
    """
    parts = urlsplit(key_uri_with_version)
    segments = parts.path.strip("/").split("/")
    if parts.scheme != "https" or not parts.netloc or len(segments) != 3 or segments[0] != "keys" or not all(segments):
        raise ValueError(f"unexpected Key Vault key URI {key_uri_with_version!r}: expected "
                         "https://<vault host>/keys/<name>/<version>")
    return f"azurekeyvault://{parts.netloc}/keys/{segments[1]}/{segments[2]}"


def build(prefix: str, location: str, admins: list[Principal], admins_key: str, readers: Sequence[Principal] = ()) -> None:
    client = azure.authorization.get_client_config()
    short = "".join(ch for ch in prefix.lower() if ch.isalnum())[:16]
    vault_name, account_name = f"kv{short}state"[:24], f"{short}state"[:24]

    def role(definition: str) -> str:
        return f"/subscriptions/{client.subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{definition}"

    group = azure.resources.ResourceGroup("state-rg", azure.resources.ResourceGroupArgs(
        resource_group_name=f"{prefix}-pulumi-state", location=location), opts=keep())
    vault = azure.keyvault.Vault("state-vault", azure.keyvault.VaultArgs(
        vault_name=vault_name, resource_group_name=group.name, location=location,
        properties=azure.keyvault.VaultPropertiesArgs(
            tenant_id=client.tenant_id, sku=azure.keyvault.SkuArgs(family="A", name="standard"),
            enable_rbac_authorization=True, enable_purge_protection=True, enable_soft_delete=True,
            soft_delete_retention_in_days=90)), opts=keep())
    # A new version every 90 days; older versions stay enabled (no expiry is set), so stacks pinned to them keep working.
    key = azure.keyvault.Key("state-key", azure.keyvault.KeyArgs(
        key_name="pulumi-state", vault_name=vault.name, resource_group_name=group.name,
        properties=azure.keyvault.KeyPropertiesArgs(kty="RSA", key_size=2048, rotation_policy=azure.keyvault.RotationPolicyArgs(
            lifetime_actions=[azure.keyvault.LifetimeActionArgs(action=azure.keyvault.ActionArgs(type="rotate"),
                                                                trigger=azure.keyvault.TriggerArgs(time_after_create="P90D"))]))),
        opts=keep())
    identity = azure.managedidentity.UserAssignedIdentity("state-identity", azure.managedidentity.UserAssignedIdentityArgs(
        resource_group_name=group.name, location=location), opts=keep())
    identity_crypto = azure.authorization.RoleAssignment("state-identity-crypto", azure.authorization.RoleAssignmentArgs(
        scope=vault.id, principal_id=identity.principal_id, principal_type="ServicePrincipal",
        role_definition_id=role(KEY_VAULT_CRYPTO_SERVICE_ENCRYPTION_USER)), opts=keep())
    # The account reads the key through the identity when it is created: it must wait for the role assignment.
    # (Azure RBAC can take a few minutes to propagate; if the first `pulumi up` fails here, run it again.)
    account = azure.storage.StorageAccount("state-account", azure.storage.StorageAccountArgs(
        account_name=account_name, resource_group_name=group.name,
        location=location, kind="StorageV2", sku=azure.storage.SkuArgs(name="Standard_ZRS"),
        enable_https_traffic_only=True, minimum_tls_version="TLS1_2", allow_blob_public_access=False, allow_shared_key_access=False,
        identity=azure.storage.IdentityArgs(type="UserAssigned", user_assigned_identities=[identity.id]),
        encryption=azure.storage.EncryptionArgs(key_source="Microsoft.Keyvault", require_infrastructure_encryption=True,
            encryption_identity=azure.storage.EncryptionIdentityArgs(encryption_user_assigned_identity=identity.id),
            key_vault_properties=azure.storage.KeyVaultPropertiesArgs(key_vault_uri=vault.properties.vault_uri, key_name=key.name))),
        opts=keep(depends_on=[identity_crypto]))
    # Nobody deletes the account by accident: Azure refuses until someone with Microsoft.Authorization/locks/delete
    # (Owner, User Access Administrator) removes the lock. It covers the account's child resources too (the container,
    # through Azure Resource Manager); a blob or container deleted through the data plane is what soft delete is for.
    azure.authorization.ManagementLockByScope("state-account-lock", azure.authorization.ManagementLockByScopeArgs(
        scope=account.id, level=azure.authorization.LockLevel.CAN_NOT_DELETE, lock_name="pulumi-state-no-delete",
        notes="Pulumi state of every stack: deleting this account loses it."), opts=keep())
    # Soft delete for 30 days, of blobs (state files, their versions) and of the container itself.
    azure.storage.BlobServiceProperties("state-blob-service", azure.storage.BlobServicePropertiesArgs(
        account_name=account.name, resource_group_name=group.name,
        blob_services_name="default", is_versioning_enabled=True,
        delete_retention_policy=azure.storage.DeleteRetentionPolicyArgs(enabled=True, days=30),
        container_delete_retention_policy=azure.storage.DeleteRetentionPolicyArgs(enabled=True, days=30)), opts=keep())
    container = azure.storage.BlobContainer("state-container", azure.storage.BlobContainerArgs(
        container_name="pulumi-state", account_name=account.name, resource_group_name=group.name, public_access="None"),
        opts=keep())

    # Shared keys are off and the vault uses Azure RBAC: `azblob://` and `azurekeyvault://` work only for principals
    # holding these data-plane roles. Protected like the rest, but not retained: revoking a principal is
    # `pulumi state unprotect <urn>` of its two assignments, deleting the account's lock (it refuses deleting role
    # assignments inside the account too), removing it from the config and `pulumi up --refresh` (README).
    # Readers (the CI preview identity): a DIY backend's preview reads the checkpoint and takes no lock, and decrypts the
    # stack's secrets: read on the container, and encrypt/decrypt on this key only (not on the whole vault).
    grants = (("admin", admins, (("crypto-user", vault.id, KEY_VAULT_CRYPTO_USER),
                                 ("blob-contributor", container.id, STORAGE_BLOB_DATA_CONTRIBUTOR))),
              ("reader", readers, (("crypto-user", key.id, KEY_VAULT_CRYPTO_USER),
                                   ("blob-reader", container.id, STORAGE_BLOB_DATA_READER))))
    for kind, principals, roles in grants:
        for principal in principals:
            for suffix, scope, definition in roles:
                azure.authorization.RoleAssignment(
                    f"state-{kind}-{principal.principal_id}-{suffix}", azure.authorization.RoleAssignmentArgs(
                        scope=scope, principal_id=principal.principal_id,
                        principal_type=azure.authorization.PrincipalType(principal.principal_type),
                        role_definition_id=role(definition)), opts=pulumi.ResourceOptions(protect=True))
    if not admins:
        pulumi.log.warn(
            f"{admins_key} is not set: no user, group or service principal is granted Key Vault Crypto User on vault "
            f"{vault_name} or Storage Blob Data Contributor on container pulumi-state of storage account {account_name}. "
            "The vault uses Azure RBAC and the account refuses shared keys, so nobody can use this backend "
            "(azblob://) or secrets provider (azurekeyvault://) until granted: list them in "
            f"{admins_key} and run `pulumi up` again.")

    pulumi.export("azure_login", container.id.apply(lambda _: f"azblob://pulumi-state?storage_account={account_name}"))
    pulumi.export("azure_secrets_provider", key.key_uri_with_version.apply(secrets_provider_url))
