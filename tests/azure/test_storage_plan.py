"""Blob storage tiers and Azure Managed Lustre of the production environment."""

from __future__ import annotations

from aiinfra.plan.runtime import PlanResult

ACCOUNT = "azure-native:storage:StorageAccount"


def test_bucket_account_is_private_https_only_and_uses_the_cmk(prod_plan: PlanResult) -> None:
    account = prod_plan.one(ACCOUNT, "prod-eastus2-ckpt-account").inputs
    assert account["kind"] == "StorageV2"
    assert account["enableHttpsTrafficOnly"] is True and account["minimumTlsVersion"] == "TLS1_2"
    assert account["allowBlobPublicAccess"] is False and account["allowSharedKeyAccess"] is False
    assert account["publicNetworkAccess"] == "Disabled"
    # No trusted-services exception: nothing but the private endpoint reaches the data.
    assert account["networkRuleSet"] == {"defaultAction": "Deny", "bypass": "None"}
    encryption = account["encryption"]
    assert encryption["keySource"] == "Microsoft.Keyvault"
    assert encryption["keyVaultProperties"]["keyName"] == "cmk"
    assert encryption["encryptionIdentity"] == {"encryptionUserAssignedIdentity": "prod-eastus2-cmk-identity-id"}
    assert encryption["requireInfrastructureEncryption"] is True
    assert account["identity"] == {"type": "UserAssigned", "userAssignedIdentities": ["prod-eastus2-cmk-identity-id"]}
    assert account["accountName"].startswith("stprodeastus2ckp") and len(account["accountName"]) == 24


def test_every_storage_account_uses_the_cmk(prod_plan: PlanResult) -> None:
    accounts = prod_plan.of_type(ACCOUNT)
    assert len(accounts) == 4  # two buckets and two flow-log accounts
    for account in accounts:
        assert account.inputs["encryption"]["keySource"] == "Microsoft.Keyvault", account.name


def test_versioning_soft_delete_private_endpoint_and_container(prod_plan: PlanResult) -> None:
    service = prod_plan.one("azure-native:storage:BlobServiceProperties", "prod-eastus2-ckpt-blob-service").inputs
    assert service["isVersioningEnabled"] is True
    assert service["deleteRetentionPolicy"] == {"enabled": True, "days": 7}
    assert service["containerDeleteRetentionPolicy"] == {"enabled": True, "days": 7}
    container = prod_plan.one("azure-native:storage:BlobContainer", "prod-eastus2-ckpt-container").inputs
    assert container["containerName"] == "checkpoints" and container["publicAccess"] == "None"
    endpoint = prod_plan.one("azure-native:network:PrivateEndpoint", "prod-eastus2-ckpt-pe").inputs
    assert endpoint["privateLinkServiceConnections"][0]["groupIds"] == ["blob"]


def test_lifecycle_rules_follow_the_tiering_thresholds(prod_plan: PlanResult) -> None:
    def rule(bucket: str) -> dict:
        policy = prod_plan.one("azure-native:storage:ManagementPolicy", f"prod-eastus2-{bucket}-lifecycle").inputs["policy"]
        [only] = policy["rules"]
        return only["definition"]

    datasets = rule("datasets")
    assert datasets["filters"] == {"blobTypes": ["blockBlob"], "prefixMatch": ["datasets/"]}
    # Linked to Azure Managed Lustre, which cannot read archived blobs: no archive step.
    assert datasets["actions"]["baseBlob"] == {
        "tierToCool": {"daysAfterCreationGreaterThan": 30},
        "tierToCold": {"daysAfterCreationGreaterThan": 90},
    }
    assert datasets["actions"]["version"] == {"delete": {"daysAfterCreationGreaterThan": 90}}
    ckpt = rule("ckpt")
    assert ckpt["actions"]["baseBlob"] == {
        "tierToCool": {"daysAfterCreationGreaterThan": 30},
        "tierToCold": {"daysAfterCreationGreaterThan": 90},
        "delete": {"daysAfterCreationGreaterThan": 400},
    }


def test_redundancy_supports_the_tiers_in_use(prod_plan: PlanResult) -> None:
    # Archive is not offered on zone-redundant accounts: a new account is ZRS unless its lifecycle archives. Neither
    # prod bucket archives (datasets is linked to Lustre, ckpt sets archive_after_days: null). The SKU is kept as
    # created (ignore_changes), since Azure changes redundancy only by a conversion.
    for name in ("prod-eastus2-datasets-account", "prod-eastus2-ckpt-account"):
        account = prod_plan.one(ACCOUNT, name)
        assert account.inputs["sku"] == {"name": "Standard_ZRS"} and "sku" in account.ignoreChanges


def test_lustre_sku_capacity_cmk_zone_and_maintenance(prod_plan: PlanResult) -> None:
    fs = prod_plan.one("azure-native:storagecache:AmlFilesystem", "prod-eastus2-scratch-amlfs")
    assert fs.ignoreChanges == ["hsm"]  # the blob link is taken at creation only
    inputs = fs.inputs
    assert inputs["sku"] == {"name": "AMLFS-Durable-Premium-125"}
    assert inputs["storageCapacityTiB"] == 16
    assert inputs["zones"] == ["1"]
    assert inputs["filesystemSubnet"] == "prod-eastus2-subnet-lustre-scratch-id"
    assert inputs["maintenanceWindow"] == {"dayOfWeek": "Sunday", "timeOfDayUTC": "03:00"}
    kek = inputs["encryptionSettings"]["keyEncryptionKey"]
    assert kek["sourceVault"] == {"id": "prod-eastus2-kv-id"}
    assert "keyUrl" in kek
    assert inputs["identity"] == {"type": "UserAssigned", "userAssignedIdentities": ["prod-eastus2-cmk-identity-id"]}
    assert fs.protect and fs.retainOnDelete


def test_the_vault_of_a_lustre_region_keeps_the_public_endpoint_lustre_requires(prod_plan: PlanResult) -> None:
    # Azure Managed Lustre is no Key Vault trusted service: it needs public access enabled, selected networks only,
    # with the trusted-services bypass.
    vault = prod_plan.one("azure-native:keyvault:Vault", "prod-eastus2-kv").inputs["properties"]
    assert vault["publicNetworkAccess"] == "Enabled"
    assert vault["networkAcls"] == {"defaultAction": "Deny", "bypass": "AzureServices"}
    # A region without Lustre needs no public endpoint: private endpoint and trusted services (storage CMK, DES) only.
    private = prod_plan.one("azure-native:keyvault:Vault", "prod-swedencentral-kv").inputs["properties"]
    assert private["publicNetworkAccess"] == "Disabled"
    assert private["networkAcls"] == {"defaultAction": "Deny", "bypass": "AzureServices"}


def test_lustre_imports_from_and_exports_to_its_bucket(prod_plan: PlanResult, prod_config: dict) -> None:
    fs = prod_plan.one("azure-native:storagecache:AmlFilesystem", "prod-eastus2-scratch-amlfs")
    assert fs.inputs["hsm"]["settings"] == {
        "container": "prod-eastus2-datasets-container-id",
        "loggingContainer": "prod-eastus2-datasets-lustre-logs-id",
        "importPrefix": "/train/",
    }
    # Azure Managed Lustre's blob integration requires shared-key access on the linked account (a named exception)
    linked = prod_plan.one(ACCOUNT, "prod-eastus2-datasets-account").inputs
    assert linked["allowSharedKeyAccess"] is True
    principal = prod_config["hpc_cache_principal_id"]
    grants = {g.name: g for g in prod_plan.of_type("azure-native:authorization:RoleAssignment") if g.name.startswith("prod-eastus2-datasets-lustre")}
    assert {g.inputs["principalId"] for g in grants.values()} == {principal}
    assert {g.inputs["roleDefinitionId"].rsplit("/", 1)[1] for g in grants.values()} == {
        "17d1049b-9a84-46fb-8f53-869881c3d3ab", "ba92f5b4-2d11-453d-a403-e96b0029c9fe"}
    for grant in grants.values():
        assert grant.urn in fs.dependencies  # creation fails if the roles are not there first
    # Public access is off: AMLFS reaches the containers only through the account's private endpoint, by the name
    # its zone group registers in a zone linked to the VNet, so the file system waits for that record.
    zone_group = prod_plan.one("azure-native:network:PrivateDnsZoneGroup", "prod-eastus2-datasets-pe-dns")
    assert zone_group.urn in fs.dependencies
    link = prod_plan.one("azure-native:privatedns:VirtualNetworkLink", "prod-eastus2-dns-blob-link")
    assert link.urn in zone_group.dependencies


def test_every_storage_account_defaults_to_entra_id_authorization(prod_plan: PlanResult) -> None:
    # Lustre-linked accounts keep shared keys on for Azure Managed Lustre; the portal and tools still default to
    # Microsoft Entra ID rather than the keys.
    accounts = prod_plan.of_type(ACCOUNT)
    assert len(accounts) >= 4 and any(a.inputs["allowSharedKeyAccess"] for a in accounts)
    assert all(a.inputs["defaultToOAuthAuthentication"] is True for a in accounts)
