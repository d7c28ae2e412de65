"""Where and how an Azure component places its resources: region, resource group, tags, protection.

Tags live here, in one place. azure-native has no provider-level default tags, and a stack transform that
injected them would not run on the mock runtime, so `aiinfra plan` and the policy pack would not see what
is really deployed. Every Azure component therefore takes an `AzureContext` and tags each resource with
`context.tags()`; tests/azure check that every taggable resource of a whole platform carries the tags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from .naming import global_name

# Built-in Azure role definition IDs (learn.microsoft.com/azure/role-based-access-control/built-in-roles).
ROLES = {
    "contributor": "b24988ac-6180-42a0-ab88-20f7382dd24c",
    "reader": "acdd72a7-3385-48ef-bd42-f606fba81ae7",
    "network_contributor": "4d97b98b-1d4f-4787-a291-c67834d212e7",
    "key_vault_crypto_service_encryption_user": "e147488a-f6f5-4113-8e2d-b22465e65bf6",
    # Encrypt/decrypt with a key (the AKS KMS plugin), and manage the vault itself (AKS creates its private endpoint).
    "key_vault_crypto_user": "12338af0-0e69-4776-bea7-57ae8d297424",
    "key_vault_contributor": "f25e0fa2-a7c8-4377-a976-54943a77a395",
    "key_vault_secrets_user": "4633458b-17de-408a-b874-0445c86b69e6",
    "storage_account_contributor": "17d1049b-9a84-46fb-8f53-869881c3d3ab",
    "storage_blob_data_contributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
    # Data-plane cluster-admin under Azure RBAC for Kubernetes: no control-plane role (Owner included) has it.
    "aks_rbac_cluster_admin": "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b",
    # "Azure Kubernetes Service Cluster User Role": listClusterUserCredential/action only. A preview lists the user
    # kubeconfig every run, and Reader has no actions.
    "aks_cluster_user": "4abbcc35-e782-43d8-92c5-2d3f1bd2253f",
}


@dataclass(frozen=True)
class AzureContext:
    """Shared placement of one environment's resources in one Azure region (or `global`)."""

    environment: str
    """Environment name; part of every globally unique name."""
    region: str
    """Azure location of the resources (`westeurope`), or `global` for Front Door."""
    labels: Mapping[str, str]
    """The platform's tag set (`Platform.tags()`): environment, owner, team, cost-center, managed-by, extras."""
    subscription_id: pulumi.Input[str]
    """Subscription the resources go to; scopes role definitions and salts global names."""
    tenant_id: pulumi.Input[str]
    """Entra ID tenant of Key Vault and AKS."""
    protected: bool
    """Protect stateful resources (`protect` + `retain_on_delete`) and the AKS cluster (`protect`): every environment
    except dev, unless overridden."""
    resource_group_name: pulumi.Input[str] | None = None
    """Resource group of the region; set once the network component has created (or adopted) it."""

    def tags(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """Tags for one resource: the platform tags plus `extra` (e.g. a data zone)."""
        return {**self.labels, **(extra or {})}

    def in_resource_group(self, name: pulumi.Input[str]) -> AzureContext:
        return dataclasses.replace(self, resource_group_name=name)

    @property
    def group(self) -> pulumi.Input[str]:
        """The resource group name; a programming error if the network component has not set it yet."""
        if self.resource_group_name is None:
            raise ValueError(f"AzureContext for {self.region} has no resource group yet; build the network first")
        return self.resource_group_name

    def role(self, role: str) -> pulumi.Output[str]:
        """Subscription-scoped ID of a built-in role from `ROLES`."""
        return pulumi.Output.concat("/subscriptions/", self.subscription_id,
                                    "/providers/Microsoft.Authorization/roleDefinitions/", ROLES[role])

    def global_name(self, kind: str, *parts: str, max_length: int = 24) -> pulumi.Output[str]:
        """A globally unique, stable name (storage account, Key Vault, DNS label); see `naming.global_name`."""
        return pulumi.Output.from_input(self.subscription_id).apply(
            lambda sub: global_name(kind, (self.environment, self.region, *parts), sub, max_length=max_length))

    def stateful(self, parent: pulumi.Resource, **extra: object) -> pulumi.ResourceOptions:
        """Options for data-holding resources: protected and kept on delete outside dev."""
        return pulumi.ResourceOptions(parent=parent, protect=self.protected, retain_on_delete=self.protected, **extra)


def grant(name: str, parent: pulumi.Resource, context: AzureContext, role: str, scope: pulumi.Input[str],
          principal_id: pulumi.Input[str], *, principal_type: str = "ServicePrincipal",
          opts: pulumi.ResourceOptions | None = None) -> azure_native.authorization.RoleAssignment:
    """Give a principal a built-in role on `scope`: by default a service principal (managed identity or Azure resource
    provider). The type must be right: Azure refuses an assignment whose type differs from the principal's. `opts`:
    options beyond the parent (e.g. the stateful ones of a grant that unlocks data)."""
    return azure_native.authorization.RoleAssignment(
        name,
        azure_native.authorization.RoleAssignmentArgs(
            scope=scope, role_definition_id=context.role(role), principal_id=principal_id, principal_type=principal_type),
        opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=parent), opts),
    )


def send_logs(name: str, parent: pulumi.Resource, resource_id: pulumi.Input[str], workspace_id: pulumi.Input[str], *,
              categories: Sequence[str] = (), category_group: str | None = None) -> azure_native.monitor.DiagnosticSetting:
    """Send a resource's logs (named categories, or a category group such as "audit") to a Log Analytics workspace."""
    logs = [azure_native.monitor.DiagnosticsLogSettingsArgs(category=c, enabled=True) for c in categories]
    if category_group:
        logs.append(azure_native.monitor.DiagnosticsLogSettingsArgs(category_group=category_group, enabled=True))
    return azure_native.monitor.DiagnosticSetting(
        name,
        azure_native.monitor.DiagnosticSettingArgs(resource_uri=resource_id, name="ai-infra", workspace_id=workspace_id, logs=logs),
        opts=pulumi.ResourceOptions(parent=parent),
    )
