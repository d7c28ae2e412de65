"""VNet flow logs of a region: a CMK-encrypted storage account that keeps them for the spec's retention,
the flow log on the VNet (with traffic analytics into the region's workspace), and optionally the
Network Watcher that carries it."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from components.spec.azure import NetworkWatcherMode

from .base import AzureComponent
from .context import AzureContext, grant
from .keyvault import CustomerKey
from .storage import secure_account

_AZURE_WATCHER_GROUP = "NetworkWatcherRG"
_TRAFFIC_ANALYTICS_INTERVAL_MINUTES = 10


@dataclass(frozen=True)
class FlowLogsArgs:
    context: AzureContext
    vnet_id: pulumi.Input[str]
    """The VNet whose flows are logged (VNet flow logs; NSG flow logs are retired for new deployments)."""
    workspace_id: pulumi.Input[str]
    """Log Analytics workspace for traffic analytics."""
    retention_days: int
    """Days Network Watcher keeps the flow log blobs (1-365; the spec checks enforce it)."""
    cmk: CustomerKey
    """The region's customer-managed key for the log account."""
    watcher: NetworkWatcherMode = NetworkWatcherMode.AZURE_DEFAULT
    """Default: attach to the watcher Azure creates per region; `create` makes one here."""


class FlowLogs(AzureComponent):
    """`ai-infra:azure:FlowLogs`. Children: `<name>-flowlogs-account`, `-flowlogs-identity`, `-flowlogs-writer`,
    `-watcher` (mode `create`), `-flowlog`."""

    def __init__(self, name: str, args: FlowLogsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:FlowLogs", name, opts)
        ctx = args.context
        # Network Watcher writes as a trusted Microsoft service; nothing else reaches the account.
        self.account = secure_account(f"{name}-flowlogs-account", self, ctx, args.cmk, account_name=ctx.global_name("fl"),
                                      sku="Standard_ZRS", public_network_access="Enabled", bypass="AzureServices")
        # The account takes no shared keys, so the flow log writes with its own managed identity.
        writer = azure_native.managedidentity.UserAssignedIdentity(
            f"{name}-flowlogs-identity",
            azure_native.managedidentity.UserAssignedIdentityArgs(resource_group_name=ctx.group, location=ctx.region, tags=ctx.tags()),
            opts=pulumi.ResourceOptions(parent=self),
        )
        write_access = grant(f"{name}-flowlogs-writer", self, ctx, "storage_blob_data_contributor", self.account.id, writer.principal_id)
        if args.watcher is NetworkWatcherMode.CREATE:
            watcher = azure_native.network.NetworkWatcher(
                f"{name}-watcher",
                azure_native.network.NetworkWatcherArgs(resource_group_name=ctx.group, location=ctx.region, tags=ctx.tags()),
                opts=pulumi.ResourceOptions(parent=self),
            )
            watcher_group, watcher_name = pulumi.Output.from_input(ctx.group), watcher.name
        else:
            watcher_group, watcher_name = pulumi.Output.from_input(_AZURE_WATCHER_GROUP), pulumi.Output.from_input(f"NetworkWatcher_{ctx.region}")
        self.flow_log = azure_native.network.FlowLog(
            f"{name}-flowlog",
            azure_native.network.FlowLogArgs(
                resource_group_name=watcher_group,
                network_watcher_name=watcher_name,
                location=ctx.region,
                target_resource_id=args.vnet_id,
                storage_id=self.account.id,
                enabled=True,
                identity=azure_native.network.ManagedServiceIdentityArgs(type="UserAssigned", user_assigned_identities=[writer.id]),
                format=azure_native.network.FlowLogFormatParametersArgs(type="JSON", version=2),
                retention_policy=azure_native.network.RetentionPolicyParametersArgs(enabled=True, days=args.retention_days),
                flow_analytics_configuration=azure_native.network.TrafficAnalyticsPropertiesArgs(
                    network_watcher_flow_analytics_configuration=azure_native.network.TrafficAnalyticsConfigurationPropertiesArgs(
                        enabled=True,
                        workspace_resource_id=args.workspace_id,
                        traffic_analytics_interval=_TRAFFIC_ANALYTICS_INTERVAL_MINUTES,
                    )),
                tags=ctx.tags(),
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[write_access]),
        )
        self.register_outputs({"flow_log_id": self.flow_log.id, "storage_account_id": self.account.id})

