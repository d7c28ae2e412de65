"""A global endpoint's request logs hold client IP addresses (personal data under GDPR): `logs_data_zone` keeps them in
a region of that data zone, on each cloud its own way (AWS: the Global Accelerator's flow logs go to that region's log
bucket; Azure: Front Door's diagnostic setting to that region's workspace; GCP: a CMEK log bucket there, a sink, and an
exclusion on `_Default`). prod sets it to `eu`."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import platform_dict
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanResult
from components.spec import SpecError, load_platform, logs_region

ROOT = Path(__file__).resolve().parents[2]

ENDPOINT = "platform.clouds.aws.global_endpoint.logs_data_zone"


@cache
def planned(stack: str) -> PlanResult:
    return plan_stack(load_project(ROOT), stack)


def test_prod_keeps_every_clouds_request_logs_in_the_eu_zone() -> None:
    plan = planned("prod")
    buckets = {r.inputs["bucket"]: r.name for r in plan.of_type("aws:s3/bucket:Bucket") if "log-archive" in r.name}
    [accelerator] = plan.of_type("aws:globalaccelerator/accelerator:Accelerator")
    assert buckets[accelerator.inputs["attributes"]["flowLogsS3Bucket"]] == "prod-eu-west-1-log-archive-bucket"
    [front_door] = [r for r in plan.of_type("azure-native:monitor:DiagnosticSetting") if r.name == "prod-frontdoor-logs"]
    assert front_door.inputs["workspaceId"] == "prod-westeurope-logs-id"
    bucket = plan.one("gcp:logging/projectBucketConfig:ProjectBucketConfig", "prod-europe-west4-request-logs")
    assert bucket.inputs["location"] == "europe-west4" and bucket.protect
    assert bucket.inputs["cmekSettings"] == {"kmsKeyName": "prod-europe-west4-key-id"}
    sink = plan.one("gcp:logging/projectSink:ProjectSink", "prod-europe-west4-request-logs-sink")
    exclusion = plan.one("gcp:logging/projectExclusion:ProjectExclusion", "prod-europe-west4-request-logs-default-exclusion")
    assert sink.inputs["filter"] == exclusion.inputs["filter"] == 'resource.type="http_load_balancer"'
    assert sink.urn in exclusion.dependencies  # the sink takes them before _Default drops them


def test_without_a_zone_the_first_serving_region_keeps_them_and_gcp_leaves_them_to_default() -> None:
    plan = planned("staging")
    exclusions = plan.of_type("gcp:logging/projectExclusion:ProjectExclusion")
    assert [r.name for r in exclusions] == ["staging-us-central1-flow-logs-default-exclusion"]  # no request-logs one


def _aws(zone: str | None, zones: dict[str, list[str]], eu_buckets: bool = True) -> dict[str, Any]:
    regions = {"us-east-1": {"network": {"cidr": "10.1.0.0/16"}, "cluster": {}, "inference": {
        "certificate": "arn:aws:acm:us-east-1:123456789012:certificate/1c2d3e4f-5061-7283-94a5-b6c7d8e9f0a1"}},
               "eu-west-1": {"network": {"cidr": "10.2.0.0/16"},
                             **({"buckets": {"data": {"data_class": "datasets"}}} if eu_buckets else {})}}
    return platform_dict({"aws": {"regions": regions, "global_endpoint": {"logs_data_zone": zone} if zone else {}}},
                         compliance={"data_zones": zones})


@pytest.mark.parametrize(("config", "message"), [
    (_aws("eu", {}), "data zone 'eu' is not defined in compliance.data_zones (defined: none)"),
    (_aws("eu", {"eu": ["eu-west-1"]}, eu_buckets=False),
     "no aws region with a log archive bucket (one with buckets, inference or S3 flow logs) is in data zone 'eu' "
     "(eu-west-1); aws regions with a log store: us-east-1"),
])
def test_a_zone_without_a_log_store_of_the_cloud_is_a_config_error(config: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_platform(config)
    assert (ENDPOINT, message) in caught.value.issues


def test_latency_dns_has_no_global_log_stream_to_place() -> None:
    config = _aws("eu", {"eu": ["eu-west-1"]})
    config["clouds"]["aws"]["global_endpoint"].update(routing="latency_dns", domain="infer.example.com",
                                                      hosted_zone_id="Z0123456789ABCDEFGHIJ")
    with pytest.raises(SpecError) as caught:
        load_platform(config)
    assert (ENDPOINT, "routing 'latency_dns' has no global log stream to place (Route 53 latency records, no Global "
                      "Accelerator): each serving region's ALB keeps its own access logs; remove logs_data_zone, or use "
                      "routing anycast") in caught.value.issues


def test_prod_warns_that_us_east_1s_alb_logs_stay_in_us_east_1() -> None:
    """An ALB logs only to a bucket of its own Region: residency of its access and WAF logs is where it serves."""
    warnings = [d.message for d in planned("prod").diagnostics if d.severity == "warning"]
    assert any(m.startswith("clouds.aws.global_endpoint.logs_data_zone: the Global Accelerator's flow logs are kept in "
                            "eu-west-1, but the ALB access and WAF logs of us-east-1") for m in warnings)


def test_the_exclusion_is_named_after_its_region_so_moving_the_keeper_creates_before_it_deletes_safely() -> None:
    exclusion = planned("prod").one("gcp:logging/projectExclusion:ProjectExclusion", "prod-europe-west4-request-logs-default-exclusion")
    assert exclusion.inputs["name"] == "prod-europe-west4-lb-requests"


def test_a_zone_with_a_log_store_loads() -> None:
    assert load_platform(_aws("eu", {"eu": ["eu-west-1"]})).clouds.aws.global_endpoint.logs_data_zone == "eu"


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True), st.sets(st.sampled_from(["a", "b", "c", "d"])),
       st.sets(st.sampled_from(["a", "b", "c", "d"])))
def test_the_keeper_is_the_first_region_in_the_zone_with_a_store(regions: list[str], zone: set[str], stores: set[str]) -> None:
    keeper = logs_region(sorted(zone), stores, regions)
    eligible = [r for r in regions if r in zone and r in stores]
    assert keeper == (eligible[0] if eligible else None)
