"""EC2 zone offerings of node group types, asked during preview (DescribeInstanceTypeOfferings): a pool whose type a
zone lacks stops the run with its config path (EKS would refuse the node group with a 400), and spot alternatives
missing from a zone are left out."""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest
from helpers import platform_dict

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

OFFERINGS = "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"
BLOCK = "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation"
CLOUD_CONTROL = "aws:cloudcontrol/getResource:getResource"
POOLS = "platform.clouds.aws.regions.us-west-2.gpu_pools"


class _Offerings(PlanMocks):
    """EC2 offers each type only in the zones given (us-west-2a ... d exist); records what was asked. `block`: the
    zone and instance type EC2 reports for every Capacity Block; `odcr`: the Cloud Control model of every On-Demand
    Capacity Reservation."""

    def __init__(self, offered: dict[str, str], block: tuple[str, str] | None = None, odcr: dict | None = None) -> None:
        self.offered, self.block, self.odcr, self.asked = offered, block, odcr, []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            return {**super().call(args), "names": [f"us-west-2{z}" for z in "abcd"]}
        if args.token == OFFERINGS:
            self.asked.append(dict(args.args))
            [types] = [f["values"] for f in args.args["filters"] if f["name"] == "instance-type"]
            pairs = [(t, f"us-west-2{z}") for t in types for z in self.offered.get(t, "abcd")]
            return {"instanceTypes": [t for t, _ in pairs], "locations": [z for _, z in pairs],
                    "locationTypes": ["availability-zone"] * len(pairs), "region": "us-west-2", "id": "us-west-2"}
        if args.token == BLOCK and self.block is not None:
            self.asked.append(dict(args.args))
            zone, instance_type = self.block
            return {**super().call(args), "availabilityZone": zone, "instanceType": instance_type}
        if args.token == CLOUD_CONTROL and self.odcr is not None:
            self.asked.append(dict(args.args))
            return {**super().call(args), "properties": json.dumps(self.odcr)}
        return super().call(args)


def _plan(pools: dict[str, Any], mocks: _Offerings) -> PlanResult:
    spec = load_platform(platform_dict({"aws": {"regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16"}, "cluster": {}, "gpu_pools": pools}}}}, addons={"enabled": False}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


def _node_group(plan: PlanResult, pool: str) -> dict[str, Any]:
    return plan.one("aws:eks/nodeGroup:NodeGroup", f"test-us-west-2-{pool}-nodegroup").inputs


# The one spot family in the catalog with a same-size alternative: 8x H200 on p5e.48xlarge and p5en.48xlarge.
H200_SPOT = {"accelerator": "h200-141gb", "accelerators_per_node": 8, "capacity": "spot", "max_nodes": 4}


def test_each_pool_asks_ec2_where_its_types_are_offered() -> None:
    mocks = _Offerings({})
    plan = _plan({"h100": {"accelerator": "h100-80gb", "accelerators_per_node": 8}, "h200": H200_SPOT}, mocks)
    assert sorted(mocks.asked, key=lambda a: a["filters"][0]["values"][0]) == [
        {"filters": [{"name": "instance-type", "values": ["p5.48xlarge"]}], "locationType": "availability-zone", "region": "us-west-2"},
        {"filters": [{"name": "instance-type", "values": ["p5e.48xlarge", "p5en.48xlarge"]}],
         "locationType": "availability-zone", "region": "us-west-2"}]
    assert _node_group(plan, "h100")["instanceTypes"] == ["p5.48xlarge"]
    assert _node_group(plan, "h200")["instanceTypes"] == ["p5e.48xlarge", "p5en.48xlarge"]


def test_spot_alternatives_missing_from_a_pool_zone_are_left_out() -> None:
    plan = _plan({"h200": H200_SPOT}, _Offerings({"p5en.48xlarge": "abd"}))
    assert _node_group(plan, "h200")["instanceTypes"] == ["p5e.48xlarge"]
    # A pool pinned to one zone keeps an alternative offered there, though other zones lack it.
    plan = _plan({"h200": {**H200_SPOT, "zones": ["us-west-2b"]}}, _Offerings({"p5en.48xlarge": "b"}))
    assert _node_group(plan, "h200")["instanceTypes"] == ["p5e.48xlarge", "p5en.48xlarge"]


@pytest.mark.parametrize(("pool", "offered", "message"), [
    ({"accelerator": "h100-80gb", "accelerators_per_node": 8}, {"p5.48xlarge": "bcd"},
     f"{POOLS}.train: p5.48xlarge is not offered in us-west-2a; us-west-2b, us-west-2c offer it: "
     "set gpu_pools.train.zones to zones that offer it"),
    # A Capacity Block's zone must offer the type too.
    ({"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "capacity_block", "reservation": "cr-0a1b2c3d4e5f60718",
      "zones": ["us-west-2b"]}, {"p5.48xlarge": "c"},
     f"{POOLS}.train: p5.48xlarge is not offered in us-west-2b; us-west-2c offers it: "
     "set gpu_pools.train.zones to zones that offer it"),
    # EFA: the first zone only.
    ({"accelerator": "h100-80gb", "accelerators_per_node": 8, "efa": True}, {"p5.48xlarge": "bc"},
     f"{POOLS}.train: p5.48xlarge is not offered in us-west-2a; us-west-2b, us-west-2c offer it: "
     "set gpu_pools.train.zones to zones that offer it"),
    ({"instance_type": "p5.48xlarge", "zones": ["us-west-2b"]}, {"p5.48xlarge": "d"},
     f"{POOLS}.train: p5.48xlarge is offered in none of us-west-2a, us-west-2b, us-west-2c (only in us-west-2d); "
     "choose another type or region"),
])
def test_a_zone_without_the_type_stops_the_run_with_the_pool_path(pool: dict, offered: dict, message: str) -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"train": pool}, _Offerings(offered))
    assert str(caught.value) == message


def test_a_pool_pinned_to_zones_that_offer_the_type_plans() -> None:
    plan = _plan({"train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "zones": ["us-west-2b", "us-west-2c"]}},
                 _Offerings({"p5.48xlarge": "bc"}))
    group = _node_group(plan, "train")
    assert group["instanceTypes"] == ["p5.48xlarge"]
    assert group["subnetIds"] == ["test-us-west-2-private-1-id", "test-us-west-2-private-2-id"]


H100_BLOCK = {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "capacity_block",
              "reservation": "cr-0a1b2c3d4e5f60718", "zones": ["us-west-2c"], "efa": True}


def test_a_capacity_block_pool_gets_the_subnet_of_the_blocks_zone_once_ec2_confirms_it() -> None:
    mocks = _Offerings({}, block=("us-west-2c", "p5.48xlarge"))
    group = _node_group(_plan({"train": H100_BLOCK}, mocks), "train")
    assert {"id": "cr-0a1b2c3d4e5f60718", "region": "us-west-2"} in mocks.asked
    assert group["subnetIds"] == ["test-us-west-2-private-2-id"]
    assert group["capacityType"] == "CAPACITY_BLOCK"


@pytest.mark.parametrize(("block", "message"), [
    (("us-west-2a", "p5.48xlarge"),
     f"{POOLS}.train.zones: [us-west-2c], but Capacity Block cr-0a1b2c3d4e5f60718 is in us-west-2a: set zones: [us-west-2a]"),
    (("us-west-2c", "p5e.48xlarge"),
     f"{POOLS}.train: Capacity Block cr-0a1b2c3d4e5f60718 reserves p5e.48xlarge, but the pool resolves to p5.48xlarge: "
     "set instance_type: p5e.48xlarge"),
])
def test_a_capacity_block_in_another_zone_or_of_another_type_stops_the_run(block: tuple[str, str], message: str) -> None:
    """EKS would create the node group, and every launch would fail (AWS's EKS blueprint ml-capacity-block)."""
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"train": H100_BLOCK}, _Offerings({}, block=block))
    assert str(caught.value) == message


def test_offline_a_capacity_block_has_nothing_to_compare() -> None:
    """The offline plan cannot read the account: the block comes back without zone or type, and the pool plans."""
    group = _node_group(_plan({"train": H100_BLOCK}, _Offerings({})), "train")
    assert group["subnetIds"] == ["test-us-west-2-private-2-id"]


A100_ODCR = {"accelerator": "a100-40gb", "accelerators_per_node": 8, "capacity": "reserved",
             "reservation": "cr-0b1c2d3e4f5a60718", "zones": ["us-west-2b"]}
ODCR_MODEL = {"Id": "cr-0b1c2d3e4f5a60718", "AvailabilityZone": "us-west-2b", "InstanceType": "p4d.24xlarge",
              "InstancePlatform": "Linux/UNIX", "Tenancy": "default", "InstanceCount": 4, "InstanceMatchCriteria": "targeted"}


def test_an_odcr_pool_gets_the_subnet_of_the_reservations_zone_once_cloud_control_confirms_it() -> None:
    mocks = _Offerings({}, odcr=ODCR_MODEL)
    plan = _plan({"batch": A100_ODCR}, mocks)
    assert {"typeName": "AWS::EC2::CapacityReservation", "identifier": "cr-0b1c2d3e4f5a60718", "region": "us-west-2"} in mocks.asked
    group = _node_group(plan, "batch")
    assert group["subnetIds"] == ["test-us-west-2-private-1-id"]
    assert group["capacityType"] == "ON_DEMAND" and group["instanceTypes"] == ["p4d.24xlarge"]


ODCR = "On-Demand Capacity Reservation cr-0b1c2d3e4f5a60718"


@pytest.mark.parametrize(("model", "message"), [
    ({"AvailabilityZone": "us-west-2d"}, f"{POOLS}.batch.zones: [us-west-2b], but {ODCR} is in us-west-2d: set zones: [us-west-2d]"),
    ({"InstanceType": "p4de.24xlarge"},
     f"{POOLS}.batch: {ODCR} reserves p4de.24xlarge, but the pool resolves to p4d.24xlarge: set instance_type: p4de.24xlarge"),
    ({"InstancePlatform": "Windows"}, f"{POOLS}.batch.reservation: {ODCR} reserves capacity for platform Windows, but the "
                                      "pool's nodes launch with platform Linux/UNIX: name a reservation for Linux/UNIX"),
    ({"Tenancy": "dedicated"}, f"{POOLS}.batch.reservation: {ODCR} reserves capacity for tenancy dedicated, but the pool's "
                               "nodes launch with tenancy default: name a reservation for default"),
])
def test_an_odcr_that_cannot_serve_the_pool_stops_the_run(model: dict, message: str) -> None:
    """EC2 launches into a reservation only with matching type, platform, zone and tenancy: the node group would be
    created, and every launch targeting the reservation would fail."""
    with pytest.raises(pulumi.RunError) as caught:
        _plan({"batch": A100_ODCR}, _Offerings({}, odcr={**ODCR_MODEL, **model}))
    assert str(caught.value) == message


def test_offline_an_odcr_has_nothing_to_compare() -> None:
    group = _node_group(_plan({"batch": A100_ODCR}, _Offerings({})), "batch")
    assert group["subnetIds"] == ["test-us-west-2-private-1-id"]
