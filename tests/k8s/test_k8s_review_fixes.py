"""Review fixes of the Kubernetes layer, asserted on what the clusters would receive: Kueue admits resources its
queues don't cover (EFA, ephemeral storage), the EFA device plugin runs on EKS pools with EFA, GMP
rule groups carry the interval the v0.15 CRD requires, and kube-prometheus-stack scrapes GKE's kube-dns. Neuron quota:
tests/k8s/test_neuron_quota.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from k8s.layer import POOLS, make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult
from components.k8s import charts

RELEASE = "kubernetes:helm.sh/v3:Release"
CLUSTER_QUEUE_KIND = "ClusterQueue"
AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"
EFA = "vpc.amazonaws.com/efa"


def kueue_config(plan: PlanResult, cluster: str) -> dict[str, Any]:
    text = plan.one(RELEASE, f"{cluster}-kueue").inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    return yaml.safe_load(text)  # the chart reads it with fromYaml


def excluded(resource: str, prefixes: list[str]) -> bool:
    """Kueue's test (pkg/workload/workload.go dropExcludedResources): strings.HasPrefix on the resource name."""
    return any(resource.startswith(p) for p in prefixes)


def covered_resources(plan: PlanResult, cluster: str) -> set[str]:
    queues = [r for r in plan.resources
              if r.name.startswith(f"{cluster}-") and r.inputs.get("kind") == CLUSTER_QUEUE_KIND]
    assert queues
    return {res for q in queues for g in q.inputs["spec"]["resourceGroups"] for res in g["coveredResources"]}


# --- Kueue: resources no ClusterQueue covers -------------------------------------------------------------------


def test_kueue_admits_efa_and_ephemeral_storage_without_quota(three_cloud_plan: PlanResult) -> None:
    for cluster in (AWS, GCP, AZURE):
        resources = kueue_config(three_cloud_plan, cluster)["resources"]
        assert "quotaCheckStrategy" not in resources  # strategy stays BlockUndeclared (the default)
        prefixes = resources["excludeResourcePrefixes"]
        for resource in (EFA, "ephemeral-storage"):
            assert excluded(resource, prefixes), resource
        # Neither Neuron resource goes unchecked: a pod asking for cores instead of devices is still charged.
        assert not excluded("aws.amazon.com/neuroncore", prefixes) and not excluded("aws.amazon.com/neuron", prefixes)


def test_no_resource_a_queue_counts_is_excluded(three_cloud_plan: PlanResult) -> None:
    """What the queues do count stays counted: cpu, memory, GPUs, MIG slices, NeuronCores, TPU chips."""
    aws_covered = covered_resources(three_cloud_plan, AWS)
    # Neuron quota is kept in cores; devices become cores before Kueue checks them (test_neuron_quota.py).
    assert "aws.amazon.com/neuroncore" in aws_covered and "aws.amazon.com/neuron" not in aws_covered
    for cluster in (AWS, GCP, AZURE):
        prefixes = kueue_config(three_cloud_plan, cluster)["resources"]["excludeResourcePrefixes"]
        covered = covered_resources(three_cloud_plan, cluster)
        assert {"cpu", "memory"} <= covered
        assert not [r for r in covered if excluded(r, prefixes)]
        assert not excluded("aws.amazon.com/neuron", prefixes) and not excluded("nvidia.com/gpu", prefixes)


# --- EFA device plugin -------------------------------------------------------------------------------------------


def efa_pools() -> dict[str, dict[str, Any]]:
    """The AWS pools of the layer's tests, with EFA on the H100 training pool and the Trainium2 pool."""
    pools = copy.deepcopy(POOLS)
    aws = pools["aws"]["gpu_pools"]
    aws["h100-train"]["efa"] = True
    aws["trn2"]["efa"] = True
    aws["trn2"]["taints"] = [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]
    return pools


@pytest.fixture(scope="module")
def efa_plan() -> PlanResult:
    return plan_layer(make_spec(pools=efa_pools()))


def test_efa_device_plugin_on_eks_pools_with_efa(efa_plan: PlanResult) -> None:
    release = efa_plan.one(RELEASE, f"{AWS}-efa")
    inputs = release.inputs
    assert inputs["chart"] == "aws-efa-k8s-device-plugin" and inputs["version"] == "v0.5.30"
    assert inputs["repositoryOpts"]["repo"] == "https://aws.github.io/eks-charts"
    assert inputs["namespace"] == "kube-system" and inputs["name"] == "aws-efa-k8s-device-plugin"
    values = inputs["values"]
    # The chart turns this into `ai-infra/pool In [...]`: the EFA pools' nodes only, not every EFA-capable type.
    assert values["supportedInstanceLabels"] == {"keys": ["ai-infra/pool"], "values": ["h100-train", "trn2"]}
    tolerated = {(t["key"], t["operator"], t["effect"]) for t in values["tolerations"]}
    assert tolerated == {("nvidia.com/gpu", "Exists", "NoSchedule"), ("aws.amazon.com/neuron", "Exists", "NoSchedule"),
                         ("dedicated", "Exists", "NoSchedule")}
    assert "nodeSelector" not in values
    # After the node pools, under the Accelerators component, as the other device plugins.
    deps = release.dependencies
    assert any(d.endswith(f"::{AWS}-h100-train") for d in deps) and any(d.endswith(f"::{AWS}-trn2") for d in deps)
    parent = next(r for r in efa_plan.resources if r.urn == release.parent)
    assert parent.type == "ai-infra:kubernetes:Accelerators" and parent.name == AWS
    assert efa_plan.outputs["kubernetes"][AWS]["neuron_device_plugin"] is True


def test_no_efa_device_plugin_without_efa_pools(three_cloud_plan: PlanResult) -> None:
    assert not [r for r in three_cloud_plan.of_type(RELEASE) if r.inputs["chart"] == charts.EFA_DEVICE_PLUGIN.chart]


def test_efa_chart_pin_names_its_source() -> None:
    assert charts.EFA_DEVICE_PLUGIN.version in charts.EFA_DEVICE_PLUGIN.source


# --- GMP rules -----------------------------------------------------------------------------------------------------


def test_gmp_rule_groups_have_an_interval() -> None:
    plan = plan_layer(make_spec(clouds=("gcp",), addons={"monitoring": "managed"}))
    rules = plan.one("kubernetes:monitoring.googleapis.com/v1:ClusterRules", f"{GCP}-gmp-rules").inputs
    groups = rules["spec"]["groups"]
    assert groups and all(g["interval"] == "1m" for g in groups)  # required by GMP's CRD up to v0.15.x


# --- kube-prometheus-stack cluster DNS -------------------------------------------------------------------------


@pytest.mark.parametrize(("cluster", "core_dns"), [(AWS, True), (GCP, False), (AZURE, True)])
def test_cluster_dns_scrape_matches_the_clouds_dns(three_cloud_plan: PlanResult, cluster: str, core_dns: bool) -> None:
    values = three_cloud_plan.one(RELEASE, f"{cluster}-prometheus-stack").inputs["values"]
    assert values["coreDns"] == {"enabled": core_dns}  # CoreDNS on EKS and AKS (9153)
    assert values["kubeDns"] == {"enabled": not core_dns}  # kube-dns on GKE (10054/10055)
