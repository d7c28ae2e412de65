"""Tests from a hand mutation review of the Azure components and their composition: settings Azure receives that no
other test pinned down. The CMK key's allowed operations, the Front Door profile's origin timeout, health probes and
load balancing, a customer certificate that follows its newest version, the VNet flow log format and its traffic
analytics interval, Container Insights' collection settings, the AKS load balancer SKU, the
storage accounts' access tier and account-scoped encryption keys, and GPU pools' managed OS disks."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from aiinfra.plan.runtime import PlanResult

CDN = "azure-native:cdn:"
AKS = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
ACCOUNT = "azure-native:storage:StorageAccount"
CERT_VAULT = "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/rg-certs/providers/Microsoft.KeyVault/vaults/kv-tls"


def test_the_cmk_key_only_wraps_and_unwraps(prod_plan: PlanResult) -> None:
    """Disks, storage accounts and Lustre only wrap and unwrap data keys with the CMK. An `encrypt`/`decrypt` (or
    `sign`) permission would let anyone holding a data-plane role use the key for data of their own."""
    for region in ("eastus2", "swedencentral"):
        key = prod_plan.one("azure-native:keyvault:Key", f"prod-{region}-key").inputs["properties"]
        assert key["keyOps"] == ["wrapKey", "unwrapKey"]


def test_front_door_probes_each_origin_every_30_seconds_and_waits_for_slow_generations(prod_plan: PlanResult) -> None:
    """The probe cadence and sample thresholds decide how fast a failed region leaves rotation; the 120-second origin
    timeout keeps long generation requests from being cut off at Front Door's 60-second default; session affinity
    off lets traffic follow the weights."""
    group = prod_plan.one(f"{CDN}AFDOriginGroup", "prod-frontdoor-origin-group").inputs
    assert group["healthProbeSettings"] == {"probePath": "/healthz", "probeProtocol": "Http", "probeRequestType": "GET",
                                            "probeIntervalInSeconds": 30}
    assert group["loadBalancingSettings"] == {"sampleSize": 4, "successfulSamplesRequired": 3,
                                              "additionalLatencyInMilliseconds": 50}
    assert group["sessionAffinityState"] == "Disabled"
    profile = prod_plan.one(f"{CDN}Profile", "prod-frontdoor-profile").inputs
    assert profile["originResponseTimeoutSeconds"] == 120
    for origin in prod_plan.of_type(f"{CDN}AFDOrigin"):
        assert origin.inputs["priority"] == 1, origin.name  # one tier: weights share the traffic


def test_a_customer_certificate_follows_its_newest_version(prod_config: dict[str, Any],
                                                          plan_azure: Callable[..., PlanResult]) -> None:
    """Front Door must pick up a renewed certificate by itself; a pinned version would serve the old certificate
    until it expires."""
    config = copy.deepcopy(prod_config)
    config["global_endpoint"]["certificate"] = f"{CERT_VAULT}/secrets/infer-tls"
    plan = plan_azure(config, environment="prod")
    parameters = plan.one(f"{CDN}Secret", "prod-frontdoor-certificate").inputs["parameters"]
    assert parameters == {"type": "CustomerCertificate", "secretSource": {"id": f"{CERT_VAULT}/secrets/infer-tls"},
                          "useLatestVersion": True}


def test_vnet_flow_logs_are_json_version_2_with_ten_minute_traffic_analytics(prod_plan: PlanResult) -> None:
    """Version 2 records carry flow state and bytes/packets (version 1 has neither); traffic analytics every 10
    minutes rather than hourly."""
    flow = prod_plan.one("azure-native:network:FlowLog", "prod-eastus2-flowlog").inputs
    assert flow["format"] == {"type": "JSON", "version": 2}
    analytics = flow["flowAnalyticsConfiguration"]["networkWatcherFlowAnalyticsConfiguration"]
    assert analytics["trafficAnalyticsInterval"] == 10


def test_container_insights_collects_every_namespace_each_minute_in_container_log_v2(prod_plan: PlanResult) -> None:
    """What the monitoring agent sends: every namespace (no filtering), once a minute, in the ContainerLogV2 schema the
    workspace queries expect."""
    rule = prod_plan.one("azure-native:monitor:DataCollectionRule", "prod-eastus2-aks-insights").inputs
    [extension] = rule["dataSources"]["extensions"]
    assert extension["extensionSettings"] == {"dataCollectionSettings": {
        "interval": "1m", "namespaceFilteringMode": "Off", "enableContainerLogV2": True}}


def test_aks_uses_the_standard_load_balancer(prod_plan: PlanResult) -> None:
    """The inference Service's internal load balancer needs the Standard SKU: Private Link services (Front Door
    Premium's origin) and availability zones exist only there, and Basic load balancers are retired."""
    for region in ("eastus2", "swedencentral"):
        assert prod_plan.one(AKS, f"prod-{region}-aks").inputs["networkProfile"]["loadBalancerSku"] == "standard"


def test_storage_accounts_are_hot_and_encrypt_blobs_and_files_with_account_scoped_keys(prod_plan: PlanResult) -> None:
    """Hot is the default tier new blobs land in (the lifecycle moves them colder); account-scoped keys cover every
    service with the CMK; no object replication to other tenants."""
    for account in prod_plan.of_type(ACCOUNT):
        inputs = account.inputs
        assert inputs["accessTier"] == "Hot", account.name
        assert inputs["allowCrossTenantReplication"] is False, account.name
        assert inputs["encryption"]["services"] == {"blob": {"enabled": True, "keyType": "Account"},
                                                    "file": {"enabled": True, "keyType": "Account"}}, account.name


def test_gpu_pools_use_managed_os_disks(prod_plan: PlanResult) -> None:
    """Managed OS disks are persistent and encrypted through the cluster's disk encryption set (the CMK); an ephemeral
    OS disk lives on the VM's local storage instead."""
    for pool in prod_plan.of_type(POOL):
        assert pool.inputs["osDiskType"] == "Managed", pool.name


def test_the_disk_encryption_set_reads_the_key_as_the_cmk_identity(prod_plan: PlanResult) -> None:
    """The set reaches the key as the user-assigned CMK identity, the one granted Key Vault Crypto Service Encryption
    User before the set exists. A system-assigned identity would be new, hold no role on the vault, and leave node
    disks unable to be created."""
    for region in ("eastus2", "swedencentral"):
        des = prod_plan.one("azure-native:compute:DiskEncryptionSet", f"prod-{region}-des").inputs
        assert des["identity"] == {"type": "UserAssigned", "userAssignedIdentities": [f"prod-{region}-cmk-identity-id"]}
