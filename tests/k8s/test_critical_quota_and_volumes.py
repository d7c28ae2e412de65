"""Two sizes and one replacement the clusters depend on: GKE's quota for critical-priority pods in the GPU namespace
holds every GPU Operator and NFD pod at the pools' largest size, and a Lustre claim is replaced together with its
volume (a volume's CSI source cannot change in place)."""

from __future__ import annotations

import copy

import pulumi
from k8s.layer import POOLS, handles, make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose.kubernetes import build
from components.k8s.accelerators import (
    OPERATOR_CLUSTER_PODS,
    OPERATOR_PODS_PER_GPU_NODE,
    gke_critical_pods,
)
from components.k8s.cluster import cluster_view
from components.k8s.lustre import fsx_mount
from components.spec import Cloud

QUOTA = "kubernetes:core/v1:ResourceQuota"
GCP = "test-us-central1"


def critical_quota(plan: PlanResult) -> int:
    return int(plan.one(QUOTA, f"{GCP}-gpu-critical-quota").inputs["spec"]["hard"]["pods"])


def test_a_large_pool_with_the_operator_gets_room_for_every_operand() -> None:
    pools = copy.deepcopy(POOLS)
    pools["gcp"] = {"gpu_pools": {"h100-train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "max_nodes": 64},
                                  "l4-serve": {"accelerator": "l4", "accelerators_per_node": 1, "max_nodes": 40}}}
    plan = plan_layer(make_spec(clouds=("gcp",), pools=pools, addons={"gpu_operator_on_gke": True}))
    gpu_nodes, system_nodes = 64 + 40, 5  # the system pool's default max_nodes
    needed = gpu_nodes * OPERATOR_PODS_PER_GPU_NODE + gpu_nodes + system_nodes + OPERATOR_CLUSTER_PODS
    assert OPERATOR_PODS_PER_GPU_NODE >= 7  # driver, toolkit, device plugin, DCGM exporter, GFD, MIG manager, validator
    quota = critical_quota(plan)
    assert needed < quota <= needed * 1.3  # every pod fits, with bounded headroom
    assert quota > 100  # the old fixed quota would have refused pods from the 11th GPU node on


def test_without_the_operator_only_the_exporter_counts() -> None:
    plan = plan_layer(make_spec(clouds=("gcp",)))  # two h100 nodes, GKE's own GPU stack and the dcgm-exporter chart
    assert critical_quota(plan) == 2 + 10  # one exporter pod per GPU node, plus the minimum headroom
    spec = make_spec(clouds=("gcp",), addons={"gpu_operator_on_gke": True})
    view = cluster_view(Cloud.GCP, spec.clouds.gcp.regions["us-central1"])
    assert view.system_nodes == 5
    assert gke_critical_pods(view, spec.addons) == 2 * OPERATOR_PODS_PER_GPU_NODE + 2 + 5 + OPERATOR_CLUSTER_PODS + 10


# --- Lustre claims are replaced with their volumes ---------------------------------------------------------------


def test_a_claim_is_replaced_with_its_volume() -> None:
    spec = make_spec(clouds=("aws",), teams={"research": {"gpu_quota": 0}})

    def program() -> None:
        [handle] = handles(spec)
        handle.lustre = (fsx_mount("train", 1200, "fs-0123456789abcdef0", "fs-0123.fsx.us-east-1.amazonaws.com", "abcdefgh"),)
        pulumi.export("kubernetes", build(spec, [handle]).outputs)

    plan = run_program(program, project="ai-infra", stack="test")
    pv = plan.one("kubernetes:core/v1:PersistentVolume", "test-us-east-1-lustre-train-research-pv")
    pvc = plan.one("kubernetes:core/v1:PersistentVolumeClaim", "test-us-east-1-lustre-train-research-pvc")
    assert pvc.replaceWith == [pv.urn]
    assert pv.urn in pvc.dependencies  # so Pulumi deletes the claim before the volume it replaces
    assert pv.replaceWith == []
