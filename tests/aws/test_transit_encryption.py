"""Instance types in a VPC that enforces encryption in transit (`network.transit_encryption: enforce`, the AWS default):
EC2 attaches such a VPC's interfaces only to types that encrypt in transit, so each node group's types are asked of
EC2 at preview (DescribeInstanceTypes, network-info.encryption-in-transit-supported), and a pool whose type does not
stops the run with its config path, instead of EKS launching instances EC2 then refuses."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
from helpers import platform_dict
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform
from components.spec.offerings import transit_encryption_problem

TYPES = "aws:ec2/getInstanceTypes:getInstanceTypes"
REGION = "platform.clouds.aws.regions.us-west-2"


class _Ec2(PlanMocks):
    """EC2 reports every asked type as encrypting in transit except those in `plain`; records each DescribeInstanceTypes."""

    def __init__(self, plain: set[str]) -> None:
        self.plain, self.asked = plain, []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == TYPES:
            self.asked.append(dict(args.args))
            [types] = [f["values"] for f in args.args["filters"] if f["name"] == "instance-type"]
            return {"instanceTypes": [t for t in types if t not in self.plain], "id": "us-west-2", "region": "us-west-2"}
        return super().call(args)


def _plan(mocks: _Ec2, transit: str = "enforce", system: str | None = None, pools: dict[str, Any] | None = None) -> PlanResult:
    cluster = {"system_pool": {"instance_type": system}} if system else {}
    spec = load_platform(platform_dict({"aws": {"regions": {"us-west-2": {
        "network": {"cidr": "10.9.0.0/16", "transit_encryption": transit}, "cluster": cluster,
        "gpu_pools": pools or {}}}}}, addons={"enabled": False}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


def _types(plan: PlanResult, group: str) -> list[str]:
    return plan.one("aws:eks/nodeGroup:NodeGroup", f"test-us-west-2-{group}-nodegroup").inputs["instanceTypes"]


def test_a_system_type_that_does_not_encrypt_in_transit_stops_the_run_with_its_path() -> None:
    with pytest.raises(pulumi.RunError) as caught:
        _plan(_Ec2({"m5.xlarge"}), system="m5.xlarge")
    assert str(caught.value) == (
        f"{REGION}.cluster.system_pool.instance_type: m5.xlarge does not encrypt traffic in transit, and "
        f"{REGION}.network.transit_encryption is enforce, so the VPC admits only instance types that do (EC2 "
        "DescribeInstanceTypes, network-info.encryption-in-transit-supported): choose such a type (m6i, m7i, c6i, r6i; "
        f"every accelerator family in the catalog) or set {REGION}.network.transit_encryption to monitor")


# The one spot family in the catalog with a same-size alternative: 8x H200 on p5e.48xlarge and p5en.48xlarge.
H200_SPOT = {"h200": {"accelerator": "h200-141gb", "accelerators_per_node": 8, "capacity": "spot", "max_nodes": 4}}


def test_each_node_group_asks_ec2_with_the_encryption_filter() -> None:
    mocks = _Ec2(set())
    plan = _plan(mocks, pools=H200_SPOT)
    assert sorted(mocks.asked, key=lambda a: a["filters"][0]["values"][0]) == [
        {"filters": [{"name": "instance-type", "values": ["m6i.xlarge"]},
                     {"name": "network-info.encryption-in-transit-supported", "values": ["true"]}], "region": "us-west-2"},
        {"filters": [{"name": "instance-type", "values": ["p5e.48xlarge", "p5en.48xlarge"]},
                     {"name": "network-info.encryption-in-transit-supported", "values": ["true"]}], "region": "us-west-2"}]
    assert _types(plan, "system") == ["m6i.xlarge"]
    assert _types(plan, "h200") == ["p5e.48xlarge", "p5en.48xlarge"]


def test_spot_alternatives_that_do_not_encrypt_are_left_out_and_a_pool_type_that_does_not_stops() -> None:
    plan = _plan(_Ec2({"p5en.48xlarge"}), pools=H200_SPOT)
    assert _types(plan, "h200") == ["p5e.48xlarge"]
    with pytest.raises(pulumi.RunError, match=rf"^{REGION}\.gpu_pools\.h200\.instance_type: p5e\.48xlarge does not encrypt"):
        _plan(_Ec2({"p5e.48xlarge"}), pools=H200_SPOT)


def test_under_monitor_nothing_is_asked_and_any_type_goes() -> None:
    mocks = _Ec2({"m5.xlarge"})
    plan = _plan(mocks, transit="monitor", system="m5.xlarge")
    assert mocks.asked == [] and _types(plan, "system") == ["m5.xlarge"]


@given(st.text(min_size=1, max_size=20), st.sets(st.text(min_size=1, max_size=20), max_size=5))
def test_the_problem_is_none_exactly_when_ec2_lists_the_type(instance_type: str, encrypting: set[str]) -> None:
    problem = transit_encryption_problem("p", instance_type, encrypting, "n")
    assert (problem is None) == (instance_type in encrypting)
    if problem:
        assert problem.startswith(f"p: {instance_type} does not encrypt") and "n.transit_encryption" in problem
