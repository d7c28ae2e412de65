"""Azure Monitor managed service for Prometheus for one AKS cluster (`addons.monitoring: managed`).

What Microsoft's ARM/Bicep recipe for enabling managed Prometheus creates, besides the cluster's
`azureMonitorProfile.metrics.enabled` (set by the Cluster component): an Azure Monitor workspace, a data collection
endpoint and a data collection rule in the cluster's region that send the `Microsoft-PrometheusMetrics` stream of
the metrics add-on (ama-metrics) into the workspace, and the rule's association with the cluster. The GPU alert
rules become a Prometheus rule group evaluated in the workspace for this cluster. The add-on scrapes the DCGM
exporter through the `ama-metrics-prometheus-config` ConfigMap the Kubernetes layer writes. With
`addons.alerts.action_group_id` every rule notifies that action group; without it, fired alerts stay in Azure
Monitor's alert list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_azure_native as azure_native

from components.k8s.monitoring_objects import alert_rule_groups

from .base import AzureComponent
from .context import AzureContext

STREAM = "Microsoft-PrometheusMetrics"
DESTINATION = "MonitoringAccount1"
RULE_INTERVAL = "PT1M"
SEVERITY = {"critical": 0, "error": 1, "warning": 2, "info": 3}
"""Azure alert severities: 0 critical .. 4 verbose."""
_DCE_MAX = 44  # data collection endpoint names: 3-44 characters


def iso_duration(prometheus: str) -> str:
    """A Prometheus duration (`1h`, `10m`, `30s`) as ISO 8601 (`PT1H`), which Azure rule groups take."""
    units = {"h": "H", "m": "M", "s": "S"}
    number, unit = prometheus[:-1], prometheus[-1]
    if unit not in units or not number.isdigit():
        raise ValueError(f"unsupported duration {prometheus!r}; allowed: <n>h, <n>m, <n>s")
    return f"PT{number}{units[unit]}"


def azure_rules(action_group_id: str | None = None) -> list[azure_native.alertsmanagement.PrometheusRuleArgs]:
    """The GPU alert rules (components.k8s.monitoring_objects) as Azure Prometheus rules; with `action_group_id`,
    each notifies that action group (a rule's `actions`, which a rule group has no group-wide form of)."""
    rules: list[dict[str, Any]] = [r for group in alert_rule_groups() for r in group["rules"]]
    actions = ([azure_native.alertsmanagement.PrometheusRuleGroupActionArgs(action_group_id=action_group_id)]
               if action_group_id is not None else None)
    return [azure_native.alertsmanagement.PrometheusRuleArgs(
        alert=rule["alert"], expression=rule["expr"], for_=iso_duration(rule["for"]) if "for" in rule else None,
        severity=SEVERITY[rule["labels"]["severity"]], labels=dict(rule["labels"]), annotations=dict(rule["annotations"]),
        actions=actions, enabled=True) for rule in rules]


@dataclass(frozen=True)
class ManagedPrometheusArgs:
    context: AzureContext
    cluster_id: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    """AKS cluster name: the rule group evaluates this cluster's series only."""
    action_group_id: str | None = None
    """`addons.alerts.action_group_id`: the action group every rule notifies. Default none: no actions."""


class ManagedPrometheus(AzureComponent):
    """`ai-infra:azure:ManagedPrometheus`. Children: `<name>-prom-workspace` (Azure Monitor workspace, protected
    outside dev), `<name>-prom-dce`, `<name>-prom-dcr`, `<name>-prom-link` (rule association) and `<name>-prom-rules`."""

    def __init__(self, name: str, args: ManagedPrometheusArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:ManagedPrometheus", name, opts)
        ctx = args.context
        child = pulumi.ResourceOptions(parent=self)
        collector = f"msprom-{name}"[:_DCE_MAX].rstrip("-")  # Microsoft's naming: MSProm-<location>-<cluster>
        self.workspace = azure_native.monitor.AzureMonitorWorkspace(
            f"{name}-prom-workspace",
            azure_native.monitor.AzureMonitorWorkspaceArgs(
                resource_group_name=ctx.group, location=ctx.region, azure_monitor_workspace_name=f"amw-{name}", tags=ctx.tags()),
            opts=ctx.stateful(self))
        endpoint = azure_native.monitor.DataCollectionEndpoint(
            f"{name}-prom-dce",
            azure_native.monitor.DataCollectionEndpointArgs(
                resource_group_name=ctx.group, location=ctx.region, data_collection_endpoint_name=collector, kind="Linux",
                tags=ctx.tags()),
            opts=child)
        rule = azure_native.monitor.DataCollectionRule(
            f"{name}-prom-dcr",
            azure_native.monitor.DataCollectionRuleArgs(
                resource_group_name=ctx.group, location=ctx.region, data_collection_rule_name=collector, kind="Linux",
                description="Azure Monitor managed Prometheus: the cluster's metrics add-on into the workspace",
                data_collection_endpoint_id=endpoint.id,
                data_sources=azure_native.monitor.DataCollectionRuleDataSourcesArgs(prometheus_forwarder=[
                    azure_native.monitor.PrometheusForwarderDataSourceArgs(
                        name="PrometheusDataSource", streams=[STREAM], label_include_filter={})]),
                destinations=azure_native.monitor.DataCollectionRuleDestinationsArgs(monitoring_accounts=[
                    azure_native.monitor.MonitoringAccountDestinationArgs(name=DESTINATION, account_resource_id=self.workspace.id)]),
                data_flows=[azure_native.monitor.DataFlowArgs(streams=[STREAM], destinations=[DESTINATION])],
                tags=ctx.tags()),
            opts=child)
        azure_native.monitor.DataCollectionRuleAssociation(
            f"{name}-prom-link",
            azure_native.monitor.DataCollectionRuleAssociationArgs(
                resource_uri=args.cluster_id, association_name=collector, data_collection_rule_id=rule.id,
                description="Managed Prometheus of this cluster; deleting it stops metric collection"),
            opts=child)
        azure_native.alertsmanagement.PrometheusRuleGroup(
            f"{name}-prom-rules",
            azure_native.alertsmanagement.PrometheusRuleGroupArgs(
                resource_group_name=ctx.group, location=ctx.region, rule_group_name=f"ai-infra-gpu-{name}",
                scopes=[self.workspace.id], cluster_name=args.cluster_name, interval=RULE_INTERVAL, enabled=True,
                description="GPU alerts: allocated but idle, XID errors", rules=azure_rules(args.action_group_id),
                tags=ctx.tags()),
            opts=child)
        self.outputs: dict[str, pulumi.Input[str]] = {
            "workspace_id": self.workspace.id,
            "query_endpoint": self.workspace.metrics.apply(lambda m: m.prometheus_query_endpoint),
            "data_collection_rule_id": rule.id,
        }
        self.register_outputs(self.outputs)
