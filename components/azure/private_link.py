"""Private endpoints with their private DNS registration (used by Key Vault and the blob storage accounts)."""

from __future__ import annotations

import pulumi
import pulumi_azure_native as azure_native

from .context import AzureContext
from .naming import fitted_name

PRIVATE_ENDPOINT_MAX_NAME = 64
"""Microsoft.Network/privateEndpoints names: 2-64 characters (learn.microsoft.com/azure/azure-resource-manager/management/
resource-name-rules#microsoftnetwork)."""

# Private DNS zones per private-link sub-resource (learn.microsoft.com/azure/private-link/private-endpoint-dns).
PRIVATE_DNS_ZONES = {
    "blob": "privatelink.blob.core.windows.net",
    "vault": "privatelink.vaultcore.azure.net",
}


def private_endpoint(
    name: str,
    parent: pulumi.Resource,
    context: AzureContext,
    *,
    target_id: pulumi.Input[str],
    group_id: str,
    subnet_id: pulumi.Input[str],
    dns_zone_id: pulumi.Input[str],
) -> azure_native.network.PrivateDnsZoneGroup:
    """`<name>-pe` to `target_id`'s `group_id` sub-resource, registered in `dns_zone_id` (`<name>-pe-dns`).

    The zone group writes the A record, so the service's public host name resolves to the private address
    inside the VNet (Azure Managed Lustre relies on that to reach linked blob containers). Returns the zone group:
    what must reach the service privately waits for it (it exists once the endpoint and its record do).
    """
    endpoint = azure_native.network.PrivateEndpoint(
        f"{name}-pe",
        azure_native.network.PrivateEndpointArgs(
            # A long environment, region and bucket name would overflow the 64 characters Azure allows.
            private_endpoint_name=fitted_name(f"{name}-pe", PRIVATE_ENDPOINT_MAX_NAME),
            resource_group_name=context.group,
            location=context.region,
            subnet=azure_native.network.SubnetArgs(id=subnet_id),
            private_link_service_connections=[
                azure_native.network.PrivateLinkServiceConnectionArgs(
                    name=f"{name}-{group_id}", private_link_service_id=target_id, group_ids=[group_id])
            ],
            tags=context.tags(),
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return azure_native.network.PrivateDnsZoneGroup(
        f"{name}-pe-dns",
        azure_native.network.PrivateDnsZoneGroupArgs(
            resource_group_name=context.group,
            private_endpoint_name=endpoint.name,
            private_dns_zone_group_name="default",
            private_dns_zone_configs=[
                azure_native.network.PrivateDnsZoneConfigArgs(name=group_id, private_dns_zone_id=dns_zone_id)
            ],
        ),
        opts=pulumi.ResourceOptions(parent=parent),
    )
