"""Behaviour of the Kubernetes layer that a hand mutation review found no test pinning: what the API server would
receive for team tenancy (quotas, PriorityClasses, creation order), Kueue's flavors and queues, the GPU add-ons'
namespace and the inference namespace, as the plan records it."""

from __future__ import annotations

import pulumi
import pytest
from helpers import platform_dict
from k8s.layer import TEAMS, cloud_config, handles

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose.kubernetes import build
from components.compose.types import InferenceBackend
from components.k8s.tenancy import check_team_names
from components.spec import InferenceSpec, TeamSpec, load_platform

AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"
NAMESPACE = "kubernetes:core/v1:Namespace"
QUOTA = "kubernetes:core/v1:ResourceQuota"
POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
LIMITS = "kubernetes:core/v1:LimitRange"
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"


def depends_on(plan: PlanResult, type_: str, name: str, dependency: str) -> bool:
    """Whether the object `name` of `type_` waits for the resource named `dependency`."""
    return any(d.rsplit("::", 1)[1] == dependency for d in plan.one(type_, name).dependencies)


# --- team tenancy ------------------------------------------------------------------------------------------------


def test_team_quota_names_gpus_and_tpu_chips_even_where_the_cluster_has_none(three_cloud_plan):
    """A ResourceQuota that leaves a resource out puts no limit on it: GPUs and TPU chips are always listed, 0 on a
    cluster without them (EKS and AKS have no TPUs)."""
    for cluster in (AWS, AZURE):
        hard = three_cloud_plan.one(QUOTA, f"{cluster}-research-quota").inputs["spec"]["hard"]
        assert hard["requests.google.com/tpu"] == "0", cluster
        assert int(hard["requests.nvidia.com/gpu"]) > 0


def test_team_quota_of_a_tpu_only_cluster_allows_no_gpus(planner):
    """A GKE cluster with TPU slices only: team pods outside Kueue get `requests.nvidia.com/gpu: 0`, not no limit."""
    plan = planner(clouds=("gcp",), pools={"gcp": {"tpu_slices": {"v5e": {"generation": "v5e", "topology": "2x4"}}}})
    hard = plan.one(QUOTA, f"{GCP}-research-quota").inputs["spec"]["hard"]
    assert hard["requests.nvidia.com/gpu"] == "0" and hard["requests.google.com/tpu"] == "8"


def test_no_priority_class_is_the_cluster_default(three_cloud_plan):
    """The API server allows one `globalDefault` PriorityClass; a default would also give every pod without a class
    (the platform's own, other teams') that priority."""
    classes = three_cloud_plan.of_type(PRIORITY_CLASS)
    assert len(classes) == 9  # three per cluster
    assert all(c.inputs["globalDefault"] is False for c in classes)


def test_a_teams_policy_quotas_and_limits_wait_for_its_namespace(three_cloud_plan):
    """Their `metadata.namespace` is a plain string, so only an explicit dependency creates them after the namespace
    (and deletes them before it)."""
    for cluster in (AWS, GCP, AZURE):
        namespace = f"{cluster}-research-namespace"
        assert depends_on(three_cloud_plan, POLICY, f"{cluster}-research-network-policy", namespace)
        assert depends_on(three_cloud_plan, QUOTA, f"{cluster}-research-quota", namespace)
        assert depends_on(three_cloud_plan, QUOTA, f"{cluster}-research-priority-quota", namespace)
        assert depends_on(three_cloud_plan, LIMITS, f"{cluster}-research-limits", namespace)


@pytest.mark.parametrize("team", ["kube-system", "default", "monitoring", "kube-public"])
def test_the_layer_itself_refuses_a_team_named_after_a_platform_namespace(team):
    """Defence in depth behind the spec: a team called kube-system would get a default-deny NetworkPolicy and
    `restricted` Pod Security on the cluster's own namespace."""
    with pytest.raises(ValueError, match=f"namespace '{team}'"):
        check_team_names({"research": TeamSpec(), team: TeamSpec()})


def test_kueue_objects_wait_for_the_chart_that_installs_their_crds(three_cloud_plan):
    """ResourceFlavors, ClusterQueues and LocalQueues are Kueue CRDs served once its release is up; a ClusterQueue
    names flavors (its flavors first), a LocalQueue its ClusterQueue."""
    for cluster in (AWS, GCP, AZURE):
        flavors = [r for r in three_cloud_plan.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
                   if r.name.startswith(f"{cluster}-flavor-")]
        assert len(flavors) > 1
        for flavor in flavors:
            assert depends_on(three_cloud_plan, flavor.type, flavor.name, f"{cluster}-kueue"), flavor.name
        queue = three_cloud_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", f"{cluster}-research-cluster-queue")
        waits = {d.rsplit("::", 1)[1] for d in queue.dependencies}
        assert waits >= {f"{cluster}-kueue", f"{cluster}-research-namespace", *(f.name for f in flavors)}
        assert depends_on(three_cloud_plan, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
                          f"{cluster}-research-local-queue", f"{cluster}-research-cluster-queue")


def test_gpu_flavors_carry_the_tolerations_of_their_tainted_nodes(three_cloud_plan):
    """Kueue adds a flavor's tolerations to the pods it admits onto that flavor: without them an admitted job's pods
    stay Pending on the GPU, Neuron, TPU and spot taints of the very nodes Kueue chose."""
    def flavor(name: str) -> dict:
        return three_cloud_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor", name).inputs["spec"]

    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    assert flavor(f"{AWS}-flavor-h100-80gb-on-demand")["tolerations"] == [gpu]
    assert flavor(f"{AWS}-flavor-trainium2-on-demand")["tolerations"] == [
        {"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"}]
    assert flavor(f"{GCP}-flavor-tpu-v5p-slice-2x2x2-on-demand")["tolerations"] == [
        {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert flavor(f"{AZURE}-flavor-h100-80gb-spot")["tolerations"] == [
        gpu, {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Exists", "effect": "NoSchedule"}]
    assert flavor(f"{AWS}-flavor-default") == {}


def test_a_team_gets_its_lent_quota_back_by_preemption(three_cloud_plan):
    """`reclaimWithinCohort: Any`: a team whose idle quota another team borrowed preempts the borrower's workloads when
    it needs it again; with `Never` it waits until they finish, however long a training run takes."""
    for cluster in (AWS, GCP, AZURE):
        queue = three_cloud_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", f"{cluster}-research-cluster-queue")
        assert queue.inputs["spec"]["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}


def test_the_gpu_add_ons_namespace_says_it_runs_privileged_pods(three_cloud_plan):
    """The GPU Operator's driver and toolkit pods are privileged: the namespace enforces `privileged` explicitly, so a
    cluster-wide Pod Security default of `baseline` or `restricted` does not keep the driver from installing."""
    for cluster in (AWS, GCP, AZURE):
        labels = three_cloud_plan.one(NAMESPACE, f"{cluster}-gpu-namespace").inputs["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "privileged", cluster


# --- inference Service --------------------------------------------------------------------------------------------


def plan_inference(namespace: str = "inference") -> PlanResult:
    """The layer on one GKE cluster whose inference Service lives in `namespace`, which no team owns."""
    spec = load_platform(platform_dict({"gcp": cloud_config("gcp")}, teams=TEAMS))

    def program() -> None:
        [handle] = handles(spec)
        handle.inference = InferenceBackend(InferenceSpec(service_namespace=namespace), sources=("35.191.0.0/16",))
        pulumi.export("kubernetes", build(spec, [handle]).outputs)
    return run_program(program, project="ai-infra", stack="test")


def test_the_inference_namespace_the_layer_creates_enforces_restricted_pod_security():
    """Without a team of its name the InferenceService creates the namespace; its pods face the load balancer, so it
    gets the team namespaces' Pod Security `restricted`, enforced, audited and warned."""
    record = plan_inference().one(NAMESPACE, f"{GCP}-inference-namespace")
    labels = record.inputs["metadata"]["labels"]
    assert record.inputs["metadata"]["name"] == "inference"
    for mode in ("enforce", "audit", "warn"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted", mode
