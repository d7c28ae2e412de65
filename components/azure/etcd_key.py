"""The key AKS's Key Vault KMS plugin encrypts Kubernetes Secrets in etcd with: a dedicated private vault per region
(RBAC, purge protection, no public network access, private endpoint, audit log) holding one RSA key that rotates yearly
and never expires. `Cluster` turns the plugin on with it (`EtcdKeyRef`) and grants its identity the vault roles.

Why a vault of its own: the KMS plugin refuses a vault behind a firewall unless it reaches the vault privately
(`keyVaultNetworkAccess: Private`), and the region's CMK vault keeps its public endpoint open to trusted services where
Azure Managed Lustre needs it (keyvault.py). A separate vault is private in every region alike, and keeps the Key Vault
Contributor role AKS needs (to create its private endpoint) off the vault of every other CMK.

Built only with `etcd_encryption: customer_key`: the private vault needs API Server VNet Integration, which costs the
region's VNet its VNet encryption (compose/azure.py, spec/azure.py `EtcdEncryption`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from .base import AzureComponent
from .context import AzureContext, send_logs
from .keyvault import rsa_key_args, vault_args, vault_options, yearly_rotation
from .private_link import private_endpoint

ETCD_KEY_NAME = "etcd"
ETCD_VAULT_KIND = "kvetcd"
"""Prefix of the vault's global name (`kvetcd<env><region, shortened><8 hex>`): `global_name` shortens the environment
and region to fit Key Vault's 24 characters, so no environment or region can overflow it."""
# The plugin's Key Vault calls: Encrypt and Decrypt with RSA-OAEP-256 under KMS v2 (AKS 1.27+), RSA1_5 under KMS v1
# (github.com/Azure/kubernetes-kms pkg/plugin/kms_v2_server.go, server.go, keyvault.go). Key Vault refuses an operation
# the key's key_ops don't list ("Operation decrypt is not permitted on this key": Azure/azure-sdk-for-net#11518).
_KEY_OPS = ["encrypt", "decrypt"]


@dataclass(frozen=True)
class EtcdKeyRef:
    """What an AKS cluster needs to encrypt etcd with the key (`ClusterArgs.etcd_key`)."""

    vault_id: pulumi.Input[str]
    key_id: pulumi.Input[str]
    """The versioned key URI: AKS takes `securityProfile.azureKeyVaultKms.keyId` with its version and stays on it."""
    apiserver_subnet_id: pulumi.Input[str]
    """The region's delegated `apiserver` subnet (API Server VNet Integration, which a private vault requires)."""
    ready: pulumi.Resource
    """The vault's private DNS record: the vault name resolves inside the VNet once it exists."""


@dataclass(frozen=True)
class EtcdKeyArgs:
    context: AzureContext
    """Region, resource group, tags, tenant and protection."""
    endpoint_subnet_id: pulumi.Input[str]
    """Subnet of the vault's private endpoint (the region's `endpoints`)."""
    dns_zone_id: pulumi.Input[str]
    """Private DNS zone `privatelink.vaultcore.azure.net` linked to the VNet. Without a record there the zone answers
    NXDOMAIN for the vault's name inside the VNet (its public name is a CNAME into that zone)."""
    workspace_id: pulumi.Input[str]
    """Log Analytics workspace that receives the vault's audit events (every encrypt and decrypt of the plugin)."""


class EtcdKey(AzureComponent):
    """`ai-infra:azure:EtcdKey`. Children: `<name>-etcd-kv`, `-etcd-key`, `-etcd-kv-pe`, `-etcd-kv-pe-dns`,
    `-etcd-kv-audit`."""

    def __init__(self, name: str, args: EtcdKeyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:EtcdKey", name, opts)
        ctx = args.context
        # Public network access off: the KMS plugin refuses a vault open to selected networks only. With a private
        # vault AKS makes a private endpoint of its own to it, in the node resource group (learn.microsoft.com/azure/
        # aks/use-kms-etcd-encryption, "Create a key vault and key for a private key vault"), and documents no DNS
        # record for it. Inside the VNet the vault's name (a CNAME into privatelink.vaultcore.azure.net) is answered
        # by the region's zone of that name linked to the VNet, NXDOMAIN without a record: our endpoint below, whose
        # DNS zone group writes the record, makes the name resolve, and the cluster waits for it (`EtcdKeyRef.ready`).
        self.vault = azure_native.keyvault.Vault(f"{name}-etcd-kv", vault_args(ctx, ETCD_VAULT_KIND, public=False),
                                                 opts=vault_options(ctx, self))
        # A new version every year, and no expiry on any version: AKS pins the versioned key ID and keeps using the
        # previous version too, and an expired one stops the API server ("After you turn off KMS, you can't delete or
        # expire the keys. Such behaviors would cause the API server to stop working"; "KMS uses two keys at the same
        # time": learn.microsoft.com/azure/aks/use-kms-etcd-encryption). The cluster moves to a new version on
        # `pulumi up --refresh` (README: rotation runbook).
        self.key = azure_native.keyvault.Key(
            f"{name}-etcd-key",
            rsa_key_args(ctx, self.vault, ETCD_KEY_NAME, _KEY_OPS, yearly_rotation()),
            # Deleted with its vault, never through Key Vault's data plane, which this private vault refuses to the
            # deploying machine (the CMK key in keyvault.py has the same reason).
            opts=ctx.stateful(self, deleted_with=self.vault),
        )
        self.dns = private_endpoint(f"{name}-etcd-kv", self, ctx, target_id=self.vault.id, group_id="vault",
                                    subnet_id=args.endpoint_subnet_id, dns_zone_id=args.dns_zone_id)
        send_logs(f"{name}-etcd-kv-audit", self, self.vault.id, args.workspace_id, category_group="audit")
        self.key_id: pulumi.Output[str] = self.key.key_uri_with_version
        self.register_outputs({"vault_id": self.vault.id, "key_id": self.key_id})

    def for_cluster(self, apiserver_subnet_id: pulumi.Input[str]) -> EtcdKeyRef:
        """The reference a cluster whose API server goes in `apiserver_subnet_id` encrypts etcd with."""
        return EtcdKeyRef(self.vault.id, self.key_id, apiserver_subnet_id, self.dns)
