"""GPU node pools and TPU slices: accelerators from the catalog with GKE's driver install, GPU sharing, capacity
options (spot, reservation, flex-start, queued provisioning), autoscaling, placement, taints and labels; TPU
machine type and node count per generation and topology, multislice, TPU VMs and queued resources outside GKE."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from gcp.support import COMPLIANCE, PROD_GCP, PROJECT, by_name, gcp_platform
from policy_helpers import run_resource

from aiinfra.plan.runtime import PlanResult, run_program
from components.gcp.cluster import boot_disk_type
from components.spec import load_platform

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


def pool(plan: PlanResult, name: str, region: str = "us-central1") -> dict[str, Any]:
    return by_name(plan, f"prod-{region}-{name}-pool")


def test_guest_accelerators_come_from_the_catalog_with_gke_driver_install(prod_plan: PlanResult) -> None:
    expected = {"train": ("a3-highgpu-8g", "nvidia-h100-80gb", 8), "serve": ("g2-standard-4", "nvidia-l4", 1),
                "mig": ("a2-ultragpu-1g", "nvidia-a100-80gb", 1), "compact": ("a2-ultragpu-8g", "nvidia-a100-80gb", 8)}
    for name, (machine, accelerator, count) in expected.items():
        config = pool(prod_plan, name)["nodeConfig"]
        assert (config["machineType"], config["diskType"]) == (machine, "pd-balanced")
        [guest] = config["guestAccelerators"]
        assert (guest["type"], guest["count"]) == (accelerator, count)
        assert guest["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}


def test_gpu_sharing_is_gke_native(prod_plan: PlanResult) -> None:
    [serve] = pool(prod_plan, "serve")["nodeConfig"]["guestAccelerators"]
    assert serve["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
    [flex] = pool(prod_plan, "flex")["nodeConfig"]["guestAccelerators"]
    assert flex["gpuSharingConfig"] == {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 2}
    [mig] = pool(prod_plan, "mig")["nodeConfig"]["guestAccelerators"]
    assert mig["gpuPartitionSize"] == "1g.10gb" and "gpuSharingConfig" not in mig
    [train] = pool(prod_plan, "train")["nodeConfig"]["guestAccelerators"]
    assert "gpuSharingConfig" not in train and "gpuPartitionSize" not in train


def test_capacity_options(prod_plan: PlanResult) -> None:
    train = pool(prod_plan, "train")["nodeConfig"]
    assert train["reservationAffinity"] == {"consumeReservationType": "SPECIFIC_RESERVATION",
                                            "key": "compute.googleapis.com/reservation-name", "values": ["a3-res"]}
    serve = pool(prod_plan, "serve")["nodeConfig"]
    assert serve["spot"] is True and serve["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    batch = pool(prod_plan, "batch")
    assert batch["queuedProvisioning"] == {"enabled": True}
    assert batch["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert (batch["initialNodeCount"], batch["management"]["autoRepair"]) == (0, False)
    flex = pool(prod_plan, "flex")
    assert flex["nodeConfig"]["flexStart"] is True and "spot" not in flex["nodeConfig"]
    assert flex["management"] == {"autoRepair": False, "autoUpgrade": True}
    on_demand = pool(prod_plan, "mig")["nodeConfig"]
    assert on_demand["reservationAffinity"] == {"consumeReservationType": "ANY_RESERVATION"} and "spot" not in on_demand


def test_autoscaling_from_a_total_minimum_with_a_location_policy(prod_plan: PlanResult) -> None:
    for name, (minimum, maximum, policy) in {"train": (0, 4, "ANY"), "serve": (0, 6, "ANY"), "mig": (1, 3, "BALANCED"),
                                               "batch": (0, 8, "ANY")}.items():
        assert pool(prod_plan, name)["autoscaling"] == {
            "totalMinNodeCount": minimum, "totalMaxNodeCount": maximum, "locationPolicy": policy}, name
    assert pool(prod_plan, "mig")["initialNodeCount"] == 1
    for record in prod_plan.of_type("gcp:container/nodePool:NodePool"):
        assert set(record.ignoreChanges) == {"initialNodeCount", "nodeCount"}, record.name


def test_compact_placement_only_when_asked_and_never_on_reservations(prod_plan: PlanResult) -> None:
    compact = pool(prod_plan, "compact")
    assert compact["placementPolicy"] == {"type": "COMPACT"}
    assert compact["nodeLocations"] == ["us-central1-c"]
    assert "placementPolicy" not in pool(prod_plan, "train")  # reserved: the reservation decides placement
    assert "placementPolicy" not in pool(prod_plan, "serve") and "nodeLocations" not in pool(prod_plan, "serve")


def test_gpu_taint_and_accelerator_labels(prod_plan: PlanResult) -> None:
    compact = pool(prod_plan, "compact")["nodeConfig"]
    assert compact["taints"] == [GPU_TAINT, {"key": "team", "value": "research", "effect": "NO_EXECUTE"}]
    assert compact["labels"] == {"ai-infra/pool": "compact", "ai-infra/accelerator": "a100-80gb",
                                 "ai-infra/accelerator-count": "8", "ai-infra/capacity": "on_demand"}
    for record in prod_plan.of_type("gcp:container/nodePool:NodePool"):
        config = record.inputs["nodeConfig"]
        if "guestAccelerators" in config:
            assert config["taints"][0] == GPU_TAINT, record.name
        assert {"environment", "team", "cost-center", "managed-by"} <= set(config["resourceLabels"]), record.name


def test_gpu_operator_on_gke_takes_over_sharing_and_the_device_plugin(plan_gcp) -> None:  # noqa: ANN001
    region = {"network": {"cidr": "10.40.0.0/16"}, "cluster": {}, "gpu_pools": {
        "ts": {"accelerator": "l4", "sharing": {"mode": "time_slicing", "replicas_per_gpu": 4}},
        "mig": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "driver": "operator",
                "sharing": {"mode": "mig", "mig_profile": "3g.40gb"}}}}
    plan = plan_gcp({"project": PROJECT, "regions": {"us-east1": region}}, addons={"enabled": False, "gpu_operator_on_gke": True})
    ts = by_name(plan, "test-us-east1-ts-pool")["nodeConfig"]
    assert "gpuSharingConfig" not in ts["guestAccelerators"][0]
    assert ts["labels"]["nvidia.com/device-plugin.config"] == "time-slicing-4"
    assert ts["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
    mig = by_name(plan, "test-us-east1-mig-pool")["nodeConfig"]
    assert "gpuPartitionSize" not in mig["guestAccelerators"][0]
    assert mig["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert mig["labels"]["nvidia.com/mig.config"] == "h100-80gb-3g.40gb"
    # NVIDIA's GKE guide: the operator's driver manager runs on Ubuntu with containerd only; GKE's installer on COS.
    assert (mig["imageType"], ts["imageType"]) == ("UBUNTU_CONTAINERD", "COS_CONTAINERD")
    # The operator's driver container builds unsigned modules, which Secure Boot refuses: that pool boots without it
    # (integrity monitoring stays), and the policy pack still reports it. GKE's own installer keeps Secure Boot.
    assert mig["shieldedInstanceConfig"] == {"enableSecureBoot": False, "enableIntegrityMonitoring": True}
    assert ts["shieldedInstanceConfig"] == {"enableSecureBoot": True, "enableIntegrityMonitoring": True}
    assert run_resource("gcp-gke-shielded-nodes", "gcp:container/nodePool:NodePool", by_name(plan, "test-us-east1-mig-pool")) \
        == ["secure boot is off"]
    assert run_resource("gcp-gke-shielded-nodes", "gcp:container/nodePool:NodePool", by_name(plan, "test-us-east1-ts-pool")) == []


# --- TPU ---------------------------------------------------------------------------------------------------

TPU_CASES = {
    # name: (generation, topology, machine type, nodes per slice, multi-host)
    "v5e-1x1": ("v5e", "1x1", "ct5lp-hightpu-1t", 1, False),
    "v5e-2x2": ("v5e", "2x2", "ct5lp-hightpu-4t", 1, False),
    "v5e-2x4": ("v5e", "2x4", "ct5lp-hightpu-4t", 2, True),
    "v5e-16x16": ("v5e", "16x16", "ct5lp-hightpu-4t", 64, True),
    "v5p-2x2x1": ("v5p", "2x2x1", "ct5p-hightpu-4t", 1, False),
    "v5p-4x4x8": ("v5p", "4x4x8", "ct5p-hightpu-4t", 32, True),
    "v4-2x2x2": ("v4", "2x2x2", "ct4p-hightpu-4t", 2, True),
    "v6e-4x4": ("v6e", "4x4", "ct6e-standard-4t", 4, True),
}


@pytest.fixture(scope="module")
def tpu_plan(plan_gcp) -> PlanResult:  # noqa: ANN001
    slices = {name: {"generation": g, "topology": t, "capacity": "spot"} for name, (g, t, *_) in TPU_CASES.items()}
    region = {"network": {"cidr": "10.40.0.0/16"}, "cluster": {}, "tpu_slices": slices}
    return plan_gcp({"project": PROJECT, "zones": {"us-east5": ["us-east5-a", "us-east5-b", "us-east5-c"]},
                     "regions": {"us-east5": region}})


@pytest.mark.parametrize("case", sorted(TPU_CASES))
def test_tpu_machine_type_and_node_count_follow_the_topology(tpu_plan: PlanResult, case: str) -> None:
    _, topology, machine, nodes, multi_host = TPU_CASES[case]
    slice_pool = by_name(tpu_plan, f"test-us-east5-{case}-0")
    assert slice_pool["name"] == f"{case}-0"
    assert slice_pool["nodeConfig"]["machineType"] == machine
    # TPU v6e VMs boot only from Hyperdisk Balanced
    assert slice_pool["nodeConfig"]["diskType"] == ("hyperdisk-balanced" if machine.startswith("ct6e-") else "pd-balanced")
    assert slice_pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": nodes}
    assert slice_pool["nodeLocations"] == ["us-east5-a"]
    if multi_host:
        assert slice_pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": topology}
    else:
        assert "placementPolicy" not in slice_pool
    assert slice_pool["nodeConfig"]["spot"] is True and "guestAccelerators" not in slice_pool["nodeConfig"]


def test_multislice_is_n_identical_node_pools(prod_plan: PlanResult) -> None:
    pools = [by_name(prod_plan, f"prod-us-central1-pretrain-{i}") for i in range(2)]
    assert [p["name"] for p in pools] == ["pretrain-0", "pretrain-1"]
    strip = lambda p: {k: v for k, v in p.items() if k not in ("name", "nodeConfig")}  # noqa: E731
    assert strip(pools[0]) == strip(pools[1])
    for index, slice_pool in enumerate(pools):
        assert slice_pool["nodeConfig"]["machineType"] == "ct5p-hightpu-4t"
        assert slice_pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x4x4"}
        assert (slice_pool["initialNodeCount"], slice_pool["autoscaling"]["maxNodeCount"]) == (8, 8)  # reserved: starts full
        assert slice_pool["nodeConfig"]["reservationAffinity"]["values"] == ["v5p-res"]
        assert slice_pool["nodeConfig"]["labels"] == {"ai-infra/pool": "pretrain", "ai-infra/slice": str(index)}
        assert slice_pool["nodeLocations"] == ["us-central1-a"]
    serve = by_name(prod_plan, "prod-us-central1-serve-0")
    assert serve["nodeLocations"] == ["us-central1-b"]  # tpu_zones
    assert (serve["initialNodeCount"], serve["nodeConfig"]["spot"]) == (0, True)


def test_tpu_slices_on_dws_queue(plan_gcp) -> None:  # noqa: ANN001
    region = {"network": {"cidr": "10.40.0.0/16"}, "cluster": {}, "tpu_slices": {
        "flex": {"generation": "v6e", "topology": "4x4", "capacity": "flex_start"},
        "queued": {"generation": "v5p", "topology": "2x2x2", "capacity": "queued", "slices": 3}}}
    plan = plan_gcp({"project": PROJECT, "regions": {"us-east5": region}})
    flex = by_name(plan, "test-us-east5-flex-0")
    assert flex["nodeConfig"]["flexStart"] is True and flex["management"]["autoRepair"] is False
    queued = [r for r in plan.of_type("gcp:container/nodePool:NodePool") if r.name.startswith("test-us-east5-queued-")]
    assert len(queued) == 3
    assert all(q.inputs["queuedProvisioning"] == {"enabled": True} and q.inputs["initialNodeCount"] == 0 for q in queued)
    assert flex["nodeLocations"] == ["us-east5-a"]  # no zones listed: the region's first zone, looked up


def test_tpu_vms_have_no_external_ip_and_an_explicit_service_account(prod_plan: PlanResult, plan_gcp, prod_config) -> None:  # noqa: ANN001
    vm = by_name(prod_plan, "prod-europe-west4-research-0")
    assert (vm["acceleratorType"], vm["runtimeVersion"], vm["zone"]) == ("v5litepod-8", "v2-alpha-tpuv5-lite", "europe-west4-a")
    assert vm["networkConfig"] == {"network": "prod-europe-west4-vpc-id", "subnetwork": "prod-europe-west4-nodes-id",
                                   "enableExternalIps": False, "canIpForward": False}
    account = by_name(prod_plan, "prod-europe-west4-research-sa")
    assert vm["serviceAccount"] == {"email": f"{account['accountId']}@{PROJECT}.iam.gserviceaccount.com",
                                    "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}
    assert vm["schedulingConfig"] == {"spot": True, "reserved": False}
    assert vm["shieldedInstanceConfig"] == {"enableSecureBoot": True}
    # a service account named in the spec is used as is; reserved VMs consume the zone's TPU reservation
    research = prod_config["regions"]["europe-west4"]["tpu_slices"]["research"]
    research.update(service_account=f"tpu@{PROJECT}.iam.gserviceaccount.com", capacity="reserved", reservation="v5e-res")
    plan = plan_gcp(prod_config)
    reserved = by_name(plan, "test-europe-west4-research-0")
    assert reserved["serviceAccount"]["email"] == f"tpu@{PROJECT}.iam.gserviceaccount.com"
    assert reserved["schedulingConfig"] == {"spot": False, "reserved": True}
    assert reserved["labels"] == {"slice": "research", "slice-index": "0", "reservation": "v5e-res"}
    assert not [r for r in plan.resources if r.name == "test-europe-west4-research-sa"]
    # a reservation shared from another project: the label holds its name (a label value takes no '/')
    research.update(reservation="projects/capacity-hub/reservations/v5e-res")
    shared = by_name(plan_gcp(prod_config), "test-europe-west4-research-0")
    assert shared["labels"] == {"slice": "research", "slice-index": "0", "reservation": "v5e-res"}


QR = "gcp:tpu/v2QueuedResource:V2QueuedResource"


def test_queued_resources_ask_for_one_private_tpu_node_per_slice(prod_plan: PlanResult) -> None:
    queued = sorted((r for r in prod_plan.of_type(QR)), key=lambda r: r.name)
    assert [q.name for q in queued] == ["prod-europe-west4-batch-0", "prod-europe-west4-batch-1"]  # slices: 2
    for index, record in enumerate(queued):
        qr = record.inputs
        node_id = f"prod-europe-west4-batch-{index}"
        assert (qr["name"], qr["zone"], qr["project"]) == (node_id, "europe-west4-a", PROJECT)
        [spec] = qr["tpu"]["nodeSpecs"]  # one single-node request per slice
        assert spec["parent"] == f"projects/{PROJECT}/locations/europe-west4-a"
        assert spec["nodeId"] == node_id
        # v6e 4x4: 16 chips of one TensorCore -> v6e-16, with the generation's Cloud TPU software version
        assert spec["node"] == {
            "acceleratorType": "v6e-16", "runtimeVersion": "v2-alpha-tpuv6e",
            "networkConfig": {"network": "prod-europe-west4-vpc-id", "subnetwork": "prod-europe-west4-nodes-id",
                              "enableExternalIps": False, "canIpForward": False},
            "description": f"4x4 v6e slice {index} of batch"}
        assert record.parent.endswith("ai-infra:gcp:TpuQueuedResource::prod-europe-west4-batch")
    # no TPU VM, service account or role binding is made for a queued resource (the provider cannot attach one)
    names = {r.name for r in prod_plan.resources}
    assert not {n for n in names if n.startswith("prod-europe-west4-batch-sa")}
    assert not [r for r in prod_plan.of_type("gcp:tpu/v2Vm:V2Vm") if "batch" in r.name]


def test_queued_resources_use_tpu_zones_and_the_tpu_api(plan_gcp, prod_config) -> None:  # noqa: ANN001
    prod_config["tpu_zones"]["europe-west4"] = {"batch": "europe-west4-b"}
    prod_config["regions"]["europe-west4"]["tpu_slices"]["batch"].update(generation="v5p", topology="2x2x2", slices=1)
    plan = plan_gcp(prod_config)
    [record] = plan.of_type(QR)
    qr = record.inputs
    assert qr["zone"] == "europe-west4-b"
    [spec] = qr["tpu"]["nodeSpecs"]
    assert spec["parent"] == f"projects/{PROJECT}/locations/europe-west4-b"
    assert (spec["node"]["acceleratorType"], spec["node"]["runtimeVersion"]) == ("v5p-16", "v2-alpha-tpuv5")
    services = {r.inputs["service"] for r in plan.of_type("gcp:projects/service:Service")}
    assert "tpu.googleapis.com" in services


def test_only_tpu_vm_mode_makes_tpu_vms(prod_plan: PlanResult) -> None:
    vms = prod_plan.of_type("gcp:tpu/v2Vm:V2Vm")
    assert [v.name for v in vms] == ["prod-europe-west4-research-0"]
    assert vms[0].parent.endswith("ai-infra:gcp:TpuVm::prod-europe-west4-research")


def test_the_region_exports_its_queued_resources_apart_from_its_tpu_vms() -> None:
    spec = load_platform(gcp_platform(PROD_GCP, environment="prod", compliance=COMPLIANCE))

    def program() -> None:
        from components.compose import gcp as compose_gcp

        pulumi.export("gcp", compose_gcp.build(spec, spec.clouds.gcp).outputs)

    region = run_program(program, project="ai-infra", stack="prod").outputs["gcp"]["europe-west4"]
    assert region["tpu_queued_resources"] == {"batch": ["prod-europe-west4-batch-0", "prod-europe-west4-batch-1"]}
    assert list(region["tpu_vms"]) == ["research"]


@pytest.mark.parametrize(("machine", "disk"), [
    ("n4d-standard-4", "hyperdisk-balanced"), ("n4a-standard-4", "hyperdisk-balanced"), ("n4-standard-8", "hyperdisk-balanced"),
    ("c4d-standard-8", "hyperdisk-balanced"), ("a4-highgpu-8g", "hyperdisk-balanced"),
    ("n2-standard-8", "pd-balanced"), ("e2-standard-4", "pd-balanced"), ("a3-highgpu-8g", "pd-balanced"),
])
def test_machine_series_without_persistent_disk_boot_from_hyperdisk(machine: str, disk: str) -> None:
    """GKE refuses a node pool whose boot disk type its machine series does not support."""
    assert boot_disk_type(machine) == disk
