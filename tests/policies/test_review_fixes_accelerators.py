"""Accelerator cost rules after review: TPU models compared exactly, Cloud TPU VMs and queued resources counted, and
EKS node groups read across all their instance types."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi_gcp as gcp
import pytest
from policy_helpers import UNKNOWN, resource, run_resource, run_stack
from pulumi_policy.proxy import UnknownValueError

from aiinfra.plan.runtime import run_program

ROOT = Path(__file__).resolve().parents[2]
GKE_POOL, EKS_POOL = "gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup"
TPU_VM, TPU_QR = "gcp:tpu/v2Vm:V2Vm", "gcp:tpu/v2QueuedResource:V2QueuedResource"


def gke_tpu_pool(machine: str) -> dict:
    return {"cluster": "c", "nodeConfig": {"machineType": machine}, "nodeCount": 1, "nodeLocations": ["us-central1-a"]}


def queued(*nodes: dict) -> dict:
    return {"zone": "us-central1-a", "tpu": {"nodeSpecs": [{"parent": "projects/p/locations/us-central1-a",
                                                            "nodeId": f"qr-{i}", "node": node} for i, node in enumerate(nodes)]}}


def eks_group(*types: str, max_size: int = 10) -> dict:
    return {"instanceTypes": list(types), "scalingConfig": {"minSize": 0, "maxSize": max_size},
            "taints": [{"key": "nvidia.com/gpu", "effect": "NO_SCHEDULE"}]}


# --- 1. allowed-accelerators compares the exact TPU model ---

def test_a_v5p_pool_is_not_allowed_by_tpu_v5e() -> None:
    # Before, every ct* machine type was model "tpu", allowed when any tpu-* model was.
    allowed = {"allowedAccelerators": ["tpu-v5e"]}
    assert run_resource("allowed-accelerators", GKE_POOL, gke_tpu_pool("ct5p-hightpu-4t"), allowed) == [
        "accelerator tpu-v5p is not allowed here; allowed: tpu-v5e"]
    assert run_resource("allowed-accelerators", GKE_POOL, gke_tpu_pool("ct6e-standard-4t"), allowed) == [
        "accelerator tpu-v6e is not allowed here; allowed: tpu-v5e"]
    assert run_resource("allowed-accelerators", GKE_POOL, gke_tpu_pool("ct5lp-hightpu-4t"), allowed) == []
    # Named by generation now, TPU pools still need no GPU taint.
    assert run_resource("accelerator-pool-tainted", GKE_POOL, gke_tpu_pool("ct5p-hightpu-4t")) == []


def test_a_tpu_generation_outside_the_catalog_is_allowed_by_no_model_name() -> None:
    found = run_resource("allowed-accelerators", GKE_POOL, gke_tpu_pool("ct9x-standard-4t"),
                         {"allowedAccelerators": ["tpu-v5e", "tpu-v5p", "tpu-v6e"]})
    assert found == ["accelerator tpu (ct9x-standard-4t) is not allowed here; allowed: tpu-v5e, tpu-v5p, tpu-v6e"]
    assert run_resource("gpu-cap-per-pool", GKE_POOL, gke_tpu_pool("ct9x-standard-4t"), {"maxGpusPerPool": 2}) == [
        "pool can scale to 4 accelerators (1 x 4); the cap is 2"]


# --- 2. Cloud TPU VMs and queued resources are under the cost rules ---

@pytest.mark.parametrize(("accelerator_type", "model", "chips"), [
    ("v5litepod-8", "tpu-v5e", 8), ("v5p-8", "tpu-v5p", 4), ("v5p-128", "tpu-v5p", 64), ("v6e-16", "tpu-v6e", 16),
    ("v4-32", "tpu-v4", 16), (None, "tpu-v2", 4)])
def test_tpu_accelerator_types_name_model_and_chips(accelerator_type: str | None, model: str, chips: int) -> None:
    from aiinfra_policy.tpu import tpu_slice  # noqa: PLC0415 (here, so the other tests also run on a pack without it)

    # v4 and v5p names count TensorCores (two a chip); v5e and v6e chips; none set is the API's v2-8.
    assert tpu_slice(accelerator_type, None) == (model, chips)


def test_an_accelerator_config_counts_the_chips_of_its_topology() -> None:
    from aiinfra_policy.tpu import tpu_slice  # noqa: PLC0415

    assert tpu_slice(None, {"type": "V5P", "topology": "2x2x4"}) == ("tpu-v5p", 16)
    assert tpu_slice(None, {"type": "V5LITE_POD", "topology": "4x8"}) == ("tpu-v5e", 32)


def test_the_type_table_mirrors_the_catalog() -> None:
    from aiinfra_policy.tpu import TPU_TYPES  # noqa: PLC0415

    generations = json.loads((ROOT / "components/catalog/data/tpus.json").read_text())["generations"]
    catalog = {g["tpu_vm_accelerator_prefix"]: (g["accelerator"], g["cores_per_chip"]) for g in generations}
    assert {k: v for k, v in TPU_TYPES.items() if k in catalog} == catalog
    assert set(TPU_TYPES) - set(catalog) == {"v2", "v3"}  # outside the catalog, v2-8 being the API default


def test_a_tpu_vm_of_a_model_not_allowed_is_reported() -> None:
    allowed = {"allowedAccelerators": ["tpu-v5p"]}
    assert run_resource("allowed-accelerators", TPU_VM, {"acceleratorType": "v5litepod-8"}, allowed) == [
        "accelerator tpu-v5e is not allowed here; allowed: tpu-v5p"]
    assert run_resource("allowed-accelerators", TPU_VM, {"acceleratorType": "v5p-8"}, allowed) == []
    config = {"acceleratorConfig": {"type": "V6E", "topology": "2x2"}}
    assert run_resource("allowed-accelerators", TPU_VM, config, allowed) == [
        "accelerator tpu-v6e is not allowed here; allowed: tpu-v5p"]
    assert run_resource("allowed-accelerators", TPU_QR, queued({"acceleratorType": "v6e-16"}), allowed) == [
        "node qr-0: accelerator tpu-v6e is not allowed here; allowed: tpu-v5p"]


def test_tpu_slices_count_against_the_pool_cap() -> None:
    cap = {"maxGpusPerPool": 32}
    assert run_resource("gpu-cap-per-pool", TPU_VM, {"acceleratorType": "v5p-128"}, cap) == [
        "pool can scale to 64 accelerators (1 x 64); the cap is 32"]
    assert run_resource("gpu-cap-per-pool", TPU_VM, {"acceleratorType": "v5p-64"}, cap) == []
    assert run_resource("gpu-cap-per-pool", TPU_QR, queued({"acceleratorType": "v6e-64"}, {"acceleratorType": "v6e-8"}), cap) == [
        "node qr-0: pool can scale to 64 accelerators (1 x 64); the cap is 32"]


def test_tpu_slices_count_against_the_environment_cap() -> None:
    stack = [resource(TPU_VM, {"acceleratorType": "v5p-256"}, "vm"), resource(TPU_QR, queued({"acceleratorType": "v6e-64"}), "qr")]
    assert run_stack("gpu-cap-per-environment", stack, {"maxGpusPerEnvironment": 100}) == [
        (None, "accelerator pools can scale to 192 accelerators in total; the environment cap is 100")]
    assert run_stack("gpu-cap-per-environment", stack, {"maxGpusPerEnvironment": 192}) == []


def test_an_unknown_accelerator_type_cannot_be_judged() -> None:
    with pytest.raises(UnknownValueError):
        run_resource("gpu-cap-per-pool", TPU_VM, {"acceleratorType": UNKNOWN})


def test_the_sdk_wire_shapes_of_tpu_slices_are_read() -> None:
    def build() -> None:
        gcp.tpu.V2Vm("vm", zone="us-central1-a", runtime_version="v2-alpha-tpuv5", accelerator_type="v5p-128")
        gcp.tpu.V2Vm("cfg", zone="us-central1-a", runtime_version="v2-alpha-tpuv6e",
                     accelerator_config=gcp.tpu.V2VmAcceleratorConfigArgs(type="V6E", topology="4x4"))
        gcp.tpu.V2QueuedResource("qr", zone="us-central1-a", tpu=gcp.tpu.V2QueuedResourceTpuArgs(node_specs=[
            gcp.tpu.V2QueuedResourceTpuNodeSpecArgs(parent="projects/p/locations/us-central1-a", node_id="n", node=(
                gcp.tpu.V2QueuedResourceTpuNodeSpecNodeArgs(runtime_version="v2-alpha-tpuv5-lite", accelerator_type="v5litepod-16")))]))

    planned = {r.name: (r.type, r.inputs) for r in run_program(build, project="p", stack="s").resources}
    found = {name: run_resource("gpu-cap-per-pool", *planned[name], {"maxGpusPerPool": 8}) for name in ("vm", "cfg", "qr")}
    assert found == {"vm": ["pool can scale to 64 accelerators (1 x 64); the cap is 8"],
                     "cfg": ["pool can scale to 16 accelerators (1 x 16); the cap is 8"],
                     "qr": ["node n: pool can scale to 16 accelerators (1 x 16); the cap is 8"]}


# --- 4. EKS node groups: every listed instance type, and a launch template's is read with the stack ---

def test_an_eks_group_counts_its_largest_instance_type() -> None:
    # Before, only instanceTypes[0] was read: m6i.xlarge, so no accelerator pool at all.
    found = run_resource("gpu-cap-per-pool", EKS_POOL, eks_group("m6i.xlarge", "p5.48xlarge"), {"maxGpusPerPool": 64})
    assert found == ["pool can scale to 80 accelerators (10 x 8); the cap is 64"]
    found = run_resource("gpu-cap-per-pool", EKS_POOL, eks_group("g6.xlarge", "g6.12xlarge"), {"maxGpusPerPool": 32})
    assert found == ["pool can scale to 40 accelerators (10 x 4); the cap is 32"]


def test_every_model_an_eks_group_may_launch_must_be_allowed() -> None:
    found = run_resource("allowed-accelerators", EKS_POOL, eks_group("g6.xlarge", "p4d.24xlarge"), {"allowedAccelerators": ["l4"]})
    assert found == ["accelerator a100-40gb is not allowed here; allowed: l4"]


def test_an_eks_group_sized_by_its_launch_template_is_left_to_the_stack() -> None:
    group = {"launchTemplate": {"id": "lt-1", "version": "1"}, "scalingConfig": {"minSize": 0, "maxSize": 10}}
    # The resource rule can't see the template: it leaves the group to the rule's stack part, which finds the template
    # in the stack (tests/policies/test_review3_cross.py), instead of saying "can't run" on every preview.
    assert run_resource("gpu-cap-per-pool", EKS_POOL, group) == []
    # A group with neither gets EKS's default type (t3.medium): no accelerators.
    assert run_resource("gpu-cap-per-pool", EKS_POOL, {"scalingConfig": {"minSize": 0, "maxSize": 10}}, {"maxGpusPerPool": 0}) == []
    # The environment cap adds up the groups it can read: one whose template is not in the stack is reported by the
    # pool rules (test_final_review_fixes), not counted.
    stack = [resource(EKS_POOL, group, "templated"), resource(EKS_POOL, eks_group("p5.48xlarge"), "h100")]
    assert run_stack("gpu-cap-per-environment", stack, {"maxGpusPerEnvironment": 64}) == [
        (None, "accelerator pools can scale to 80 accelerators in total; the environment cap is 64")]
    # With the template in the stack, its instance type counts.
    template = resource("aws:ec2/launchTemplate:LaunchTemplate", {"id": "lt-1", "instanceType": "p5.48xlarge"}, "lt")
    assert run_stack("gpu-cap-per-environment", [template, *stack], {"maxGpusPerEnvironment": 64}) == [
        (None, "accelerator pools can scale to 160 accelerators in total; the environment cap is 64")]


def test_a_smaller_model_in_an_eks_group_is_checked_too() -> None:
    # The largest model (h100-80gb) is allowed; the group may still launch a10g instances.
    found = run_resource("allowed-accelerators", EKS_POOL, eks_group("p5.48xlarge", "g5.12xlarge"), {"allowedAccelerators": ["h100-80gb"]})
    assert found == ["accelerator a10g is not allowed here; allowed: h100-80gb"]
    assert run_resource("allowed-accelerators", EKS_POOL, eks_group("p5.48xlarge", "g5.12xlarge"),
                        {"allowedAccelerators": ["h100-80gb", "a10g"]}) == []
