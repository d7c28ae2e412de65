"""Behaviour of the Kubernetes layer that a fourth hand mutation review (of eks, accelerators, monitoring and
previewers) found no test pinning, as the Kubernetes API or a user would see it: the Cluster Autoscaler's flags, the
EKS controllers' replicas, Pod Security `restricted` contexts, priority, resources, names, IAM ordering, exported
service accounts, plain-value inputs and the error type of an unpinned minor; GKE's critical-pod quota (its exact
size, its scope, and the releases waiting for it), the operator's ServiceMonitor and configs in their namespace,
and every Helm release's name; the dashboard's team label per Prometheus, the managed-mode exports and the AMP
collector's roleRef; and the previewers' read rules (StatefulSets, Ingresses, GMP kinds, plurals), their Helm Roles'
bindings, labels and ordering, the exported kinds, and the error for a Release whose namespace is not plain."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from helpers import platform_dict
from k8s.layer import TEAMS, cloud_config, make_spec, plan_layer
from k8s.test_eks_controllers import AUTOSCALER_ROLE, CLUSTER, LB_ROLE, VPC, plan_eks
from k8s.test_k8s_mutation_review_2 import dashboard, values

from aiinfra.plan.runtime import PlanResult, run_program
from components.k8s import eks
from components.k8s.accelerators import gke_critical_pods
from components.k8s.cluster import cluster_view
from components.k8s.monitoring_objects import rules_yaml, scrape_config_yaml
from components.k8s.previewers import LayerRecord, plural, read_rules, resource_of
from components.spec import Cloud, load_platform

RELEASE = "kubernetes:helm.sh/v3:Release"
RBAC = "kubernetes:rbac.authorization.k8s.io/v1"
AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"
AUTOSCALER, LB = f"{CLUSTER}-cluster-autoscaler-release", f"{CLUSTER}-lb-controller-release"
MANAGED_BY = {"app.kubernetes.io/managed-by": "ai-infra"}


@pytest.fixture(scope="module")
def eks_plan() -> PlanResult:
    """test_eks_controllers' plan: the layer on a stand-in EKS cluster with known controller inputs."""
    return plan_eks()


@pytest.fixture(scope="module")
def managed_plan() -> PlanResult:
    """Managed Prometheus on all three clouds, with a preview identity on AWS (so the previewers' RBAC is planned)."""
    clouds = {c: cloud_config(c) for c in ("aws", "gcp", "azure")}
    clouds["aws"].update(previewers=["arn:aws:iam::123456789012:role/ai-infra-ci-preview"],
                         deployers=["arn:aws:iam::123456789012:role/ai-infra-deploy"])
    return plan_layer(load_platform(platform_dict(clouds, teams=TEAMS, addons={"monitoring": "managed"})))


def deps(record: Any) -> set[str]:
    return {d.rsplit("::", 1)[1] for d in record.dependencies}


# --- the EKS controllers ------------------------------------------------------------------------------------------


def test_autoscaler_flags_are_the_scaling_behaviour_described(eks_plan):
    """Each flag decides when GPU nodes come and go: DaemonSets must not keep a node, a slow GPU boot must not mark its
    group failed, and a node just added must not be removed before its pods arrive."""
    assert values(eks_plan, AUTOSCALER)["extraArgs"] == {
        "expander": "least-waste", "balance-similar-node-groups": True, "skip-nodes-with-local-storage": False,
        "ignore-daemonsets-utilization": True, "scale-down-unneeded-time": "10m", "scale-down-delay-after-add": "10m",
        "max-node-provision-time": "20m", "logtostderr": True, "stderrthreshold": "info", "v": 2}


def test_both_controllers_run_two_replicas_and_a_drain_takes_one(eks_plan):
    """One replica stops scale-ups (or admission of Services) during a drain; a budget of 0 blocks every drain."""
    for name in (AUTOSCALER, LB):
        v = values(eks_plan, name)
        assert (v["replicaCount"], v["podDisruptionBudget"]) == (2, {"maxUnavailable": 1}), name


RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "runAsNonRoot": True,
                        "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


def test_controller_pods_meet_pod_security_restricted(eks_plan):
    """`restricted` refuses pods without seccomp RuntimeDefault or with capabilities kept; the autoscaler runs as its
    distroless image's nonroot user, group and volume group (65532)."""
    autoscaler = values(eks_plan, AUTOSCALER)
    assert autoscaler["securityContext"] == {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                                             "fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}}
    assert autoscaler["containerSecurityContext"] == RESTRICTED_CONTAINER
    lb = values(eks_plan, LB)
    assert lb["podSecurityContext"] == {"fsGroup": 65534, "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    assert lb["securityContext"] == RESTRICTED_CONTAINER


def test_controllers_priority_and_resources(eks_plan):
    """The autoscaler is cluster-critical with no CPU limit (throttling delays scale-ups); both have memory limits."""
    autoscaler = values(eks_plan, AUTOSCALER)
    assert autoscaler["priorityClassName"] == "system-cluster-critical"
    assert autoscaler["resources"] == {"requests": {"cpu": "100m", "memory": "300Mi"}, "limits": {"memory": "1Gi"}}
    assert values(eks_plan, LB)["resources"] == {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}


def test_lb_controller_waits_for_its_iam_role(eks_plan):
    """Started before its IRSA role exists, the controller's first AWS calls fail (AssumeRoleWithWebIdentity)."""
    assert any("test:index:Part::test-us-east-1-iam-part" in d for d in eks_plan.one(RELEASE, LB).dependencies)


def test_exported_service_accounts_name_their_namespace(eks_plan):
    """`kubernetes.<cluster>.<controller>.service_account` is `namespace/name`, the account the IRSA role trusts."""
    layer = eks_plan.outputs["kubernetes"][CLUSTER]
    assert layer["cluster_autoscaler"]["service_account"] == "kube-system/cluster-autoscaler"
    assert layer["lb_controller"]["service_account"] == "kube-system/aws-load-balancer-controller"


def test_values_from_plain_inputs_carry_their_region_and_stay_plain():
    """Plain values in, plain values out: the cluster's own discovery tag as a string, and the region the controllers
    call (pods can't reach IMDS at hop limit 1), whatever region it is."""
    v = eks.autoscaler_values("prod-eu-west-1", "eu-west-1", AUTOSCALER_ROLE, "cluster-autoscaler")
    assert v["awsRegion"] == "eu-west-1"
    assert v["autoDiscovery"]["tags"] == ["k8s.io/cluster-autoscaler/enabled", "k8s.io/cluster-autoscaler/prod-eu-west-1"]
    lb = eks.lb_controller_values("prod-eu-west-1", "eu-west-1", VPC, LB_ROLE, "aws-load-balancer-controller")
    assert (lb["clusterName"], lb["region"], lb["vpcId"]) == ("prod-eu-west-1", "eu-west-1", VPC)


def test_an_unpinned_minor_is_a_run_error():
    """A RunError is printed as the message alone; any other exception as a Python traceback of the program."""
    with pytest.raises(pulumi.RunError, match="kubernetes_version: EKS Kubernetes version '1.29'"):
        plan_eks(version="1.29")


# --- Helm release names -------------------------------------------------------------------------------------------


def test_every_release_has_its_helm_name(three_cloud_plan, eks_plan):
    """The Helm name names every object a chart makes (README: `kube-system/cluster-autoscaler`); a changed name
    replaces the release: the GPU operator reinstalled on every node, Prometheus's volumes created anew."""
    names = {r.name.removeprefix(f"{cluster}-"): r.inputs["name"] for p in (three_cloud_plan, eks_plan)
             for r in p.of_type(RELEASE) for cluster in (AWS, GCP, AZURE) if r.name.startswith(f"{cluster}-")}
    assert names == {"prometheus-stack": "kube-prometheus-stack", "kueue": "kueue", "gpu-operator": "gpu-operator",
                     "dcgm-exporter": "dcgm-exporter", "neuron": "neuron", "cluster-autoscaler-release": "cluster-autoscaler",
                     "lb-controller-release": "aws-load-balancer-controller"}
    # Without the override the chart would name the autoscaler `cluster-autoscaler-aws-cluster-autoscaler`.
    assert values(eks_plan, AUTOSCALER)["fullnameOverride"] == "cluster-autoscaler"


# --- accelerators -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("operator", "expected"), [(True, 148), (False, 21)])
def test_gke_critical_quota_is_exactly_the_pods_plus_a_quarter(operator, expected):
    """11 H100 nodes, 5 system nodes: 11*9 operands + 16 NFD workers + 3 cluster pods = 118, plus ceil(29.5) = 148;
    without the operator 11 exporter pods plus the minimum 10. Too few refuses critical pods at creation."""
    pools = {"gcp": {"gpu_pools": {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 11}}}}
    spec = make_spec(clouds=("gcp",), pools=pools, addons={"gpu_operator_on_gke": operator})
    assert gke_critical_pods(cluster_view(Cloud.GCP, spec.clouds.gcp.regions["us-central1"]), spec.addons) == expected


def test_gke_critical_quota_applies_to_the_critical_classes_once_its_namespace_exists(three_cloud_plan):
    """`In` the two classes: `NotIn` would cap every other pod and leave the critical ones refused."""
    quota = three_cloud_plan.one("kubernetes:core/v1:ResourceQuota", f"{GCP}-gpu-critical-quota")
    assert quota.inputs["spec"]["scopeSelector"] == {"matchExpressions": [{
        "scopeName": "PriorityClass", "operator": "In", "values": ["system-node-critical", "system-cluster-critical"]}]}
    assert deps(quota) == {f"{GCP}-gpu-namespace"}


def test_gke_exporter_waits_for_the_quota_its_pods_need(three_cloud_plan):
    """GKE refuses system-node-critical pods outside kube-system until the quota exists: the atomic release would fail."""
    exporter = three_cloud_plan.one(RELEASE, f"{GCP}-dcgm-exporter")
    assert {f"{GCP}-gpu-namespace", f"{GCP}-gpu-critical-quota", f"{GCP}-prometheus-stack", f"{GCP}-h100-train"} <= deps(exporter)


def test_operator_creates_servicemonitors_only_for_self_managed_prometheus(three_cloud_plan, managed_plan):
    """Self-managed Prometheus finds the exporter through its ServiceMonitor; managed ones have no such CRD."""
    for cluster in (AWS, AZURE):
        assert values(three_cloud_plan, f"{cluster}-gpu-operator")["dcgmExporter"]["serviceMonitor"]["enabled"] is True
        assert values(managed_plan, f"{cluster}-gpu-operator")["dcgmExporter"]["serviceMonitor"]["enabled"] is False


def test_operator_configs_wait_for_the_gpu_namespace(three_cloud_plan):
    """A ConfigMap created before its namespace is refused (namespace not found)."""
    for suffix in ("device-plugin-config", "mig-config"):
        assert f"{AWS}-gpu-namespace" in deps(three_cloud_plan.one("kubernetes:core/v1:ConfigMap", f"{AWS}-{suffix}"))


# --- monitoring ---------------------------------------------------------------------------------------------------


def dashboard_queries(plan: PlanResult, cluster: str) -> list[str]:
    return [t["expr"] for p in dashboard(plan, cluster)["panels"] for t in p["targets"]]


def test_dashboard_reads_the_team_where_each_prometheus_stores_it(three_cloud_plan, managed_plan):
    """GMP relabels the scraped pod's `namespace` to `exported_namespace`; every other Prometheus keeps `namespace`
    (honorLabels). The wrong label leaves the per-team panels empty."""
    for plan, cluster, label in ((managed_plan, GCP, "exported_namespace"), (three_cloud_plan, GCP, "namespace"),
                                 (managed_plan, AWS, "namespace"), (managed_plan, AZURE, "namespace")):
        by_team = [q for q in dashboard_queries(plan, cluster) if '=~"$team"' in q]
        assert by_team and all(f'{{{label}=~"$team"}}' in q for q in by_team), (cluster, label)


def test_managed_mode_exports_what_the_user_loads_into_the_cloud(three_cloud_plan, managed_plan):
    """AMP gets the scrape config and rules, Azure the rules, GMP nothing (in-cluster objects); each says its mode."""
    out = {c: managed_plan.outputs["kubernetes"][c]["monitoring"] for c in (AWS, GCP, AZURE)}
    assert out[AWS] == {"mode": "managed", "scrape_config": scrape_config_yaml(), "alert_rules": rules_yaml()}
    assert out[AZURE] == {"mode": "managed", "alert_rules": rules_yaml()}
    assert out[GCP] == {"mode": "managed"}
    assert three_cloud_plan.outputs["kubernetes"][AWS]["monitoring"] == {"mode": "self_managed"}


def test_amp_collector_binding_refers_to_the_cluster_role(managed_plan):
    """A ClusterRoleBinding may only refer to a ClusterRole; the API server refuses `kind: Role`."""
    binding = managed_plan.one(f"{RBAC}:ClusterRoleBinding", f"{AWS}-amp-collector-binding").inputs
    role = managed_plan.one(f"{RBAC}:ClusterRole", f"{AWS}-amp-collector-role").inputs
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": role["metadata"]["name"]}


# --- previewers ---------------------------------------------------------------------------------------------------


def test_read_rules_grant_what_the_statefulset_and_ingress_awaiters_list():
    """Refreshing a StatefulSet lists its Pods, an Ingress its Endpoints and Services (pulumi-kubernetes await);
    ungranted, the refresh finds the object not ready."""
    assert read_rules(["kubernetes:apps/v1:StatefulSet"]) == [("", ["pods"]), ("apps", ["statefulsets"])]
    assert read_rules(["kubernetes:networking.k8s.io/v1:Ingress"]) == [
        ("", ["endpoints", "services"]), ("networking.k8s.io", ["ingresses"])]


def test_resource_names_of_gmp_kinds_and_regular_plurals():
    """A wrong resource name grants nothing: GMP's CRDs are `clusterrules`, `rules`, `globalrules`; a vowel before -y
    takes -s (Gateway API `gateways`), -ch and -sh take -es."""
    group = "monitoring.googleapis.com"
    for kind, name in (("ClusterRules", "clusterrules"), ("Rules", "rules"), ("GlobalRules", "globalrules")):
        assert resource_of(f"kubernetes:{group}/v1:{kind}") == (group, name)
    assert (plural("Gateway"), plural("NetworkPolicy")) == ("gateways", "networkpolicies")
    assert (plural("Mesh"), plural("Patch")) == ("meshes", "patches")


def test_a_release_namespace_unknown_while_planning_is_refused_by_name():
    """The Role in a Helm namespace must be known when planning; an Output namespace is a clear error, not a gap."""
    def program() -> None:
        k8s.helm.v3.Release("x-release", k8s.helm.v3.ReleaseArgs(chart="c", namespace=pulumi.Output.from_input("ns")),
                            opts=pulumi.ResourceOptions(transformations=[LayerRecord()]))
    with pytest.raises(pulumi.RunError, match="Helm release x-release: its namespace must be a plain string"):
        run_program(program, project="ai-infra", stack="test")


def previewer_rbac(plan: PlanResult) -> list[Any]:
    return [r for k in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding") for r in plan.of_type(f"{RBAC}:{k}")
            if r.name.startswith(f"{AWS}-previewer")]


def test_helm_roles_are_bound_as_roles_and_kube_system_waits_for_nothing(managed_plan):
    """A RoleBinding naming `kind: ClusterRole` binds a role that doesn't exist (no Secrets read, the refresh fails);
    kube-system exists with the cluster, so its Role waits for no release (only a release creating its namespace)."""
    bindings = [r for r in previewer_rbac(managed_plan) if r.type == f"{RBAC}:RoleBinding"]
    assert len(bindings) == 3 and all(b.inputs["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ai-infra-previewer-helm"} for b in bindings)
    assert managed_plan.one(f"{RBAC}:Role", f"{AWS}-previewer-helm-kube-system").dependencies == []


def test_previewer_rbac_is_labelled_and_its_kinds_exported(managed_plan):
    """The layer's managed-by label finds these objects (`kubectl get -l`); the export names the core group `core`."""
    assert len(previewer_rbac(managed_plan)) == 8
    assert all(r.inputs["metadata"]["labels"] == MANAGED_BY for r in previewer_rbac(managed_plan))
    exported = managed_plan.outputs["kubernetes"][AWS]["previewers"]
    assert exported["helm_namespaces"] == ["gpu-operator", "kube-system", "kueue-system"]
    assert "core/namespaces" in exported["kinds"] and not [k for k in exported["kinds"] if k.startswith("/")]
