"""Review 6 of the Kubernetes layer: the AKS inference Service keeps load-balancer traffic on the receiving node
(Cilium never matches node addresses against an ipBlock), EKS admits only the load balancer's subnets, protected
environments keep everything that governs a removed team's running pods (and the ResourceFlavors its ClusterQueue
names), quotas are canonical Kubernetes quantities, teams cannot borrow the cluster-wide PriorityClasses, and Kueue
runs two replicas behind a PodDisruptionBudget."""

from __future__ import annotations

import json
import re
from ipaddress import ip_network
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from k8s.layer import make_spec, plan_clouds, plan_layer
from k8s.validation import validate

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanResult, ResourceRecord
from components.k8s.queues import bytes_quantity, gib_quantity, quantity
from components.k8s.tenancy import kueue_values

ROOT = Path(__file__).resolve().parents[2]
SERVICE = "kubernetes:core/v1:Service"
POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
QUOTA = "kubernetes:core/v1:ResourceQuota"
QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
RELEASE = "kubernetes:helm.sh/v3:Release"
SUBNET = "aws:ec2/subnet:Subnet"
LB = "aws:lb/loadBalancer:LoadBalancer"
CRITICAL = ["system-node-critical", "system-cluster-critical"]
CERT = "arn:aws:acm:us-east-1:123456789012:certificate/1c2d3e4f-5061-7283-94a5-b6c7d8e9f0a1"


@pytest.fixture(scope="module")
def prod() -> PlanResult:
    return plan_stack(load_project(ROOT), "prod")


def body(record: ResourceRecord, api_version: str, kind: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": record.inputs["metadata"], "spec": record.inputs["spec"]}


# --- 1. AKS: externalTrafficPolicy Local --------------------------------------------------------------------------


def test_the_aks_load_balancer_service_delivers_to_node_local_pods_only(prod: PlanResult) -> None:
    for cluster in ("prod-eastus2", "prod-westeurope"):
        service = prod.one(SERVICE, f"{cluster}-inference-service")
        spec, annotations = service.inputs["spec"], service.inputs["metadata"]["annotations"]
        assert spec["type"] == "LoadBalancer" and spec["externalTrafficPolicy"] == "Local"
        # The probe stays the cloud provider's default for Local (HTTP /healthz on healthCheckNodePort, answered by
        # the node itself): no probe annotation moves it onto the pods, and the port is left for Kubernetes to pick.
        assert not any("health-probe" in key for key in annotations) and "healthCheckNodePort" not in spec
        assert annotations["service.beta.kubernetes.io/azure-pls-create"] == "true"
        validate(body(service, "v1", "Service"))
        # The source the pods see is kept: the Private Link service's NAT addresses, in the VNet.
        policy = prod.one(POLICY, f"{cluster}-inference-from-load-balancer").inputs["spec"]
        cidrs = [peer["ipBlock"]["cidr"] for peer in policy["ingress"][0]["from"]]
        assert cidrs[1] == "168.63.129.16/32" and ip_network(cidrs[0]).prefixlen == 16


def test_clusterip_services_carry_no_traffic_policy(prod: PlanResult) -> None:
    # The API server refuses externalTrafficPolicy on a ClusterIP Service; AWS and GCP reach the pods directly.
    for cluster in ("prod-us-east-1", "prod-eu-west-1", "prod-us-central1", "prod-europe-west4"):
        spec = prod.one(SERVICE, f"{cluster}-inference-service").inputs["spec"]
        assert spec["type"] == "ClusterIP" and "externalTrafficPolicy" not in spec


# --- 5. EKS: the load balancer's subnets, not the VPC ----------------------------------------------------------------


def lb_subnet_cidrs(plan: PlanResult, cluster: str) -> list[str]:
    """The CIDR blocks of the subnets the inference load balancer is placed in (mock ids are `<name>-id`)."""
    by_id = {f"{s.name}-id": s.inputs["cidrBlock"] for s in plan.of_type(SUBNET)}
    return [by_id[i] for i in plan.one(LB, f"{cluster}-inference-lb").inputs["subnets"]]


def admitted(plan: PlanResult, cluster: str) -> list[str]:
    spec = plan.one(POLICY, f"{cluster}-inference-from-load-balancer").inputs["spec"]
    return [peer["ipBlock"]["cidr"] for peer in spec["ingress"][0]["from"]]


def test_an_internal_alb_is_admitted_from_its_private_subnets(prod: PlanResult) -> None:
    for cluster, vpc in (("prod-us-east-1", "10.60.0.0/16"), ("prod-eu-west-1", "10.61.0.0/16")):
        cidrs = admitted(prod, cluster)
        assert cidrs == lb_subnet_cidrs(prod, cluster) and vpc not in cidrs
        assert prod.one(LB, f"{cluster}-inference-lb").inputs["internal"] is True


def test_an_internet_facing_alb_is_admitted_from_its_public_subnets_only() -> None:
    clouds = {"aws": {
        "regions": {"us-east-1": {"network": {"cidr": "10.60.0.0/16"}, "cluster": {}, "inference": {"certificate": CERT}}},
        "global_endpoint": {"routing": "latency_dns", "domain": "infer.example.com", "hosted_zone_id": "Z0123456789ABCDEFGHIJ"}}}
    plan = plan_clouds(clouds, {"research": {"gpu_quota": 0}})
    cluster = "test-us-east-1"
    cidrs = admitted(plan, cluster)
    assert plan.one(LB, f"{cluster}-inference-lb").inputs["internal"] is False
    assert cidrs == lb_subnet_cidrs(plan, cluster) == ["10.60.128.0/21", "10.60.136.0/21", "10.60.144.0/21"]
    # No pod has an address there: the node subnets (where the VPC CNI puts pods) are not admitted.
    private = [s.inputs["cidrBlock"] for s in plan.of_type(SUBNET) if "-private-" in s.name]
    assert private and not any(ip_network(c).overlaps(ip_network(p)) for c in cidrs for p in private)


# --- 2. Retention in protected environments ----------------------------------------------------------------------


@pytest.mark.parametrize(("environment", "kept"), [("prod", True), ("dev", False)])
def test_a_removed_team_keeps_its_deny_quotas_and_limits_where_namespaces_are_kept(environment: str, kept: bool) -> None:
    plan = plan_layer(make_spec(("azure",), environment=environment))
    team = f"{environment}-eastus2-research"
    children = [r for r in plan.resources if r.parent.endswith(f"ai-infra:kubernetes:Team::{team}")]
    assert {r.name.removeprefix(f"{team}-") for r in children} == {
        "namespace", "network-policy", "quota", "priority-quota", "limits", "cluster-queue", "local-queue"}
    assert {r.name: r.retainOnDelete for r in children} == {r.name: kept for r in children}
    # A retained ClusterQueue names the flavors: Kueue holds a deleted one Terminating while it does.
    flavors = plan.of_type(FLAVOR)
    assert len(flavors) == 3 and all(f.retainOnDelete is kept for f in flavors)


# --- 3. Canonical quantities ----------------------------------------------------------------------------------------

# kubernetes/apimachinery pkg/api/resource/quantity_test.go TestQuantityString (integer cases), plus the reviewer's.
DECIMAL_PAIRS = [(0, "0"), (5, "5"), (256, "256"), (1000, "1k"), (1500, "1500"), (3000, "3k"), (10**9, "1G"),
                 (300 * 10**6, "300M"), (10**12, "1T"), (1234567 * 10**6, "1234567M"), (1025, "1025")]
BINARY_PAIRS = [(0, "0"), (5, "5"), (1023, "1023"), (1025, "1025"), (6 * 1024, "6Ki"), (300 * 2**20, "300Mi"),
                (2**30, "1Gi"), (1001 * 2**30, "1001Gi"), (2**40, "1Ti"), (1024 * 2**20, "1Gi")]
GIB_PAIRS = [(1, "1Gi"), (512, "512Gi"), (1024, "1Ti"), (1536, "1536Gi"), (2048, "2Ti"), (2**20, "1Pi")]


@pytest.mark.parametrize(("amount", "text"), DECIMAL_PAIRS)
def test_counts_print_as_kubernetes_prints_them(amount: int, text: str) -> None:
    assert quantity(amount) == text


@pytest.mark.parametrize(("amount", "text"), BINARY_PAIRS)
def test_bytes_print_as_kubernetes_prints_them(amount: int, text: str) -> None:
    assert bytes_quantity(amount) == text


@pytest.mark.parametrize(("gib", "text"), GIB_PAIRS)
def test_gib_print_as_kubernetes_prints_them(gib: int, text: str) -> None:
    assert gib_quantity(gib) == text


_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_QUANTITY = re.compile(r"(0|[1-9][0-9]*)(|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)")


def parse(text: str) -> tuple[int, str, int]:
    match = _QUANTITY.fullmatch(text)
    assert match, f"{text!r} is not a plain integer quantity"
    return int(match[1]), match[2], int(match[1]) * _SUFFIX[match[2]]


def canonical_decimal(amount: int) -> str:
    """The rule stated the other way round: the largest 1000**k (k <= 6) that divides the amount is the suffix."""
    for power, suffix in reversed(list(enumerate(["", "k", "M", "G", "T", "P", "E"]))):
        if amount and amount % 1000**power == 0:
            return f"{amount // 1000**power}{suffix}"
    return "0"


def canonical_binary(amount: int) -> str:
    """Below 1024 a plain number; else the largest 1024**k (k <= 6) that divides it."""
    if amount < 1024:
        return canonical_decimal(amount)
    for power, suffix in reversed(list(enumerate(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]))):
        if amount % 1024**power == 0:
            return f"{amount // 1024**power}{suffix}"
    raise AssertionError("unreachable: 1024**0 divides everything")


INT64 = st.integers(min_value=0, max_value=2**63 - 1)
# Amounts with many trailing zeros / factors of 1024, where the suffix matters.
DECIMALISH = st.builds(lambda m, e: m * 10**e, st.integers(0, 10**6), st.integers(0, 12))
BINARYISH = st.builds(lambda m, e: m * 1024**e, st.integers(0, 10**6), st.integers(0, 4))


@given(st.one_of(INT64, DECIMALISH))
def test_quantity_matches_the_canonical_rule_and_reads_back(amount: int) -> None:
    text = quantity(amount)
    assert text == canonical_decimal(amount)
    assert parse(text)[2] == amount


@given(st.one_of(INT64, BINARYISH.filter(lambda n: n < 2**63)))
def test_bytes_quantity_matches_the_canonical_rule_and_reads_back(amount: int) -> None:
    text = bytes_quantity(amount)
    assert text == canonical_binary(amount)
    assert parse(text)[2] == amount


@given(st.integers(min_value=1, max_value=2**33 - 1))
def test_gib_quantity_is_a_fixed_point_of_kubernetes_printing(gib: int) -> None:
    number, suffix, value = parse(gib_quantity(gib))
    assert value == gib * 2**30 and suffix in {"Gi", "Ti", "Pi", "Ei"}
    assert suffix == "Ei" or number % 1024  # else a larger suffix would have been printed


def test_quantities_out_of_range_name_the_value_and_the_range() -> None:
    with pytest.raises(ValueError, match=r"quantity -1 is out of range; allowed: 0 to 9223372036854775807"):
        quantity(-1)
    with pytest.raises(ValueError, match=r"quantity 9223372036854775808 bytes is out of range"):
        bytes_quantity(2**63)


def test_cluster_queues_send_what_kueues_webhook_would_write_back(prod: PlanResult) -> None:
    # The prod team `inference`: 256 CPUs and 2048 GiB, no borrowing (stacks/Pulumi.prod.yaml).
    queue = prod.one(QUEUE, "prod-eastus2-inference-cluster-queue").inputs["spec"]
    default = queue["resourceGroups"][0]["flavors"][0]["resources"]
    assert default == [{"name": "cpu", "nominalQuota": "256", "borrowingLimit": "0"},
                       {"name": "memory", "nominalQuota": "2Ti", "borrowingLimit": "0"}]
    for record in prod.of_type(QUEUE):
        for group in record.inputs["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for resource in flavor["resources"]:
                    for key in ("nominalQuota", "borrowingLimit"):
                        if key in resource:
                            text = resource[key]
                            assert isinstance(text, str), (record.name, resource)
                            _, suffix, value = parse(text)
                            assert text == (canonical_binary(value) if suffix.endswith("i") else canonical_decimal(value))
        validate(body(record, "kueue.x-k8s.io/v1beta2", "ClusterQueue"))


# --- 4. PriorityClasses a team may not use --------------------------------------------------------------------------


def priority_quota(plan: PlanResult, name: str) -> dict[str, Any]:
    record = plan.one(QUOTA, f"{name}-priority-quota")
    validate(body(record, "v1", "ResourceQuota"))
    return record.inputs


def test_team_pods_may_not_take_the_cluster_wide_classes(prod: PlanResult) -> None:
    for cluster in ("prod-us-east-1", "prod-us-east-2", "prod-us-central1", "prod-eastus2"):
        quota = priority_quota(prod, f"{cluster}-research")
        assert quota["metadata"] == {"name": "restricted-priority-classes", "namespace": "research"}
        assert quota["spec"] == {"hard": {"pods": "0"}, "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["ai-inference", *CRITICAL]}]}}


def test_the_serving_namespace_alone_may_use_ai_inference(prod: PlanResult) -> None:
    # `inference` is both a team and inference.service_namespace in prod; us-east-2 serves nothing.
    for cluster, classes in (("prod-us-east-1", CRITICAL), ("prod-eastus2", CRITICAL), ("prod-us-central1", CRITICAL),
                             ("prod-us-east-2", ["ai-inference", *CRITICAL])):
        quota = priority_quota(prod, f"{cluster}-inference")
        assert quota["spec"]["scopeSelector"]["matchExpressions"][0]["values"] == classes, cluster


def test_gkes_critical_pod_quota_stays_in_the_gpu_namespace(prod: PlanResult) -> None:
    # GKE admits system-*-critical pods outside kube-system only where a quota scoped to them allows it: the GPU
    # namespace's allows the operator's pods; a team's, at pods 0, refuses them (as having none did before).
    critical = [r.inputs for r in prod.of_type(QUOTA) if r.name.endswith("-gpu-critical-quota")]
    assert critical and {q["metadata"]["namespace"] for q in critical} == {"gpu-operator"}
    assert all(int(q["spec"]["hard"]["pods"]) > 0 for q in critical)
    team_namespaces = {r.inputs["metadata"]["namespace"] for r in prod.of_type(QUOTA) if r.name.endswith("-priority-quota")}
    assert "gpu-operator" not in team_namespaces


# --- 6. Kueue: two replicas behind a PodDisruptionBudget -------------------------------------------------------------

# kubernetes-sigs/kueue v0.19.2 charts/kueue/values.yaml, the keys set here (defaults as published).
CHART_DEFAULTS = yaml.safe_load("""
controllerManager:
  replicas: 1
  topologySpreadConstraints: []
  podDisruptionBudget:
    enabled: false
    minAvailable: 1
""")
# charts/kueue/templates/_helpers.tpl `kueue.selectorLabels` for release `kueue` of chart `kueue`.
SELECTOR = {"app.kubernetes.io/name": "kueue", "app.kubernetes.io/instance": "kueue", "control-plane": "controller-manager"}


def test_kueue_runs_two_replicas_that_a_drain_cannot_both_evict(prod: PlanResult) -> None:
    values = prod.one(RELEASE, "prod-us-east-1-kueue").inputs["values"]
    manager = values["controllerManager"]
    assert set(manager) == set(CHART_DEFAULTS["controllerManager"])  # only keys the chart reads
    assert set(manager["podDisruptionBudget"]) == set(CHART_DEFAULTS["controllerManager"]["podDisruptionBudget"])
    assert manager["replicas"] == 2 and manager["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}
    [spread] = manager["topologySpreadConstraints"]
    assert spread == {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                      "labelSelector": {"matchLabels": SELECTOR}}
    # The manager config is unchanged by it.
    config = json.loads(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["leaderElection"]["leaderElect"] is True
    assert kueue_values()["controllerManager"] == manager
