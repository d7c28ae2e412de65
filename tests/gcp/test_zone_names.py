"""Zones the config names (clouds.gcp.zones, clouds.gcp.tpu_zones, a GPU pool's zones) are compared with the region's
zones (Compute Engine zones.list) during preview. The config only checks the `<region>-<letter>` shape, so a zone the
region doesn't have stops the run with its config path, before the offering checks could blame the machine type."""

from __future__ import annotations

import re
import string
from typing import Any

import pulumi
import pytest
from gcp.support import PROJECT, by_name, gcp_platform
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.runtime import PlanMocks, PlanResult, RecordingMonitor, run_program
from components.compose import build_platform
from components.gcp.offerings import unknown_zones_problem, zone_settings
from components.spec import load_platform

ZONES = "gcp:compute/getZones:getZones"
MACHINE_TYPES = "gcp:compute/getMachineTypes:getMachineTypes"
TPU_TYPES = "gcp:tpu/getV2AcceleratorTypes:getV2AcceleratorTypes"
CLUSTER = "gcp:container/cluster:Cluster"
LUSTRE = "gcp:lustre/instance:Instance"
REGION_ZONES = "us-central1-a, us-central1-b, us-central1-c, us-central1-f"
ALLOWED = f"allowed: {REGION_ZONES} (the region's zones, as Compute Engine lists them)"


class _Region(PlanMocks):
    """us-central1 has zones a, b, c and f (answered out of name order, as the API may); every zone asked offers every
    machine and TPU type, so only a zone the region lacks can stop the run."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == ZONES:
            return {**super().call(args), "names": [f"us-central1-{z}" for z in "fcba"]}
        if args.token == MACHINE_TYPES:
            self.asked.append(args.args["zone"])
            names = re.findall(r'\(name = "([^"]+)"\)', args.args["filter"])
            return {**super().call(args), "machineTypes": [{"name": n, "guestCpus": 8} for n in names]}
        if args.token == TPU_TYPES:
            return {**super().call(args), "types": ["v5litepod-8", "v6e-16"]}
        return super().call(args)


def _plan(region: dict[str, Any], **gcp: Any) -> PlanResult:
    spec = load_platform(gcp_platform({"project": PROJECT, **gcp, "regions": {"us-central1": {
        "network": {"cidr": "10.20.0.0/16"}, "cluster": {}, **region}}}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=_Region())


def _error(region: dict[str, Any], **gcp: Any) -> str:
    with pytest.raises(pulumi.RunError) as caught:
        _plan(region, **gcp)
    return str(caught.value)


H100 = {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8}}


@pytest.mark.parametrize(("region", "gcp", "message"), [
    # A GPU pool in the cluster's zones: the error names the zone, not a3-highgpu-8g "not offered in us-central1-d".
    ({"gpu_pools": H100}, {"zones": {"us-central1": ["us-central1-a", "us-central1-b", "us-central1-d"]}},
     f"platform.clouds.gcp.zones.us-central1[2]: zone 'us-central1-d' is not a zone of us-central1; {ALLOWED}"),
    # Every wrong zone of the list, one line each; the cluster alone (no pools) is checked too.
    ({}, {"zones": {"us-central1": ["us-central1-e", "us-central1-b", "us-central1-d"]}},
     f"platform.clouds.gcp.zones.us-central1[0]: zone 'us-central1-e' is not a zone of us-central1; {ALLOWED}\n"
     f"platform.clouds.gcp.zones.us-central1[2]: zone 'us-central1-d' is not a zone of us-central1; {ALLOWED}"),
    # A TPU slice's own zone, for a GKE slice and for a TPU VM.
    ({"tpu_slices": {"v6e": {"generation": "v6e", "topology": "4x4"}}}, {"tpu_zones": {"us-central1": {"v6e": "us-central1-e"}}},
     f"platform.clouds.gcp.tpu_zones.us-central1.v6e: zone 'us-central1-e' is not a zone of us-central1; {ALLOWED}"),
    ({"tpu_slices": {"vm": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm"}}},
     {"tpu_zones": {"us-central1": {"vm": "us-central1-d"}}},
     f"platform.clouds.gcp.tpu_zones.us-central1.vm: zone 'us-central1-d' is not a zone of us-central1; {ALLOWED}"),
    # A pool's own zones.
    ({"gpu_pools": {"l4": {"accelerator": "l4", "zones": ["us-central1-f", "us-central1-g"]}}}, {},
     f"platform.clouds.gcp.regions.us-central1.gpu_pools.l4.zones[1]: zone 'us-central1-g' is not a zone of us-central1; "
     f"{ALLOWED}"),
], ids=["cluster-zones-with-a-gpu-pool", "cluster-zones-two-wrong", "tpu-zone-gke", "tpu-zone-tpu-vm", "pool-zones"])
def test_a_zone_the_region_lacks_stops_the_run_with_its_config_path(region: dict, gcp: dict, message: str) -> None:
    assert _error(region, **gcp) == message


def test_zones_the_region_has_plan_and_are_used_as_listed() -> None:
    plan = _plan({"gpu_pools": {**H100, "l4": {"accelerator": "l4", "zones": ["us-central1-f"]}},
                  "tpu_slices": {"v6e": {"generation": "v6e", "topology": "4x4"},
                                 "vm": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm"}},
                  "lustre": {"scratch": {"size_gib": 18000, "throughput_mbps_per_tib": 500}}},
                 zones={"us-central1": ["us-central1-f", "us-central1-b", "us-central1-c"]},
                 tpu_zones={"us-central1": {"v6e": "us-central1-c"}})
    assert plan.one(CLUSTER).inputs["nodeLocations"] == ["us-central1-f", "us-central1-b", "us-central1-c"]
    assert by_name(plan, "test-us-central1-h100-pool")["nodeConfig"]["machineType"] == "a3-highgpu-8g"
    assert by_name(plan, "test-us-central1-l4-pool")["nodeLocations"] == ["us-central1-f"]
    assert by_name(plan, "test-us-central1-v6e-0")["nodeLocations"] == ["us-central1-c"]
    assert by_name(plan, "test-us-central1-vm-0")["zone"] == "us-central1-f"  # no tpu_zones entry: the first listed zone
    assert plan.one(LUSTRE).inputs["location"] == "us-central1-f"


def test_while_the_apis_are_being_enabled_listed_zones_are_used_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first preview of a new project answers the zones lookup unknown: nothing to compare yet (the update checks
    # before it creates the cluster), and the preview still shows the listed zones.
    from pulumi.runtime.proto import resource_pb2

    answer = RecordingMonitor.Invoke

    def engine_invoke(self, request):  # noqa: ANN001, ANN202
        if request.tok == ZONES:
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        return answer(self, request)

    monkeypatch.setattr(RecordingMonitor, "Invoke", engine_invoke)
    plan = _plan({"gpu_pools": H100}, zones={"us-central1": ["us-central1-a", "us-central1-b", "us-central1-d"]})
    assert plan.one(CLUSTER).inputs["nodeLocations"] == ["us-central1-a", "us-central1-b", "us-central1-d"]
    assert by_name(plan, "test-us-central1-h100-pool")["nodeConfig"]["machineType"] == "a3-highgpu-8g"


# --- The rule itself (pure) -----------------------------------------------------------------------------------

LETTERS = st.sampled_from(string.ascii_lowercase)


@given(region_letters=st.sets(LETTERS, max_size=6), listed_letters=st.lists(LETTERS, max_size=6))
def test_the_problem_names_each_listed_zone_the_region_lacks_once_in_order(region_letters: set[str],
                                                                           listed_letters: list[str]) -> None:
    region_zones = {f"europe-west4-{z}" for z in region_letters}
    listed = [f"europe-west4-{z}" for z in listed_letters]
    path = "platform.clouds.gcp.zones.europe-west4"
    problem = unknown_zones_problem("europe-west4", zone_settings(path, listed), region_zones)
    wrong = [(i, zone) for i, zone in enumerate(listed) if zone not in region_zones]
    if not region_zones or not wrong:
        assert problem is None  # an empty answer has nothing to compare
        return
    assert problem is not None
    allowed = ", ".join(sorted(region_zones))
    assert problem.split("\n") == [
        f"{path}[{i}]: zone '{zone}' is not a zone of europe-west4; allowed: {allowed} (the region's zones, as Compute "
        "Engine lists them)" for i, zone in wrong]


def test_zone_settings_index_the_list() -> None:
    assert zone_settings("p.zones.r", ["r-a", "r-b"]) == [("p.zones.r[0]", "r-a"), ("p.zones.r[1]", "r-b")]


def test_default_zones_are_general_purpose_zones_only() -> None:
    from components.spec.gcp import is_plain_zone

    assert [z for z in ["us-central1-a", "us-central1-ai1a", "us-central1-b", "us-central1-c"] if is_plain_zone(z)] == [
        "us-central1-a", "us-central1-b", "us-central1-c"]


def test_an_ai_zone_may_be_listed_and_belongs_to_its_region() -> None:
    from components.spec import load_platform
    from components.spec.gcp import zone_region

    assert zone_region("us-central1-ai1a") == "us-central1" and zone_region("us-south1-ai1b") == "us-south1"
    assert zone_region("us-central1-aia") is None
    spec = load_platform(gcp_platform({"project": "acme-ml-test", "zones": {"us-central1": ["us-central1-a", "us-central1-ai1a"]},
                                       "regions": {"us-central1": {"network": {"cidr": "10.20.0.0/16", "zones": 2}}}}))
    assert spec.clouds.gcp.zones["us-central1"] == ["us-central1-a", "us-central1-ai1a"]


def test_offline_an_ai_zone_plans_and_the_default_zones_stay_general_purpose() -> None:
    region = {"network": {"cidr": "10.20.0.0/16", "zones": 2}, "cluster": {},
              "gpu_pools": {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "zones": ["us-central1-ai1a"]}}}
    from components.compose import build_platform
    from components.spec import load_platform

    spec = load_platform(gcp_platform({"project": PROJECT, "regions": {"us-central1": region}}))
    plan = run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=PlanMocks())
    assert by_name(plan, "test-us-central1-h100-pool")["nodeLocations"] == ["us-central1-ai1a"]
    assert by_name(plan, "test-us-central1-gke")["nodeLocations"] == ["us-central1-a", "us-central1-b"]
