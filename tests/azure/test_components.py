"""Component options the production environment doesn't use: enforced VNet encryption, an existing resource group,
a created Network Watcher, Calico, a public API server with authorized ranges, a Key Vault without a public endpoint,
and the kubeconfig."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import yaml

from aiinfra.plan.runtime import PlanResult
from components.azure.cluster import AKS_AAD_SERVER_ID, exec_kubeconfig
from components.azure.context import AzureContext
from components.azure.keyvault import KeyVault, KeyVaultArgs
from components.azure.network import Network, NetworkArgs
from components.spec import NetworkSpec

LABELS = {"environment": "test", "owner": "o", "team": "t", "cost-center": "c", "managed-by": "ai-infra"}


def context(**overrides: Any) -> AzureContext:
    values: dict[str, Any] = dict(environment="test", region="westeurope", labels=LABELS,
                                  subscription_id="00000000-0000-4000-8000-000000000000", tenant_id="tenant", protected=True)
    return AzureContext(**{**values, **overrides})


def test_enforced_transit_encryption_maps_to_drop_unencrypted(plan: Callable[..., PlanResult]) -> None:
    # The spec checks refuse `enforce` on Azure today; the component maps it for when Azure supports it.
    result = plan(lambda: Network("n", NetworkArgs(context(), NetworkSpec(cidr="10.9.0.0/16", transit_encryption="enforce"))))
    assert result.one("azure-native:network:VirtualNetwork").inputs["encryption"] == {"enabled": True, "enforcement": "DropUnencrypted"}


def test_nat_none_leaves_the_network_without_egress(plan: Callable[..., PlanResult]) -> None:
    result = plan(lambda: Network("n", NetworkArgs(context(), NetworkSpec(cidr="10.9.0.0/16", transit_encryption="monitor", nat="none"))))
    assert not result.of_type("azure-native:network:NatGateway") and not result.of_type("azure-native:network:PublicIPAddress")
    for subnet in result.of_type("azure-native:network:Subnet"):
        assert "natGateway" not in subnet.inputs and subnet.inputs["defaultOutboundAccess"] is False


def test_an_existing_resource_group_is_used_not_created(plan: Callable[..., PlanResult]) -> None:
    result = plan(lambda: Network("n", NetworkArgs(context(resource_group_name="rg-shared-network"),
                                                   NetworkSpec(cidr="10.9.0.0/16", transit_encryption="monitor"))))
    assert not result.of_type("azure-native:resources:ResourceGroup")
    assert result.one("azure-native:network:VirtualNetwork").inputs["resourceGroupName"] == "rg-shared-network"


def vault_network(plan: Callable[..., PlanResult], **options: Any) -> dict[str, Any]:
    result = plan(lambda: KeyVault("kv", KeyVaultArgs(context(resource_group_name="rg"), "endpoints-subnet-id", "vault-zone-id",
                                                     "workspace-id", **options)))
    properties = result.one("azure-native:keyvault:Vault").inputs["properties"]
    return {k: properties[k] for k in ("publicNetworkAccess", "networkAcls")}


def test_a_vault_no_file_system_uses_has_no_public_endpoint(plan: Callable[..., PlanResult]) -> None:
    # Disk encryption sets and storage accounts reach the key as trusted services (the bypass), everything else
    # through the private endpoint.
    assert vault_network(plan, public_endpoint=False) == {
        "publicNetworkAccess": "Disabled", "networkAcls": {"defaultAction": "Deny", "bypass": "AzureServices"}}
    # Unless told otherwise the vault keeps the endpoint Azure Managed Lustre requires (selected networks, bypass).
    assert vault_network(plan) == {
        "publicNetworkAccess": "Enabled", "networkAcls": {"defaultAction": "Deny", "bypass": "AzureServices"}}


def test_network_options_through_the_spec(plan_azure: Callable[..., PlanResult]) -> None:
    azure = {
        "network_policy": "calico",
        "network_watcher": "create",
        "regions": {"westeurope": {
            "resource_group": "rg-ml-weu",
            "network": {"cidr": "10.60.0.0/16", "transit_encryption": "monitor"},
            "cluster": {"api_access": "public_restricted", "authorized_cidrs": ["203.0.113.0/24"],
                        "upgrade_channel": "stable", "kubernetes_version": "1.33"},
        }},
    }
    result = plan_azure(azure)
    aks = result.one("azure-native:containerservice:ManagedCluster")
    assert aks.inputs["networkProfile"]["networkPolicy"] == "calico"
    assert aks.inputs["networkProfile"]["networkDataplane"] == "azure"
    access = aks.inputs["apiServerAccessProfile"]
    assert access["enablePrivateCluster"] is False and access["authorizedIPRanges"] == ["203.0.113.0/24"]
    # stable -> AKS "patch": minor upgrades stay deliberate, so the version is not ignored
    assert aks.inputs["autoUpgradeProfile"]["upgradeChannel"] == "patch"
    assert aks.inputs["kubernetesVersion"] == "1.33" and aks.ignoreChanges == ["agentPoolProfiles[0].count"]
    watcher = result.one("azure-native:network:NetworkWatcher")
    assert watcher.inputs["resourceGroupName"] == "rg-ml-weu"
    assert result.one("azure-native:network:FlowLog").inputs["resourceGroupName"] == "rg-ml-weu"
    assert not result.of_type("azure-native:resources:ResourceGroup")


USER_KUBECONFIG = """
apiVersion: v1
kind: Config
clusters:
- name: prod-eastus2-aks
  cluster:
    server: https://prod-eastus2-abc.privatelink.eastus2.azmk8s.io:443
    certificate-authority-data: Q0EtREFUQQ==
users:
- name: clusterUser
  user:
    exec:
      command: kubelogin
      args: [get-token, --login, devicecode, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630]
contexts:
- name: prod-eastus2-aks
  context: {cluster: prod-eastus2-aks, user: clusterUser}
current-context: prod-eastus2-aks
"""


def test_kubeconfig_signs_in_with_kubelogin_non_interactively() -> None:
    config = yaml.safe_load(exec_kubeconfig(USER_KUBECONFIG, "prod-eastus2"))
    cluster = config["clusters"][0]["cluster"]
    assert cluster == {"server": "https://prod-eastus2-abc.privatelink.eastus2.azmk8s.io:443", "certificate-authority-data": "Q0EtREFUQQ=="}
    exec_ = config["users"][0]["user"]["exec"]
    assert exec_["command"] == "kubelogin"
    assert exec_["args"] == ["get-token", "--login", "azurecli", "--server-id", AKS_AAD_SERVER_ID]
    assert "token" not in str(config["users"]).replace("get-token", "")  # no static credentials
    assert config["current-context"] == "prod-eastus2"
    assert base64.b64decode(cluster["certificate-authority-data"]) == b"CA-DATA"


def test_kubeconfig_of_a_private_cluster_reached_from_outside_its_vnet_uses_the_public_fqdn() -> None:
    """The private FQDN resolves only through the cluster's private DNS zone, linked to its own VNet; the public FQDN
    is a public DNS record of the same private address, which peered and VPN networks can resolve."""
    config = yaml.safe_load(exec_kubeconfig(USER_KUBECONFIG, "prod-eastus2", "prod-eastus2-abc.hcp.eastus2.azmk8s.io"))
    cluster = config["clusters"][0]["cluster"]
    assert cluster == {"server": "https://prod-eastus2-abc.hcp.eastus2.azmk8s.io:443", "certificate-authority-data": "Q0EtREFUQQ=="}


def test_private_cluster_with_authorized_networks_publishes_its_fqdn(plan_azure: Callable[..., PlanResult]) -> None:
    result = plan_azure({"regions": {"westeurope": {
        "network": {"cidr": "10.60.0.0/16", "transit_encryption": "monitor"},
        "cluster": {"authorized_cidrs": ["10.250.0.0/24"]}}}})
    access = result.one("azure-native:containerservice:ManagedCluster").inputs["apiServerAccessProfile"]
    # AKS takes no IP allowlist on a private API server: the networks are reached by routing (peering, VPN) alone.
    assert access["enablePrivateCluster"] is True and access["enablePrivateClusterPublicFQDN"] is True
    assert "authorizedIPRanges" not in access


def test_cluster_handle_kubeconfig_is_secret_and_unknown_until_the_cluster_exists(plan: Callable[..., PlanResult]) -> None:
    # The credentials invoke needs the created cluster's name, so a preview of a new cluster cannot call it:
    # the kubeconfig stays unknown, as in a real `pulumi preview`, and it is always a secret.
    from components.compose import azure as compose_azure
    from components.spec import load_platform
    from helpers import platform_dict

    spec = load_platform(platform_dict({"azure": {"regions": {"westeurope": {
        "network": {"cidr": "10.61.0.0/16", "transit_encryption": "monitor"}, "cluster": {}}}}}))
    seen: dict[str, bool] = {}

    async def program() -> None:
        result = compose_azure.build(spec, spec.clouds.azure)
        [handle] = result.clusters
        assert (handle.cloud.value, handle.region, handle.name) == ("azure", "westeurope", "test-westeurope")
        seen["secret"] = await handle.kubeconfig.is_secret()
        seen["known"] = await handle.kubeconfig.is_known()

    plan(program)
    assert seen == {"secret": True, "known": False}
