"""The regional network and key: what AWS would receive for the VPC, subnets, NAT, endpoints, flow logs,
encryption controls and the KMS key."""

from __future__ import annotations

import json

import pulumi
import pytest
from helpers import platform_dict

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

SUBNET = "aws:ec2/subnet:Subnet"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
EAST = "prod-us-east-1"


def test_subnets_per_zone_carved_from_the_cidr_plan(prod_plan: PlanResult, children) -> None:
    subnets = {r.name: r.inputs for r in children(prod_plan, EAST, SUBNET)}
    assert sorted(subnets) == sorted(f"{EAST}-{kind}-{i}" for kind in ("private", "public", "endpoints") for i in range(3))
    private = [subnets[f"{EAST}-private-{i}"] for i in range(3)]
    assert [s["cidrBlock"] for s in private] == ["10.60.0.0/20", "10.60.16.0/20", "10.60.32.0/20"]
    assert [s["availabilityZone"] for s in private] == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert all(s["tags"]["kubernetes.io/role/internal-elb"] == "1" for s in private)
    assert not any(s["mapPublicIpOnLaunch"] for s in subnets.values())
    assert subnets[f"{EAST}-public-0"]["tags"]["kubernetes.io/role/elb"] == "1"


def test_nat_per_zone_in_prod_single_in_dev(prod_plan: PlanResult, dev_plan: PlanResult, children) -> None:
    nats = children(prod_plan, EAST, "aws:ec2/natGateway:NatGateway")
    assert sorted(n.inputs["subnetId"] for n in nats) == [f"{EAST}-public-{i}-id" for i in range(3)]
    igw = prod_plan.one("aws:ec2/internetGateway:InternetGateway", f"{EAST}-igw").urn
    assert all(igw in n.dependencies for n in nats)
    routes = {r.name: r.inputs for r in children(prod_plan, EAST, "aws:ec2/route:Route")}
    assert [routes[f"{EAST}-private-default-{i}"]["natGatewayId"] for i in range(3)] == [f"{EAST}-nat-{i}-id" for i in range(3)]
    assert routes[f"{EAST}-public-default"]["gatewayId"] == f"{EAST}-igw-id"
    dev_nats = dev_plan.of_type("aws:ec2/natGateway:NatGateway")
    assert [n.name for n in dev_nats] == ["dev-us-east-1-nat-0"]
    dev_routes = [r.inputs["natGatewayId"] for r in dev_plan.of_type("aws:ec2/route:Route") if "natGatewayId" in r.inputs]
    assert dev_routes == ["dev-us-east-1-nat-0-id"] * 2


def test_no_nat_means_no_public_subnets_and_private_endpoints_for_everything(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-west-2": {"network": {"cidr": "10.9.0.0/16", "nat": "none"}, "cluster": {}}}})
    names = [r.name for r in plan.of_type(SUBNET)]
    assert not [n for n in names if "-public-" in n]
    assert not plan.of_type("aws:ec2/internetGateway:InternetGateway") and not plan.of_type("aws:ec2/natGateway:NatGateway")
    services = sorted(r.inputs["serviceName"].split("us-west-2.")[1] for r in plan.of_type(ENDPOINT))
    assert services == sorted(["s3", "ecr.api", "ecr.dkr", "sts", "ec2", "eks", "eks-auth", "logs", "elasticloadbalancing", "autoscaling"])
    control = plan.one("aws:ec2/vpcEncryptionControl:VpcEncryptionControl").inputs
    assert control["mode"] == "enforce" and "internetGatewayExclusion" not in control and "natGatewayExclusion" not in control


def test_s3_gateway_and_interface_endpoints_keep_image_and_data_traffic_off_nat(prod_plan: PlanResult, children) -> None:
    endpoints = {r.name.removeprefix(f"{EAST}-endpoint-"): r.inputs for r in children(prod_plan, EAST, ENDPOINT)}
    assert sorted(endpoints) == ["ecr-api", "ecr-dkr", "s3", "sts"]
    s3 = endpoints["s3"]
    assert s3["vpcEndpointType"] == "Gateway" and s3["serviceName"] == "com.amazonaws.us-east-1.s3"
    assert s3["routeTableIds"] == [f"{EAST}-private-rt-{i}-id" for i in range(3)]
    for service in ("ecr-api", "ecr-dkr", "sts"):
        endpoint = endpoints[service]
        assert endpoint["vpcEndpointType"] == "Interface" and endpoint["privateDnsEnabled"] is True
        assert endpoint["subnetIds"] == [f"{EAST}-endpoints-{i}-id" for i in range(3)]
    group = prod_plan.one("aws:ec2/securityGroup:SecurityGroup", f"{EAST}-endpoints-sg").inputs
    assert [(r["fromPort"], r["toPort"], r["cidrBlocks"]) for r in group["ingress"]] == [(443, 443, ["10.60.0.0/16"])]


def test_default_security_group_is_stripped(prod_plan: PlanResult) -> None:
    group = prod_plan.one("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", f"{EAST}-default-sg").inputs
    assert group["ingress"] == [] and group["egress"] == []


def test_flow_logs_capture_all_traffic_into_an_encrypted_log_group(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    flow = prod_plan.one("aws:ec2/flowLog:FlowLog", f"{EAST}-flow-logs").inputs
    assert flow["trafficType"] == "ALL" and flow["vpcId"] == f"{EAST}-vpc-id"
    assert flow["logDestinationType"] == "cloud-watch-logs"
    group = prod_plan.one("aws:cloudwatch/logGroup:LogGroup", f"{EAST}-flow-log-group")
    assert group.inputs["retentionInDays"] == 365 and group.inputs["kmsKeyId"]
    assert group.protect and group.retainOnDelete
    assert dev_plan.one("aws:cloudwatch/logGroup:LogGroup", "dev-us-east-1-flow-log-group").inputs["retentionInDays"] == 30
    trust = json.loads(prod_plan.one("aws:iam/role:Role", f"{EAST}-flow-logs-role").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "vpc-flow-logs.amazonaws.com"}
    assert trust["Statement"][0]["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
    # The delivery policy names the log group's ARN, spelled out from its name so the policy pack reads it at preview
    # (the form of the provider's `arn` output: no `:*` suffix).
    delivery = json.loads(prod_plan.one("aws:iam/rolePolicy:RolePolicy", f"{EAST}-flow-logs-policy").inputs["policy"])
    arn = f"arn:aws:logs:us-east-1:123456789012:log-group:/ai-infra/{EAST}/vpc-flow-logs"
    assert delivery["Statement"][0]["Resource"] == [arn, f"{arn}:*"]


def test_flow_logs_to_s3_go_to_the_log_bucket(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"flow_log_destination": "s3", "regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}}}})
    flow = plan.one("aws:ec2/flowLog:FlowLog").inputs
    assert flow["logDestinationType"] == "s3" and flow["trafficType"] == "ALL"
    assert flow["destinationOptions"] == {"fileFormat": "parquet", "perHourPartition": True}
    assert not plan.of_type("aws:cloudwatch/logGroup:LogGroup")
    assert plan.one("aws:s3/bucket:Bucket").name == "test-us-east-1-log-archive-bucket"
    policy_urn = plan.one("aws:s3/bucketPolicy:BucketPolicy").urn
    assert policy_urn in plan.one("aws:ec2/flowLog:FlowLog").dependencies


def test_encryption_controls_follow_transit_encryption(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    prod = prod_plan.one("aws:ec2/vpcEncryptionControl:VpcEncryptionControl", f"{EAST}-encryption").inputs
    # Internet-bound traffic can't be encrypted by the VPC: the gateways are named exclusions in enforce mode.
    assert prod == {"vpcId": f"{EAST}-vpc-id", "mode": "enforce", "internetGatewayExclusion": "enable",
                    "natGatewayExclusion": "enable", "region": "us-east-1"}
    dev = dev_plan.one("aws:ec2/vpcEncryptionControl:VpcEncryptionControl").inputs
    assert dev["mode"] == "monitor" and "internetGatewayExclusion" not in dev


def test_nothing_attaches_to_the_vpc_before_its_encryption_mode_is_set(prod_plan: PlanResult, children) -> None:
    # Enforce mode is switched on after the control is created: ENIs made meanwhile would miss it.
    control = prod_plan.one("aws:ec2/vpcEncryptionControl:VpcEncryptionControl", f"{EAST}-encryption").urn
    attaching = [*children(prod_plan, EAST, SUBNET), *children(prod_plan, EAST, "aws:ec2/natGateway:NatGateway"),
                 *[e for e in children(prod_plan, EAST, ENDPOINT) if e.inputs["vpcEndpointType"] == "Interface"]]
    assert len(attaching) == 9 + 3 + 3
    assert [r.name for r in attaching if control not in r.dependencies] == []


def test_one_rotating_key_per_environment_and_region(prod_plan: PlanResult) -> None:
    keys = {r.name: r for r in prod_plan.of_type("aws:kms/key:Key")}
    assert sorted(keys) == ["prod-eu-west-1-key", f"{EAST}-key"]
    key = keys[f"{EAST}-key"]
    assert key.inputs["enableKeyRotation"] is True and key.inputs["deletionWindowInDays"] == 30
    assert key.protect and key.retainOnDelete
    statements = {s["Sid"]: s for s in json.loads(key.inputs["policy"])["Statement"]}
    assert statements["CloudWatchLogsEncryptsThisAccountsLogGroups"]["Principal"] == {"Service": "logs.us-east-1.amazonaws.com"}
    ebs = statements["EbsVolumesOfThisAccount"]["Condition"]["StringEquals"]
    assert ebs == {"kms:CallerAccount": "123456789012", "kms:ViaService": "ec2.us-east-1.amazonaws.com"}
    alias = prod_plan.one("aws:kms/alias:Alias", f"{EAST}-alias").inputs
    assert alias["name"] == f"alias/ai-infra/{EAST}"


class _ZonesInApiOrder(PlanMocks):
    """The zones lookup answered in an order other than sorted; records what the program asked."""

    def __init__(self) -> None:
        self.asked: list[dict] = []

    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            self.asked.append(dict(args.args))
            return {**super().call(args), "names": ["us-west-2c", "us-west-2a", "us-west-2d", "us-west-2b"]}
        return super().call(args)


def test_subnet_zones_do_not_follow_zone_health_or_api_order() -> None:
    mocks = _ZonesInApiOrder()
    spec = load_platform(platform_dict({"aws": {"regions": {"us-west-2": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}}}}},
                                       addons={"enabled": False}))
    plan = run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)
    # No state filter: an impaired zone must not drop out of the list and move the subnets after it.
    assert [sorted(a) for a in mocks.asked] == [["filters", "region"]]
    assert mocks.asked[0]["filters"] == [{"name": "opt-in-status", "values": ["opt-in-not-required"]}]
    # private-0, -1, -2 in name order: the SDK registers them in an order that varies from run to run.
    zones = [r.inputs["availabilityZone"] for r in sorted(plan.of_type(SUBNET), key=lambda r: r.name) if "-private-" in r.name]
    assert zones == ["us-west-2a", "us-west-2b", "us-west-2c"]


class _TwoZones(PlanMocks):
    def call(self, args):  # noqa: ANN001, ANN201 (the SDK's mock interface)
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            return {**super().call(args), "names": ["us-west-2a", "us-west-2b"]}
        return super().call(args)


@pytest.mark.parametrize(("region", "mocks", "message"), [
    ({"network": {"cidr": "10.9.0.0/16", "zones": 3}, "cluster": {}}, _TwoZones(),
     "platform.clouds.aws.regions.us-west-2.network.zones: 3, but us-west-2 has 2 standard availability zones "
     "(us-west-2a, us-west-2b); allowed: 2"),
    ({"network": {"cidr": "10.9.0.0/16", "zones": 2}, "cluster": {},
      "gpu_pools": {"l4": {"accelerator": "l4", "max_nodes": 1, "zones": ["us-west-2c"]}}}, PlanMocks(),
     "platform.clouds.aws.regions.us-west-2.gpu_pools.l4.zones: us-west-2c not among the network's zones; "
     "allowed: us-west-2a, us-west-2b (the first network.zones of the region, by name)"),
])
def test_zone_errors_known_only_on_lookup_name_the_config_path(region: dict, mocks: PlanMocks, message: str) -> None:
    # Raised as the program runs (RunError: the CLI prints it as one line, `pulumi up` without a traceback).
    spec = load_platform(platform_dict({"aws": {"regions": {"us-west-2": region}}}, addons={"enabled": False}))
    with pytest.raises(pulumi.RunError) as caught:
        run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)
    assert str(caught.value) == message
