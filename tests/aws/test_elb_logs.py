"""Load balancer access logs reach the region's log bucket in every AWS Region: ALBs through the documented
`logdelivery.elasticloadbalancing.amazonaws.com` statement (no per-Region ELB account lookup, which fails in Regions
opened since August 2022), NLBs through the shared `delivery.logs.amazonaws.com` statements. Sources: elb_logs.py."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pulumi
import pytest
from hypothesis import given
from hypothesis import strategies as st

from aws.conftest import aws_platform

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.aws import policies
from components.aws.context import AwsContext
from components.aws.elb_logs import ALB_LOG_DELIVERY, LOG_DELIVERY, access_log_writer
from components.aws.storage import LogBucket, LogBucketArgs
from components.catalog.regions import region_names
from components.compose import build_platform
from components.spec import load_platform
from components.spec.aws import LoadBalancerKind

ACCOUNT = "123456789012"
BUCKET = "arn:aws:s3:::prod-logs-0123abcd"
# The Regions of the guide's legacy ELB account list ("Regions available before August 2022").
LEGACY_REGIONS = (
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "af-south-1", "ap-east-1", "ap-southeast-3", "ap-south-1",
    "ap-northeast-3", "ap-northeast-2", "ap-southeast-1", "ap-southeast-2", "ap-northeast-1", "ca-central-1",
    "eu-central-1", "eu-west-1", "eu-west-2", "eu-south-1", "eu-west-3", "eu-north-1", "me-south-1", "sa-east-1",
    "us-gov-east-1", "us-gov-west-1",
)
# Regions opened since, which never had an ELB account (Hyderabad, Melbourne, Spain, Zurich, UAE, Tel Aviv, Calgary,
# Malaysia, Thailand, Mexico, Taipei).
NEW_REGIONS = ("ap-south-2", "ap-southeast-4", "eu-south-2", "eu-central-2", "me-central-1", "il-central-1", "ca-west-1",
               "ap-southeast-5", "ap-southeast-7", "mx-central-1", "ap-east-2")
GET_SERVICE_ACCOUNT = "aws:elb/getServiceAccount:getServiceAccount"


def statements(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["Sid"]: s for s in document["Statement"]}


def principals(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["Principal"] for s in document["Statement"] if s["Effect"] == "Allow"]


def allows_put(document: dict[str, Any], service: str, key: str) -> list[dict[str, Any]]:
    """The Allow statements letting `service` put the object `key` (S3 resource wildcards: `*` spans `/`)."""
    return [s for s in document["Statement"] if s["Effect"] == "Allow" and s["Principal"] == {"Service": service}
            and s["Action"] in ("s3:PutObject", ["s3:PutObject"]) and fnmatch.fnmatchcase(f"{BUCKET}/{key}", s["Resource"])]


# --- the pure rule ---------------------------------------------------------------------------------------------

def test_each_load_balancer_kind_has_its_documented_log_writer() -> None:
    assert access_log_writer(LoadBalancerKind.APPLICATION) == "logdelivery.elasticloadbalancing.amazonaws.com"
    assert access_log_writer(LoadBalancerKind.NETWORK) == "delivery.logs.amazonaws.com"


def test_alb_statement_is_the_documented_one_for_this_accounts_logs() -> None:
    document = policies.log_bucket_policy(BUCKET, ACCOUNT, LoadBalancerKind.APPLICATION)
    assert statements(document)["LoadBalancerAccessLogs"] == {
        "Sid": "LoadBalancerAccessLogs", "Effect": "Allow", "Principal": {"Service": ALB_LOG_DELIVERY},
        "Action": "s3:PutObject", "Resource": f"{BUCKET}/lb/AWSLogs/{ACCOUNT}/*"}
    # No ELB account (legacy) principal anywhere; the ALB writes its own logs and its test file, nothing else.
    assert all(set(p) == {"Service"} for p in principals(document))
    assert allows_put(document, ALB_LOG_DELIVERY, f"lb/AWSLogs/{ACCOUNT}/ELBAccessLogTestFile")
    assert not allows_put(document, ALB_LOG_DELIVERY, "lb/AWSLogs/210987654321/x.log.gz")
    assert not allows_put(document, ALB_LOG_DELIVERY, f"vpc-flow-logs/AWSLogs/{ACCOUNT}/x.log.gz")


def test_nlb_logs_use_the_shared_log_delivery_statements() -> None:
    document = policies.log_bucket_policy(BUCKET, ACCOUNT, LoadBalancerKind.NETWORK)
    assert document == policies.log_bucket_policy(BUCKET, ACCOUNT, None)  # nothing ALB-specific
    [write] = allows_put(document, LOG_DELIVERY, f"lb/AWSLogs/{ACCOUNT}/elasticloadbalancing/ap-southeast-4/x.log.gz")
    # The NLB guide's conditions: the owner-full-control ACL and this account as the source.
    assert write["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT, "s3:x-amz-acl": "bucket-owner-full-control"}}
    acl = statements(document)["LogDeliveryAclCheck"]
    assert acl["Principal"] == {"Service": LOG_DELIVERY} and "s3:GetBucketAcl" in acl["Action"] and acl["Resource"] == BUCKET


def test_flow_log_writers_keep_their_statements() -> None:
    with_alb = statements(policies.log_bucket_policy(BUCKET, ACCOUNT, LoadBalancerKind.APPLICATION))
    without = statements(policies.log_bucket_policy(BUCKET, ACCOUNT, None))
    assert {k: v for k, v in with_alb.items() if k != "LoadBalancerAccessLogs"} == without
    for prefix in ("vpc-flow-logs", "global-accelerator"):
        assert allows_put(policies.log_bucket_policy(BUCKET, ACCOUNT, LoadBalancerKind.APPLICATION), LOG_DELIVERY,
                          f"{prefix}/AWSLogs/{ACCOUNT}/x.log.gz")


def _platform(region: str, kind: LoadBalancerKind) -> dict[str, Any]:
    certificate = f"arn:aws:acm:{region}:{ACCOUNT}:certificate/1c2d3e4f-5061-7283-94a5-b6c7d8e9f0a1"
    return aws_platform({"inference_load_balancer": kind.value, "regions": {region: {
        "network": {"cidr": "10.70.0.0/16"}, "cluster": {}, "inference": {"certificate": certificate}}}})


# Every AWS Region the spec accepts (the catalog's list), the guide's legacy and newer ones among them.
aws_regions = st.sampled_from(region_names("aws"))


def test_the_catalog_lists_the_guides_regions() -> None:
    assert set(LEGACY_REGIONS + NEW_REGIONS) <= set(region_names("aws"))


@given(region=aws_regions, kind=st.sampled_from(list(LoadBalancerKind)))
def test_any_region_is_accepted_and_gets_the_same_log_writer(region: str, kind: LoadBalancerKind) -> None:
    spec = load_platform(_platform(region, kind))  # raises on a region the spec refuses
    assert list(spec.clouds.aws.regions) == [region]
    document = policies.log_bucket_policy(f"arn:aws:s3:::logs-{region}", ACCOUNT, spec.clouds.aws.inference_load_balancer)
    writers = {p["Service"] for p in principals(document)}
    assert access_log_writer(kind) in writers and all(set(p) == {"Service"} for p in principals(document))


# --- what a real deployment sends ------------------------------------------------------------------------------

class DeployedBuckets(PlanMocks):
    """A plan in which buckets have the ARN S3 gives them on create, so the bucket policy is a known document;
    every invoke is recorded."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def answer(self, type_: str, name: str, outputs: dict) -> tuple[str, dict]:
        id_, outputs = super().answer(type_, name, outputs)
        if type_ == "aws:s3/bucket:Bucket" and "bucket" in outputs:
            outputs = {**outputs, "arn": f"arn:aws:s3:::{outputs['bucket']}"}
        return id_, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        self.calls.append(args.token)
        return super().call(args)


def log_bucket_plan(region: str, kind: LoadBalancerKind | None) -> tuple[PlanResult, DeployedBuckets]:
    mocks = DeployedBuckets()

    def program() -> None:
        ctx = AwsContext(environment="prod", region=region, labels={}, account_id=ACCOUNT, partition="aws",
                         dns_suffix="amazonaws.com", dns_prefix="com.amazonaws", protected=True)
        LogBucket(f"prod-{region}-log-archive", LogBucketArgs(ctx, 365, load_balancer=kind))
    return run_program(program, project="ai-infra", stack="prod", mocks_=mocks), mocks


def policy_of(plan: PlanResult, name: str) -> dict[str, Any]:
    return json.loads(plan.one("aws:s3/bucketPolicy:BucketPolicy", f"{name}-log-archive-policy").inputs["policy"])


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "us-gov-west-1", *NEW_REGIONS])
def test_alb_log_bucket_policy_in_old_and_new_regions(region: str) -> None:
    plan, mocks = log_bucket_plan(region, LoadBalancerKind.APPLICATION)
    bucket = plan.one("aws:s3/bucket:Bucket", f"prod-{region}-log-archive-bucket").inputs["bucket"]
    policy = policy_of(plan, f"prod-{region}")
    assert statements(policy)["LoadBalancerAccessLogs"] == {
        "Sid": "LoadBalancerAccessLogs", "Effect": "Allow", "Principal": {"Service": ALB_LOG_DELIVERY},
        "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/lb/AWSLogs/{ACCOUNT}/*"}
    assert all(set(p) == {"Service"} for p in principals(policy))
    assert GET_SERVICE_ACCOUNT not in mocks.calls  # it knows only the legacy Regions


@pytest.mark.parametrize(("region", "kind"), [("us-east-1", LoadBalancerKind.APPLICATION),
                                              ("ap-southeast-4", LoadBalancerKind.APPLICATION),
                                              ("ap-southeast-4", LoadBalancerKind.NETWORK)])
def test_whole_platform_in_a_region_gets_the_right_log_writer(region: str, kind: LoadBalancerKind) -> None:
    mocks = DeployedBuckets()
    spec = load_platform(_platform(region, kind))
    plan = run_program(lambda: build_platform(spec), project="ai-infra", stack="test", mocks_=mocks)
    name = f"test-{region}"
    policy = policy_of(plan, name)
    bucket = plan.one("aws:s3/bucket:Bucket", f"{name}-log-archive-bucket").inputs["bucket"]
    lb = plan.one("aws:lb/loadBalancer:LoadBalancer", f"{name}-inference-lb").inputs
    assert lb["loadBalancerType"] == kind.value and lb["accessLogs"]["bucket"] == bucket
    key = f"{lb['accessLogs']['prefix']}/AWSLogs/{ACCOUNT}/elasticloadbalancing/{region}/x.log.gz"
    arn = f"arn:aws:s3:::{bucket}"
    writes = [s for s in policy["Statement"] if s["Effect"] == "Allow" and s["Action"] == "s3:PutObject"
              and s["Principal"] == {"Service": access_log_writer(kind)} and fnmatch.fnmatchcase(f"{arn}/{key}", s["Resource"])]
    assert writes, policy
    assert ("LoadBalancerAccessLogs" in statements(policy)) is (kind is LoadBalancerKind.APPLICATION)
    assert GET_SERVICE_ACCOUNT not in mocks.calls
    # The load balancer is configured only once the bucket admits it (ELB writes a test file on configuration).
    assert plan.one("aws:s3/bucketPolicy:BucketPolicy", f"{name}-log-archive-policy").urn in \
        plan.one("aws:lb/loadBalancer:LoadBalancer", f"{name}-inference-lb").dependencies
