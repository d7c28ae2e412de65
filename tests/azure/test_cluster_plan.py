"""AKS cluster and GPU pools: what Azure would receive for the production environment."""

from __future__ import annotations

from typing import Any

from aiinfra.plan.runtime import PlanResult

AKS = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
ROLE = "azure-native:authorization:RoleAssignment"
ADMIN_GROUP = "6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5"


def cluster(plan: PlanResult, region: str = "eastus2") -> dict:
    return plan.one(AKS, f"prod-{region}-aks").inputs


def pool(plan: PlanResult, name: str) -> dict:
    return plan.one(POOL, f"{name}-agentpool").inputs


def test_api_server_is_private_without_public_fqdn(prod_plan: PlanResult) -> None:
    access = cluster(prod_plan)["apiServerAccessProfile"]
    assert access["enablePrivateCluster"] is True
    assert access["enablePrivateClusterPublicFQDN"] is False
    assert access["privateDNSZone"] == "system"
    assert "authorizedIPRanges" not in access


def test_entra_id_with_azure_rbac_and_no_local_accounts(prod_plan: PlanResult, prod_config: dict[str, Any]) -> None:
    inputs = cluster(prod_plan)
    assert inputs["disableLocalAccounts"] is True
    assert inputs["enableRBAC"] is True
    aad = inputs["aadProfile"]
    assert aad["managed"] is True and aad["enableAzureRBAC"] is True
    assert aad["adminGroupObjectIDs"] == prod_config["admin_group_object_ids"]


def test_workload_identity_and_oidc_issuer(prod_plan: PlanResult) -> None:
    inputs = cluster(prod_plan)
    assert inputs["oidcIssuerProfile"] == {"enabled": True}
    assert inputs["securityProfile"]["workloadIdentity"] == {"enabled": True}


def test_cni_overlay_with_cilium_and_nat_egress(prod_plan: PlanResult) -> None:
    net = cluster(prod_plan)["networkProfile"]
    assert (net["networkPlugin"], net["networkPluginMode"], net["networkDataplane"], net["networkPolicy"]) == (
        "azure", "overlay", "cilium", "cilium")
    # the spec's derived ranges for 10.40.0.0/16: second octet 40 -> slot 8
    assert net["podCidr"] == "100.96.0.0/14" and net["serviceCidr"] == "172.24.0.0/16"
    assert net["dnsServiceIP"] == "172.24.0.10"
    assert net["outboundType"] == "userAssignedNATGateway"


def test_policy_addon_and_monitoring_go_to_the_region_workspace(prod_plan: PlanResult) -> None:
    addons = cluster(prod_plan)["addonProfiles"]
    assert addons["azurepolicy"] == {"enabled": True}
    workspace = prod_plan.one("azure-native:operationalinsights:Workspace", "prod-eastus2-logs")
    assert addons["omsagent"]["config"] == {"logAnalyticsWorkspaceResourceID": "prod-eastus2-logs-id", "useAADAuth": "true"}
    assert workspace.inputs["features"]["disableLocalAuth"] is True
    # Entra ID-authenticated Container Insights ships what its data collection rule, associated with the cluster, asks for
    rule = prod_plan.one("azure-native:monitor:DataCollectionRule", "prod-eastus2-aks-insights").inputs
    assert rule["dataSources"]["extensions"][0]["extensionName"] == "ContainerInsights"
    assert rule["destinations"]["logAnalytics"] == [{"name": "workspace", "workspaceResourceId": "prod-eastus2-logs-id"}]
    assert rule["dataFlows"] == [{"streams": ["Microsoft-ContainerInsights-Group-Default"], "destinations": ["workspace"]}]
    link = prod_plan.one("azure-native:monitor:DataCollectionRuleAssociation", "prod-eastus2-aks-insights-link").inputs
    assert link == {"resourceUri": "prod-eastus2-aks-id", "associationName": "ContainerInsightsExtension",
                    "dataCollectionRuleId": "prod-eastus2-aks-insights-id"}
    audit = prod_plan.one("azure-native:monitor:DiagnosticSetting", "prod-eastus2-aks-audit").inputs
    assert {log["category"] for log in audit["logs"]} >= {"kube-audit-admin", "guard"}
    assert audit["resourceUri"] == "prod-eastus2-aks-id"


def test_node_disks_use_the_cmk_disk_encryption_set_and_encryption_at_host(prod_plan: PlanResult) -> None:
    inputs = cluster(prod_plan)
    assert inputs["diskEncryptionSetID"] == "prod-eastus2-des-id"
    assert inputs["agentPoolProfiles"][0]["enableEncryptionAtHost"] is True
    for name in ("prod-eastus2-train", "prod-eastus2-batch", "prod-swedencentral-serve"):
        assert pool(prod_plan, name)["enableEncryptionAtHost"] is True
    des = prod_plan.one("azure-native:compute:DiskEncryptionSet", "prod-eastus2-des").inputs
    assert des["encryptionType"] == "EncryptionAtRestWithCustomerKey"
    assert des["rotationToLatestKeyVersionEnabled"] is True
    assert des["activeKey"]["sourceVault"] == {"id": "prod-eastus2-kv-id"}
    # the cluster identity may read the set; the set's identity may use the key
    reader = prod_plan.one(ROLE, "prod-eastus2-aks-des-reader").inputs
    assert reader["scope"] == "prod-eastus2-des-id" and reader["roleDefinitionId"].endswith("acdd72a7-3385-48ef-bd42-f606fba81ae7")


def test_upgrade_channel_and_system_pool(prod_plan: PlanResult) -> None:
    inputs = cluster(prod_plan)
    assert inputs["autoUpgradeProfile"] == {"upgradeChannel": "stable", "nodeOSUpgradeChannel": "NodeImage"}
    system = inputs["agentPoolProfiles"][0]
    # Untainted: the add-ons' controllers have no other CPU pool to run on (every other pool is a tainted GPU pool).
    assert system["mode"] == "System" and "nodeTaints" not in system
    assert system["enableNodePublicIP"] is False
    record = prod_plan.one(AKS, "prod-eastus2-aks")
    # regular -> AKS "stable" moves minor versions, so the channel owns the version fields
    assert set(record.ignoreChanges) == {"agentPoolProfiles[0].count", "kubernetesVersion", "agentPoolProfiles[0].orchestratorVersion"}


def test_gpu_pool_taints_labels_and_spot_settings(prod_plan: PlanResult) -> None:
    train = pool(prod_plan, "prod-eastus2-train")
    assert train["vmSize"] == "Standard_ND96isr_H100_v5"
    assert train["nodeTaints"] == ["nvidia.com/gpu=true:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert (train["scaleSetPriority"], train["scaleSetEvictionPolicy"], train["spotMaxPrice"]) == ("Spot", "Delete", -1)
    assert train["nodeLabels"]["ai-infra/accelerator"] == "h100-80gb"
    assert train["nodeLabels"]["ai-infra/capacity"] == "spot"
    assert (train["enableAutoScaling"], train["minCount"], train["maxCount"]) == (True, 0, 4)
    assert train["enableNodePublicIP"] is False
    assert train["agentPoolName"] == "train" and train["mode"] == "User"


def test_gpu_driver_mig_and_regular_capacity(prod_plan: PlanResult) -> None:
    train = pool(prod_plan, "prod-eastus2-train")
    assert train["gpuProfile"] == {"driver": "Install"}
    assert train["gpuInstanceProfile"] == "MIG3g"
    serve = pool(prod_plan, "prod-swedencentral-serve")
    assert serve["scaleSetPriority"] == "Regular" and "spotMaxPrice" not in serve
    assert serve["nodeTaints"] == ["nvidia.com/gpu=true:NoSchedule"]
    assert "gpuInstanceProfile" not in serve


def test_reserved_pool_uses_the_capacity_reservation_group(prod_plan: PlanResult, prod_config: dict[str, Any]) -> None:
    crg = prod_config["regions"]["eastus2"]["gpu_pools"]["batch"]["reservation"]
    batch = pool(prod_plan, "prod-eastus2-batch")
    assert batch["capacityReservationGroupID"] == crg
    assert batch["gpuProfile"] == {"driver": "None"}  # the GPU Operator installs the driver
    grant = prod_plan.one(ROLE, "prod-eastus2-batch-reservation-access")
    assert grant.inputs["scope"] == crg
    assert grant.inputs["roleDefinitionId"].endswith("b24988ac-6180-42a0-ab88-20f7382dd24c")
    assert grant.urn in prod_plan.one(POOL, "prod-eastus2-batch-agentpool").dependencies


def test_clusters_are_protected_outside_dev_and_node_pools_are_not(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    clusters = prod_plan.of_type(AKS)
    assert {r.name for r in clusters} == {"prod-eastus2-aks", "prod-swedencentral-aks"}
    for record in clusters:
        # AKS has no deletion guard: Pulumi must refuse to delete or replace a production cluster, and a destroy
        # must stop there rather than leave the cluster running outside Pulumi
        assert record.protect and not record.retainOnDelete, record.name
    # GPU pools are replaced when their VM size or MIG profile changes
    pools = prod_plan.of_type(POOL)
    assert pools and not any(r.protect or r.retainOnDelete for r in pools)
    dev = dev_plan.one(AKS)
    assert not dev.protect and not dev.retainOnDelete


def test_autoscaled_counts_and_channel_owned_versions_are_ignored(prod_plan: PlanResult) -> None:
    # prod's channel (regular -> AKS stable) moves minor versions: it owns each pool's version, as the system pool's
    for record in prod_plan.of_type(POOL):
        assert record.ignoreChanges == ["count", "orchestratorVersion"], record.name


def test_cluster_waits_for_its_role_assignments(prod_plan: PlanResult) -> None:
    deps = prod_plan.one(AKS, "prod-eastus2-aks").dependencies
    for grant in ("prod-eastus2-aks-network", "prod-eastus2-aks-des-reader"):
        assert prod_plan.one(ROLE, grant).urn in deps
    # the disk encryption set, which the cluster references, waits for its identity's key access
    des = prod_plan.one("azure-native:compute:DiskEncryptionSet", "prod-eastus2-des")
    assert des.urn in deps and prod_plan.one(ROLE, "prod-eastus2-cmk-identity-crypto").urn in des.dependencies


def test_the_deployer_gets_kubernetes_admin_through_azure_rbac(prod_plan: PlanResult) -> None:
    # With Azure RBAC for Kubernetes no subscription role reaches the Kubernetes API, not even Owner: without this
    # grant the Kubernetes layer's first call as the deployer would be refused.
    grant = prod_plan.one(ROLE, "prod-eastus2-aks-deployer-admin").inputs
    assert grant["roleDefinitionId"].endswith("/providers/Microsoft.Authorization/roleDefinitions/b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b")
    assert grant["principalId"] == "00000000-0000-4000-8000-000000000000"  # the plan's client config object ID
    assert grant["scope"] == "prod-eastus2-aks-id"  # the cluster, not its resource group
    # Azure refuses an assignment whose type is not the principal's; the default deployer is CI's service principal.
    assert grant["principalType"] == "ServicePrincipal"


def test_a_user_deployer_and_an_admin_group_deployer(plan_azure) -> None:  # noqa: ANN001
    region = {"westus3": {"network": {"cidr": "10.50.0.0/16", "transit_encryption": "monitor"}, "cluster": {}}}
    user = plan_azure({"regions": region, "deployer": "user"})
    assert user.one(ROLE, "test-westus3-aks-deployer-admin").inputs["principalType"] == "User"
    group = plan_azure({"regions": region, "deployer": "admin_group", "admin_group_object_ids": [ADMIN_GROUP]})
    assert not [r for r in group.of_type(ROLE) if r.name.endswith("-deployer-admin")]
    assert group.one(AKS).inputs["aadProfile"]["adminGroupObjectIDs"] == [ADMIN_GROUP]


def test_the_kubernetes_provider_waits_for_the_deployers_grant(plan_azure) -> None:  # noqa: ANN001
    plan = plan_azure({"regions": {"westus3": {"network": {"cidr": "10.50.0.0/16", "transit_encryption": "monitor"},
                                               "cluster": {}}}}, addons={"enabled": True})
    grant = plan.one(ROLE, "test-westus3-aks-deployer-admin")
    assert grant.urn in plan.one("pulumi:providers:kubernetes").dependencies


def test_settings_aks_fixes_at_creation_replace_the_pool_and_the_autoscaler_owns_the_count(prod_plan: PlanResult) -> None:
    from pulumi_azure_native.containerservice import AgentPoolArgs

    from components.azure.gpu_pool import REPLACED_ON_CHANGE

    # Each is an input AgentPool takes, by its wire name (the SDK's getters carry it), so none silently does nothing.
    wire = {v.fget._pulumi_name for v in vars(AgentPoolArgs).values() if isinstance(v, property) and hasattr(v.fget, "_pulumi_name")}
    assert "vmSize" in wire and set(REPLACED_ON_CHANGE) <= wire
    for record in prod_plan.of_type(POOL):
        assert record.replaceOnChanges == list(REPLACED_ON_CHANGE) and record.ignoreChanges[0] == "count"
        # spot, reservation and zones are among them: changing a pool's capacity type replaces it instead of failing
        assert {"scaleSetPriority", "capacityReservationGroupID", "availabilityZones"} <= set(record.replaceOnChanges)
