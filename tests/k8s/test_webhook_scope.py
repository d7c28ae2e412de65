"""Which namespaces Kueue's admission webhooks cover. They fail closed (`failurePolicy: Fail`), so everything they
cover cannot be created while Kueue's pod is not ready: they must cover the team namespaces, whose jobs Kueue
queues, and none of the namespaces the layer's own charts install into."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from aiinfra.plan.runtime import PlanResult
from components.k8s.queues import KUEUE_EXCLUDED_RESOURCE_PREFIXES
from components.k8s.tenancy import TEAM_LABEL, kueue_manager_config

RELEASE = "kubernetes:helm.sh/v3:Release"
CHART_DEFAULT = Path(__file__).parent / "data" / "kueue_manager_config_v0.19.2.yaml"


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels and the four matchExpressions operators) against a label set."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for e in selector.get("matchExpressions", []):
        key, op, values = e["key"], e["operator"], e.get("values", [])
        ok = {"Exists": key in labels, "DoesNotExist": key not in labels,
              "In": key in labels and labels[key] in values, "NotIn": key not in labels or labels[key] not in values}[op]
        if not ok:
            return False
    return True


def kueue_config(plan: PlanResult, cluster: str) -> dict[str, Any]:
    text = plan.one(RELEASE, f"{cluster}-kueue").inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    return yaml.safe_load(text)  # the chart reads it with fromYaml


def test_the_config_is_the_charts_default_plus_the_namespace_selector_and_resources(three_cloud_plan: PlanResult) -> None:
    """The value replaces the chart's whole default Configuration: everything else in it must stay as shipped."""
    default = yaml.safe_load(CHART_DEFAULT.read_text())
    kueue = [r for r in three_cloud_plan.of_type(RELEASE) if r.inputs["chart"].endswith("/kueue")]
    assert len(kueue) == 3  # one per cluster
    for release in kueue:
        cluster = release.name.removesuffix("-kueue")
        config = kueue_config(three_cloud_plan, cluster)
        selector = config.pop("managedJobsNamespaceSelector")
        resources = config.pop("resources")
        assert resources.pop("excludeResourcePrefixes") == list(KUEUE_EXCLUDED_RESOURCE_PREFIXES)
        # Only the cluster with Neuron pools (trn2) charges Neuron devices as cores.
        assert bool(resources.pop("transformations", None)) == (cluster == "test-us-east-1") and resources == {}
        assert config == default
        assert selector == {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}
    assert json.loads(json.dumps(kueue_manager_config())) == kueue_manager_config()  # plain data, as the chart reads it


def test_team_namespaces_in_and_platform_namespaces_out(three_cloud_plan: PlanResult) -> None:
    for cluster in ("test-us-east-1", "test-us-central1", "test-eastus2"):
        selector = kueue_config(three_cloud_plan, cluster)["managedJobsNamespaceSelector"]
        namespaces = {r.inputs["metadata"]["name"]: r.inputs["metadata"].get("labels", {})
                      for r in three_cloud_plan.of_type("kubernetes:core/v1:Namespace") if r.name.startswith(f"{cluster}-")}
        teams = {name for name, labels in namespaces.items() if TEAM_LABEL in labels}
        assert teams == {"research", "serving"}
        assert all(selects(selector, namespaces[t]) for t in teams)
        # The charts' namespaces: created by Helm without labels, or by the layer without the team label.
        charts = {r.inputs["namespace"] for r in three_cloud_plan.of_type(RELEASE) if r.name.startswith(f"{cluster}-")}
        assert {"kueue-system", "monitoring"} <= charts
        assert not [ns for ns in charts if selects(selector, namespaces.get(ns, {}))]
        assert not [ns for ns, labels in namespaces.items() if ns not in teams and selects(selector, labels)]


def test_the_selector_check_can_fail() -> None:
    selector = kueue_manager_config()["managedJobsNamespaceSelector"]
    assert selects(selector, {TEAM_LABEL: "research"}) and not selects(selector, {"team": "research"})
    assert not selects({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {"a": "x"})
    assert not selects({"matchLabels": {"a": "x"}}, {"a": "y"})
