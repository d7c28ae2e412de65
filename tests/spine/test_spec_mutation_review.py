"""Validation behaviour of the platform spec (components/spec: checks, consistency, resolve, network, storage, compute,
maintenance, offerings, common, endpoint, alerts) that no other test pinned. Found by a mutation review: each test
here fails with a small edit of the source that the rest of the suite let pass (an overlap test narrowed to
containment, a message's wording chosen by the wrong field, a bound moved by one, ...). Every case asserts what a user
sees: the config path, the value given and what is allowed, or that a valid config loads."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import platform_dict, spec_issues

from components.spec import load_platform
from components.spec.aws import EKS_KUBERNETES_VERSION

AWS_NET = "platform.clouds.aws.regions.us-east-1.network"
GCP_NET = "platform.clouds.gcp.regions.us-central1.network"
AZURE_NET = "platform.clouds.azure.regions.eastus2.network"
PEERED = ("networks and the GKE pod and services ranges in them (secondary ranges of a GCP subnet) must not overlap (they "
          "may be peered)")


def aws(region: dict[str, Any]) -> dict[str, Any]:
    return {"aws": {"regions": {"us-east-1": region}}}


def gcp(region: dict[str, Any], **regions: dict[str, Any]) -> dict[str, Any]:
    return {"gcp": {"project": "acme-ml-test", "regions": {"us-central1": region, **regions}}}


def azure(region: dict[str, Any]) -> dict[str, Any]:
    region["network"].setdefault("transit_encryption", "monitor")
    return {"azure": {"regions": {"eastus2": region}}}


# --- network ranges (checks._check_cidrs) --------------------------------------------------------------------------

@pytest.mark.parametrize(("clouds", "where", "message"), [
    pytest.param(aws({"network": {"cidr": "10.10.0.0/16", "service_cidr": "10.0.0.0/12"}, "cluster": {}}),
                 f"{AWS_NET}.service_cidr", "10.0.0.0/12 overlaps cidr 10.10.0.0/16 in the same region", id="eks-services"),
    pytest.param(gcp({"network": {"cidr": "10.20.0.0/16", "pod_cidr": "10.16.0.0/12"}, "cluster": {}}),
                 f"{GCP_NET}.pod_cidr", "10.16.0.0/12 overlaps cidr 10.20.0.0/16 in the same region", id="gke-pods"),
])
def test_a_cluster_range_that_holds_its_own_network_is_an_overlap(clouds: dict[str, Any], where: str, message: str) -> None:
    # Overlap, not containment: a pod or services range larger than the network and around it clashes as much as one
    # inside it.
    assert spec_issues(platform_dict(clouds)) == [(where, message)]


def test_a_network_inside_an_earlier_gke_pod_range_is_told_about_gke_ranges() -> None:
    # The Azure VNet comes later and is written: it is reported, with the rule for GKE ranges (not "networks must not
    # overlap", which the other range is not).
    clouds = {**gcp({"network": {"cidr": "10.20.0.0/16", "pod_cidr": "10.30.0.0/16"}, "cluster": {}}),
              **azure({"network": {"cidr": "10.30.0.0/16"}})}
    assert spec_issues(platform_dict(clouds)) == [
        (f"{AZURE_NET}.cidr", f"10.30.0.0/16 overlaps 10.30.0.0/16 at {GCP_NET}.pod_cidr; {PEERED}")]


# --- region fields (checks._check_region) --------------------------------------------------------------------------

@pytest.mark.parametrize(("clouds", "cloud", "region"), [
    pytest.param(aws({"network": {"cidr": "10.10.0.0/16"}, "resource_group": "rg-ml"}), "aws", "us-east-1", id="aws"),
    pytest.param(gcp({"network": {"cidr": "10.20.0.0/16"}, "resource_group": "rg-ml"}), "gcp", "us-central1", id="gcp"),
])
def test_resource_group_is_refused_outside_azure(clouds: dict[str, Any], cloud: str, region: str) -> None:
    assert spec_issues(platform_dict(clouds)) == [
        (f"platform.clouds.{cloud}.regions.{region}.resource_group", f"resource_group is Azure-only; {cloud} has no resource groups")]


def test_tpu_vm_and_queued_resource_slices_need_no_cluster() -> None:
    # Only GKE-mode slices are node pools of the region's cluster; TPU VMs and queued resources stand alone.
    slices = {"vm": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm"},
              "queued": {"generation": "v5e", "topology": "2x4", "mode": "queued_resource"}}
    spec = load_platform(platform_dict(gcp({"network": {"cidr": "10.20.0.0/16"}, "tpu_slices": slices})))
    assert spec.clouds.gcp.regions["us-central1"].cluster is None


def test_a_lustre_bucket_in_a_region_without_buckets_says_none_are_declared() -> None:
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "lustre": {"scratch": {"size_gib": 2400, "bucket": "datasets"}}})
    assert spec_issues(platform_dict(clouds)) == [
        ("platform.clouds.aws.regions.us-east-1.lustre.scratch.bucket",
         "bucket 'datasets' is not declared in this region's buckets (declared: none)")]


@pytest.mark.parametrize(("clouds", "cloud", "region"), [
    pytest.param(aws({"network": {"cidr": "10.10.0.0/16"}, "buckets": {"datasets": {"autoclass": True}}}), "aws", "us-east-1", id="aws"),
    pytest.param(azure({"network": {"cidr": "10.50.0.0/16"}, "buckets": {"datasets": {"autoclass": True}}}), "azure", "eastus2",
                 id="azure"),
])
def test_autoclass_is_refused_outside_gcp(clouds: dict[str, Any], cloud: str, region: str) -> None:
    assert spec_issues(platform_dict(clouds)) == [
        (f"platform.clouds.{cloud}.regions.{region}.buckets.datasets.autoclass", f"autoclass is GCP-only; on {cloud} use tiering")]


@pytest.mark.parametrize("certificate", [None, ""], ids=["absent", "empty"])
def test_an_aws_inference_listener_needs_a_certificate_and_an_empty_one_is_none(certificate: str | None) -> None:
    inference = {} if certificate is None else {"certificate": certificate}
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}, "inference": inference})
    assert spec_issues(platform_dict(clouds)) == [
        ("platform.clouds.aws.regions.us-east-1.inference.certificate",
         "AWS inference listeners need an ACM certificate ARN (TLS 1.2+ HTTPS listener)")]


# --- data residency (checks._check_data_zones) ---------------------------------------------------------------------

LUSTRE_ZONE = "platform.clouds.aws.regions.us-east-1.lustre.scratch.data_zone"


@pytest.mark.parametrize(("zone", "message"), [
    ("eu", "region 'us-east-1' is outside data zone 'eu' (eu-west-1); eu data must stay there"),
    ("apac", "data zone 'apac' is not defined in compliance.data_zones (defined: eu)"),
])
def test_a_lustre_file_systems_data_zone_is_checked_like_a_buckets(zone: str, message: str) -> None:
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "lustre": {"scratch": {"size_gib": 2400, "data_zone": zone}}})
    assert spec_issues(platform_dict(clouds, compliance={"data_zones": {"eu": ["eu-west-1"]}})) == [(LUSTRE_ZONE, message)]


# --- GPU pools (checks._check_gpu_pool) ----------------------------------------------------------------------------

NETWORKS = {"aws": ("us-east-1", {"cidr": "10.10.0.0/16"}), "gcp": ("us-central1", {"cidr": "10.20.0.0/16"}),
            "azure": ("eastus2", {"cidr": "10.50.0.0/16", "transit_encryption": "monitor"})}


def one_region(cloud: str, region: dict[str, Any]) -> dict[str, Any]:
    """`clouds` with one region of `cloud` (its usual name and network) holding `region`."""
    name, network = NETWORKS[cloud]
    clouds: dict[str, Any] = {cloud: {"regions": {name: {"network": dict(network), **region}}}}
    if cloud == "gcp":
        clouds[cloud]["project"] = "acme-ml-test"
    return clouds


@pytest.mark.parametrize(("cloud", "expected"), [
    ("aws", [("share.sharing.mode", "mode 'mps' is GKE-only; on aws use time_slicing or mig")]),
    ("gcp", [("rdma.efa", "efa is AWS-only; gcp uses its own RDMA networking")]),
    ("azure", [("rdma.efa", "efa is AWS-only; azure uses its own RDMA networking"),
               ("share.sharing.mode", "mode 'mps' is GKE-only; on azure use time_slicing or mig")]),
])
def test_efa_is_aws_only_and_mps_gke_only(cloud: str, expected: list[tuple[str, str]]) -> None:
    h100 = {"accelerator": "h100-80gb", "accelerators_per_node": 8}
    pools = {"rdma": {**h100, "efa": cloud != "aws"}, "share": {**h100, "sharing": {"mode": "mps", "replicas_per_gpu": 4}}}
    base = f"platform.clouds.{cloud}.regions.{NETWORKS[cloud][0]}.gpu_pools"
    assert spec_issues(platform_dict(one_region(cloud, {"cluster": {}, "gpu_pools": pools}))) == [
        (f"{base}.{where}", message) for where, message in expected]


# --- global endpoints (checks._check_endpoint) ---------------------------------------------------------------------

@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_a_global_endpoint_without_a_serving_region_is_refused(cloud: str) -> None:
    clouds = one_region(cloud, {"cluster": {}})
    clouds[cloud]["global_endpoint"] = {}
    assert spec_issues(platform_dict(clouds)) == [
        (f"platform.clouds.{cloud}.global_endpoint", "a global endpoint needs at least one region with `inference`; none declares it")]


@pytest.mark.parametrize("cloud", ["gcp", "azure"])
def test_latency_dns_outside_aws_is_reported_once_at_routing_not_again_at_logs_data_zone(cloud: str) -> None:
    # The AWS-only "latency_dns has no global log stream" message would be wrong here: the fix is the routing.
    clouds = one_region(cloud, {"cluster": {}, "inference": {}})
    clouds[cloud]["global_endpoint"] = {"routing": "latency_dns", "logs_data_zone": "us", "domain": "infer.example.com"}
    region = NETWORKS[cloud][0]
    assert spec_issues(platform_dict(clouds, compliance={"data_zones": {"us": [region]}})) == [
        (f"platform.clouds.{cloud}.global_endpoint.routing", f"routing 'latency_dns' is AWS-only (Route 53); {cloud} allows anycast")]


# --- settings of another cloud, written with their default value (consistency) ------------------------------------

ACM = "arn:aws:acm:us-east-1:123456789012:certificate/abc"


@pytest.mark.parametrize(("cloud", "service"), [
    ("aws", "the AWS global endpoint is AWS Global Accelerator (or Route 53 latency records)"),
    ("gcp", "the GCP global endpoint is a global external Application Load Balancer"),
])
def test_azure_tier_is_refused_elsewhere_even_at_its_default(cloud: str, service: str) -> None:
    # What is written counts, not whether it differs from the default: premium is the default tier.
    clouds = one_region(cloud, {"cluster": {}, "inference": {"certificate": ACM} if cloud == "aws" else {}})
    clouds[cloud]["global_endpoint"] = {"azure_tier": "premium", **({"domain": "infer.example.com"} if cloud == "gcp" else {})}
    assert spec_issues(platform_dict(clouds)) == [
        (f"platform.clouds.{cloud}.global_endpoint.azure_tier",
         f"azure_tier 'premium' is Azure-only (the Front Door tier); {service}, which has no tier: remove azure_tier")]


def test_upgrade_channel_on_aws_is_refused_even_at_its_default() -> None:
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {"upgrade_channel": "regular"}})
    assert spec_issues(platform_dict(clouds)) == [
        ("platform.clouds.aws.regions.us-east-1.cluster.upgrade_channel",
         "upgrade_channel 'regular' has no effect on AWS: EKS has no release channels and never upgrades a cluster by "
         f"itself (the toolkit pins kubernetes_version, default {EKS_KUBERNETES_VERSION}); remove upgrade_channel and set "
         "kubernetes_version to choose the minor")]


@pytest.mark.parametrize(("field", "days"), [("warm_after_days", 30), ("cold_after_days", 90), ("archive_after_days", 365)])
def test_each_class_transition_is_refused_with_autoclass(field: str, days: int) -> None:
    bucket = {"autoclass": True, "tiering": {field: days, "expire_after_days": 400}}
    clouds = gcp({"network": {"cidr": "10.20.0.0/16"}, "buckets": {"datasets": bucket}})
    assert spec_issues(platform_dict(clouds)) == [
        (f"platform.clouds.gcp.regions.us-central1.buckets.datasets.tiering.{field}",
         f"{field} {days} has no effect with autoclass: Autoclass moves objects between storage classes itself, so the "
         "bucket gets no class transitions; remove it (expire_after_days still applies), or set autoclass to false")]


# --- model rules (storage.Tiering, compute.GpuSharing) -------------------------------------------------------------

@pytest.mark.parametrize(("tiering", "message"), [
    ({"expire_after_days": 365}, "expire_after_days (365) must be greater than archive_after_days (365)"),
    ({"archive_after_days": None, "expire_after_days": 60}, "expire_after_days (60) must be greater than cold_after_days (90)"),
])
def test_expiry_comes_after_the_last_class_transition(tiering: dict[str, Any], message: str) -> None:
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "buckets": {"logs": {"tiering": tiering}}})
    assert spec_issues(platform_dict(clouds)) == [
        ("platform.clouds.aws.regions.us-east-1.buckets.logs.tiering.expire_after_days", message)]


@pytest.mark.parametrize(("sharing", "mode"), [({}, "none"), ({"mode": "mig", "mig_profile": "1g.10gb"}, "mig")])
def test_replicas_per_gpu_is_refused_without_time_slicing_or_mps(sharing: dict[str, Any], mode: str) -> None:
    pool = {"accelerator": "h100-80gb", "accelerators_per_node": 8, "sharing": {**sharing, "replicas_per_gpu": 4}}
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}, "gpu_pools": {"train": pool}})
    assert spec_issues(platform_dict(clouds)) == [
        ("platform.clouds.aws.regions.us-east-1.gpu_pools.train.sharing.replicas_per_gpu",
         f"replicas_per_gpu is only allowed with modes 'time_slicing' and 'mps', not '{mode}'")]


def test_a_gpu_pool_of_fixed_size_loads() -> None:
    pool = {"accelerator": "h100-80gb", "accelerators_per_node": 8, "min_nodes": 4, "max_nodes": 4}
    spec = load_platform(platform_dict(aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}, "gpu_pools": {"train": pool}})))
    train = spec.clouds.aws.regions["us-east-1"].gpu_pools["train"]
    assert (train.min_nodes, train.max_nodes) == (4, 4)


# --- alert receivers (alerts) --------------------------------------------------------------------------------------

@pytest.mark.parametrize("account", ["1234567890", "12345678901", "1234567890123"])
def test_an_sns_topic_arn_takes_a_twelve_digit_account_only(account: str) -> None:
    arn = f"arn:aws:sns:us-east-1:{account}:gpu-alerts"
    data = platform_dict(aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}}),
                         addons={"monitoring": "managed", "alerts": {"sns_topic_arn": arn}})
    assert spec_issues(data) == [(
        "platform.addons.alerts.sns_topic_arn",
        f"'{arn}' is not a standard SNS topic's ARN, arn:aws:sns:<region>:<12-digit account>:<name> (name: 1 to 256 "
        "letters, digits, '-' and '_'; FIFO topics are not accepted by Amazon Managed Prometheus)")]


ACTION_GROUP = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/{}/providers/Microsoft.Insights/"
                "actionGroups/gpu-oncall")


@pytest.mark.parametrize(("group", "loads"), [("r" * 90, True), ("r" * 91, False), ("rg-ml.", False),
                                              ("rg-ml.(prod)", True)])
def test_an_action_groups_resource_group_name_is_one_azure_allows(group: str, loads: bool) -> None:
    """Up to 90 characters, not ending in '.' (inner dots are fine): any other ID names no action group."""
    value = ACTION_GROUP.format(group)
    data = platform_dict(azure({"network": {"cidr": "10.50.0.0/16"}, "cluster": {}}),
                         addons={"enabled": False, "monitoring": "managed", "alerts": {"action_group_id": value}})
    if loads:
        assert load_platform(data).addons.alerts.action_group_id == value
    else:
        assert spec_issues(data) == [(
            "platform.addons.alerts.action_group_id",
            f"'{value}' is not an Azure Monitor action group's resource ID, /subscriptions/<subscription GUID>/"
            "resourceGroups/<group>/providers/Microsoft.Insights/actionGroups/<name>")]


# --- the system pool (compute.SystemPoolSpec) ----------------------------------------------------------------------

SYSTEM_POOL = "platform.clouds.aws.regions.us-east-1.cluster.system_pool"


@pytest.mark.parametrize(("pool", "where", "message"), [
    ({"min_nodes": 3, "max_nodes": 2}, "max_nodes", "max_nodes (2) must be >= min_nodes (3)"),
    ({"min_nodes": 0}, "min_nodes", "expected an integer from 1 to 100, got 0"),
])
def test_the_system_pool_keeps_a_node_and_its_bounds_in_order(pool: dict[str, int], where: str, message: str) -> None:
    # The add-ons (DNS, Kueue, operators) run there: it may not scale to zero.
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {"system_pool": pool}})
    assert spec_issues(platform_dict(clouds)) == [(f"{SYSTEM_POOL}.{where}", message)]


def test_a_system_pool_of_fixed_size_loads() -> None:
    clouds = aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {"system_pool": {"min_nodes": 3, "max_nodes": 3}}})
    system = load_platform(platform_dict(clouds)).clouds.aws.regions["us-east-1"].cluster.system_pool
    assert (system.min_nodes, system.max_nodes) == (3, 3)
