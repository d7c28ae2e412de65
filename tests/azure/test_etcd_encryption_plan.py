"""Kubernetes Secrets in etcd (`etcd_encryption`). By default (`platform_key`) AKS's platform-managed keys, nothing more,
and VNet encryption stays on. With `customer_key`: the AKS KMS plugin on a dedicated private vault, API Server VNet
Integration in the delegated `apiserver` subnet, the cluster identity's vault roles, and VNet encryption off in the
regions with a cluster (Azure doesn't support API Server VNet Integration in an encrypted VNet), as Azure would
receive them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from ipaddress import IPv4Network
from typing import Any

import pytest
from helpers import platform_dict
from policy_helpers import run_resource

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

AKS = "azure-native:containerservice:ManagedCluster"
VAULT = "azure-native:keyvault:Vault"
KEY = "azure-native:keyvault:Key"
ROLE = "azure-native:authorization:RoleAssignment"
SUBNET = "azure-native:network:Subnet"
VNET = "azure-native:network:VirtualNetwork"
VERSION = "0123456789abcdef0123456789abcdef"
CRYPTO_USER = "12338af0-0e69-4776-bea7-57ae8d297424"  # Key Vault Crypto User
KV_CONTRIBUTOR = "f25e0fa2-a7c8-4377-a976-54943a77a395"  # Key Vault Contributor
ETCD_TYPES = {"ai-infra:azure:EtcdKey"}
ENCRYPTED = {"enabled": True, "enforcement": "AllowUnencrypted"}  # transit_encryption monitor
# The cluster's API server settings without VNet integration: private, with AKS's own DNS zone.
PRIVATE_API = {"enablePrivateCluster": True, "enablePrivateClusterPublicFQDN": False, "privateDNSZone": "system"}
# A third region without a cluster: its VNet keeps its encryption whatever etcd_encryption says.
NO_CLUSTER = {"network": {"cidr": "10.42.0.0/16", "transit_encryption": "monitor"}, "buckets": {"archive": {}}}


class KeyUriMocks(PlanMocks):
    """Key Vault reports a key's versioned URI as Azure does (the default plan leaves it unknown)."""

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        resource_id, outputs = super().answer(type_, name, outputs)
        if type_ == KEY:
            outputs = {**outputs, "keyUriWithVersion": f"https://{name}.vault.azure.net/keys/{outputs['keyName']}/{VERSION}"}
        return resource_id, outputs


def customer_key(config: dict[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(config), "etcd_encryption": "customer_key"}


@pytest.fixture(scope="module")
def key_plan(prod_config: dict[str, Any]) -> PlanResult:
    """Production with `customer_key` and a third region without a cluster."""
    config = customer_key(prod_config)
    config["regions"]["westus3"] = copy.deepcopy(NO_CLUSTER)
    spec = load_platform(platform_dict({"azure": config}, addons={"enabled": False}, environment="prod"))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="prod", mocks_=KeyUriMocks())


@pytest.fixture(scope="module")
def default_plan(prod_config: dict[str, Any], plan_azure: Callable[..., PlanResult]) -> PlanResult:
    """Production as the reference stacks have it (no etcd_encryption set), with the same third region."""
    config = copy.deepcopy(prod_config)
    config["regions"]["westus3"] = copy.deepcopy(NO_CLUSTER)
    return plan_azure(config, environment="prod")


# --- The default: platform_key ------------------------------------------------------------------------------


def test_by_default_no_etcd_key_no_vnet_integration_and_vnet_encryption_stays_on(default_plan: PlanResult) -> None:
    assert not [r.name for r in default_plan.resources if r.type in ETCD_TYPES or "-etcd-" in r.name]
    for region in ("eastus2", "swedencentral", "westus3"):
        assert default_plan.one(VNET, f"prod-{region}-vnet").inputs["encryption"] == ENCRYPTED
    for region in ("eastus2", "swedencentral"):
        aks = default_plan.one(AKS, f"prod-{region}-aks").inputs
        # what the clusters had before etcd_encryption existed
        assert aks["securityProfile"] == {"workloadIdentity": {"enabled": True}}
        assert aks["apiServerAccessProfile"] == PRIVATE_API
        # the cluster identity's roles are the network and disk encryption set ones only
        assert {g.name for g in default_plan.of_type(ROLE) if g.name.startswith(f"prod-{region}-aks-")} == {
            f"prod-{region}-aks-network", f"prod-{region}-aks-des-reader", f"prod-{region}-aks-deployer-admin"}
    # the apiserver subnet is the one addition, in regions with a cluster
    assert {s.name for s in default_plan.of_type(SUBNET) if s.inputs["subnetName"] == "apiserver"} == {
        "prod-eastus2-subnet-apiserver", "prod-swedencentral-subnet-apiserver"}


def test_the_default_is_what_the_policy_pack_reports(default_plan: PlanResult, key_plan: PlanResult) -> None:
    kms = "Kubernetes Secrets in etcd are not encrypted with a customer-managed Key Vault key (azureKeyVaultKms is off)"
    for plan, found in ((default_plan, [kms]), (key_plan, [])):
        for aks in plan.of_type(AKS):
            assert run_resource("azure-aks-kms-etcd", AKS, aks.inputs) == found


# --- customer_key ---------------------------------------------------------------------------------------------


def test_customer_key_turns_vnet_encryption_off_only_where_a_cluster_is(key_plan: PlanResult) -> None:
    # API Server VNet Integration is blocked in an encrypted VNet with v4-or-later node sizes (the system pool is
    # Standard_D4ds_v5): explicitly off, so the PUT turns an encrypted VNet's encryption off
    for region in ("eastus2", "swedencentral"):
        vnet = key_plan.one(VNET, f"prod-{region}-vnet").inputs
        assert vnet["encryption"] == {"enabled": False}
        assert run_resource("azure-vnet-transit-encryption-enforced", VNET, vnet) == ["VNet encryption is off"]
    # a region without a cluster has no API server to integrate: its VNet stays encrypted
    westus3 = key_plan.one(VNET, "prod-westus3-vnet").inputs
    assert westus3["encryption"] == ENCRYPTED
    assert run_resource("azure-vnet-transit-encryption-enforced", VNET, westus3) == [
        "VNet encryption allows unencrypted flows (AllowUnencrypted): they are allowed, not dropped"]
    assert not [r.name for r in key_plan.resources if r.name.startswith("prod-westus3-") and "-etcd-" in r.name]
    assert "apiserver" not in {s.inputs["subnetName"] for s in key_plan.of_type(SUBNET) if s.name.startswith("prod-westus3-")}


def test_switching_modes_changes_no_subnet(default_plan: PlanResult, key_plan: PlanResult) -> None:
    assert {s.name: s.inputs for s in key_plan.of_type(SUBNET)} == {s.name: s.inputs for s in default_plan.of_type(SUBNET)}


@pytest.mark.parametrize("region", ["eastus2", "swedencentral"])
def test_the_cluster_encrypts_etcd_with_the_versioned_key_of_a_private_vault(key_plan: PlanResult, region: str) -> None:
    aks = key_plan.one(AKS, f"prod-{region}-aks").inputs
    assert aks["securityProfile"]["azureKeyVaultKms"] == {
        "enabled": True,
        # the versioned key URI: AKS requires it and stays on that version until told otherwise
        "keyId": f"https://prod-{region}-etcd-key.vault.azure.net/keys/etcd/{VERSION}",
        "keyVaultNetworkAccess": "Private",
        "keyVaultResourceId": f"prod-{region}-etcd-kv-id",
    }
    assert aks["securityProfile"]["workloadIdentity"] == {"enabled": True}
    # a private vault needs API Server VNet Integration; the cluster stays private with AKS's DNS zone
    assert aks["apiServerAccessProfile"] == {
        "enablePrivateCluster": True, "enablePrivateClusterPublicFQDN": False, "privateDNSZone": "system",
        "enableVnetIntegration": True, "subnetId": f"prod-{region}-subnet-apiserver-id"}


def test_the_apiserver_subnet_is_the_delegated_first_28_of_the_last_lustre_block(prod_plan: PlanResult) -> None:
    # built in both modes (here the default), so switching etcd_encryption later changes no subnet
    for region, cidr in (("eastus2", "10.40.0.0/16"), ("swedencentral", "10.41.0.0/16")):
        subnet = prod_plan.one(SUBNET, f"prod-{region}-subnet-apiserver").inputs
        # third quarter = .128-.191, cut in 8 /21s: the eighth starts at .184
        assert subnet["addressPrefix"] == f"{cidr.split('.0.0/')[0]}.184.0/28"
        assert IPv4Network(subnet["addressPrefix"]).subnet_of(IPv4Network(cidr))
        assert subnet["subnetName"] == "apiserver"
        assert subnet["delegations"] == [{"name": "aks-apiserver", "serviceName": "Microsoft.ContainerService/managedClusters"}]
        assert subnet["networkSecurityGroup"] == {"id": f"prod-{region}-nsg-id"}
        # no NAT gateway (AKS manages the API server's traffic; none documented there) and no implicit outbound
        assert "natGateway" not in subnet and subnet["defaultOutboundAccess"] is False
        assert prod_plan.one(SUBNET, f"prod-{region}-subnet-nodes").inputs["natGateway"] == {"id": f"prod-{region}-nat-id"}
    # the subnets' NSG denies only the Internet: nodes reach the API server on TCP 443 and 4443 and the load balancer
    # probes it on 9988 under Azure's default AllowVnetInBound and AllowAzureLoadBalancerInBound rules
    nsg = prod_plan.one("azure-native:network:NetworkSecurityGroup", "prod-eastus2-nsg").inputs
    assert [r["sourceAddressPrefix"] for r in nsg["securityRules"] if r["access"] == "Deny"] == ["Internet"]
    # created last in the chain: after the Lustre subnet of eastus2, with no other subnet waiting for it
    apiserver = prod_plan.one(SUBNET, "prod-eastus2-subnet-apiserver")
    assert prod_plan.one(SUBNET, "prod-eastus2-subnet-lustre-scratch").urn in apiserver.dependencies
    assert not [s.name for s in prod_plan.of_type(SUBNET) if apiserver.urn in s.dependencies]
    # the others are where they were, delegated to nothing
    others = [s for s in prod_plan.of_type(SUBNET) if s.name.startswith("prod-eastus2-") and s.name != apiserver.name]
    assert {s.inputs["subnetName"]: s.inputs["addressPrefix"] for s in others} == {
        "nodes": "10.40.0.0/17", "lustre-scratch": "10.40.128.0/21", "endpoints": "10.40.192.0/19", "lb": "10.40.224.0/19"}
    assert not [s.name for s in others if "delegations" in s.inputs]


@pytest.mark.parametrize("region", ["eastus2", "swedencentral"])
def test_the_cluster_identity_gets_its_vault_roles_before_the_cluster(key_plan: PlanResult, region: str) -> None:
    identity = f"prod-{region}-aks-identity"
    roles = {}
    for suffix in ("aks-etcd-crypto", "aks-etcd-kv-contributor"):
        grant = key_plan.one(ROLE, f"prod-{region}-{suffix}")
        assert grant.inputs["scope"] == f"prod-{region}-etcd-kv-id"  # the etcd vault, not the region's CMK vault
        assert grant.inputs["principalType"] == "ServicePrincipal"
        assert key_plan.one("azure-native:managedidentity:UserAssignedIdentity", identity).urn in grant.dependencies
        roles[suffix] = grant.inputs["roleDefinitionId"]
        assert grant.urn in key_plan.one(AKS, f"prod-{region}-aks").dependencies
    assert roles == {
        "aks-etcd-crypto": f"/subscriptions/00000000-0000-4000-8000-000000000000/providers/Microsoft.Authorization/roleDefinitions/{CRYPTO_USER}",
        "aks-etcd-kv-contributor": f"/subscriptions/00000000-0000-4000-8000-000000000000/providers/Microsoft.Authorization/roleDefinitions/{KV_CONTRIBUTOR}",
    }
    # the vault name resolves in the VNet before the cluster exists too
    assert key_plan.one("azure-native:network:PrivateDnsZoneGroup", f"prod-{region}-etcd-kv-pe-dns").urn in \
        key_plan.one(AKS, f"prod-{region}-aks").dependencies
    # no etcd role anywhere near the region's CMK vault
    assert not [g.name for g in key_plan.of_type(ROLE) if g.inputs["scope"] == f"prod-{region}-kv-id"
                and g.inputs["roleDefinitionId"].endswith((CRYPTO_USER, KV_CONTRIBUTOR))]


def test_the_etcd_vault_is_private_with_its_own_endpoint_and_audit_log(key_plan: PlanResult) -> None:
    # eastus2 has Lustre, so its CMK vault keeps a public endpoint; the etcd vault is private there too
    vault = key_plan.one(VAULT, "prod-eastus2-etcd-kv")
    props = vault.inputs["properties"]
    assert props["publicNetworkAccess"] == "Disabled"
    assert props["networkAcls"] == {"defaultAction": "Deny", "bypass": "AzureServices"}
    assert props["enableRbacAuthorization"] is True and props["enablePurgeProtection"] is True
    assert props["enableSoftDelete"] is True and props["softDeleteRetentionInDays"] == 90
    assert key_plan.one(VAULT, "prod-eastus2-kv").inputs["properties"]["publicNetworkAccess"] == "Enabled"
    name = vault.inputs["vaultName"]
    assert name.startswith("kvetcdprod") and 3 <= len(name) <= 24 and name != key_plan.one(VAULT, "prod-eastus2-kv").inputs["vaultName"]
    assert (vault.protect, vault.retainOnDelete) == (True, True)
    endpoint = key_plan.one("azure-native:network:PrivateEndpoint", "prod-eastus2-etcd-kv-pe").inputs
    assert endpoint["subnet"]["id"] == "prod-eastus2-subnet-endpoints-id"
    assert endpoint["privateLinkServiceConnections"] == [
        {"name": "prod-eastus2-etcd-kv-vault", "privateLinkServiceId": "prod-eastus2-etcd-kv-id", "groupIds": ["vault"]}]
    zone_group = key_plan.one("azure-native:network:PrivateDnsZoneGroup", "prod-eastus2-etcd-kv-pe-dns").inputs
    assert zone_group["privateDnsZoneConfigs"] == [{"name": "vault", "privateDnsZoneId": "prod-eastus2-dns-vault-id"}]
    audit = key_plan.one("azure-native:monitor:DiagnosticSetting", "prod-eastus2-etcd-kv-audit").inputs
    assert (audit["resourceUri"], audit["workspaceId"]) == ("prod-eastus2-etcd-kv-id", "prod-eastus2-logs-id")
    assert audit["logs"] == [{"categoryGroup": "audit", "enabled": True}]


def test_the_etcd_key_component_parents_its_children(key_plan: PlanResult) -> None:
    for region in ("eastus2", "swedencentral"):
        component = key_plan.one("ai-infra:azure:EtcdKey", f"prod-{region}")
        children = {r.name for r in key_plan.resources if r.parent == component.urn}
        assert children == {f"prod-{region}-etcd-{suffix}" for suffix in ("kv", "key", "kv-pe", "kv-pe-dns", "kv-audit")}


def test_the_etcd_vault_and_key_are_deletable_in_dev(dev_config: dict[str, Any], plan_azure: Callable[..., PlanResult]) -> None:
    plan = plan_azure(customer_key(dev_config), environment="dev")
    vault, key = plan.one(VAULT, "dev-eastus2-etcd-kv"), plan.one(KEY, "dev-eastus2-etcd-key")
    assert not (vault.protect or vault.retainOnDelete or key.protect or key.retainOnDelete)
    assert vault.inputs["properties"]["publicNetworkAccess"] == "Disabled"
    assert vault.inputs["properties"]["softDeleteRetentionInDays"] == 7


def test_the_key_rotates_yearly_never_expires_and_only_encrypts_and_decrypts(key_plan: PlanResult) -> None:
    key = key_plan.one(KEY, "prod-eastus2-etcd-key")
    assert key.inputs["keyName"] == "etcd"
    props = key.inputs["properties"]
    assert (props["kty"], props["keySize"]) == ("RSA", 2048)
    assert props["keyOps"] == ["encrypt", "decrypt"]  # the KMS plugin's Encrypt and Decrypt (RSA-OAEP-256)
    # an expired version stops the API server: no expiry on the first version nor on the ones rotation makes
    assert "attributes" not in props
    assert props["rotationPolicy"] == {"lifetimeActions": [{"action": {"type": "rotate"}, "trigger": {"timeAfterCreate": "P1Y"}}]}
    assert (key.protect, key.retainOnDelete) == (True, True)


def test_the_cmk_vault_is_unchanged(prod_plan: PlanResult, key_plan: PlanResult) -> None:
    # The shared vault-building helper leaves the region's CMK vault exactly as it was, in both modes (an input change
    # there would update a protected vault every other CMK depends on).
    expected = {
        "enableRbacAuthorization": True, "sku": {"family": "A", "name": "standard"}, "enablePurgeProtection": True,
        "enabledForTemplateDeployment": False, "enabledForDiskEncryption": False, "enabledForDeployment": False,
        "networkAcls": {"defaultAction": "Deny", "bypass": "AzureServices"}, "tenantId": "00000000-0000-4000-8000-000000000000",
        "softDeleteRetentionInDays": 90, "enableSoftDelete": True}
    for region, access in (("eastus2", "Enabled"), ("swedencentral", "Disabled")):  # public only with Lustre
        vault = prod_plan.one(VAULT, f"prod-{region}-kv")
        assert vault.inputs["properties"] == {**expected, "publicNetworkAccess": access}
        assert set(vault.inputs) == {"vaultName", "resourceGroupName", "tags", "properties", "location"}
        assert vault.inputs["vaultName"].startswith(f"kvprod{region}"[:16]) and vault.inputs["location"] == region
        assert (vault.protect, vault.retainOnDelete) == (True, True)
        assert key_plan.one(VAULT, f"prod-{region}-kv").inputs == vault.inputs


def test_platform_key_set_explicitly_is_the_default(prod_config: dict[str, Any], prod_plan: PlanResult,
                                                     plan_azure: Callable[..., PlanResult]) -> None:
    explicit = plan_azure({**copy.deepcopy(prod_config), "etcd_encryption": "platform_key"}, environment="prod")
    assert {r.urn: r.inputs for r in explicit.resources} == {r.urn: r.inputs for r in prod_plan.resources}


def test_a_region_without_a_cluster_gets_no_apiserver_subnet_and_no_etcd_key(plan_azure: Callable[..., PlanResult]) -> None:
    plan = plan_azure({"etcd_encryption": "customer_key",
                       "regions": {"westus3": {"network": {"cidr": "10.60.0.0/16", "transit_encryption": "monitor"},
                                               "buckets": {"data": {}}}}})
    assert {s.inputs["subnetName"] for s in plan.of_type(SUBNET)} == {"nodes", "endpoints", "lb"}
    assert not [r.name for r in plan.resources if r.type in ETCD_TYPES or "-etcd-" in r.name]
