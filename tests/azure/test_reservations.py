"""Capacity reservation groups asked during preview: an AKS pool with `capacity: reserved` waits until Azure reports
its group in the pool's region with a reservation of the pool's VM size in each of its zones; otherwise the run stops
with the config path, before AKS creates a pool whose scale-ups would fail."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from azure.conftest import CRG, azure_platform

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

GROUP = "azure-native:compute:getCapacityReservationGroup"
RESERVATION = "azure-native:compute:getCapacityReservation"
POOL = "platform.clouds.azure.regions.eastus2.gpu_pools.batch"
H200 = "Standard_ND96isr_H200_v5"


class ReservationGroupMocks(PlanMocks):
    """The group crg-h200 in `location`, holding one reservation per (VM size, zones) given; records what was asked."""

    def __init__(self, location: str, reservations: list[tuple[str, list[str]]]) -> None:
        self.location, self.reservations, self.asked = location, reservations, []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == GROUP:
            self.asked.append((GROUP, dict(args.args)))
            ids = [f"{CRG}/capacityReservations/r{i}" for i in range(len(self.reservations))]
            return {**super().call(args), "location": self.location, "capacityReservations": [{"id": i} for i in ids]}
        if args.token == RESERVATION:
            self.asked.append((RESERVATION, dict(args.args)))
            size, zones = self.reservations[int(args.args["capacityReservationName"][1:])]
            return {**super().call(args), "sku": {"name": size, "capacity": 2}, "zones": zones}
        return super().call(args)


def _plan(pool: dict[str, Any], mocks: PlanMocks) -> PlanResult:
    spec = load_platform(azure_platform({"regions": {"eastus2": {
        "network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"}, "cluster": {},
        "gpu_pools": {"batch": pool}}}}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


BATCH = {"instance_type": H200, "capacity": "reserved", "reservation": CRG, "max_nodes": 2, "zones": ["1", "2"]}


def agent_pool_inputs(plan: PlanResult) -> dict[str, Any]:
    [pool] = plan.of_type("azure-native:containerservice:AgentPool")
    return pool.inputs


def test_a_reserved_pool_asks_for_its_group_and_each_reservation_in_it() -> None:
    mocks = ReservationGroupMocks("eastus2", [("Standard_ND96isr_H100_v5", ["3"]), (H200, ["1"]), (H200, ["2"])])
    pool = agent_pool_inputs(_plan(BATCH, mocks))
    assert mocks.asked[0] == (GROUP, {"capacityReservationGroupName": "crg-h200", "resourceGroupName": "rg-capacity"})
    assert sorted(a["capacityReservationName"] for t, a in mocks.asked if t == RESERVATION) == ["r0", "r1", "r2"]
    assert pool["capacityReservationGroupID"] == CRG and pool["availabilityZones"] == ["1", "2"]


@pytest.mark.parametrize(("location", "reservations", "message"), [
    ("westeurope", [(H200, ["1", "2"])],
     f"{POOL}.reservation: {CRG} is in westeurope, but the pool is in eastus2: name a group in eastus2"),
    ("eastus2", [("Standard_ND96isr_H100_v5", ["1", "2"])],
     f"{POOL}.reservation: {CRG} holds no {H200} reservation (it holds Standard_ND96isr_H100_v5): add one, or name a "
     "group that has it"),
    ("eastus2", [(H200, ["1"])],
     f"{POOL}.zones: {CRG} holds no {H200} reservation in zone 2 (it has zones 1): "
     "set gpu_pools.batch.zones to zones the group holds it in"),
])
def test_a_group_elsewhere_without_the_size_or_the_zones_stops_the_run(location: str, reservations: list, message: str) -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _plan(BATCH, ReservationGroupMocks(location, reservations))
    assert str(caught.value) == message


def test_a_group_in_another_subscription_is_not_read() -> None:
    """A group shared from another subscription cannot be read through this one's provider."""
    mocks = ReservationGroupMocks("westeurope", [])
    other = CRG.replace("00000000-0000-4000-8000-000000000000", "99999999-0000-4000-8000-000000000000")
    pool = agent_pool_inputs(_plan({**BATCH, "reservation": other}, mocks))
    assert not mocks.asked and pool["capacityReservationGroupID"] == other


def test_offline_the_group_reports_nothing_to_compare() -> None:
    assert agent_pool_inputs(_plan(BATCH, PlanMocks()))["capacityReservationGroupID"] == CRG
