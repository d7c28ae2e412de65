"""Neuron quota cannot be bypassed: the device plugin advertises every Neuron device both as `aws.amazon.com/neuron`
and as `aws.amazon.com/neuroncore`, so Kueue keeps Neuron quota in cores and turns device requests into cores, and
the team ResourceQuota caps both resources."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from k8s.layer import POOLS, make_spec, plan_layer
from k8s.validation import validate

from aiinfra.plan.runtime import PlanResult
from components.k8s.cluster import NEURON_CORES_PER_DEVICE, cluster_view
from components.k8s.queues import flavors, neuron_transformation
from components.spec import Cloud, MigStrategy

RELEASE = "kubernetes:helm.sh/v3:Release"
QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
QUOTA = "kubernetes:core/v1:ResourceQuota"
AWS = "test-us-east-1"
DEVICE, CORE = "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"
# The layer's AWS pools have one Trainium2 pool of 2 trn2.48xlarge (16 devices each): 32 devices, 128 cores.
TEAMS = {"research": {"gpu_quota": 16}, "serving": {"gpu_quota": 4, "can_borrow": False}}


def kueue_resources(plan: PlanResult, cluster: str) -> dict[str, Any]:
    text = plan.one(RELEASE, f"{cluster}-kueue").inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    return yaml.safe_load(text)["resources"]


def neuron_group(plan: PlanResult, team: str) -> dict[str, Any]:
    groups = plan.one(QUEUE, f"{AWS}-{team}-cluster-queue").inputs["spec"]["resourceGroups"]
    [group] = [g for g in groups if any(f["name"].startswith("trainium") for f in g["flavors"])]
    return group


def charge(requests: dict[str, int], resources: dict[str, Any]) -> dict[str, int]:
    """What Kueue charges a pod for (kubernetes-sigs/kueue v0.19.2 pkg/workload/workload.go: excluded prefixes
    dropped, then applyResourceTransformations; outputs are per unit of input)."""
    kept = {r: q for r, q in requests.items()
            if not any(r.startswith(p) for p in resources["excludeResourcePrefixes"])}
    charged: dict[str, int] = {}
    transforms = {t["input"]: t for t in resources.get("transformations", [])}
    for resource, quantity in kept.items():
        t = transforms.get(resource)
        if t is None:
            charged[resource] = charged.get(resource, 0) + quantity
            continue
        for output, factor in t["outputs"].items():
            charged[output] = charged.get(output, 0) + quantity * int(factor)
        if t["strategy"] == "Retain":
            charged[resource] = charged.get(resource, 0) + quantity
    return charged


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return plan_layer(make_spec(clouds=("aws",), teams=TEAMS))


def test_the_queue_counts_neuron_in_cores(plan: PlanResult) -> None:
    group = neuron_group(plan, "serving")
    assert group["coveredResources"] == [CORE]  # not the device resource: devices are turned into cores first
    [flavor] = group["flavors"]
    # serving's 4 devices of Trainium2, 4 NeuronCores each under the default LNC=2 (64 per trn2.48xlarge).
    assert flavor["resources"] == [{"name": CORE, "nominalQuota": "16", "borrowingLimit": "0"}]
    validate(plan.one(QUEUE, f"{AWS}-serving-cluster-queue").inputs | {"apiVersion": "kueue.x-k8s.io/v1beta2",
                                                                      "kind": "ClusterQueue"})


def test_kueue_charges_a_device_request_as_its_cores(plan: PlanResult) -> None:
    resources = kueue_resources(plan, AWS)
    assert resources["transformations"] == [{"input": DEVICE, "strategy": "Replace", "outputs": {CORE: "4"}}]
    assert not any(p for p in resources["excludeResourcePrefixes"] if CORE.startswith(p) or DEVICE.startswith(p))
    covered = set(neuron_group(plan, "serving")["coveredResources"])
    nominal = int(neuron_group(plan, "serving")["flavors"][0]["resources"][0]["nominalQuota"])
    # Whichever way a pod asks for the same 4 devices (a whole quota), Kueue charges the same 16 cores, and only
    # resources the queue covers (BlockUndeclared would leave anything else pending).
    for requests in ({DEVICE: 4}, {CORE: 16}, {DEVICE: 2, CORE: 8}):
        charged = charge({"cpu": 8, **requests}, resources)
        assert charged[CORE] == nominal and DEVICE not in charged
        assert set(charged) - {"cpu", "memory"} <= covered
    assert charge({CORE: 17}, resources)[CORE] > nominal  # one core more than the quota is over it


def test_the_namespace_quota_caps_devices_and_cores(plan: PlanResult) -> None:
    serving = plan.one(QUOTA, f"{AWS}-serving-quota").inputs["spec"]["hard"]
    assert (serving[f"requests.{DEVICE}"], serving[f"requests.{CORE}"]) == ("4", "16")
    # research may borrow: up to the cohort's total, 20 devices of the pool's 32.
    research = plan.one(QUOTA, f"{AWS}-research-quota").inputs["spec"]["hard"]
    assert (research[f"requests.{DEVICE}"], research[f"requests.{CORE}"]) == ("20", "80")


def test_clusters_without_neuron_pools_transform_nothing() -> None:
    plan = plan_layer(make_spec(clouds=("gcp",), teams=TEAMS))
    resources = kueue_resources(plan, "test-us-central1")
    assert "transformations" not in resources
    hard = plan.one(QUOTA, "test-us-central1-serving-quota").inputs["spec"]["hard"]
    assert f"requests.{DEVICE}" not in hard and f"requests.{CORE}" not in hard


def test_mixed_neuron_kinds_never_charge_a_device_below_its_cores() -> None:
    """trn1 (2 cores per device) beside trn2 (4): one cluster-wide factor, the larger, so no device is undercharged."""
    pools = copy.deepcopy(POOLS)
    pools["aws"]["gpu_pools"]["trn1"] = {"accelerator": "trainium", "accelerators_per_node": 16, "max_nodes": 1}
    spec = make_spec(clouds=("aws",), pools=pools, teams=TEAMS)
    flavor_list = flavors(cluster_view(Cloud.AWS, spec.clouds.aws.regions["us-east-1"]), MigStrategy.SINGLE)
    units = {f.name: f.units_per_device for f in flavor_list if f.group == "neuron"}
    assert units == {"trainium-on-demand": 2, "trainium2-on-demand": 4}
    assert neuron_transformation(flavor_list) == {"input": DEVICE, "strategy": "Replace", "outputs": {CORE: "4"}}
    assert neuron_transformation([f for f in flavor_list if f.group != "neuron"]) is None


def test_cores_per_device_cover_every_catalog_neuron_accelerator() -> None:
    from components import catalog
    neuron = {r.accelerator for r in catalog.instance_types() if r.vendor == "aws-neuron"}
    assert neuron == set(NEURON_CORES_PER_DEVICE)  # a new Neuron accelerator in the catalog needs its core count
    assert NEURON_CORES_PER_DEVICE == {"trainium": 2, "trainium2": 4, "inferentia2": 2}


def test_an_unknown_neuron_accelerator_is_refused_by_name() -> None:
    from components.k8s.cluster import GpuPool
    from components.spec import CapacityType, GpuDriver, GpuSharing
    pool = GpuPool(name="inf3", accelerator="inferentia3", vendor="aws-neuron", per_node=1, max_nodes=1,
                   capacity=CapacityType.ON_DEMAND, sharing=GpuSharing(), driver=GpuDriver.CLOUD, taints=(),
                   mig_profiles=())
    refused = r"gpu_pools\.inf3\.accelerator: .*'inferentia3'; known: inferentia2, trainium, trainium2"
    with pytest.raises(ValueError, match=refused):
        pool.neuron_cores_per_device
