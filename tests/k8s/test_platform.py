"""The Kubernetes layer behind the real cloud compositions (`build_platform`), as `aiinfra plan` runs it."""

from __future__ import annotations

import importlib.util

import pytest
from k8s.layer import POOLS, TEAMS, cloud_config
from helpers import platform_dict, run_platform

from aiinfra.plan.runtime import PlanResult
from components.spec import load_platform

pytestmark = pytest.mark.slow


def plan_platform(clouds: tuple[str, ...]) -> PlanResult:
    return run_platform(load_platform(platform_dict({c: cloud_config(c) for c in clouds}, teams=TEAMS)))


def composed(cloud: str) -> bool:
    return importlib.util.find_spec(f"components.compose.{cloud}") is not None


@pytest.mark.skipif(not composed("azure"), reason="the Azure composition is not in this tree yet")
def test_layer_on_an_aks_cluster_built_by_the_azure_composition():
    plan = plan_platform(("azure",))
    provider = plan.one("pulumi:providers:kubernetes", "test-eastus2-k8s")
    assert any("azure-native:containerservice" in d for d in provider.dependencies)  # after the AKS cluster
    assert provider.inputs["kubeconfig"]["4dabf18193072939515e22adb298388d"]  # the cluster's secret kubeconfig
    layer = plan.outputs["kubernetes"]["test-eastus2"]
    assert layer["gpu_operator"] is True and layer["teams"] == ["research", "serving"]
    operator = plan.one("kubernetes:helm.sh/v3:Release", "test-eastus2-gpu-operator")
    pools = [d for d in operator.dependencies if "AgentPool" in d]
    assert len(pools) == 2  # waits for both GPU pools


@pytest.mark.skipif(not composed("aws"), reason="the AWS composition is not in this tree yet")
def test_layer_on_an_eks_cluster_built_by_the_aws_composition():
    plan = plan_platform(("aws",))
    provider = plan.one("pulumi:providers:kubernetes", "test-us-east-1-k8s")
    assert any("aws:eks/cluster:Cluster" in d for d in provider.dependencies)
    layer = plan.outputs["kubernetes"]["test-us-east-1"]
    assert layer["gpu_operator"] is True and layer["neuron_device_plugin"] is True
    operator = plan.one("kubernetes:helm.sh/v3:Release", "test-us-east-1-gpu-operator")
    assert len([d for d in operator.dependencies if "aws:eks/nodeGroup:NodeGroup" in d]) == len(POOLS["aws"]["gpu_pools"])


@pytest.mark.skipif(not all(composed(c) for c in ("aws", "gcp", "azure")),
                    reason="needs the AWS, GCP and Azure compositions (components/compose/{aws,gcp,azure}.py)")
def test_layer_on_all_three_clouds():
    plan = plan_platform(("aws", "gcp", "azure"))
    layer = plan.outputs["kubernetes"]
    assert set(layer) == {"test-us-east-1", "test-us-central1", "test-eastus2"}
    assert layer["test-us-east-1"]["neuron_device_plugin"] is True
    assert layer["test-us-central1"]["dcgm_exporter"] is True
    for cluster in layer:
        assert plan.one("ai-infra:kubernetes:Team", f"{cluster}-research")
        assert plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", f"{cluster}-serving-cluster-queue")
