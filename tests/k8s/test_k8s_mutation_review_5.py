"""Behaviour of the Kubernetes layer that a fifth hand mutation review (of sharing, inference, queues and objects)
found no test pinning, as a GPU node, the GPU Operator, Kueue or a user would see it: MIG instance counts on the
larger GPUs, which cloud partitions MIG on GKE, the node label the device plugin reads, the device plugin's MPS and
time-slicing configs and the quota of an MPS pool, the MIG resource Kueue counts under the operator on GKE; the
ClusterQueue's queueing strategy, the flavors' capacity label matching the nodes' and the quota split's tie-break;
the inference Service's stack outputs and its NetworkPolicy's name."""

from __future__ import annotations

import pytest
import yaml
from k8s.layer import make_spec, plan_layer
from k8s.test_k8s_mutation_review import plan_inference
from k8s.test_pure import view_of

from aiinfra.plan.runtime import PlanResult
from components.k8s.queues import flavors, split_quota
from components.k8s.sharing import device_plugin_configs, mig_instances_per_gpu, sharing_node_labels
from components.spec import Cloud, GpuSharing, MigStrategy
from components.spec.resolve import accelerator_node_labels, resolve_gpu_pool

AWS, GCP = "test-us-east-1", "test-us-central1"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
MIG = GpuSharing(mode="mig", mig_profile="3g.40gb")
MPS_POOL = {"l4": {"accelerator": "l4", "accelerators_per_node": 1, "max_nodes": 4,
                   "sharing": {"mode": "mps", "replicas_per_gpu": 4}}}


# --- GPU sharing --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("profiles", "counts"), [
    (("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"), [7, 4, 3, 2, 1, 1]),  # H200
    (("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"), [7, 4, 3, 2, 1, 1]),  # B200
    (("1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"), [7, 4, 3, 2, 1, 1]),  # H100 NVL
])
def test_mig_counts_of_gpus_whose_memory_is_not_a_multiple_of_eight_match_nvidia(profiles, counts) -> None:
    """NVIDIA's tables: an H200 holds 4 1g.35gb instances, not 7. A count above the real one makes mig-parted fail to
    apply the layout (the node stays unpartitioned) and Kueue hand out quota for instances that don't exist."""
    assert [mig_instances_per_gpu(p, profiles) for p in profiles] == counts


def test_gke_partitions_mig_itself_unless_the_gpu_operator_runs() -> None:
    """Without the operator GKE's own MIG partitions the GPUs (no MIG manager reads the label); with it, the
    operator's MIG manager applies the layout its `nvidia.com/mig.config` node label names."""
    assert sharing_node_labels(Cloud.GCP, "a100-80gb", MIG, False) == {}
    assert sharing_node_labels(Cloud.GCP, "a100-80gb", MIG, True) == {"nvidia.com/mig.config": "a100-80gb-3g.40gb"}


def test_shared_pools_carry_the_label_the_operators_device_plugin_reads() -> None:
    """The device plugin picks its config by the node label `nvidia.com/device-plugin.config`; under any other key
    the node keeps the default config and its GPUs are not shared."""
    sharing = GpuSharing(mode="time_slicing", replicas_per_gpu=4)
    assert sharing_node_labels(Cloud.AWS, "l4", sharing, False) == {"nvidia.com/device-plugin.config": "time-slicing-4"}


@pytest.fixture(scope="module")
def gke_operator_mps() -> PlanResult:
    """One GKE cluster with the GPU Operator and an MPS pool of 4 L4 GPUs, 4 clients per GPU."""
    return plan_layer(make_spec(clouds=("gcp",), pools={"gcp": {"gpu_pools": MPS_POOL}},
                                addons={"gpu_operator_on_gke": True}))


def test_the_device_plugin_runs_mps_for_an_mps_pool(gke_operator_mps) -> None:
    """MPS and time-slicing both give 4 pods per GPU, but only MPS caps each client's memory and compute; an MPS
    pool configured as time-slicing silently loses that isolation."""
    data = gke_operator_mps.one(CONFIG_MAP, f"{GCP}-device-plugin-config").inputs["data"]
    assert yaml.safe_load(data["mps-4"]) == {
        "version": "v1", "flags": {"migStrategy": "none"},
        "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}}


def test_an_mps_pool_counts_its_clients_in_quota(gke_operator_mps) -> None:
    """Each GPU is advertised as 4 `nvidia.com/gpu`: a team's 16 GPUs are 64 units. Counted as 16, Kueue would admit a
    quarter of the pods the team is owed."""
    groups = gke_operator_mps.one(QUEUE, f"{GCP}-research-cluster-queue").inputs["spec"]["resourceGroups"]
    assert groups[1]["flavors"] == [
        {"name": "l4-on-demand", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "64"}]}]


def test_time_slicing_shares_whole_gpus_whatever_the_clusters_mig_strategy() -> None:
    """The replica config names `nvidia.com/gpu`; the plugin must see whole GPUs (`migStrategy: none`) on those
    nodes, not the cluster's MIG strategy, for the replicas to be the resource pods request."""
    configs = device_plugin_configs(view_of("aws").nvidia_pools, MigStrategy.MIXED)
    assert yaml.safe_load(configs["time-slicing-4"]) == {
        "version": "v1", "flags": {"migStrategy": "none"},
        "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}}


def test_with_the_operator_on_gke_mixed_mig_is_counted_in_mig_resources() -> None:
    """The operator's device plugin under `mixed` advertises `nvidia.com/mig-3g.40gb`, not `nvidia.com/gpu` (that is
    GKE's own MIG): a quota in the wrong resource leaves every MIG workload pending."""
    pools = {"mig": {"accelerator": "a100-80gb", "accelerators_per_node": 1,
                     "sharing": {"mode": "mig", "mig_profile": "3g.40gb"}}}
    view = view_of("gcp", pools, addons={"gpu_operator_on_gke": True})
    [flavor] = [f for f in flavors(view, MigStrategy.MIXED, gpu_operator_on_gke=True) if f.group == "nvidia"]
    assert (flavor.resource, flavor.units_per_device) == ("nvidia.com/mig-3g.40gb", 2)


# --- Kueue --------------------------------------------------------------------------------------------------------


def test_a_workload_that_does_not_fit_does_not_block_the_queue(three_cloud_plan) -> None:
    """`BestEffortFIFO`: a large job waiting for GPUs lets smaller ones behind it be admitted; `StrictFIFO` would hold
    every later workload of the team until the head fits."""
    for cluster in (AWS, GCP):
        queue = three_cloud_plan.one(QUEUE, f"{cluster}-research-cluster-queue")
        assert queue.inputs["spec"]["queueingStrategy"] == "BestEffortFIFO", cluster


def test_every_gpu_flavor_selects_labels_its_pools_nodes_carry() -> None:
    """A flavor's nodeLabels become the admitted pods' node selector: a value the nodes don't carry (say
    `on-demand` for `on_demand`) leaves every pod Kueue admits onto the flavor unschedulable."""
    spec = make_spec(("aws",))
    cloud_spec = dict(spec.clouds.items())[Cloud.AWS]
    region = next(iter(cloud_spec.regions.values()))
    node_labels = [accelerator_node_labels(name, pool, resolve_gpu_pool(Cloud.AWS, pool))
                   for name, pool in region.gpu_pools.items()]
    for flavor in flavors(view_of("aws"), MigStrategy.SINGLE):
        carriers = [labels for labels in node_labels if flavor.node_labels.items() <= labels.items()]
        assert carriers, flavor.name


def test_a_tied_share_goes_to_the_earlier_flavor() -> None:
    """With equal weights the odd GPU goes to the first flavor (on-demand before spot, as flavors are sorted), so a
    plan does not move quota between flavors from one run to the next."""
    assert split_quota(1, [16, 16]) == [1, 0]
    assert split_quota(3, [8, 8, 8, 8]) == [1, 1, 1, 0]


# --- the inference Service ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def inference_plan() -> PlanResult:
    """test_k8s_mutation_review's GKE cluster whose inference Service admits 35.191.0.0/16."""
    return plan_inference()


def test_the_inference_outputs_tell_what_to_deploy_and_what_may_reach_it(inference_plan) -> None:
    """`kubernetes.<cluster>.inference` is how a user learns the port and labels their pods must have to be served, and
    which source ranges the load balancer is admitted from."""
    assert inference_plan.outputs["kubernetes"][GCP]["inference"] == {
        "service": "inference/inference", "port": 8080, "selector": {"app.kubernetes.io/name": "inference"},
        "admitted": ["35.191.0.0/16"]}


def test_the_load_balancer_policy_has_its_fixed_name(inference_plan) -> None:
    """The NetworkPolicy's name is its identity in the namespace: a new name is a second policy, and operators find the
    rule that lets the load balancer in as `ai-infra-from-load-balancer`."""
    policy = inference_plan.one(POLICY, f"{GCP}-inference-from-load-balancer")
    assert policy.inputs["metadata"]["name"] == "ai-infra-from-load-balancer"


# --- shared objects -----------------------------------------------------------------------------------------------


def test_every_namespace_the_layer_creates_says_it_manages_it(three_cloud_plan) -> None:
    """`app.kubernetes.io/managed-by: ai-infra` is how an operator tells the toolkit's namespaces (teams, GPU add-ons,
    monitoring) from ones made by hand, e.g. before deleting one; the namespace's own labels add to it."""
    namespaces = three_cloud_plan.of_type("kubernetes:core/v1:Namespace")
    assert {r.inputs["metadata"]["name"] for r in namespaces} >= {"research", "serving", "gpu-operator", "monitoring"}
    for record in namespaces:
        assert record.inputs["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "ai-infra", record.name
