"""Where GPU alerts go in `self_managed` mode, and the spec's refusals of receivers that would have no effect:
kube-prometheus-stack's Alertmanager takes the user's Secret as its whole configuration (`addons.alerts.
alertmanager_secret`); without one, the chart's values are unchanged (its `null` receiver)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import platform_dict, spec_issues
from k8s.layer import StandInCluster, make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult, run_program
from components.k8s.monitoring import Monitoring, MonitoringArgs
from components.spec import Cloud, MonitoringMode

RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "gpu-alertmanager"
AWS_REGION = {"regions": {"us-east-1": {"network": {"cidr": "10.10.0.0/16"}, "cluster": {}}}}
TOPIC = "arn:aws:sns:us-east-1:123456789012:gpu-alerts"
ACTION_GROUP = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-ops/providers/"
                "Microsoft.Insights/actionGroups/gpu-oncall")


def alertmanager_spec(plan: PlanResult, cluster: str) -> dict[str, Any]:
    return plan.one(RELEASE, f"{cluster}-prometheus-stack").inputs["values"]["alertmanager"]["alertmanagerSpec"]


def plan_monitoring(cloud: Cloud, secret: str | None) -> PlanResult:
    """The Monitoring component alone on a stand-in cluster, with `alertmanager_secret` as the layer passes it."""
    def program() -> None:
        cluster = StandInCluster("test-cluster")
        Monitoring("test-cluster", MonitoringArgs(cloud=cloud, mode=MonitoringMode.SELF_MANAGED, teams=[], cluster=cluster,
                                                  alertmanager_secret=secret))
    return run_program(program, project="ai-infra", stack="test")


@pytest.mark.parametrize("cloud", list(Cloud))
def test_alertmanager_takes_its_configuration_from_the_users_secret(cloud: Cloud) -> None:
    spec = alertmanager_spec(plan_monitoring(cloud, SECRET), "test-cluster")
    # Both: useExistingSecret stops the chart's own config Secret; configSecret names the one the operator reads
    # (without it, `alertmanager-<name>`, which nobody would write).
    assert spec["useExistingSecret"] is True and spec["configSecret"] == SECRET
    assert spec["storage"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == "10Gi"


def test_without_a_secret_the_chart_values_are_unchanged() -> None:
    spec = alertmanager_spec(plan_monitoring(Cloud.AWS, None), "test-cluster")
    assert set(spec) == {"storage"}


def test_the_layer_passes_the_spec_secret_to_every_cluster() -> None:
    plan = plan_layer(make_spec(addons={"alerts": {"alertmanager_secret": SECRET}}))
    for cluster in ("test-us-east-1", "test-us-central1", "test-eastus2"):
        assert alertmanager_spec(plan, cluster)["configSecret"] == SECRET


# --- What the spec refuses ----------------------------------------------------------------------------------------

def error(addons: dict[str, Any], clouds: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    return spec_issues(platform_dict(copy.deepcopy(clouds or {"aws": AWS_REGION}), addons=addons))


def test_a_secret_name_must_be_a_kubernetes_name() -> None:
    assert error({"alerts": {"alertmanager_secret": "Alerts_Config"}}) == [(
        "platform.addons.alerts.alertmanager_secret",
        "'Alerts_Config' is not a Kubernetes Secret name: at most 253 lower-case letters, digits, '-' and '.', "
        "starting and ending with a letter or digit")]
    assert error({"alerts": {"alertmanager_secret": "a" * 254}})[0][0] == "platform.addons.alerts.alertmanager_secret"


def test_a_secret_is_refused_where_no_kube_prometheus_stack_reads_it() -> None:
    assert error({"monitoring": "managed", "alerts": {"alertmanager_secret": SECRET}}) == [(
        "platform.addons.alerts.alertmanager_secret",
        f"'{SECRET}' has no effect with addons.monitoring: managed: it configures kube-prometheus-stack's Alertmanager, "
        "which only addons.monitoring: self_managed uses; with managed use addons.alerts.sns_topic_arn (EKS), "
        "addons.alerts.action_group_id (AKS), or on GKE the Secret `alertmanager` in namespace `gmp-public`, or remove "
        "addons.alerts.alertmanager_secret")]
    assert error({"enabled": False, "alerts": {"alertmanager_secret": SECRET}}) == [(
        "platform.addons.alerts.alertmanager_secret",
        f"'{SECRET}' has no effect with addons.enabled: false: kube-prometheus-stack is not installed; remove "
        "addons.alerts.alertmanager_secret")]


@pytest.mark.parametrize(("field", "value", "receiver"), [
    ("sns_topic_arn", TOPIC, "Amazon Managed Prometheus (EKS)"),
    ("action_group_id", ACTION_GROUP, "Azure Monitor managed Prometheus (AKS)"),
])
def test_managed_receivers_are_refused_in_self_managed_mode(field: str, value: str, receiver: str) -> None:
    assert error({"alerts": {field: value}}) == [(
        f"platform.addons.alerts.{field}",
        f"'{value}' has no effect with addons.monitoring: self_managed: it configures {receiver}, which only "
        f"addons.monitoring: managed uses; with self_managed use addons.alerts.alertmanager_secret, or remove "
        f"addons.alerts.{field}")]


def test_every_mode_accepts_its_own_receivers() -> None:
    assert make_spec(addons={"alerts": {"alertmanager_secret": SECRET}}).addons.alerts.alertmanager_secret == SECRET
    managed = make_spec(addons={"monitoring": "managed", "alerts": {"sns_topic_arn": TOPIC, "action_group_id": ACTION_GROUP}})
    assert managed.addons.alerts.sns_topic_arn == TOPIC and managed.addons.alerts.action_group_id == ACTION_GROUP
    assert make_spec().addons.alerts.model_dump() == {"alertmanager_secret": None, "sns_topic_arn": None,
                                                      "action_group_id": None}


def test_no_receiver_by_default_leaves_the_three_cloud_release_values_alone(three_cloud_plan: PlanResult) -> None:
    for cluster in ("test-us-east-1", "test-us-central1", "test-eastus2"):
        assert set(alertmanager_spec(three_cloud_plan, cluster)) == {"storage"}
