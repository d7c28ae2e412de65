"""GPU monitoring on a cluster: DCGM metrics into kube-prometheus-stack or the cloud's managed Prometheus, the
GPU dashboard as a Grafana ConfigMap, and alerts for idle GPUs and XID errors (see `monitoring_objects`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.spec import Cloud, MonitoringMode

from . import charts
from .cluster import MONITORING_NAMESPACE
from .dashboard import DASHBOARD_KEY, dashboard_json
from .monitoring_objects import (
    AMA_CONFIG_KEY,
    AMA_CONFIGMAP,
    AMP_COLLECTOR_RULES,
    AMP_COLLECTOR_USER,
    OPERATOR_EXPORTER_LABELS,
    STANDALONE_EXPORTER_LABELS,
    gmp_cluster_pod_monitoring,
    gmp_cluster_rules,
    kube_prometheus_stack_values,
    prometheus_rule,
    rules_yaml,
    scrape_config_yaml,
    team_label,
)
from .objects import child_opts, config_map, custom_resource, namespace

GRAFANA_DASHBOARD_LABEL = {"grafana_dashboard": "1"}
AMP_COLLECTOR_ROLE = "aps-collector-role"


@dataclass(frozen=True)
class MonitoringArgs:
    cloud: Cloud
    """Picks the managed Prometheus (GMP, Azure Monitor, AMP) in `managed` mode."""
    mode: MonitoringMode
    """`self_managed`: kube-prometheus-stack in the cluster; `managed`: the cloud's managed Prometheus."""
    teams: list[str]
    """Team namespaces the dashboard offers."""
    cluster: pulumi.Resource
    """The cluster component: every object is `deleted_with` it."""
    standalone_exporter: bool = False
    """The DCGM exporter is the standalone chart (GKE without the GPU Operator). Default: the operator's."""
    storage: Sequence[pulumi.Resource] = ()
    """What Prometheus's and Alertmanager's volume claims need: the StorageClass the layer creates. The release waits
    for it: installed first, its claims would wait for a class, and the atomic release time out. Default none."""
    storage_class: str | None = None
    """The StorageClass the claims name: the layer's class where it is not the cluster's default (GKE, AKS). Default
    None: no name, the cluster's default class (on EKS the layer's)."""
    alertmanager_secret: str | None = None
    """`addons.alerts.alertmanager_secret`: the Secret in `monitoring` Alertmanager takes its configuration from
    (`self_managed` only). Default None: the chart's, whose receiver is `null`."""


class Monitoring(pulumi.ComponentResource):
    """`ai-infra:kubernetes:Monitoring`. Children: `<name>-namespace`, `<name>-dashboard`, and per mode
    `-prometheus-stack` + `-gpu-rules` (self-managed); `-gmp-dcgm` + `-gmp-rules` (GKE), `-ama-scrape` (AKS),
    `-amp-collector-role` + `-amp-collector-binding` (EKS) for managed Prometheus.

    `ready` lists what must exist before the exporter charts may create ServiceMonitors."""

    def __init__(self, name: str, args: MonitoringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:kubernetes:Monitoring", name, None, opts)
        cluster = args.cluster
        ns = namespace(f"{name}-namespace", MONITORING_NAMESPACE, {}, child_opts(self, cluster))
        in_ns = child_opts(self, cluster, [ns])
        gmp = args.mode is MonitoringMode.MANAGED and args.cloud is Cloud.GCP
        config_map(f"{name}-dashboard", "ai-infra-gpu-dashboard", MONITORING_NAMESPACE,
                   {DASHBOARD_KEY: dashboard_json(args.teams, team_label(gmp))}, in_ns, labels=GRAFANA_DASHBOARD_LABEL)
        self.ready: list[pulumi.Resource] = []
        outputs: dict[str, object] = {"mode": args.mode.value}
        if args.mode is MonitoringMode.SELF_MANAGED:
            values = kube_prometheus_stack_values(args.cloud, args.storage_class, args.alertmanager_secret)
            stack = charts.release(f"{name}-prometheus-stack", charts.KUBE_PROMETHEUS_STACK, MONITORING_NAMESPACE, values,
                                   child_opts(self, cluster, [ns, *args.storage]), release_name="kube-prometheus-stack")
            custom_resource(f"{name}-gpu-rules", prometheus_rule(MONITORING_NAMESPACE),
                            child_opts(self, cluster, [ns, stack]))
            self.ready = [stack]
        elif args.cloud is Cloud.GCP:
            labels = STANDALONE_EXPORTER_LABELS if args.standalone_exporter else OPERATOR_EXPORTER_LABELS
            custom_resource(f"{name}-gmp-dcgm", gmp_cluster_pod_monitoring(labels), child_opts(self, cluster))
            custom_resource(f"{name}-gmp-rules", gmp_cluster_rules(), child_opts(self, cluster))
        elif args.cloud is Cloud.AZURE:
            config_map(f"{name}-ama-scrape", AMA_CONFIGMAP, "kube-system", {AMA_CONFIG_KEY: scrape_config_yaml()},
                       child_opts(self, cluster))
            outputs["alert_rules"] = rules_yaml()
        else:
            self._amp_collector_access(name, cluster)
            outputs["scrape_config"] = scrape_config_yaml()
            outputs["alert_rules"] = rules_yaml()
        self.outputs = outputs
        self.register_outputs(outputs)

    def _amp_collector_access(self, name: str, cluster: pulumi.Resource) -> None:
        """What the AMP managed collector may read in the cluster (AWS docs, managed collector EKS setup)."""
        role = k8s.rbac.v1.ClusterRole(
            f"{name}-amp-collector-role", metadata=k8s.meta.v1.ObjectMetaArgs(name=AMP_COLLECTOR_ROLE),
            rules=[k8s.rbac.v1.PolicyRuleArgs(**rule) for rule in AMP_COLLECTOR_RULES],
            opts=child_opts(self, cluster))
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-amp-collector-binding", metadata=k8s.meta.v1.ObjectMetaArgs(name=f"{AMP_COLLECTOR_USER}-role-binding"),
            role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=AMP_COLLECTOR_ROLE),
            subjects=[k8s.rbac.v1.SubjectArgs(api_group="rbac.authorization.k8s.io", kind="User", name=AMP_COLLECTOR_USER)],
            opts=child_opts(self, cluster, [role]))
