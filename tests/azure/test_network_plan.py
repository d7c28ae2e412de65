"""The encrypted regional network, Key Vault and flow logs of the production environment."""

from __future__ import annotations

from ipaddress import IPv4Network

from aiinfra.plan.runtime import PlanResult

NET = "azure-native:network:"


def test_vnet_encryption_is_on_with_the_monitor_enforcement(prod_plan: PlanResult) -> None:
    vnet = prod_plan.one(f"{NET}VirtualNetwork", "prod-eastus2-vnet")
    assert vnet.inputs["encryption"] == {"enabled": True, "enforcement": "AllowUnencrypted"}
    assert vnet.inputs["addressSpace"] == {"addressPrefixes": ["10.40.0.0/16"]}
    assert vnet.ignoreChanges == ["subnets"]  # subnets are their own resources


def test_nsg_denies_inbound_from_the_internet_on_every_subnet(prod_plan: PlanResult) -> None:
    nsg = prod_plan.one(f"{NET}NetworkSecurityGroup", "prod-eastus2-nsg")
    deny = [r for r in nsg.inputs["securityRules"] if r["direction"] == "Inbound" and r["sourceAddressPrefix"] == "Internet"]
    assert deny == [{**deny[0], "access": "Deny", "destinationPortRange": "*", "protocol": "*"}]
    assert not [r for r in nsg.inputs["securityRules"] if r["access"] == "Allow"]  # Premium: nothing opened
    subnets = [s for s in prod_plan.of_type(f"{NET}Subnet") if s.name.startswith("prod-eastus2-")]
    assert {s.inputs["subnetName"] for s in subnets} == {"nodes", "endpoints", "lb", "lustre-scratch", "apiserver"}
    for subnet in subnets:
        assert subnet.inputs["networkSecurityGroup"] == {"id": "prod-eastus2-nsg-id"}
        assert subnet.inputs["defaultOutboundAccess"] is False
        assert subnet.inputs["privateEndpointNetworkPolicies"] == "Enabled"  # the NSG applies to private endpoints too


def test_subnets_are_disjoint_blocks_of_the_network_created_one_at_a_time(prod_plan: PlanResult) -> None:
    subnets = [s for s in prod_plan.of_type(f"{NET}Subnet") if s.name.startswith("prod-eastus2-")]
    blocks = [IPv4Network(s.inputs["addressPrefix"]) for s in subnets]
    assert all(b.subnet_of(IPv4Network("10.40.0.0/16")) for b in blocks)
    assert not any(a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1:])
    # each subnet after the first waits for the previous one (Azure rejects parallel subnet writes on a VNet)
    for previous, subnet in zip(subnets, subnets[1:]):
        assert previous.urn in subnet.dependencies
    lb = next(s for s in subnets if s.inputs["subnetName"] == "lb")
    assert lb.inputs["privateLinkServiceNetworkPolicies"] == "Disabled"


def test_nat_gateway_is_the_egress_of_node_and_lustre_subnets(prod_plan: PlanResult) -> None:
    nat = prod_plan.one(f"{NET}NatGateway", "prod-eastus2-nat")
    assert nat.inputs["sku"] == {"name": "Standard"}
    assert nat.inputs["publicIpAddresses"] == [{"id": "prod-eastus2-nat-ip-id"}]
    for role in ("nodes", "lustre-scratch"):
        assert prod_plan.one(f"{NET}Subnet", f"prod-eastus2-subnet-{role}").inputs["natGateway"] == {"id": "prod-eastus2-nat-id"}


def test_vnet_flow_logs_with_retention_and_traffic_analytics(prod_plan: PlanResult) -> None:
    flow = prod_plan.one(f"{NET}FlowLog", "prod-eastus2-flowlog").inputs
    assert flow["targetResourceId"] == "prod-eastus2-vnet-id"
    assert flow["storageId"] == "prod-eastus2-flowlogs-account-id"
    assert flow["enabled"] is True
    assert flow["retentionPolicy"] == {"enabled": True, "days": 365}
    assert (flow["resourceGroupName"], flow["networkWatcherName"]) == ("NetworkWatcherRG", "NetworkWatcher_eastus2")
    # the log account takes no shared keys: the flow log writes as its own identity with a data role
    assert flow["identity"] == {"type": "UserAssigned", "userAssignedIdentities": ["prod-eastus2-flowlogs-identity-id"]}
    writer = prod_plan.one("azure-native:authorization:RoleAssignment", "prod-eastus2-flowlogs-writer")
    assert writer.inputs["scope"] == "prod-eastus2-flowlogs-account-id"
    assert writer.inputs["roleDefinitionId"].endswith("ba92f5b4-2d11-453d-a403-e96b0029c9fe")
    assert writer.urn in prod_plan.one(f"{NET}FlowLog", "prod-eastus2-flowlog").dependencies
    analytics = flow["flowAnalyticsConfiguration"]["networkWatcherFlowAnalyticsConfiguration"]
    assert analytics["enabled"] is True and analytics["workspaceResourceId"] == "prod-eastus2-logs-id"


def test_key_vault_rbac_purge_protection_private_endpoint_and_audit(prod_plan: PlanResult) -> None:
    vault = prod_plan.one("azure-native:keyvault:Vault", "prod-eastus2-kv")
    props = vault.inputs["properties"]
    assert props["enableRbacAuthorization"] is True and props["enablePurgeProtection"] is True
    assert props["softDeleteRetentionInDays"] == 90
    assert props["networkAcls"] == {"defaultAction": "Deny", "bypass": "AzureServices"}
    assert vault.inputs["vaultName"].startswith("kvprodeastus2") and len(vault.inputs["vaultName"]) <= 24
    endpoint = prod_plan.one(f"{NET}PrivateEndpoint", "prod-eastus2-kv-pe").inputs
    assert endpoint["privateLinkServiceConnections"][0]["groupIds"] == ["vault"]
    zone_group = prod_plan.one(f"{NET}PrivateDnsZoneGroup", "prod-eastus2-kv-pe-dns").inputs
    assert zone_group["privateDnsZoneConfigs"] == [{"name": "vault", "privateDnsZoneId": "prod-eastus2-dns-vault-id"}]
    audit = prod_plan.one("azure-native:monitor:DiagnosticSetting", "prod-eastus2-kv-audit").inputs
    assert audit["logs"] == [{"categoryGroup": "audit", "enabled": True}]


def test_key_is_rsa_2048_with_a_rotation_policy(prod_plan: PlanResult) -> None:
    key = prod_plan.one("azure-native:keyvault:Key", "prod-eastus2-key").inputs["properties"]
    assert (key["kty"], key["keySize"]) == ("RSA", 2048)  # Azure Managed Lustre takes 2048-bit RSA only
    policy = key["rotationPolicy"]
    assert policy["attributes"] == {"expiryTime": "P2Y"}
    actions = {a["action"]["type"]: a["trigger"] for a in policy["lifetimeActions"]}
    assert actions == {"rotate": {"timeAfterCreate": "P1Y"}, "notify": {"timeBeforeExpiry": "P30D"}}


def test_private_dns_zones_are_linked_to_the_vnet(prod_plan: PlanResult) -> None:
    zones = {z.inputs["privateZoneName"] for z in prod_plan.of_type("azure-native:privatedns:PrivateZone") if z.name.startswith("prod-eastus2")}
    assert zones == {"privatelink.blob.core.windows.net", "privatelink.vaultcore.azure.net"}
    for link in prod_plan.of_type("azure-native:privatedns:VirtualNetworkLink"):
        assert link.inputs["registrationEnabled"] is False
        assert link.inputs["virtualNetwork"]["id"].endswith("-vnet-id")


def test_a_full_region_stays_within_its_resource_budget(prod_plan: PlanResult) -> None:
    # eastus2 has everything: network, cluster, GPU pools, Lustre, buckets and an inference origin
    count = sum(1 for r in prod_plan.resources if r.custom and r.name.startswith("prod-eastus2-"))
    assert 40 <= count <= 90, count
