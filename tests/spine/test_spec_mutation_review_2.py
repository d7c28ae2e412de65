"""More validation behaviour of the platform spec (components/spec) that no other test pinned, found by the second part
of a mutation review (the mutants drafted but not run in the first part, tests/spine/test_spec_mutation_review.py):
each test here fails with a small edit of the source that the rest of the suite let pass (a bound moved by one, a
check narrowed to some of its cases, ...). Every case asserts what a user sees: the config path, the value given and
what is allowed, or that a valid config loads."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import BASE_PLATFORM, platform_dict, spec_issues
from spine.test_spec_maintenance import AT, exclusion, platform, problems, window
from spine.test_spec_mutation_review import aws
from spine.test_spec_mutation_review import gcp as gcp_clouds

from components.spec import load_platform
from components.spec.maintenance import GKE_MAX_EXCLUSIONS
from components.spec.offerings import reservation_group_problem

AWS_REGION = "platform.clouds.aws.regions.us-east-1"
H100 = {"accelerator": "h100-80gb", "accelerators_per_node": 8}


def aws_pool(pool: dict[str, Any]) -> dict[str, Any]:
    """`clouds` with one AWS region whose cluster has the GPU pool `train`."""
    return aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}, "gpu_pools": {"train": pool}})


# --- taints (consistency._taint_issues) ----------------------------------------------------------------------------

@pytest.mark.parametrize("effect", ["NoSchedule", "PreferNoSchedule", "NoExecute"])
def test_a_repeated_key_and_effect_is_refused_whatever_the_effect(effect: str) -> None:
    taints = [{"key": "dedicated", "value": value, "effect": effect} for value in ("a", "b")]
    assert spec_issues(platform_dict(aws_pool({**H100, "taints": taints}))) == [(
        f"{AWS_REGION}.gpu_pools.train.taints[1]",
        f"taint dedicated with effect {effect} repeats taints[0]; Kubernetes takes one taint per key and effect (\"taints "
        "must be unique by key and effect pair\"): keep one")]


# --- network (network.NetworkSpec) ---------------------------------------------------------------------------------

@pytest.mark.parametrize("prefix", [15, 23])
def test_a_network_outside_slash_16_to_22_is_refused(prefix: int) -> None:
    assert spec_issues(platform_dict(aws({"network": {"cidr": f"10.0.0.0/{prefix}"}}))) == [(
        f"{AWS_REGION}.network.cidr",
        f"network cidr 10.0.0.0/{prefix} has prefix /{prefix}; allowed: /16 to /22 (room for 3 zones of subnets)")]



def test_transit_encryption_defaults_to_enforce_which_azure_refuses_unless_monitor_is_written() -> None:
    assert load_platform(platform_dict(aws({"network": {"cidr": "10.10.0.0/16"}}))).clouds.aws.regions[
        "us-east-1"].network.transit_encryption.value == "enforce"
    azure = {"azure": {"regions": {"eastus2": {"network": {"cidr": "10.50.0.0/16"}}}}}
    assert spec_issues(platform_dict(azure)) == [(
        "platform.clouds.azure.regions.eastus2.network.transit_encryption",
        "'enforce' is not available on Azure: VNet encryption accepts only enforcement AllowUnencrypted today "
        "(DropUnencrypted is documented as future support), and GPU sizes (ND, NC, NV) are not on the VNet encryption "
        "hardware list; allowed on Azure: monitor (encryption on, unencrypted flows allowed)")]

# --- maintenance (maintenance.MaintenanceWindow, maintenance.check) ------------------------------------------------

@pytest.mark.parametrize("hours", [2, 3])
def test_a_window_under_four_hours_is_no_weekly_window(hours: int) -> None:
    assert problems("azure", window(duration_hours=hours)) == [(
        f"{AT['azure']}.window.duration_hours",
        f"duration_hours {hours} can't be a weekly maintenance window; allowed: 4 to 24 on Azure (AKS), 12 to 167 on GCP (GKE)")]


@pytest.mark.parametrize("scope", ["no_minor_upgrades", "no_minor_or_node_upgrades"])
def test_aks_refuses_every_narrow_exclusion_scope(scope: str) -> None:
    assert problems("azure", {"exclusions": [exclusion(scope=scope)]}) == [(
        f"{AT['azure']}.exclusions[0].scope",
        f"scope '{scope}' is GKE-only: AKS planned maintenance holds back a whole schedule on its notAllowedDates and cannot "
        "let patch upgrades through while holding minor ones; allowed on Azure: no_upgrades")]


def test_gke_takes_twenty_exclusions_of_one_day() -> None:
    # At the limit (20 per cluster), and a one-day exclusion ends on the day it starts (end is inclusive).
    exclusions = [exclusion(f"x{i}", "2026-12-01", "2026-12-01") for i in range(GKE_MAX_EXCLUSIONS)]
    spec = load_platform(platform("gcp", {"exclusions": exclusions}))
    assert len(spec.clouds.gcp.regions["us-central1"].cluster.maintenance.exclusions) == 20


# --- bounds (storage, compute, endpoint) ---------------------------------------------------------------------------

GCP_REGION = "platform.clouds.gcp.regions.us-central1"
ACM = "arn:aws:acm:us-east-1:123456789012:certificate/abc"


def sharing(replicas: int) -> dict[str, Any]:
    return aws_pool({**H100, "sharing": {"mode": "time_slicing", "replicas_per_gpu": replicas}})


def gcp(region: dict[str, Any]) -> dict[str, Any]:
    """`clouds` with one GCP region, us-central1, on 10.20.0.0/16."""
    return gcp_clouds({"network": {"cidr": "10.20.0.0/16"}, **region})


def inference(**fields: Any) -> dict[str, Any]:
    return aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}, "inference": {"certificate": ACM, **fields}})


@pytest.mark.parametrize(("clouds", "where", "message"), [
    pytest.param(gcp({"buckets": {"data": {"soft_delete_days": 6}}}), f"{GCP_REGION}.buckets.data.soft_delete_days",
                 "expected an integer from 7 to 90, got 6", id="soft-delete-6"),
    pytest.param(gcp({"buckets": {"data": {"soft_delete_days": 91}}}), f"{GCP_REGION}.buckets.data.soft_delete_days",
                 "expected an integer from 7 to 90, got 91", id="soft-delete-91"),
    pytest.param(aws({"network": {"cidr": "10.10.0.0/16"}, "lustre": {"scratch": {"size_gib": 0}}}),
                 f"{AWS_REGION}.lustre.scratch.size_gib", "expected an integer of 1 or more, got 0", id="lustre-size-0"),
    pytest.param(sharing(1), f"{AWS_REGION}.gpu_pools.train.sharing.replicas_per_gpu", "expected an integer from 2 to 48, got 1",
                 id="replicas-1"),
    pytest.param(sharing(49), f"{AWS_REGION}.gpu_pools.train.sharing.replicas_per_gpu", "expected an integer from 2 to 48, got 49",
                 id="replicas-49"),
    pytest.param(gcp({"tpu_slices": {"pod": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm", "slices": 65}}}),
                 f"{GCP_REGION}.tpu_slices.pod.slices", "expected an integer from 1 to 64, got 65", id="tpu-slices-65"),
    pytest.param(inference(port=0), f"{AWS_REGION}.inference.port", "expected an integer from 1 to 65535, got 0", id="port-0"),
])
def test_a_value_past_a_bound_names_the_bounds(clouds: dict[str, Any], where: str, message: str) -> None:
    assert spec_issues(platform_dict(clouds)) == [(where, message)]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("service_name", "1serve", "Service name '1serve' is invalid; Service names are lower-case letters, digits and '-', "
                               "starting with a letter and ending with a letter or digit"),
    ("service_namespace", "n" * 64, f"String should have at most 63 characters (got '{'n' * 64}')"),
], ids=["service-name-starts-with-a-digit", "namespace-of-64"])
def test_the_inference_services_kubernetes_names_follow_kubernetes(field: str, value: str, message: str) -> None:
    # A Service's name is a DNS-1035 label (it starts with a letter); a namespace's name is at most 63 characters.
    assert spec_issues(platform_dict(inference(**{field: value}))) == [(f"{AWS_REGION}.inference.{field}", message)]


def test_an_inference_region_may_take_no_traffic() -> None:
    # traffic_percent 0 drains a region (AWS traffic dial, Azure origin weight) without removing it.
    spec = load_platform(platform_dict(inference(traffic_percent=0)))
    assert spec.clouds.aws.regions["us-east-1"].inference.traffic_percent == 0



def test_a_gpu_pool_may_run_in_a_gcp_ai_zone() -> None:
    # AI zones hold accelerator capacity; they are named `ai<n>` and their parent zone's letter.
    pool = {**H100, "zones": ["us-central1-ai1a"]}
    spec = load_platform(platform_dict(gcp({"cluster": {}, "gpu_pools": {"train": pool}})))
    assert spec.clouds.gcp.regions["us-central1"].gpu_pools["train"].zones == ["us-central1-ai1a"]

# --- names and labels (common.LABEL_VALUE_PATTERN, common.ENVIRONMENT_PATTERN) ----------------------------------------

@pytest.mark.parametrize("length", [63, 64])
def test_a_label_value_takes_up_to_63_characters(length: int) -> None:
    value = "o" * length
    data = platform_dict(aws({"network": {"cidr": "10.10.0.0/16"}}), labels={**BASE_PLATFORM["labels"], "owner": value})
    if length <= 63:
        assert load_platform(data).labels.owner == value
    else:
        assert spec_issues(data) == [("platform.labels.owner", f"label value '{value}' is invalid; label values are 1 to 63 "
                                                               "lower-case letters, digits, '_' and '-', starting with a letter or digit")]


@pytest.mark.parametrize("length", [16, 17])
def test_an_environment_name_takes_up_to_16_characters(length: int) -> None:
    name = "e" * length
    data = platform_dict(aws({"network": {"cidr": "10.10.0.0/16"}}), environment=name)
    if length <= 16:
        assert load_platform(data).environment == name
    else:
        assert spec_issues(data) == [("platform.environment", f"environment name '{name}' is invalid; environment names are 2 "
                                                              "to 16 lower-case letters, digits and '-', starting with a letter")]


# --- what the cloud reports (offerings) ----------------------------------------------------------------------------

@pytest.mark.parametrize("reported", ["Standard_ND96isr_H200_v5", "standard_nd96isr_h200_v5", "STANDARD_ND96ISR_H200_V5"])
def test_an_azure_reservation_serves_the_pool_whatever_the_case_azure_reports_its_size_in(reported: str) -> None:
    # Azure VM size names are case-insensitive, and the API does not keep to the case the docs write them in.
    assert reservation_group_problem("platform.clouds.azure.regions.eastus2.gpu_pools.train", "crg", "eastus2",
                                     "Standard_ND96isr_H200_v5", ["1"], "eastus2", [(reported, ["1"])], "set zones") is None


# --- alert receivers (alerts.AlertsSpec) ---------------------------------------------------------------------------

SNS = "arn:aws:sns:us-east-1:123456789012:gpu-alerts"


@pytest.mark.parametrize(("mode", "field", "value", "message"), [
    ("self_managed", "sns_topic_arn", SNS,
     f"'{SNS}' has no effect with addons.monitoring: self_managed: it configures Amazon Managed Prometheus (EKS), which "
     "only addons.monitoring: managed uses; with self_managed use addons.alerts.alertmanager_secret, or remove "
     "addons.alerts.sns_topic_arn"),
    ("managed", "alertmanager_secret", "alertmanager-config",
     "'alertmanager-config' has no effect with addons.monitoring: managed: it configures kube-prometheus-stack's "
     "Alertmanager, which only addons.monitoring: self_managed uses; with managed use addons.alerts.sns_topic_arn (EKS), "
     "addons.alerts.action_group_id (AKS), or on GKE the Secret `alertmanager` in namespace `gmp-public`, or remove "
     "addons.alerts.alertmanager_secret"),
])
def test_a_receiver_of_the_other_monitoring_mode_names_the_mode_that_uses_it(mode: str, field: str, value: str,
                                                                              message: str) -> None:
    data = platform_dict(aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}}),
                         addons={"monitoring": mode, "alerts": {field: value}})
    assert spec_issues(data) == [(f"platform.addons.alerts.{field}", message)]
