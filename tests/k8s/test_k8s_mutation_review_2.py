"""Behaviour of the Kubernetes layer that a second hand mutation review (of dcgm_metrics, dashboard, lustre,
gpu_values, monitoring_objects, cluster and compose/kubernetes) found no test pinning: the GPU dashboard Grafana
imports (its identity, queries, layout and team variable), the exporters' Helm values, the Lustre volumes' mount
address and retention, and which TPU slices the cluster's queues count, as the plan records them."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from k8s.layer import handles, make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose.kubernetes import build
from components.k8s.lustre import fsx_mount, gke_mount
from components.spec import Platform

AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"
RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
PV, PVC = "kubernetes:core/v1:PersistentVolume", "kubernetes:core/v1:PersistentVolumeClaim"
QUOTA = "kubernetes:core/v1:ResourceQuota"


def dashboard(plan: PlanResult, cluster: str) -> dict[str, Any]:
    """The dashboard JSON Grafana's sidecar imports from the cluster's dashboard ConfigMap."""
    return json.loads(plan.one(CONFIG_MAP, f"{cluster}-dashboard").inputs["data"]["ai-infra-gpu.json"])


def values(plan: PlanResult, release: str) -> dict[str, Any]:
    return plan.one(RELEASE, release).inputs["values"]


# --- the GPU dashboard ---------------------------------------------------------------------------------------------

TEAM = 'namespace=~"$team"'
PANELS = [
    ("GPU utilisation by node", "avg by (node) (DCGM_FI_DEV_GPU_UTIL)", "{{node}}", "percent"),
    ("GPU utilisation by team", f"avg by (namespace) (DCGM_FI_DEV_GPU_UTIL{{{TEAM}}})", "{{namespace}}", "percent"),
    ("GPU memory used by node", "sum by (node) (DCGM_FI_DEV_FB_USED)", "{{node}}", "mbytes"),
    ("GPU memory used by team", f"sum by (namespace) (DCGM_FI_DEV_FB_USED{{{TEAM}}})", "{{namespace}}", "mbytes"),
    ("GPU power by node", "sum by (node) (DCGM_FI_DEV_POWER_USAGE)", "{{node}}", "watt"),
    ("GPU power by team", f"sum by (namespace) (DCGM_FI_DEV_POWER_USAGE{{{TEAM}}})", "{{namespace}}", "watt"),
    ("Last XID error by node", "max by (node, gpu) (DCGM_FI_DEV_XID_ERRORS)", "{{node}} gpu {{gpu}}", "none"),
    ("Last XID error by team", f"max by (namespace) (DCGM_FI_DEV_XID_ERRORS{{{TEAM}}})", "{{namespace}}", "none"),
    # kube-state-metrics names the allowlisted node label ai-infra/pool `label_ai_infra_pool` on kube_node_labels,
    # whose series carry `node`, the label every DCGM scrape config adds.
    ("GPU utilisation by pool", "avg by (label_ai_infra_pool) (DCGM_FI_DEV_GPU_UTIL * on (node) group_left "
     "(label_ai_infra_pool) kube_node_labels)", "{{label_ai_infra_pool}}", "percent"),
]


def test_dashboard_panels_aggregate_each_gpu_metric_as_its_unit_needs(three_cloud_plan):
    """Utilisation averages over GPUs; memory and power add up (a node's draw is the sum of its GPUs'); the last XID
    is the highest code. The pool panel joins each GPU series to its node's pool label on `node`."""
    panels = dashboard(three_cloud_plan, AWS)["panels"]
    found = [(p["title"], p["targets"][0]["expr"], p["targets"][0]["legendFormat"], p["fieldConfig"]["defaults"]["unit"])
             for p in panels]
    assert found == PANELS


def test_dashboard_keeps_its_uid_and_reads_the_chosen_data_source(three_cloud_plan):
    """The uid is the dashboard's identity in Grafana (its /d/<uid> links); each panel reads the `$datasource`
    variable, so the JSON imports into any Grafana with a Prometheus data source."""
    board = dashboard(three_cloud_plan, AWS)
    assert board["uid"] == "ai-infra-gpu"
    assert {json.dumps(p["datasource"], sort_keys=True) for p in board["panels"]} == {
        json.dumps({"type": "prometheus", "uid": "${datasource}"}, sort_keys=True)}
    assert board["templating"]["list"][0] == {"name": "datasource", "label": "Data source", "type": "datasource",
                                              "query": "prometheus"}


def test_dashboard_lays_panels_out_two_per_row_without_overlap(three_cloud_plan):
    """Per node on the left, per team on the right, rows one panel high: Grafana stacks panels it finds overlapping."""
    panels = dashboard(three_cloud_plan, AWS)["panels"]
    cells = [(p["gridPos"]["x"], p["gridPos"]["y"]) for p in panels]
    assert len(set(cells)) == len(cells)
    assert all(p["gridPos"]["w"] == 12 and p["gridPos"]["h"] == 8 for p in panels)
    for p in panels:
        side = 0 if p["title"].endswith(("by node", "by pool")) else 12
        assert p["gridPos"]["x"] == side, p["title"]
    assert [p["gridPos"]["y"] for p in panels] == [0, 0, 8, 8, 16, 16, 24, 24, 32]


def test_dashboard_team_variable_offers_the_spec_teams_and_all_means_them_only(three_cloud_plan):
    """`All` must select the spec's teams, not every namespace (the GPU operator's, monitoring's), so its value is the
    teams' regex; several teams can be picked at once."""
    [team] = [v for v in dashboard(three_cloud_plan, AWS)["templating"]["list"] if v["name"] == "team"]
    assert (team["includeAll"], team["multi"]) == (True, True)
    assert team["allValue"] == "research|serving"
    assert [o["value"] for o in team["options"]] == ["research", "serving"]
    assert team["current"] == {"text": "All", "value": "$__all"}


# --- the exporters' and operator's Helm values ---------------------------------------------------------------------


@pytest.mark.parametrize("release, path", [
    (f"{AWS}-gpu-operator", ("dcgmExporter", "serviceMonitor")),
    (f"{AZURE}-gpu-operator", ("dcgmExporter", "serviceMonitor")),
    (f"{GCP}-dcgm-exporter", ("serviceMonitor",)),
])
def test_dcgm_service_monitors_scrape_every_30_seconds(three_cloud_plan, release, path):
    """The interval the managed collectors use too (AMP refuses less than 30 s), so self-managed and managed
    Prometheus see the same series density and the idle alert's 10-minute windows hold the same samples."""
    monitor = values(three_cloud_plan, release)
    for key in path:
        monitor = monitor[key]
    assert monitor["interval"] == "30s"


@pytest.mark.parametrize("cluster", [AWS, AZURE])
def test_node_feature_discovery_workers_also_run_on_control_plane_nodes(three_cloud_plan, cluster):
    """NFD's worker is a DaemonSet: replacing the chart's tolerations list with the GPU pools' taints alone would drop
    its control-plane toleration."""
    worker = values(three_cloud_plan, f"{cluster}-gpu-operator")["node-feature-discovery"]["worker"]
    assert {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "",
            "effect": "NoSchedule"} in worker["tolerations"]


def test_gke_standalone_exporter_maps_gpus_by_device_name_from_a_read_only_driver_mount(three_cloud_plan):
    """GKE's device plugin names GPUs nvidia0.. (not UUIDs), so the exporter maps them to pods by device name; the
    host's driver directory is mounted read-only into the privileged exporter."""
    exporter = values(three_cloud_plan, f"{GCP}-dcgm-exporter")
    assert {"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "device-name"} in exporter["extraEnv"]
    mounts = {m["mountPath"]: m for m in exporter["extraVolumeMounts"]}
    assert mounts["/usr/local/nvidia"] == {"name": "nvidia-install-dir-host", "mountPath": "/usr/local/nvidia",
                                           "readOnly": True}


# --- TPU slices outside the cluster --------------------------------------------------------------------------------


def test_tpu_vm_and_queued_slices_get_no_flavor_or_quota_in_the_cluster(planner):
    """Slices in modes `tpu_vm` and `queued_resource` are Cloud TPU VMs, not GKE nodes: Kueue must not admit pods
    against their chips, and team pods outside Kueue get no TPU quota for them."""
    plan = planner(clouds=("gcp",), pools={"gcp": {"tpu_slices": {
        "vm": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm"},
        "batch": {"generation": "v6e", "topology": "4x4", "mode": "queued_resource"}}}})
    assert not [f for f in plan.outputs["kubernetes"][GCP]["flavors"] if f.startswith("tpu-")]
    hard = plan.one(QUOTA, f"{GCP}-research-quota").inputs["spec"]["hard"]
    assert hard["requests.google.com/tpu"] == "0"


# --- Lustre volumes --------------------------------------------------------------------------------------------------


def plan_with_lustre(spec: Platform, mounts: dict[str, Any]) -> PlanResult:
    """The layer on stand-in clusters, with `mounts` (by cluster name) as the cloud compositions hand them over."""
    def program() -> None:
        clusters = [dataclasses.replace(h, lustre=(mounts[h.name](),)) if h.name in mounts else h
                    for h in handles(spec)]
        build(spec, clusters)
    return run_program(program, project="ai-infra", stack="test")


def gke_scratch() -> Any:
    return gke_mount("scratch", 18000, "acme-ml-test", "us-central1-a", "test-scratch",
                     "10.90.0.5@tcp:/scratch", "scratch")


def fsx_train() -> Any:
    return fsx_mount("train", 1200, "fs-0123456789abcdef0", "fs-0123.fsx.us-east-1.amazonaws.com", "abcdefgh")


def test_gke_lustre_volumes_mount_the_instances_ip():
    """Managed Lustre's `mountPoint` is `IP@tcp:/<fs>`; the driver's `ip` attribute is the address before the `@`."""
    plan = plan_with_lustre(make_spec(("gcp",)), {GCP: gke_scratch})
    csi = plan.one(PV, f"{GCP}-lustre-scratch-research-pv").inputs["spec"]["csi"]
    assert csi["volumeAttributes"] == {"ip": "10.90.0.5", "filesystem": "scratch"}
    assert csi["volumeHandle"] == "acme-ml-test/us-central1-a/test-scratch"


@pytest.mark.parametrize("environment, retained", [("test", True), ("dev", False)])
def test_lustre_volumes_and_claims_are_retained_where_namespaces_are(environment, retained):
    """In a protected environment team namespaces (and the pods in them) outlive the stack, so their Lustre volumes
    and claims are forgotten, not deleted; in dev they go with it."""
    plan = plan_with_lustre(make_spec(("aws",), environment=environment), {f"{environment}-us-east-1": fsx_train})
    cluster = f"{environment}-us-east-1"
    assert plan.one(PV, f"{cluster}-lustre-train-research-pv").retainOnDelete is retained
    assert plan.one(PVC, f"{cluster}-lustre-train-research-pvc").retainOnDelete is retained


# --- alert rules and Prometheus settings ---------------------------------------------------------------------------


def test_the_idle_alert_averages_each_allocated_gpu_over_10_minute_windows(three_cloud_plan):
    """A 10-minute average under 10% held for the `for` hour: a pod loading its model for a few minutes does not fire
    it, and a short burst does not hide an idle hour. Series without `pod` (unallocated GPUs) are left out."""
    rule = three_cloud_plan.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule", f"{AWS}-gpu-rules")
    [idle] = [r for r in rule.inputs["spec"]["groups"][0]["rules"] if r["alert"] == "GpuAllocatedButIdle"]
    assert idle["expr"] == ('avg by (node, gpu, UUID, modelName, namespace, pod) '
                            '(avg_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[10m])) < 10')


@pytest.mark.parametrize("component", ["kubeControllerManager", "kubeScheduler", "kubeEtcd", "kubeProxy"])
def test_prometheus_scrapes_no_control_plane_component_the_clouds_manage(three_cloud_plan, component):
    """EKS, GKE and AKS expose none of these (and kube-proxy is replaced or not reachable): their targets would only be
    down and fire the chart's `TargetDown` alerts."""
    for cluster in (AWS, GCP, AZURE):
        assert values(three_cloud_plan, f"{cluster}-prometheus-stack")[component] == {"enabled": False}, cluster


def test_grafana_loads_dashboards_from_every_namespace(three_cloud_plan):
    """Our dashboard ConfigMap is in the monitoring namespace; the sidecar searches every namespace so teams' own
    dashboards load too."""
    sidecar = values(three_cloud_plan, f"{AWS}-prometheus-stack")["grafana"]["sidecar"]["dashboards"]
    assert sidecar == {"enabled": True, "label": "grafana_dashboard", "labelValue": "1", "searchNamespace": "ALL"}


def test_kube_state_metrics_exposes_every_accelerator_node_label(three_cloud_plan):
    """kube_node_labels carries only allowlisted labels: the pool (the dashboard's per-pool panel), the accelerator and
    the capacity type (spot or on-demand), as `label_ai_infra_<name>`."""
    ksm = values(three_cloud_plan, f"{AWS}-prometheus-stack")["kube-state-metrics"]
    assert ksm["metricLabelsAllowlist"] == ["nodes=[ai-infra/pool,ai-infra/accelerator,ai-infra/capacity]"]


@pytest.fixture(scope="module")
def managed() -> PlanResult:
    return plan_layer(make_spec(addons={"monitoring": "managed"}))


def test_gmp_scrapes_the_exporter_every_30_seconds_and_names_the_node(managed):
    """GMP's ClusterPodMonitoring: `targetLabels.metadata: [node]` adds the `node` label every dashboard and alert
    groups by (GMP adds no metadata label unless asked); the exporter's port by name, at the interval of the others."""
    spec = managed.one("kubernetes:monitoring.googleapis.com/v1:ClusterPodMonitoring", f"{GCP}-gmp-dcgm").inputs["spec"]
    assert spec["targetLabels"] == {"metadata": ["node"]}
    assert spec["endpoints"] == [{"port": "metrics", "interval": "30s"}]


def test_the_amp_collector_role_grants_what_the_amp_guide_lists(managed):
    """AWS's "Configuring your Amazon EKS cluster" for AMP managed collectors: read access to nodes and their
    metrics and proxy, services, endpoints, pods, ingresses and configmaps, and GET on the EKS control-plane metrics."""
    rules = managed.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", f"{AWS}-amp-collector-role").inputs["rules"]
    core = next(r for r in rules if r.get("apiGroups") == [""])
    assert set(core["resources"]) == {"nodes", "nodes/proxy", "nodes/metrics", "services", "endpoints", "pods",
                                      "ingresses", "configmaps"}
    assert set(core["verbs"]) == {"describe", "get", "list", "watch"}
    assert {"apiGroups": ["metrics.eks.amazonaws.com"], "resources": ["kcm/metrics", "ksh/metrics"], "verbs": ["get"]} in rules
    assert {"nonResourceURLs": ["/metrics"], "verbs": ["get"]} in rules
