"""The Kubernetes layer as a real cluster would receive it: providers, Helm releases and their values per cloud,
per-team objects, flavors, monitoring per mode, and a team added in config."""

from __future__ import annotations

import json

import pulumi
import pytest
import yaml
from k8s.layer import KUBECONFIG, StandInCluster, make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult, run_program
from components.k8s import charts
from components.k8s.objects import child_opts

RELEASE = "kubernetes:helm.sh/v3:Release"
AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"


def names(plan: PlanResult, type_: str) -> set[str]:
    return {r.name for r in plan.of_type(type_)}


def release(plan: PlanResult, name: str) -> dict:
    return plan.one(RELEASE, name).inputs


def test_one_provider_per_cluster_from_its_exec_kubeconfig(three_cloud_plan):
    providers = {r.name: r for r in three_cloud_plan.of_type("pulumi:providers:kubernetes")}
    assert set(providers) == {f"{AWS}-k8s", f"{GCP}-k8s", f"{AZURE}-k8s"}
    aws = providers[f"{AWS}-k8s"]
    kubeconfig = aws.inputs["kubeconfig"]
    assert kubeconfig["value"] == KUBECONFIG and "4dabf18193072939515e22adb298388d" in kubeconfig  # a secret
    users = yaml.safe_load(kubeconfig["value"])["users"]
    assert all(set(u["user"]) == {"exec"} for u in users)  # exec auth, no token or client key
    assert not {"token", "clientKey", "password"} & set(aws.inputs)
    assert aws.inputs["clusterIdentifier"] == f"aws/{AWS}"
    assert (aws.inputs["enableServerSideApply"], aws.inputs["deleteUnreachable"]) == ("true", "false")
    assert any(d.endswith(f"::{AWS}-control-plane") for d in aws.dependencies)  # waits for the cluster
    # Every object of a cluster goes through that cluster's provider.
    for record in three_cloud_plan.resources:
        if record.type.startswith("kubernetes:") and record.name.startswith(AWS):
            assert f"::{AWS}-k8s::" in record.provider


def test_releases_are_pinned_with_their_repositories(three_cloud_plan):
    expected = {
        f"{AWS}-gpu-operator": charts.GPU_OPERATOR, f"{AZURE}-gpu-operator": charts.GPU_OPERATOR,
        f"{GCP}-dcgm-exporter": charts.DCGM_EXPORTER, f"{AWS}-neuron": charts.NEURON,
        **{f"{c}-kueue": charts.KUEUE for c in (AWS, GCP, AZURE)},
        **{f"{c}-prometheus-stack": charts.KUBE_PROMETHEUS_STACK for c in (AWS, GCP, AZURE)},
    }
    assert names(three_cloud_plan, RELEASE) == set(expected)
    for name, chart in expected.items():
        inputs = release(three_cloud_plan, name)
        assert (inputs["chart"], inputs["version"]) == (chart.chart, chart.version)
        assert inputs.get("repositoryOpts", {}).get("repo") == chart.repo
        assert inputs["atomic"] is True
    assert charts.GPU_OPERATOR.version == "v26.7.0" and charts.KUEUE.chart.startswith("oci://registry.k8s.io/")


def test_gpu_stack_per_cloud(three_cloud_plan):
    eks = release(three_cloud_plan, f"{AWS}-gpu-operator")["values"]
    aks = release(three_cloud_plan, f"{AZURE}-gpu-operator")["values"]
    assert eks["driver"] == {"enabled": False} and aks["driver"] == {"enabled": False}
    assert eks["migManager"]["enabled"] is True and aks["migManager"] == {"enabled": False}
    assert eks["mig"] == aks["mig"] == {"strategy": "single"}
    gke = release(three_cloud_plan, f"{GCP}-dcgm-exporter")
    assert gke["namespace"] == "gpu-operator" and gke["values"]["serviceMonitor"]["enabled"] is True
    # GKE admits system-node-critical pods outside kube-system only under a quota scoped to them.
    quota = three_cloud_plan.one("kubernetes:core/v1:ResourceQuota", f"{GCP}-gpu-critical-quota").inputs
    assert quota["spec"]["scopeSelector"]["matchExpressions"][0]["values"] == ["system-node-critical", "system-cluster-critical"]
    # The operator waits for its configs, the node pools and the ServiceMonitor CRD (kube-prometheus-stack).
    deps = three_cloud_plan.one(RELEASE, f"{AWS}-gpu-operator").dependencies
    assert {d.rsplit("::", 1)[1] for d in deps} >= {f"{AWS}-gpu-namespace", f"{AWS}-mig-config", f"{AWS}-device-plugin-config",
                                                   f"{AWS}-prometheus-stack", f"{AWS}-h100-train", f"{AWS}-trn2"}


def test_sharing_configs_are_written_where_the_operator_shares(three_cloud_plan):
    mig = three_cloud_plan.one("kubernetes:core/v1:ConfigMap", f"{AWS}-mig-config").inputs
    layouts = yaml.safe_load(mig["data"]["config.yaml"])["mig-configs"]
    assert layouts["a100-80gb-3g.40gb"][0]["mig-devices"] == {"3g.40gb": 2}
    plugin = three_cloud_plan.one("kubernetes:core/v1:ConfigMap", f"{AWS}-device-plugin-config").inputs["data"]
    assert yaml.safe_load(plugin["time-slicing-4"])["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 4
    assert f"{AZURE}-mig-config" not in names(three_cloud_plan, "kubernetes:core/v1:ConfigMap")  # AKS partitions MIG


def test_neuron_plugin_only_with_neuron_pools(planner):
    plan = planner(clouds=("aws",), pools={"aws": {"gpu_pools": {"l4": {"accelerator": "l4", "accelerators_per_node": 1}}}})
    assert f"{AWS}-neuron" not in names(plan, RELEASE)
    plan = planner(clouds=("aws",), pools={"aws": {"gpu_pools": {"inf": {"accelerator": "inferentia2"}}}})
    assert f"{AWS}-neuron" in names(plan, RELEASE) and f"{AWS}-gpu-operator" not in names(plan, RELEASE)
    assert release(plan, f"{AWS}-neuron")["namespace"] == "kube-system"


def test_tpu_pools_need_nothing_extra_on_gke(planner):
    plan = planner(clouds=("gcp",), pools={"gcp": {"tpu_slices": {"v5e": {"generation": "v5e", "topology": "2x4"}}}})
    accelerators = [r for r in plan.resources if r.parent.endswith(f"Accelerators::{GCP}")]
    assert accelerators == []  # no operator, device plugin or namespace for TPUs
    assert names(plan, RELEASE) == {f"{GCP}-kueue", f"{GCP}-prometheus-stack"}
    flavors = {r.inputs["metadata"]["name"] for r in plan.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")}
    assert flavors == {"default-flavor", "tpu-v5-lite-podslice-2x4-on-demand"}


def test_each_team_gets_namespace_policy_quota_and_queues(three_cloud_plan):
    for cluster in (AWS, GCP, AZURE):
        record = three_cloud_plan.one("kubernetes:core/v1:Namespace", f"{cluster}-research-namespace")
        assert record.retainOnDelete  # a protected environment never deletes a team's data with its config entry
        ns = record.inputs
        labels = ns["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
        assert ns["metadata"]["name"] == "research"
        policy = three_cloud_plan.one("kubernetes:networking.k8s.io/v1:NetworkPolicy", f"{cluster}-research-network-policy").inputs
        assert policy["spec"]["podSelector"] == {} and policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
        assert policy["spec"]["ingress"] == [{"from": [{"podSelector": {}}]}]
        dns = policy["spec"]["egress"][1]
        assert dns["ports"] == [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
        assert dns["to"][0]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}
        limits = three_cloud_plan.one("kubernetes:core/v1:LimitRange", f"{cluster}-research-limits").inputs
        assert limits["spec"]["limits"] == [{"type": "Container", "defaultRequest": {"cpu": "250m", "memory": "512Mi"}}]
        local = three_cloud_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", f"{cluster}-research-local-queue").inputs
        assert local["metadata"] == {"name": "default", "namespace": "research", "labels": {"app.kubernetes.io/managed-by": "ai-infra"}}
        assert local["spec"] == {"clusterQueue": "research"}
    # serving may not borrow: its quota is its own share; research may, up to the cohort's total.
    serving = three_cloud_plan.one("kubernetes:core/v1:ResourceQuota", f"{GCP}-serving-quota").inputs["spec"]["hard"]
    research = three_cloud_plan.one("kubernetes:core/v1:ResourceQuota", f"{GCP}-research-quota").inputs["spec"]["hard"]
    assert serving == {"requests.cpu": "64", "requests.memory": "512Gi", "requests.nvidia.com/gpu": "4", "requests.google.com/tpu": "0"}
    assert research == {"requests.cpu": "128", "requests.memory": "1024Gi", "requests.nvidia.com/gpu": "20", "requests.google.com/tpu": "8"}
    queue = three_cloud_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", f"{GCP}-research-cluster-queue").inputs["spec"]
    assert queue["cohortName"] == "test"
    tpu = queue["resourceGroups"][2]
    assert tpu["coveredResources"] == ["google.com/tpu"]
    assert sum(int(f["resources"][0]["nominalQuota"]) for f in tpu["flavors"]) == 8  # canonical quantity strings


def test_priority_classes(three_cloud_plan):
    classes = {r.inputs["metadata"]["name"]: r.inputs for r in three_cloud_plan.of_type("kubernetes:scheduling.k8s.io/v1:PriorityClass")
               if r.name.startswith(AWS)}
    assert {n: c["value"] for n, c in classes.items()} == {"ai-inference": 100000, "ai-training": 10000, "ai-batch": 1000}
    assert classes["ai-batch"]["preemptionPolicy"] == "Never"


def test_team_namespaces_are_deleted_in_dev():
    plan = plan_layer(make_spec(("azure",), environment="dev"))
    assert not plan.one("kubernetes:core/v1:Namespace", "dev-eastus2-research-namespace").retainOnDelete


def test_adding_a_team_adds_its_objects_and_changes_nothing_else():
    one = plan_layer(make_spec(("azure",), teams={"research": {"gpu_quota": 8}}))
    two = plan_layer(make_spec(("azure",), teams={"research": {"gpu_quota": 8}, "vision": {"gpu_quota": 4}}))
    added = {r.urn for r in two.resources} - {r.urn for r in one.resources}
    assert {u for u in {r.urn for r in one.resources} if u not in {r.urn for r in two.resources}} == set()
    assert {urn.rsplit("::", 1)[1] for urn in added} == {
        f"{AZURE}-vision", f"{AZURE}-vision-namespace", f"{AZURE}-vision-network-policy", f"{AZURE}-vision-quota",
        f"{AZURE}-vision-limits", f"{AZURE}-vision-priority-quota", f"{AZURE}-vision-cluster-queue",
        f"{AZURE}-vision-local-queue"}
    dashboard = json.loads(two.one("kubernetes:core/v1:ConfigMap", f"{AZURE}-dashboard").inputs["data"]["ai-infra-gpu.json"])
    assert dashboard["templating"]["list"][1]["query"] == "research,vision"


def test_monitoring_self_managed(three_cloud_plan):
    values = release(three_cloud_plan, f"{AWS}-prometheus-stack")["values"]
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["ruleSelectorNilUsesHelmValues"] is False and spec["serviceMonitorSelectorNilUsesHelmValues"] is False
    rule = three_cloud_plan.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule", f"{AWS}-gpu-rules")
    alerts = {r["alert"]: r for r in rule.inputs["spec"]["groups"][0]["rules"]}
    assert alerts["GpuAllocatedButIdle"]["for"] == "1h"
    assert 'DCGM_FI_DEV_GPU_UTIL{pod!=""}' in alerts["GpuAllocatedButIdle"]["expr"]
    assert alerts["GpuAllocatedButIdle"]["expr"].endswith("< 10")
    assert alerts["GpuXidError"]["expr"].startswith("max by (") and "DCGM_EXP_XID_ERRORS_COUNT" in alerts["GpuXidError"]["expr"]
    assert any(d.endswith(f"::{AWS}-prometheus-stack") for d in rule.dependencies)  # CRD first
    board = three_cloud_plan.one("kubernetes:core/v1:ConfigMap", f"{AWS}-dashboard").inputs
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    exprs = [p["targets"][0]["expr"] for p in json.loads(board["data"]["ai-infra-gpu.json"])["panels"]]
    for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_XID_ERRORS"):
        assert any("by (node" in e and metric in e for e in exprs)
        assert any("by (namespace)" in e and metric in e and 'namespace=~"$team"' in e for e in exprs)


def test_monitoring_managed_per_cloud():
    plan = plan_layer(make_spec(addons={"monitoring": "managed"}))
    assert not any(r.name.endswith("-prometheus-stack") for r in plan.of_type(RELEASE))
    gmp = plan.one("kubernetes:monitoring.googleapis.com/v1:ClusterPodMonitoring", f"{GCP}-gmp-dcgm").inputs["spec"]
    assert gmp["selector"] == {"matchLabels": {"app.kubernetes.io/name": "dcgm-exporter"}}
    rules = plan.one("kubernetes:monitoring.googleapis.com/v1:ClusterRules", f"{GCP}-gmp-rules").inputs["spec"]
    assert "exported_namespace" in rules["groups"][0]["rules"][0]["expr"]
    ama = plan.one("kubernetes:core/v1:ConfigMap", f"{AZURE}-ama-scrape").inputs
    assert (ama["metadata"]["name"], ama["metadata"]["namespace"]) == ("ama-metrics-prometheus-config", "kube-system")
    job = yaml.safe_load(ama["data"]["prometheus-config"])["scrape_configs"][0]
    assert job["honor_labels"] is True and job["kubernetes_sd_configs"][0]["namespaces"] == {"names": ["gpu-operator"]}
    binding = plan.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", f"{AWS}-amp-collector-binding").inputs
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "aps-collector-user"}]
    exported = plan.outputs["kubernetes"][AWS]["monitoring"]
    assert "DCGM_EXP_XID_ERRORS_COUNT" in exported["alert_rules"] and "dcgm-exporter" in exported["scrape_config"]
    assert release(plan, f"{AWS}-gpu-operator")["values"]["dcgmExporter"]["serviceMonitor"]["enabled"] is False


def test_reserved_team_names_are_refused():
    # The spec refuses them before anything is planned (see tests/spine/test_spec_errors.py).
    with pytest.raises(Exception, match="team name 'monitoring' is reserved"):
        plan_layer(make_spec(("azure",), teams={"monitoring": {}}))


def test_children_die_with_their_cluster():
    def program() -> None:
        cluster = StandInCluster("c")
        opts = child_opts(cluster, cluster)
        assert opts.deleted_with is cluster and opts.parent is cluster
        pulumi.export("cluster", cluster.urn)
    run_program(program, project="ai-infra", stack="test")


def test_gke_runs_the_operator_when_the_spec_asks(planner):
    plan = planner(clouds=("gcp",), addons={"gpu_operator_on_gke": True, "monitoring": "managed"})
    assert names(plan, RELEASE) == {f"{GCP}-gpu-operator", f"{GCP}-kueue"}
    values = release(plan, f"{GCP}-gpu-operator")["values"]
    assert values["hostPaths"] == {"driverInstallDir": "/home/kubernetes/bin/nvidia"}
    assert f"{GCP}-gpu-critical-quota" in names(plan, "kubernetes:core/v1:ResourceQuota")
    gmp = plan.one("kubernetes:monitoring.googleapis.com/v1:ClusterPodMonitoring", f"{GCP}-gmp-dcgm").inputs["spec"]
    assert gmp["selector"] == {"matchLabels": {"app": "nvidia-dcgm-exporter"}}  # the operator's exporter
