"""`addons.alerts.sns_topic_arn` on AWS: every EKS cluster's Amazon Managed Prometheus workspace gets an alert manager
definition routing the GPU alerts to the SNS topic, in the format AMP takes; without a topic, no definition (and no
URN changes). The spec refuses malformed ARNs and a topic with no EKS cluster to serve."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from helpers import platform_dict, spec_issues

from aiinfra.plan.runtime import PlanResult
from components.aws.prometheus import alertmanager_definition
from components.spec import load_platform

DEFINITION = "aws:amp/alertManagerDefinition:AlertManagerDefinition"
TOPIC = "arn:aws:sns:us-east-1:123456789012:gpu-alerts"
REGIONS: dict[str, Any] = {"regions": {
    "us-east-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}},
    "eu-west-1": {"network": {"cidr": "10.8.0.0/16"}, "cluster": {}},
}}


@pytest.fixture(scope="module")
def alerted(plan_aws) -> PlanResult:  # noqa: ANN001
    return plan_aws(REGIONS, environment="prod", addons={"enabled": False, "monitoring": "managed",
                                                         "alerts": {"sns_topic_arn": TOPIC}})


@pytest.fixture(scope="module")
def silent(plan_aws) -> PlanResult:  # noqa: ANN001
    return plan_aws(REGIONS, environment="prod", addons={"enabled": False, "monitoring": "managed"})


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1"])
def test_each_workspace_routes_every_alert_to_the_topic(alerted: PlanResult, region: str) -> None:
    name = f"prod-{region}"
    definition = alerted.one(DEFINITION, f"{name}-amp-alerts")
    assert definition.inputs["region"] == region
    assert any(d.endswith(f"::{name}-amp-workspace") for d in definition.dependencies)  # its workspace's ID
    # AMP's format: the Alertmanager configuration as a string under `alertmanager_config`.
    document = yaml.safe_load(definition.inputs["definition"])
    assert set(document) == {"alertmanager_config"} and isinstance(document["alertmanager_config"], str)
    config = yaml.safe_load(document["alertmanager_config"])
    assert config["route"]["receiver"] == "sns" and "routes" not in config["route"]  # every alert, no sub-route
    [receiver] = config["receivers"]
    assert receiver["name"] == "sns" and set(receiver) == {"name", "sns_configs"}  # SNS is AMP's only receiver
    [sns] = receiver["sns_configs"]
    # sigv4.region is required by AMP and is the topic's region, so the eu-west-1 workspace signs for us-east-1.
    assert sns["topic_arn"] == TOPIC and sns["sigv4"] == {"region": "us-east-1"}
    # AMP refuses api_url and http_config; SNS subjects take at most 100 ASCII characters.
    assert not {"api_url", "http_config"} & set(sns)
    assert sns["subject"].isascii() and len(sns["subject"]) < 100


def test_the_definition_is_a_child_of_the_managed_prometheus(alerted: PlanResult) -> None:
    definition = alerted.one(DEFINITION, "prod-us-east-1-amp-alerts")
    assert definition.parent.endswith("ai-infra:aws:ManagedPrometheus::prod-us-east-1")


def test_without_a_topic_nothing_changes(alerted: PlanResult, silent: PlanResult) -> None:
    assert silent.of_type(DEFINITION) == []
    added = {r.urn for r in alerted.resources} - {r.urn for r in silent.resources}
    assert {urn.rsplit("::", 1)[1] for urn in added} == {"prod-us-east-1-amp-alerts", "prod-eu-west-1-amp-alerts"}
    assert {r.urn for r in silent.resources} <= {r.urn for r in alerted.resources}


def issues(aws: dict[str, Any], alerts: dict[str, Any], **top: Any) -> list[tuple[str, str]]:
    return spec_issues(platform_dict({"aws": copy.deepcopy(aws)}, addons={"monitoring": "managed", "alerts": alerts}, **top))


@pytest.mark.parametrize("arn", [
    "arn:aws:sns:us-east-1:1234:gpu-alerts",  # account too short
    "arn:aws:sqs:us-east-1:123456789012:gpu-alerts",  # not SNS
    "arn:aws:sns:us-east-1:123456789012:gpu-alerts.fifo",  # FIFO: AMP takes standard topics
    "arn:aws:sns:us-east-1:123456789012:gpu-alerts:6f1b2c3d-0000-4000-8000-000000000000",  # a subscription
    "gpu-alerts",
])
def test_a_malformed_topic_arn_is_refused(arn: str) -> None:
    assert issues(REGIONS, {"sns_topic_arn": arn}) == [(
        "platform.addons.alerts.sns_topic_arn",
        f"'{arn}' is not a standard SNS topic's ARN, arn:aws:sns:<region>:<12-digit account>:<name> (name: 1 to 256 "
        "letters, digits, '-' and '_'; FIFO topics are not accepted by Amazon Managed Prometheus)")]


def test_other_partitions_are_accepted() -> None:
    gov = "arn:aws-us-gov:sns:us-gov-west-1:123456789012:gpu-alerts"
    data = platform_dict({"aws": copy.deepcopy(REGIONS)}, addons={"monitoring": "managed", "alerts": {"sns_topic_arn": gov}})
    topic = load_platform(data).addons.alerts.sns_topic_arn
    config = yaml.safe_load(yaml.safe_load(alertmanager_definition(topic))["alertmanager_config"])
    assert config["receivers"][0]["sns_configs"][0]["sigv4"] == {"region": "us-gov-west-1"}


def test_a_topic_without_an_eks_cluster_is_refused() -> None:
    no_cluster = {"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}}}}
    assert issues(no_cluster, {"sns_topic_arn": TOPIC}) == [(
        "platform.addons.alerts.sns_topic_arn",
        f"'{TOPIC}' has no effect: it is the receiver of the EKS clusters' managed Prometheus, and no region of "
        "clouds.aws has a cluster; add one or remove addons.alerts.sns_topic_arn")]
