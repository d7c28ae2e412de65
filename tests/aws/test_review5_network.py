"""Network review 5: zones EKS refuses are never picked, flow logs carry the encryption status VPC encryption controls
report, and the flow log role has what the VPC user guide requires."""

from __future__ import annotations

import json

import pulumi
import pytest
from helpers import platform_dict

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.aws.network import FLOW_LOG_FORMAT
from components.compose import build_platform
from components.spec import load_platform

ZONES = "aws:index/getAvailabilityZones:getAvailabilityZones"
SUBNET = "aws:ec2/subnet:Subnet"
FLOW_LOG = "aws:ec2/flowLog:FlowLog"
EAST = "prod-us-east-1"
# The record fields of the default format, in order (docs.aws.amazon.com/vpc/latest/userguide/flow-log-records.html).
DEFAULT_FIELDS = ["version", "account-id", "interface-id", "srcaddr", "dstaddr", "srcport", "dstport", "protocol",
                  "packets", "bytes", "start", "end", "action", "log-status"]


class _AccountZones(PlanMocks):
    """Answers the zones lookup as EC2 would for one account: `zones` maps each zone name to its zone ID (the mapping
    differs per account), and IDs in `excludeZoneIds` are left out. Records what the program asked."""

    def __init__(self, zones: dict[str, str]) -> None:
        self.zones = zones
        self.asked: list[dict] = []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == ZONES:
            self.asked.append(dict(args.args))
            excluded = set(args.args.get("excludeZoneIds") or ())
            kept = {name: zone_id for name, zone_id in self.zones.items() if zone_id not in excluded}
            return {**super().call(args), "names": list(kept), "zoneIds": list(kept.values())}
        return super().call(args)


def _plan(region: str, mocks: PlanMocks, network: dict | None = None) -> PlanResult:
    spec = load_platform(platform_dict(
        {"aws": {"regions": {region: {"network": {"cidr": "10.9.0.0/16", **(network or {})}, "cluster": {}}}}},
        addons={"enabled": False}))
    return run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)


def _private_zones(plan: PlanResult) -> list[str]:
    private = sorted((r for r in plan.of_type(SUBNET) if "-private-" in r.name), key=lambda r: r.name)
    return [r.inputs["availabilityZone"] for r in private]


def test_a_zone_eks_refuses_is_left_out_by_its_id_whatever_its_name() -> None:
    # In this account us-east-1a is use1-az3, where EKS refuses cluster subnets (EKS user guide, network-reqs).
    mocks = _AccountZones({"us-east-1a": "use1-az3", "us-east-1b": "use1-az1", "us-east-1c": "use1-az2",
                           "us-east-1d": "use1-az4"})
    plan = _plan("us-east-1", mocks)
    assert [a.get("excludeZoneIds") for a in mocks.asked] == [["use1-az3"]]
    assert _private_zones(plan) == ["us-east-1b", "us-east-1c", "us-east-1d"]
    cluster = plan.one("aws:eks/cluster:Cluster").inputs
    subnets = {r.inputs["availabilityZone"] for r in plan.of_type(SUBNET) if f"{r.name}-id" in cluster["vpcConfig"]["subnetIds"]}
    assert subnets and "us-east-1a" not in subnets


@pytest.mark.parametrize(("region", "excluded"), [("us-west-1", ["usw1-az2"]), ("ca-central-1", ["cac1-az3"])])
def test_each_region_with_a_refused_zone_excludes_it(region: str, excluded: list[str]) -> None:
    mocks = _AccountZones({f"{region}a": f"{excluded[0][:-1]}1", f"{region}b": excluded[0], f"{region}c": f"{excluded[0][:-1]}4"})
    plan = _plan(region, mocks, {"zones": 2})
    assert mocks.asked[0]["excludeZoneIds"] == excluded
    assert _private_zones(plan) == [f"{region}a", f"{region}c"]


def test_regions_without_refused_zones_ask_for_no_exclusion() -> None:
    mocks = _AccountZones({"us-west-2a": "usw2-az1", "us-west-2b": "usw2-az2", "us-west-2c": "usw2-az3"})
    _plan("us-west-2", mocks)
    assert "excludeZoneIds" not in mocks.asked[0]


def test_a_network_without_a_cluster_keeps_its_zones() -> None:
    # No EKS interfaces there: leaving use1-az3 out would move the subnets of a network that works.
    mocks = _AccountZones({"us-east-1a": "use1-az3", "us-east-1b": "use1-az1", "us-east-1c": "use1-az2",
                           "us-east-1d": "use1-az4"})
    spec = load_platform(platform_dict({"aws": {"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"},
                                                                          "buckets": {"data": {}}}}}}))
    plan = run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)
    assert "excludeZoneIds" not in mocks.asked[0]
    assert _private_zones(plan) == ["us-east-1a", "us-east-1b", "us-east-1c"]


def test_too_few_zones_after_the_exclusion_is_a_config_error_with_the_zones_left() -> None:
    mocks = _AccountZones({"us-west-1a": "usw1-az1", "us-west-1b": "usw1-az2", "us-west-1c": "usw1-az3"})
    with pytest.raises(pulumi.RunError) as error:
        _plan("us-west-1", mocks, {"zones": 3})
    assert ("platform.clouds.aws.regions.us-west-1.network.zones: 3, but us-west-1 has 2 standard availability zones "
            "(us-west-1a, us-west-1c); allowed: 2") in str(error.value)


def test_the_planner_placeholder_still_answers_zones_for_an_excluding_region(prod_plan: PlanResult, children) -> None:
    subnets = children(prod_plan, EAST, SUBNET)
    assert len(subnets) == 9 and all(r.inputs["availabilityZone"].startswith("us-east-1") for r in subnets)


def test_flow_logs_record_the_default_fields_and_the_encryption_status(prod_plan: PlanResult, plan_aws) -> None:  # noqa: ANN001
    assert FLOW_LOG_FORMAT.split() == [f"${{{f}}}" for f in [*DEFAULT_FIELDS, "encryption-status"]]
    cloudwatch = prod_plan.one(FLOW_LOG, f"{EAST}-flow-logs")
    s3 = plan_aws({"flow_log_destination": "s3", "regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}}}}).one(FLOW_LOG)
    # A new format replaces each flow log, old one first: EC2 may refuse two of one VPC and destination.
    assert cloudwatch.deleteBeforeReplace is True and s3.deleteBeforeReplace is True
    for flow in (cloudwatch.inputs, s3.inputs):
        assert flow["logFormat"] == ("${version} ${account-id} ${interface-id} ${srcaddr} ${dstaddr} ${srcport} "
                                     "${dstport} ${protocol} ${packets} ${bytes} ${start} ${end} ${action} ${log-status} "
                                     "${encryption-status}")


def test_the_flow_log_role_has_the_guides_actions_scoped_to_its_group(prod_plan: PlanResult) -> None:
    policy = json.loads(prod_plan.one("aws:iam/rolePolicy:RolePolicy", f"{EAST}-flow-logs-policy").inputs["policy"])
    group = f"arn:aws:logs:us-east-1:123456789012:log-group:/ai-infra/{EAST}/vpc-flow-logs"
    by_resource = {json.dumps(s["Resource"]): s for s in policy["Statement"]}
    assert set(by_resource) == {json.dumps([group, f"{group}:*"]), json.dumps("arn:aws:logs:us-east-1:123456789012:log-group:*")}
    writes = by_resource[json.dumps([group, f"{group}:*"])]["Action"]
    listing = by_resource[json.dumps("arn:aws:logs:us-east-1:123456789012:log-group:*")]["Action"]
    # The VPC user guide's list ("IAM role for publishing flow logs to CloudWatch Logs") but CreateLogGroup: the group
    # exists first, and with it Flow Logs would recreate a destroyed group without its key and retention.
    assert sorted([*writes, listing]) == ["logs:CreateLogStream", "logs:DescribeLogGroups", "logs:DescribeLogStreams",
                                          "logs:PutLogEvents"]
    assert listing == "logs:DescribeLogGroups"
    assert all(s["Effect"] == "Allow" and "*" != s["Resource"] for s in policy["Statement"])
