"""`addons.monitoring: managed` on GCP: GKE collects with Google Cloud Managed Service for Prometheus; in
`self_managed` managed collection is off (kube-prometheus-stack scrapes instead)."""

from __future__ import annotations

from typing import Any

import pytest
from gcp.support import PROJECT

REGION: dict[str, Any] = {"project": PROJECT, "regions": {"us-central1": {"network": {"cidr": "10.20.0.0/16"}, "cluster": {}}}}


@pytest.mark.parametrize(("mode", "enabled"), [("managed", True), ("self_managed", False)])
def test_gke_managed_collection_follows_the_monitoring_mode(plan_gcp, mode: str, enabled: bool) -> None:  # noqa: ANN001
    plan = plan_gcp(REGION, addons={"enabled": False, "monitoring": mode})
    monitoring = plan.one("gcp:container/cluster:Cluster").inputs["monitoringConfig"]
    assert monitoring["managedPrometheus"] == {"enabled": enabled}
    assert "SYSTEM_COMPONENTS" in monitoring["enableComponents"]  # GKE system metrics stay on either way
    assert "APISERVER" in monitoring["enableComponents"]  # control-plane metrics need system metrics only
    # GKE's kube state metrics packages need managed collection, which GKE checks
    assert ({"STORAGE", "POD", "DEPLOYMENT"} <= set(monitoring["enableComponents"])) is enabled
