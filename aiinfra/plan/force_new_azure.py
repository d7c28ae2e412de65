"""The azure-native part of force_new.FORCE_NEW: the input changes the azure-native provider answers with a replacement.

The azure-native SDK classes carry no `replaceOnChanges` (pulumi-azure-native 3.29.0's Python SDK has none); the
provider decides at Diff time, from metadata built into its binary. Its Diff (provider/pkg/provider/diff.go,
calculateDetailedDiff) replaces the resource when an input changes that is
  1. a PUT path parameter ("All the parameters that are part of the resource path cause a replacement"): the resource
     group, the resource's own name and its parents' names, a role assignment's scope (subscriptionId is the
     provider's, not an input), or
  2. a property with ForceNew in the metadata, at the top level (the flattened `properties.*` are top-level) or one
     level down (`networkProfile.serviceCidr`; "if the parent property causes a replacement, all child properties
     cause a replacement"). The generator (provider/pkg/gen/properties.go, forceNew and propChangeForcesRecreate) sets
     ForceNew on a top-level property whose REST spec has `x-ms-mutability` with "create" but not "update" (the
     mutability of a $ref'd definition counts, and so does one written beside the $ref: openapi ResolveSchema merges
     sibling extensions), and on any property named in replacement.go's forceNewMap for the resource. A non-updatable
     property inside a type does not replace (properties.go: "a non-updatable property at a subtype level ... does not
     mandate the replacement of the whole resource"): the provider sends the update and Azure refuses or ignores it.
Sources read (the pinned SDK is pulumi-azure-native 3.29.0, released 2026-10-16, uv.lock):
  https://github.com/pulumi/pulumi-azure-native/blob/1b7112af33c62b247daed1028686bf279f4d5e69/provider/pkg/gen/replacement.go
    forceNewMap after pulumi/pulumi-azure-native#4771 (merged 2026-07-16, so in 3.29.0): a ManagedCluster's
    networkProfile replaces only through the listed sub-properties (before it, f8d3054ad7a51690d78c6418a507ecd0a97bf847,
    any networkProfile change replaced), and an AgentPool's networkProfile.nodePublicIPTags replaces
  provider/pkg/provider/diff.go (calculateDetailedDiff, findForceNew, calculateChangesAndReplacements), read at
    pulumi/pulumi-azure-native 1b99ef0b634254a11e6182e278313b0542176bc2 and the v2 module's later copy (no v3 copy
    was stored; the path-parameter and ForceNew rules are the same in every copy read)
  provider/pkg/gen/properties.go (genProperties, forceNew, propChangeForcesRecreate) and provider/pkg/openapi
    (ResolveSchema), v2 module, pulumi/pulumi-azure-native
  https://github.com/Azure/azure-rest-api-specs/blob/18a3afb601dd34a6a0a8d915ba3ca1f27d899ef1/specification/storagecache/resource-manager/Microsoft.StorageCache/stable/2024-03-01/amlfilesystem.json
    (AmlFilesystem is REST API 2024-03-01 in the pinned SDK): storageCapacityTiB, filesystemSubnet and zones are
    x-ms-mutability [read, create]; so are the definitions SkuName (sku) and AmlFilesystemIdentity (identity);
    location comes from common-types v3 TrackedResource, [read, create] at
    https://github.com/Azure/azure-rest-api-specs/blob/05432ee0bc8a3feb5bc0f6fd21f49bb7aeaf13af/specification/common-types/resource-management/v3/types.json
    encryptionSettings and maintenanceWindow are updatable (AmlFilesystemUpdate); hsm.settings is [read, create] but
    one level inside `hsm`, so a change is sent as an update, which Azure does not apply
  https://github.com/Azure/azure-rest-api-specs/blob/5a2abff0f2e61dac85740375816a18d468786b7b/specification/storage/resource-manager/Microsoft.Storage/stable/2024-01-01/storage.json
    StorageAccountCreateParameters and StorageAccountPropertiesCreateParameters carry no x-ms-mutability: only
    forceNewMap's isHnsEnabled and location
  https://github.com/Azure/azure-rest-api-specs/blob/cd1a17dc3f61db6c461fbe5f952f872d98556b39/specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2025-09-01/managedClusters.json
    (ManagedCluster and AgentPool are REST API 2025-09-01 in the pinned SDK): no definition ManagedCluster,
    ManagedClusterProperties (flattened), ManagedClusterAgentPoolProfileProperties (an AgentPool's flattened
    properties) or any definition they $ref carries x-ms-mutability (the file's only one is ManagedNamespace.location):
    none create-only beyond forceNewMap's; a ManagedCluster's location is [read, create] from common-types v5
    TrackedResource, https://github.com/Azure/azure-rest-api-specs/blob/e18652588ea9f6668aeaedb19918b58025398ab1/specification/common-types/resource-management/v5/types.json
    (an AgentPool is a SubResource, with no location)
  https://github.com/Azure/azure-rest-api-specs/blob/7eaa7f26cae7bb4865d7cfdc55677c8450719d10/specification/keyvault/resource-manager/Microsoft.KeyVault/stable/2024-11-01/keyvault.json
    (Vault is REST API 2024-11-01): its `properties` is not flattened (the SDK's Vault takes `properties`, so its fields
    are one level in), location and tags carry no x-ms-mutability, and createMode is [create, update]: none
    create-only. (The TypeSpec openapi.json of that version, 165ec6c46eabf1f3120ad1b99e8cbd8ac97630e7, flattens
    `properties` and takes location from TrackedResource; the SDK's shape is keyvault.json's, not it.)
  https://github.com/Azure/azure-rest-api-specs/blob/905cfe708def78b68f3e67801862982580720fe4/specification/compute/resource-manager/Microsoft.Compute/DiskRP/stable/2024-03-02/diskEncryptionSet.json
    (DiskEncryptionSet is REST API 2024-03-02): EncryptionSetProperties (flattened), EncryptionSetIdentity and the
    compute common-types v1 Resource (location, tags;
    https://github.com/Azure/azure-rest-api-specs/blob/23ae785c0b7571422dda749b594fce33656f6471/specification/compute/resource-manager/Microsoft.Compute/common-types/v1/common.json)
    carry no x-ms-mutability: none create-only
  https://github.com/Azure/azure-rest-api-specs/blob/16c9ca7681ac3c81b41c6159d60e8bfabb32bc65/specification/msi/resource-manager/Microsoft.ManagedIdentity/stable/2023-01-31/ManagedIdentity.json
    (UserAssignedIdentity is REST API 2023-01-31): the PUT body Identity is allOf common-types v4 TrackedResource,
    whose location is [read, create]
    (https://github.com/Azure/azure-rest-api-specs/blob/b8d93149913bfd224f1e1046994976eb1cd7f9e6/specification/common-types/resource-management/v4/types.json);
    its flattened properties are read-only
  https://github.com/Azure/azure-rest-api-specs/blob/e816204e2ba6f8c19d4cba728c5e271cc64b76ab/specification/keyvault/resource-manager/Microsoft.KeyVault/stable/2024-11-01/keys.json
    (Key is REST API 2024-11-01): the PUT (Keys_CreateIfNotExist, which "does not update existing keys") takes
    KeyCreateParameters: tags and a `properties` that is not flattened (kty, keySize, curveName are one level in); no
    definition in the file carries x-ms-mutability: none create-only
  https://github.com/Azure/azure-rest-api-specs/blob/bb756a3644f7488f33d30643244dc51a9ba72577/specification/storage/resource-manager/Microsoft.Storage/stable/2024-01-01/blob.json
    (BlobContainer is REST API 2024-01-01): ContainerProperties (flattened) and ImmutableStorageWithVersioning carry no
    x-ms-mutability (immutableStorageWithVersioning is described as set at creation, not marked so), and forceNewMap
    lists BlobContainer with no property: none create-only
  https://github.com/Azure/azure-rest-api-specs/blob/cd1a17dc3f61db6c461fbe5f952f872d98556b39/specification/network/resource-manager/Microsoft.Network/Network/stable/2024-05-01/natGateway.json
    (NatGateway and Subnet are REST API 2024-05-01): NatGateway (sku, zones), NatGatewayPropertiesFormat (flattened)
    and NatGatewaySku carry no x-ms-mutability, nor does network.json's Resource, where location and tags come from
    (https://github.com/Azure/azure-rest-api-specs/blob/ea83a2a3e90ca3f0420e9d0ef55a811523541aba/specification/network/resource-manager/Microsoft.Network/stable/2024-05-01/network.json):
    none create-only, location included (forceNewMap lists location for VirtualNetwork and PublicIPAddress only)
  https://github.com/Azure/azure-rest-api-specs/blob/4e8108cc8dd608db81c7d08502613e5917032ab7/specification/network/resource-manager/Microsoft.Network/stable/2024-05-01/virtualNetwork.json
    Subnet and SubnetPropertiesFormat (flattened) carry no x-ms-mutability, nor do the definitions its object
    properties $ref: RouteTable and NetworkSecurityGroup (routeTable.json bed389ea6ceb56335f95c29b7126f6fc656e6e87,
    networkSecurityGroup.json c93887028b4d26ea3c19a1c5be394b4f69e636c3, same directory), SubResource (network.json);
    forceNewMap lists Subnet with no property: none create-only. defaultOutboundAccess "cannot be updated for an
    existing subnet", says its description, but it is not marked so: a change is sent as an update
  https://github.com/Azure/azure-rest-api-specs/blob/0dcfa37f9e6838328ebfae44ceb216b6ee066949/specification/operationalinsights/resource-manager/Microsoft.OperationalInsights/stable/2023-09-01/Workspaces.json
    (Workspace is REST API 2023-09-01; the same definitions at c09d4df400a5d4c19b64b2fdb957eff3d23c50f5):
    WorkspaceProperties (flattened), WorkspaceSku, WorkspaceCapping, WorkspaceFeatures and Identity carry no
    x-ms-mutability; location is [read, create] from common-types v2 TrackedResource,
    https://github.com/Azure/azure-rest-api-specs/blob/01efba9ffbbfb58c9e9d69859153127379cb00d9/specification/common-types/resource-management/v2/types.json
  https://github.com/Azure/azure-rest-api-specs/blob/9989e1327d146e134d5080a3db3f1f909156ba1c/specification/privatedns/resource-manager/Microsoft.Network/PrivateDns/stable/2024-06-01/privatedns.json
    (PrivateZone and VirtualNetworkLink are REST API 2024-06-01): both declare location [read, create] (tags [read,
    update, create]); PrivateZoneProperties is read-only, and VirtualNetworkLinkProperties' virtualNetwork,
    registrationEnabled and resolutionPolicy carry no x-ms-mutability. The copy at the older path
    (.../Microsoft.Network/stable/2024-06-01/privatedns.json at 0ebdc78c9d2bf020990c4182f395a3cc99c3ead1, before
    resolutionPolicy) has location [read, create] too, from its own TrackedResource
  Path parameter names: the SDK's own (pulumi_azure_native 3.29.0 `*Args`, e.g. publicIpAddressName).
Not confirmed: which azure-rest-api-specs commit the 3.29.0 generator read (the SDK does not record it); each copy read
above has the inputs of the SDK's `*Args` (e.g. resolutionPolicy, defaultDataCollectionRuleResourceId).
Not expressible as paths: adding an input the old state already held with that value is no replacement
(calculateChangesAndReplacements), and a resourceGroupName or location change of case or spaces only is no change.
"""

from __future__ import annotations

_RG = "resourceGroupName"
_NETWORK_PROFILE = tuple(f"networkProfile.{name}" for name in (
    "serviceCidr", "serviceCidrs", "dnsServiceIP", "networkMode", "networkPlugin", "networkPluginMode", "podCidr",
    "networkDataplane", "networkPolicy", "outboundType"))

AZURE_NATIVE_FORCE_NEW: dict[str, tuple[str, ...]] = {
    # Data and long creations first.
    "azure-native:storagecache:AmlFilesystem": (_RG, "amlFilesystemName", "location", "storageCapacityTiB",
                                                "filesystemSubnet", "zones", "sku", "identity"),
    "azure-native:storage:StorageAccount": (_RG, "accountName", "isHnsEnabled", "location"),
    "azure-native:storage:BlobContainer": (_RG, "accountName", "containerName"),
    "azure-native:keyvault:Vault": (_RG, "vaultName"),
    "azure-native:keyvault:Key": (_RG, "vaultName", "keyName"),
    "azure-native:compute:DiskEncryptionSet": (_RG, "diskEncryptionSetName"),
    "azure-native:containerservice:ManagedCluster": (_RG, "resourceName", "diskEncryptionSetID", "dnsPrefix",
                                                     "fqdnSubdomain", "linuxProfile", "location", "nodeResourceGroup",
                                                     "windowsProfile", *_NETWORK_PROFILE),
    "azure-native:containerservice:AgentPool": (_RG, "resourceName", "agentPoolName", "gpuInstanceProfile", "vmSize",
                                                "networkProfile.nodePublicIPTags"),
    "azure-native:network:VirtualNetwork": (_RG, "virtualNetworkName", "location"),
    "azure-native:network:Subnet": (_RG, "virtualNetworkName", "subnetName"),
    "azure-native:network:PrivateEndpoint": (_RG, "privateEndpointName", "subnet"),
    "azure-native:network:PublicIPAddress": (_RG, "publicIpAddressName", "location", "publicIPAddressVersion",
                                             "publicIPPrefix", "sku"),
    "azure-native:network:NatGateway": (_RG, "natGatewayName"),
    "azure-native:operationalinsights:Workspace": (_RG, "workspaceName", "location"),
    "azure-native:privatedns:PrivateZone": (_RG, "privateZoneName", "location"),
    "azure-native:privatedns:VirtualNetworkLink": (_RG, "privateZoneName", "virtualNetworkLinkName", "location"),
    "azure-native:resources:ResourceGroup": (_RG, "location"),
    "azure-native:managedidentity:UserAssignedIdentity": (_RG, "resourceName", "location"),
    # forceNewMap's "name" under the "// sku" comment is sku.name (pulumi/pulumi-azure-native#2230).
    "azure-native:cdn:Profile": (_RG, "profileName", "location", "sku.name"),
    "azure-native:authorization:RoleAssignment": ("scope", "roleAssignmentName", "principalId"),
}
"""Wire (SDK camelCase) input paths a change at or under which makes azure-native replace the resource."""
