"""Tests from a second hand mutation review of the Azure components and their composition (role assignments,
dependencies, change options, the network, Lustre and the composition): what Azure would receive that no other test
pinned down."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from azure.conftest import azure_platform
from helpers import run_platform

from aiinfra.plan.runtime import PlanResult
from components.spec import load_platform

ROLE = "azure-native:authorization:RoleAssignment"
ROLE_DEFINITIONS = "/subscriptions/00000000-0000-4000-8000-000000000000/providers/Microsoft.Authorization/roleDefinitions/"
NETWORK_CONTRIBUTOR = "4d97b98b-1d4f-4787-a291-c67834d212e7"
GROUP_A = "11111111-2222-3333-4444-555555555555"
GROUP_B = "66666666-7777-8888-9999-000000000000"
DEPLOYER = "99999999-0000-4000-8000-000000000001"
PREVIEWER_A, PREVIEWER_B = "99999999-0000-4000-8000-00000000000a", "99999999-0000-4000-8000-00000000000b"
AKS_CLUSTER_USER = "4abbcc35-e782-43d8-92c5-2d3f1bd2253f"


@pytest.fixture(scope="module")
def dev_variant_plan(dev_config: dict[str, Any], plan_azure: Callable[..., PlanResult]) -> PlanResult:
    """The dev environment with 7-day flow logs, a platform admin group and cluster admins that repeat it, and two
    previewers (one listed twice)."""
    config = copy.deepcopy(dev_config)
    region = config["regions"]["eastus2"]
    region["network"]["flow_log_retention_days"] = 7
    config["admin_group_object_ids"] = [GROUP_A]
    region["cluster"]["admins"] = [GROUP_B, GROUP_A]
    config["deployer_object_id"] = DEPLOYER
    config["previewers"] = [PREVIEWER_A, PREVIEWER_B, PREVIEWER_A]
    return plan_azure(config, environment="dev")


def test_the_cluster_identity_is_network_contributor_on_its_resource_group(prod_plan: PlanResult) -> None:
    """The control-plane identity manages the region's subnets, NAT gateway and internal load balancers / Private Link
    services (cluster.py); Network Contributor on the resource group covers that, Contributor would let it change
    everything in the group (vaults, storage accounts, Lustre)."""
    for region in ("eastus2", "swedencentral"):
        grant = prod_plan.one(ROLE, f"prod-{region}-aks-network")
        assert grant.inputs["roleDefinitionId"] == ROLE_DEFINITIONS + NETWORK_CONTRIBUTOR
        assert grant.inputs["principalType"] == "ServicePrincipal"
        assert grant.propertyDependencies["principalId"] == [
            prod_plan.one("azure-native:managedidentity:UserAssignedIdentity", f"prod-{region}-aks-identity").urn]
        assert grant.propertyDependencies["scope"] == [
            prod_plan.one("azure-native:resources:ResourceGroup", f"prod-{region}-rg").urn]


def test_every_cmk_storage_account_and_file_system_waits_for_the_cmk_identitys_key_role(prod_plan: PlanResult) -> None:
    """Services check the key when they are created (keyvault.py, CustomerKey.access): a storage account or an AMLFS
    created before its identity holds Key Vault Crypto Service Encryption User on the vault could not read the key.
    Nothing in their inputs comes from the role assignment, so only `depends_on` orders them after it."""
    accounts = prod_plan.of_type("azure-native:storage:StorageAccount")
    assert {a.name for a in accounts} >= {"prod-eastus2-datasets-account", "prod-eastus2-ckpt-account",
                                          "prod-eastus2-flowlogs-account", "prod-swedencentral-flowlogs-account"}
    for record in [*accounts, prod_plan.one("azure-native:storagecache:AmlFilesystem", "prod-eastus2-scratch-amlfs")]:
        region = record.name.split("-")[1]
        assert prod_plan.one(ROLE, f"prod-{region}-cmk-identity-crypto").urn in record.dependencies, record.name


def test_the_lifecycle_policy_and_containers_are_written_after_the_blob_service_settings(prod_plan: PlanResult) -> None:
    """The policy acts on blob versions (its version actions follow `versioning`), and containers hold the blobs that
    versioning and soft delete cover, all set by the account's blob service properties. They name only the account,
    so only `depends_on` orders them after those settings (storage.py)."""
    for bucket in ("datasets", "ckpt"):
        service = prod_plan.one("azure-native:storage:BlobServiceProperties", f"prod-eastus2-{bucket}-blob-service")
        waiting = [prod_plan.one("azure-native:storage:ManagementPolicy", f"prod-eastus2-{bucket}-lifecycle"),
                   *[c for c in prod_plan.of_type("azure-native:storage:BlobContainer") if c.parent == service.parent]]
        assert len(waiting) == (3 if bucket == "datasets" else 2)  # datasets is linked to Lustre: + its log container
        for record in waiting:
            assert service.urn in record.dependencies, record.name


def test_the_front_door_resource_group_ignores_its_location(prod_plan: PlanResult) -> None:
    """The group takes the first serving region's location, only metadata for a global service (front_door.py): a
    change of regions must not replace the group, whose replacement would delete Front Door with it."""
    group = prod_plan.one("azure-native:resources:ResourceGroup", "prod-frontdoor-rg")
    assert group.inputs["location"] == "eastus2"
    assert group.ignoreChanges == ["location"]


def test_the_workspace_keeps_logs_as_long_as_the_flow_logs_but_at_least_30_days(prod_plan: PlanResult,
                                                                               dev_variant_plan: PlanResult) -> None:
    """Log Analytics keeps data 30 to 730 days on the PerGB2018 SKU (network.py): the workspace keeps the flow log
    retention (365 days by default), and a shorter one applies to the flow log itself while the workspace is raised
    to its floor rather than sent a value out of range."""
    assert prod_plan.one("azure-native:operationalinsights:Workspace", "prod-eastus2-logs").inputs["retentionInDays"] == 365
    workspace = dev_variant_plan.one("azure-native:operationalinsights:Workspace", "dev-eastus2-logs").inputs
    assert workspace["sku"] == {"name": "PerGB2018"}  # the SKU that range is for
    assert workspace["retentionInDays"] == 30
    flow = dev_variant_plan.one("azure-native:network:FlowLog", "dev-eastus2-flowlog").inputs
    assert flow["retentionPolicy"]["days"] == 7


def test_cluster_admins_join_the_platform_admin_groups_once(dev_variant_plan: PlanResult) -> None:
    """A cluster's own `admins` are AKS admin groups besides the platform's `admin_group_object_ids`: both reach the
    cluster's aadProfile, platform groups first, each once."""
    aad = dev_variant_plan.one("azure-native:containerservice:ManagedCluster", "dev-eastus2-aks").inputs["aadProfile"]
    assert aad["adminGroupObjectIDs"] == [GROUP_A, GROUP_B]


def test_the_nat_gateway_is_standard_with_a_4_minute_idle_timeout(prod_plan: PlanResult) -> None:
    """The region's only egress (network.py): its SKU and the idle timeout after which it drops an idle outbound flow
    are what the code sets, so a change to either shows up in review."""
    for region in ("eastus2", "swedencentral"):
        nat = prod_plan.one("azure-native:network:NatGateway", f"prod-{region}-nat")
        assert nat.inputs["sku"] == {"name": "Standard"} and nat.inputs["idleTimeoutInMinutes"] == 4
        assert nat.inputs["publicIpAddresses"] == [{"id": f"prod-{region}-nat-ip-id"}]


def test_the_nsg_admits_front_door_over_tcp_before_its_internet_deny(prod_plan: PlanResult, standard_plan: PlanResult) -> None:
    """Each rule as Azure receives it. The deny of Internet inbound sits at 4096, leaving lower numbers for allows;
    with Front Door Standard the one allow (TCP to the inference port, from the AzureFrontDoor.Backend tag only) has
    the lower number, 100, so it is the one that applies to Front Door's traffic (network.py inserts it first)."""
    deny = {"name": "deny-internet-inbound", "priority": 4096, "direction": "Inbound", "access": "Deny", "protocol": "*",
            "sourceAddressPrefix": "Internet", "sourcePortRange": "*", "destinationAddressPrefix": "*",
            "destinationPortRange": "*", "description": "No inbound traffic from the Internet (ai-infra default)."}
    allow = {"name": "allow-front-door-inference", "priority": 100, "direction": "Inbound", "access": "Allow",
             "protocol": "Tcp", "sourceAddressPrefix": "AzureFrontDoor.Backend", "sourcePortRange": "*",
             "destinationAddressPrefix": "*", "destinationPortRange": "8080",
             "description": "Front Door Standard to the public inference origin (opt-in: azure_tier standard)."}
    assert prod_plan.one("azure-native:network:NetworkSecurityGroup", "prod-eastus2-nsg").inputs["securityRules"] == [deny]
    for region in ("eastus2", "swedencentral"):
        nsg = standard_plan.one("azure-native:network:NetworkSecurityGroup", f"staging-{region}-nsg").inputs
        assert nsg["securityRules"] == [allow, deny], region


def test_public_addresses_are_static_and_the_inference_one_spans_the_networks_zones(standard_plan: PlanResult) -> None:
    """Front Door Standard's origin is the inference address itself (compose/azure.py `_origin`), and the NAT gateway's
    address is the region's egress: both are static Standard IPv4 addresses (network.py `_public_ip`). The inference
    address is placed in every zone of the network (`network.zones`, all three here)."""
    for region in ("eastus2", "swedencentral"):
        for name in (f"staging-{region}-nat-ip", f"staging-{region}-inference-ip"):
            ip = standard_plan.one("azure-native:network:PublicIPAddress", name).inputs
            assert ip["publicIPAllocationMethod"] == "Static" and ip["publicIPAddressVersion"] == "IPv4", name
            assert ip["sku"] == {"name": "Standard", "tier": "Regional"}, name
        inference = standard_plan.one("azure-native:network:PublicIPAddress", f"staging-{region}-inference-ip").inputs
        assert inference["zones"] == ["1", "2", "3"]


def test_a_large_file_system_is_sized_in_tib_and_tagged_with_its_data_zone(prod_config: dict[str, Any],
                                                                        plan_azure: Callable[..., PlanResult]) -> None:
    """AMLFS capacity is set in whole TiB (lustre.py): 49152 GiB is 48 TiB, where a decimal division would ask for
    49. The file system's `data_zone` reaches its tags as on the buckets; the policy pack's data-zone-residency rule
    reads that tag."""
    config = copy.deepcopy(prod_config)
    config["regions"]["eastus2"]["lustre"]["scratch"].update(size_gib=49152, data_zone="us")
    plan = plan_azure(config, environment="prod", compliance={"data_zones": {"us": ["eastus2"]}})
    amlfs = plan.one("azure-native:storagecache:AmlFilesystem", "prod-eastus2-scratch-amlfs").inputs
    assert amlfs["storageCapacityTiB"] == 48
    assert amlfs["tags"]["data-zone"] == "us"


def test_the_exported_inference_annotations_make_an_internal_load_balancer_with_a_private_link_service(
        prod_config: dict[str, Any]) -> None:
    """Front Door Premium's origin is a Private Link service AKS creates from these annotations (compose/azure.py):
    an internal load balancer on the fixed address in the `lb` subnet, whose Private Link service takes its IP
    configuration from the same subnet, the one with Private Link service network policies disabled (network.py)."""
    plan = run_platform(load_platform(azure_platform(prod_config, environment="prod")), stack="prod")
    prefix = "service.beta.kubernetes.io/"
    assert plan.outputs["azure"]["eastus2"]["inference"]["service_annotations"] == {
        f"{prefix}azure-load-balancer-internal": "true",
        f"{prefix}azure-load-balancer-internal-subnet": "lb",
        f"{prefix}azure-load-balancer-ipv4": "10.40.224.10",
        f"{prefix}azure-pls-create": "true",
        f"{prefix}azure-pls-name": "pls-prod-eastus2-inference",
        f"{prefix}azure-pls-ip-configuration-subnet": "lb",
    }


def test_front_door_logs_go_to_the_first_serving_regions_workspace(prod_config: dict[str, Any],
                                                                  plan_azure: Callable[..., PlanResult]) -> None:
    """Without a `logs_data_zone`, Front Door's logs go to the workspace of the first region that serves inference
    (compose/azure.py), not of the first region listed, which here serves nothing."""
    config = copy.deepcopy(prod_config)
    del config["regions"]["eastus2"]["inference"]
    plan = plan_azure(config, environment="prod")
    logs = plan.one("azure-native:monitor:DiagnosticSetting", "prod-frontdoor-logs").inputs
    assert logs["workspaceId"] == "prod-swedencentral-logs-id"
    assert plan.one("azure-native:resources:ResourceGroup", "prod-frontdoor-rg").inputs["location"] == "swedencentral"


def test_private_endpoints_sit_in_the_endpoints_subnet_and_their_zones_are_global(prod_plan: PlanResult) -> None:
    """Vault and bucket endpoints go to the `endpoints` subnet, which network.py keeps off the NAT gateway and carves
    for them; their private DNS zones, like the links, are `global` resources."""
    endpoints = prod_plan.of_type("azure-native:network:PrivateEndpoint")
    assert {e.name for e in endpoints} == {"prod-eastus2-kv-pe", "prod-eastus2-datasets-pe", "prod-eastus2-ckpt-pe",
                                           "prod-swedencentral-kv-pe"}
    for endpoint in endpoints:
        region = endpoint.name.split("-")[1]
        assert endpoint.inputs["subnet"]["id"] == f"prod-{region}-subnet-endpoints-id", endpoint.name
    for group in prod_plan.of_type("azure-native:network:PrivateDnsZoneGroup"):
        assert group.inputs["privateDnsZoneGroupName"] == "default", group.name  # a new name is a new group
    for zone in [*prod_plan.of_type("azure-native:privatedns:PrivateZone"),
                 *prod_plan.of_type("azure-native:privatedns:VirtualNetworkLink")]:
        assert zone.inputs["location"] == "global", zone.name


def test_every_previewer_gets_the_cluster_user_role_once(dev_variant_plan: PlanResult) -> None:
    """Each listed previewer needs the Cluster User role on the cluster to list the kubeconfig a preview reads
    (context.py); a repeated object ID gets one assignment, not a second resource of the same name."""
    grants = [g for g in dev_variant_plan.of_type(ROLE) if g.name.startswith("dev-eastus2-aks-previewer-")]
    assert sorted(g.inputs["principalId"] for g in grants) == [PREVIEWER_A, PREVIEWER_B]
    for grant in grants:
        assert grant.inputs["roleDefinitionId"] == ROLE_DEFINITIONS + AKS_CLUSTER_USER
        assert grant.inputs["scope"] == "dev-eastus2-aks-id"
