"""Reservations asked during preview (reservations.get per zone): a GKE GPU pool or TPU slice that consumes a specific
reservation waits until Compute Engine finds it in each of its zones, holding its machine type; otherwise the run stops
with the config path, before GKE creates a pool whose nodes could never start."""

from __future__ import annotations

from typing import Any

import grpc
import pulumi
import pytest
from gcp.support import PROJECT, by_name, gcp_platform
from pulumi.runtime import rpc

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

REGION = "platform.clouds.gcp.regions.us-central1"
RESERVATION = "gcp:compute/getReservation:getReservation"


class _Reservations(PlanMocks):
    """Each reservation exists in the zone letters given, holding the machine type given; records what was asked."""

    def __init__(self, reservations: dict[str, tuple[str, str]]) -> None:
        self.reservations, self.asked = reservations, []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token != RESERVATION:
            return super().call(args)
        self.asked.append(dict(args.args))
        letters, machine = self.reservations.get(args.args["name"], ("", ""))
        answer = {**super().call(args), "name": args.args["name"], "zone": args.args["zone"]}
        if args.args["zone"][-1] not in letters:  # the data source's answer for a reservation it does not find
            return {**answer, "selfLink": "", "specificReservations": []}
        return {**answer, "selfLink": f"https://www.googleapis.com/compute/v1/projects/{args.args['project']}/zones/"
                                      f"{args.args['zone']}/reservations/{args.args['name']}",
                "specificReservations": [{"count": 4, "assuredCount": 4, "inUseCount": 0, "sourceInstanceTemplate": "",
                                          "instanceProperties": [{"machineType": machine, "guestAccelerators": [],
                                                                  "localSsds": [], "locationHint": "", "maintenanceInterval": "",
                                                                  "minCpuPlatform": ""}]}]}


def _plan(region: dict[str, Any], mocks: PlanMocks, **gcp: Any) -> PlanResult:
    spec = load_platform(gcp_platform({"project": PROJECT, **gcp, "regions": {"us-central1": {
        "network": {"cidr": "10.20.0.0/16"}, "cluster": {}, **region}}}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


H100 = {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "reserved", "reservation": "a3-res", "max_nodes": 4}


def test_a_reserved_pool_asks_for_its_reservation_in_each_of_its_zones() -> None:
    mocks = _Reservations({"a3-res": ("b", "a3-highgpu-8g")})
    plan = _plan({"gpu_pools": {"h100": {**H100, "zones": ["us-central1-b"]}}}, mocks)
    assert mocks.asked == [{"name": "a3-res", "zone": "us-central1-b", "project": PROJECT}]
    pool = by_name(plan, "test-us-central1-h100-pool")
    assert pool["nodeConfig"]["machineType"] == "a3-highgpu-8g"
    assert pool["nodeLocations"] == ["us-central1-b"]


def test_a_shared_reservation_is_asked_of_its_owner_project() -> None:
    mocks = _Reservations({"a3-res": ("a", "a3-highgpu-8g")})
    _plan({"gpu_pools": {"h100": {**H100, "reservation": "projects/capacity-owner/reservations/a3-res",
                                  "zones": ["us-central1-a"]}}}, mocks)
    assert mocks.asked == [{"name": "a3-res", "zone": "us-central1-a", "project": "capacity-owner"}]


@pytest.mark.parametrize(("region", "reservations", "message"), [
    # Without zones of its own the pool runs in the cluster's zones (a, b, c): the reservation is in one of them.
    ({"gpu_pools": {"h100": H100}}, {"a3-res": ("a", "a3-highgpu-8g")},
     f"{REGION}.gpu_pools.h100: reservation a3-res is not in us-central1-b, us-central1-c (it is in us-central1-a): "
     "set gpu_pools.h100.zones to the reservation's zones"),
    ({"gpu_pools": {"h100": {**H100, "zones": ["us-central1-b"]}}}, {"a3-res": ("b", "a3-megagpu-8g")},
     f"{REGION}.gpu_pools.h100: reservation a3-res holds a3-megagpu-8g, but the pool needs a3-highgpu-8g: "
     "name a reservation of a3-highgpu-8g"),
    # A GKE TPU slice runs in its tpu_zones zone (default: the first).
    ({"tpu_slices": {"v5p": {"generation": "v5p", "topology": "2x2x2", "capacity": "reserved", "reservation": "v5p-res"}}},
     {"v5p-res": ("c", "ct5p-hightpu-4t")},
     f"{REGION}.tpu_slices.v5p: reservation v5p-res is not in us-central1-a: "
     "set clouds.gcp.tpu_zones.us-central1.v5p to the reservation's zone"),
])
def test_a_reservation_missing_from_a_zone_or_of_another_type_stops_the_run(region: dict, reservations: dict,
                                                                            message: str) -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _plan(region, _Reservations(reservations))
    assert str(caught.value) == message


def test_offline_a_reservation_exists_and_names_no_machine_type() -> None:
    """The plan cannot read the project: every zone has the reservation, and there is no machine type to compare."""
    plan = _plan({"gpu_pools": {"h100": H100}}, PlanMocks())
    assert by_name(plan, "test-us-central1-h100-pool")["nodeConfig"]["machineType"] == "a3-highgpu-8g"


@pytest.mark.parametrize("zones", [None, ["us-central1-b"]])
def test_while_the_apis_are_being_enabled_a_reserved_pool_keeps_its_machine_type(monkeypatch: pytest.MonkeyPatch,
                                                                                  zones: list[str] | None) -> None:
    # The first preview of a new project: the lookups wait for the project's API services, which are pending
    # creation, so the engine answers them wholly unknown. The pool still shows its machine type, so the policy
    # pack's accelerator rules can read it; the update looks up and checks before it creates the pool.
    from pulumi.runtime.proto import resource_pb2

    from aiinfra.plan.runtime import RecordingMonitor

    answer = RecordingMonitor.Invoke

    def engine_invoke(self, request):  # noqa: ANN001, ANN202
        waits = request.tok in {"gcp:compute/getZones:getZones", "gcp:compute/getMachineTypes:getMachineTypes", RESERVATION}
        return resource_pb2.ResourceInvokeResponse(unknown=True) if waits else answer(self, request)

    monkeypatch.setattr(RecordingMonitor, "Invoke", engine_invoke)
    mocks = _Reservations({"a3-res": ("", "a3-megagpu-8g")})  # found nowhere: a check that ran would stop the run
    plan = _plan({"gpu_pools": {"h100": {**H100, **({"zones": zones} if zones else {})}}}, mocks)
    assert mocks.asked == []
    assert by_name(plan, "test-us-central1-h100-pool")["nodeConfig"]["machineType"] == "a3-highgpu-8g"


def test_a_reserved_pool_depends_on_the_services_its_lookups_wait_for() -> None:
    # The check keeps what the lookups depend on (the project's API services), so the engine orders the pool after them
    # directly, as the lookups' outputs did before the check wrapped them.
    plan = _plan({"gpu_pools": {"h100": {**H100, "zones": ["us-central1-b"]}}}, _Reservations({"a3-res": ("b", "a3-highgpu-8g")}))
    services = {r.urn for r in plan.of_type("gcp:projects/service:Service")}
    pool = next(r for r in plan.resources if r.name == "test-us-central1-h100-pool")
    assert services and services <= set(pool.dependencies)


class _RpcError(grpc.RpcError):
    """The engine's answer to an invoke the provider failed: a gRPC error whose details carry the provider's message."""

    def __init__(self, details: str) -> None:
        super().__init__(details)
        self._details = details

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


# pulumi-gcp 10.2.0's data source lists the reservation's blocks after reading it, and fails on a 404 or 403 there.
NOT_FOUND = ("Error listing ReservationBlocks: googleapi: Error 404: The resource "
             "'projects/{project}/zones/{zone}/reservations/{name}' was not found, notFound")
# The deploying identity may not read a shared reservation (or its blocks) in its owner project.
FORBIDDEN = ("Error listing ReservationBlocks: googleapi: Error 403: Required 'compute.reservations.get' permission "
             "for 'projects/{project}/zones/{zone}/reservations/{name}', forbidden")


@pytest.mark.parametrize(("reservation", "project", "error"), [
    ("a3-res", PROJECT, NOT_FOUND),
    ("projects/capacity-owner/reservations/a3-res", "capacity-owner", NOT_FOUND),
    ("projects/capacity-owner/reservations/a3-res", "capacity-owner", FORBIDDEN),
])
def test_a_reservation_lookup_that_fails_is_a_reservation_not_in_that_zone(monkeypatch: pytest.MonkeyPatch,
                                                                           reservation: str, project: str,
                                                                           error: str) -> None:
    # The provider's error (a missing reservation, or no permission on a shared one's owner project) becomes the
    # pool's error: its config path and the fix, followed by what Compute Engine said.
    from aiinfra.plan.runtime import RecordingMonitor

    answer = RecordingMonitor.Invoke

    def engine_invoke(self, request):  # noqa: ANN001, ANN202
        args = rpc.deserialize_properties(request.args)
        if request.tok == RESERVATION and args["zone"] != "us-central1-a":
            # As a real engine relays it: the bridge's "invoking <token>:" and go-multierror's list around the API's error.
            raise _RpcError(f"invocation of {RESERVATION} returned an error: invoking {RESERVATION}: 1 error occurred:"
                            f"\n\t* {error.format(**args)}\n\n")
        return answer(self, request)

    monkeypatch.setattr(RecordingMonitor, "Invoke", engine_invoke)
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"gpu_pools": {"h100": {**H100, "reservation": reservation}}}, _Reservations({"a3-res": ("abc", "a3-highgpu-8g")}))
    assert str(caught.value) == (
        f"{REGION}.gpu_pools.h100: reservation {reservation} is not in us-central1-b, us-central1-c (it is in us-central1-a): "
        "set gpu_pools.h100.zones to the reservation's zones (Compute Engine answered "
        f"us-central1-b: {error.format(project=project, zone='us-central1-b', name='a3-res')}; "
        f"us-central1-c: {error.format(project=project, zone='us-central1-c', name='a3-res')})")


@pytest.mark.parametrize("unavailable", [
    "googleapi: Error 503: The service is currently unavailable., backendError",
    # A 403 that is not about the reservation: read-rate quota (hashicorp/terraform-provider-google#8360)
    "googleapi: Error 403: Quota exceeded for quota group 'ReadGroup' and limit 'Read requests per 100 seconds'., "
    "rateLimitExceeded",
])
def test_a_lookup_that_fails_for_another_reason_is_not_taken_for_a_missing_reservation(
        monkeypatch: pytest.MonkeyPatch, unavailable: str) -> None:
    # Expired credentials, quota or a 5xx say nothing about where the reservation is: the error is the API's own.
    from aiinfra.plan.runtime import RecordingMonitor

    answer = RecordingMonitor.Invoke

    def engine_invoke(self, request):  # noqa: ANN001, ANN202
        if request.tok == RESERVATION:
            raise _RpcError(f"invocation of {RESERVATION} returned an error: invoking {RESERVATION}: 1 error occurred:"
                            f"\n\t* {unavailable}\n\n")
        return answer(self, request)

    monkeypatch.setattr(RecordingMonitor, "Invoke", engine_invoke)
    with pytest.raises(Exception, match=unavailable.split(":")[1].strip()[:9]) as caught:
        _plan({"gpu_pools": {"h100": {**H100, "reservation": "a3-res"}}}, _Reservations({"a3-res": ("abc", "a3-highgpu-8g")}))
    assert "is not in" not in str(caught.value)


def test_only_the_pools_own_zones_are_looked_up() -> None:
    # A zone the pool does not run in is never asked, so it cannot fail the lookup.
    mocks = _Reservations({"a3-res": ("a", "a3-highgpu-8g")})
    plan = _plan({"gpu_pools": {"h100": {**H100, "zones": ["us-central1-a"]}}}, mocks)
    assert [a["zone"] for a in mocks.asked] == ["us-central1-a"]
    assert by_name(plan, "test-us-central1-h100-pool")["nodeConfig"]["machineType"] == "a3-highgpu-8g"
