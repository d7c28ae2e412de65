"""Zone offerings asked during preview: Compute Engine machine types for GKE GPU pools and TPU node pools
(machineTypes.list), Cloud TPU accelerator types for TPU VMs and queued resources (acceleratorTypes.list). A zone
without the type stops the run with the pool's or slice's config path, before GKE or Cloud TPU refuses it."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pytest
from gcp.support import PROJECT, by_name, gcp_platform

from aiinfra.plan.runtime import PlanMocks, PlanResult, RecordingMonitor, run_program
from components.compose import build_platform
from components.spec import load_platform

REGION = "platform.clouds.gcp.regions.us-central1"
MACHINE_TYPES = "gcp:compute/getMachineTypes:getMachineTypes"
TPU_TYPES = "gcp:tpu/getV2AcceleratorTypes:getV2AcceleratorTypes"


class _Offerings(PlanMocks):
    """The region has zones a, b, c and f; a type is offered only in the zone letters given (default all)."""

    def __init__(self, offered: dict[str, str]) -> None:
        self.offered, self.asked = offered, []

    def _zones(self, name: str) -> list[str]:
        return [f"us-central1-{z}" for z in self.offered.get(name, "abcf")]

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == "gcp:compute/getZones:getZones":
            return {**super().call(args), "names": [f"us-central1-{z}" for z in "fcba"]}  # API order is not name order
        if args.token == MACHINE_TYPES:
            self.asked.append((MACHINE_TYPES, dict(args.args)))
            names = re.findall(r'\(name = "([^"]+)"\)', args.args["filter"])
            assert args.args["filter"] == " OR ".join(f'(name = "{n}")' for n in names)
            found = [{"name": n, "guestCpus": 208} for n in names if args.args["zone"] in self._zones(n)]
            return {**super().call(args), "machineTypes": found}
        if args.token == TPU_TYPES:
            self.asked.append((TPU_TYPES, dict(args.args)))
            return {**super().call(args), "types": [t for t in ("v5litepod-8", "v6e-16") if args.args["zone"] in self._zones(t)]}
        return super().call(args)


def _plan(region: dict[str, Any], mocks: _Offerings, **gcp: Any) -> PlanResult:
    spec = load_platform(gcp_platform({"project": PROJECT, **gcp, "regions": {"us-central1": {
        "network": {"cidr": "10.20.0.0/16"}, **region}}}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


def test_each_zone_of_the_region_is_asked_once_for_all_its_types() -> None:
    mocks = _Offerings({})
    plan = _plan({"cluster": {}, "gpu_pools": {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8},
                                               "batch": {"accelerator": "h100-80gb", "accelerators_per_node": 8}},
                  "tpu_slices": {"v5e": {"generation": "v5e", "topology": "2x4"},
                                 "vm": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm"}}}, mocks)
    zones = [f"us-central1-{z}" for z in "abcf"]
    asked = sorted((token, a.get("filter"), a["zone"], a["project"]) for token, a in mocks.asked)
    assert asked == sorted([(MACHINE_TYPES, '(name = "a3-highgpu-8g") OR (name = "ct5lp-hightpu-4t")', z, PROJECT) for z in zones]
                           + [(TPU_TYPES, None, z, PROJECT) for z in zones])
    assert by_name(plan, "test-us-central1-h100-pool")["nodeConfig"]["machineType"] == "a3-highgpu-8g"
    assert by_name(plan, "test-us-central1-v5e-0")["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
    assert by_name(plan, "test-us-central1-vm-0")["acceleratorType"] == "v5litepod-8"


@pytest.mark.parametrize(("region", "offered", "message"), [
    # The cluster's zones are the region's first three by name: a, b, c.
    ({"gpu_pools": {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8}}}, {"a3-highgpu-8g": "bcf"},
     f"{REGION}.gpu_pools.h100: a3-highgpu-8g is not offered in us-central1-a; us-central1-b, us-central1-c, us-central1-f "
     "offer it: set gpu_pools.h100.zones (or clouds.gcp.zones.us-central1) to zones that offer it"),
    ({"gpu_pools": {"l4": {"accelerator": "l4", "zones": ["us-central1-f"]}}}, {"g2-standard-4": "abc"},
     f"{REGION}.gpu_pools.l4: g2-standard-4 is not offered in us-central1-f; us-central1-a, us-central1-b, us-central1-c "
     "offer it: set gpu_pools.l4.zones (or clouds.gcp.zones.us-central1) to zones that offer it"),
    # A TPU slice without a tpu_zones entry runs in the first zone.
    ({"tpu_slices": {"v6e": {"generation": "v6e", "topology": "4x4"}}}, {"ct6e-standard-4t": "b"},
     f"{REGION}.tpu_slices.v6e: ct6e-standard-4t is not offered in us-central1-a; us-central1-b offers it: "
     "set clouds.gcp.tpu_zones.us-central1.v6e to a zone that offers it"),
    ({"tpu_slices": {"vm": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm"}}}, {"v5litepod-8": ""},
     f"{REGION}.tpu_slices.vm: v5litepod-8 is offered in none of us-central1-a, us-central1-b, us-central1-c, us-central1-f; "
     "choose another type or region"),
])
def test_a_zone_without_the_type_stops_the_run_with_the_config_path(region: dict, offered: dict, message: str) -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"cluster": {}, **region}, _Offerings(offered))
    assert str(caught.value) == message


def test_pinned_zones_that_offer_the_types_plan() -> None:
    plan = _plan({"cluster": {}, "gpu_pools": {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8}},
                  "tpu_slices": {"v6e": {"generation": "v6e", "topology": "4x4"},
                                 "batch": {"generation": "v6e", "topology": "4x4", "mode": "queued_resource"}}},
                 _Offerings({"a3-highgpu-8g": "bcf", "ct6e-standard-4t": "f", "v6e-16": "bf"}),
                 zones={"us-central1": ["us-central1-b", "us-central1-c", "us-central1-f"]},
                 tpu_zones={"us-central1": {"v6e": "us-central1-f"}})
    pool = by_name(plan, "test-us-central1-h100-pool")
    assert pool["nodeConfig"]["machineType"] == "a3-highgpu-8g" and "nodeLocations" not in pool  # the cluster's zones
    assert by_name(plan, "test-us-central1-v6e-0")["nodeLocations"] == ["us-central1-f"]
    [spec] = by_name(plan, "test-us-central1-batch-0")["tpu"]["nodeSpecs"]
    assert spec["node"]["acceleratorType"] == "v6e-16"


def test_while_the_apis_are_being_enabled_pools_keep_their_types_for_the_policies(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first preview of a new project: the engine answers invokes that wait for resources pending creation (the
    # project's API services) with a wholly unknown result. Nothing can be looked up yet; the update looks up and
    # checks before it creates the pools. The preview still shows the types, so the policy pack's rules can read them.
    from pulumi.runtime.proto import resource_pb2

    answer = RecordingMonitor.Invoke

    def engine_invoke(self, request):  # noqa: ANN001, ANN202
        if request.tok == "gcp:compute/getZones:getZones":
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        return answer(self, request)

    monkeypatch.setattr(RecordingMonitor, "Invoke", engine_invoke)
    mocks = _Offerings({"a3-highgpu-8g": "", "ct6e-standard-4t": ""})
    plan = _plan({"cluster": {}, "gpu_pools": {"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8}},
                  "tpu_slices": {"v6e": {"generation": "v6e", "topology": "4x4"}}}, mocks)
    assert mocks.asked == []
    assert by_name(plan, "test-us-central1-h100-pool")["nodeConfig"]["machineType"] == "a3-highgpu-8g"
    assert by_name(plan, "test-us-central1-v6e-0")["nodeConfig"]["machineType"] == "ct6e-standard-4t"
