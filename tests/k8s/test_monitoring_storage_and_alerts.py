"""GPU monitoring as the clusters receive it: the XID alert clears once no new XID arrives (in every monitoring mode
that carries it), self-managed Prometheus and Alertmanager keep their data on a volume of the cluster's default
StorageClass (on EKS the layer's, which the release waits for), and kube-prometheus-stack upgrades its CRDs with the
chart."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from k8s.layer import make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult
from components.azure.prometheus import azure_rules
from components.k8s.monitoring_objects import (
    ALERTMANAGER_VOLUME_GIB,
    PROMETHEUS_RETENTION_SIZE,
    PROMETHEUS_VOLUME_GIB,
    alert_rule_groups,
    rules_yaml,
    xid_expression,
)

RELEASE = "kubernetes:helm.sh/v3:Release"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"
XID = ("max by (node, gpu, UUID, modelName) (DCGM_FI_DEV_XID_ERRORS) > 0 unless "
       "(max by (node, gpu, UUID, modelName) (DCGM_FI_DEV_XID_ERRORS offset 10m) == "
       "max by (node, gpu, UUID, modelName) (DCGM_FI_DEV_XID_ERRORS))")


def xid_rule(groups: list[dict[str, Any]]) -> dict[str, Any]:
    [rule] = [r for g in groups for r in g["rules"] if r.get("alert") == "GpuXidError"]
    return rule


# --- The XID alert, in every mode ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def managed() -> PlanResult:
    return plan_layer(make_spec(addons={"monitoring": "managed"}))


def test_every_mode_carries_the_clearing_xid_rule(three_cloud_plan: PlanResult, managed: PlanResult) -> None:
    # self-managed: the PrometheusRule of every cluster
    for cluster in (AWS, GCP, AZURE):
        rule = three_cloud_plan.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule", f"{cluster}-gpu-rules")
        assert xid_rule(rule.inputs["spec"]["groups"])["expr"] == XID
    # GKE managed: GMP ClusterRules
    gmp = managed.one("kubernetes:monitoring.googleapis.com/v1:ClusterRules", f"{GCP}-gmp-rules").inputs["spec"]["groups"]
    assert xid_rule(gmp)["expr"] == XID
    # EKS managed: the AMP rule groups namespace's data (exported, and built by the AWS components from rules_yaml)
    assert xid_rule(yaml.safe_load(managed.outputs["kubernetes"][AWS]["monitoring"]["alert_rules"])["groups"])["expr"] == XID
    assert xid_rule(yaml.safe_load(rules_yaml())["groups"])["expr"] == XID
    # AKS managed: the Azure Prometheus rule group's rules
    [azure] = [r for r in azure_rules() if r.alert == "GpuXidError"]
    assert azure.expression == XID and azure.for_ is None  # fires at once
    assert xid_expression() == XID


def _gpu_value(samples: list[tuple[dict[str, str], float]]) -> dict[tuple[str, ...], float]:
    """`max by (node, gpu, UUID, modelName) (...)` over one instant's samples."""
    out: dict[tuple[str, ...], float] = {}
    for labels, value in samples:
        key = tuple(labels[k] for k in ("node", "gpu", "UUID", "modelName"))
        out[key] = max(out.get(key, value), value)
    return out


def fires(history: dict[int, list[tuple[dict[str, str], float]]], minute: int) -> dict[tuple[str, ...], float]:
    """The XID expression at `minute` (samples keyed by minute; `offset 10m` reads the samples of minute - 10), evaluated
    as PromQL would: `now > 0` filtered, `unless` drops GPUs whose `before == now` comparison keeps a sample (the shape
    of `XID`, which the test above pins)."""
    now, before = _gpu_value(history.get(minute, [])), _gpu_value(history.get(minute - 10, []))
    return {gpu: v for gpu, v in now.items() if v > 0 and not (gpu in before and before[gpu] == v)}


def test_the_xid_alert_fires_on_a_new_xid_and_clears() -> None:
    gpu = {"node": "n1", "gpu": "0", "UUID": "GPU-1", "modelName": "H100"}
    def sample(xid: int, pod: str) -> tuple[dict[str, str], float]:
        # dcgm-exporter puts the code in err_code too, and the pod using the GPU: a new XID or pod is a new series.
        return ({**gpu, "err_code": str(xid), "pod": pod}, float(xid))
    history = {m: [sample(0, "a")] for m in range(0, 30)}
    history.update({m: [sample(79, "a")] for m in range(30, 60)})  # XID 79 at minute 30, and the gauge keeps it
    history.update({m: [sample(79, "b")] for m in range(60, 70)})  # another pod on the GPU later
    history.update({m: [sample(48, "b")] for m in range(70, 90)})  # a different XID
    key = tuple(gpu.values())
    assert fires(history, 29) == {}
    assert fires(history, 30) == {key: 79.0} and fires(history, 39) == {key: 79.0}
    assert fires(history, 40) == {}  # cleared 10 minutes later although the gauge still says 79
    assert fires(history, 62) == {}  # a new pod on the GPU is no new XID
    assert fires(history, 70) == {key: 48.0} and fires(history, 80) == {}
    # The old rule (`max(...) > 0`) would still fire at minute 89.
    assert _gpu_value(history[89])[key] > 0


# --- Prometheus and Alertmanager storage ------------------------------------------------------------------------


def _gib(size: str) -> float:
    match = re.fullmatch(r"(\d+)(GiB|Gi)", size)
    assert match, size
    return float(match.group(1))


@pytest.mark.parametrize("cluster", [AWS, GCP, AZURE])
def test_prometheus_and_alertmanager_keep_their_data_on_a_volume(three_cloud_plan: PlanResult, cluster: str) -> None:
    values = three_cloud_plan.one(RELEASE, f"{cluster}-prometheus-stack").inputs["values"]
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "15d"
    claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    # The cluster's default StorageClass (EKS the layer's gp3-encrypted, GKE standard-rwo, AKS default): no storageClassName.
    assert claim == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": f"{PROMETHEUS_VOLUME_GIB}Gi"}}}
    assert spec["retentionSize"] == PROMETHEUS_RETENTION_SIZE
    assert _gib(spec["retentionSize"]) < _gib(claim["resources"]["requests"]["storage"])  # blocks go before the disk fills
    assert re.fullmatch(r"(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$", spec["retentionSize"])  # the CRD's pattern
    alertmanager = values["alertmanager"]["alertmanagerSpec"]["storage"]["volumeClaimTemplate"]["spec"]
    assert alertmanager == {"accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": f"{ALERTMANAGER_VOLUME_GIB}Gi"}}}
    assert ALERTMANAGER_VOLUME_GIB >= 10  # GKE's smallest pd-balanced disk


def test_on_eks_the_release_waits_for_the_layers_default_class(three_cloud_plan: PlanResult) -> None:
    """EKS has no default StorageClass of its own: installed first, the release's claims would wait for one and the
    atomic install time out. GKE and AKS bring theirs, and the layer makes none there."""
    [storage_class] = three_cloud_plan.of_type(STORAGE_CLASS)
    assert storage_class.name == f"{AWS}-block-storage-default-class"
    assert storage_class.urn in three_cloud_plan.one(RELEASE, f"{AWS}-prometheus-stack").dependencies
    for cluster in (GCP, AZURE):
        assert not [d for d in three_cloud_plan.one(RELEASE, f"{cluster}-prometheus-stack").dependencies
                    if STORAGE_CLASS in d]


# --- CRD upgrades -----------------------------------------------------------------------------------------------


def test_kube_prometheus_stack_upgrades_its_crds(three_cloud_plan: PlanResult) -> None:
    for cluster in (AWS, GCP, AZURE):
        release = three_cloud_plan.one(RELEASE, f"{cluster}-prometheus-stack").inputs
        assert (release["chart"], release["version"]) == ("kube-prometheus-stack", "88.5.3")
        # 88.5.3 charts/crds/templates/upgrade: a pre-install/pre-upgrade hook Job applying the CRDs server-side.
        assert release["values"]["crds"] == {"upgradeJob": {"enabled": True}}
        assert release["namespace"] == "monitoring"
    # Its namespace carries no NetworkPolicy or Pod Security label that would stop the Job.
    namespace = three_cloud_plan.one("kubernetes:core/v1:Namespace", f"{AWS}-namespace").inputs["metadata"]
    assert not [k for k in namespace.get("labels", {}) if k.startswith("pod-security.kubernetes.io/")]
    assert not [r for r in three_cloud_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
                if r.inputs["metadata"]["namespace"] == "monitoring"]


def test_the_alert_groups_are_the_same_everywhere() -> None:
    assert [r["alert"] for r in alert_rule_groups()[0]["rules"]] == ["GpuAllocatedButIdle", "GpuXidError"]
