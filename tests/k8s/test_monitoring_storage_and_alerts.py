"""GPU monitoring as the clusters receive it: the XID alert counts XIDs (repeats too), clears once none arrive, and
does not come back after a gap in the stored data (in every monitoring mode that carries it); self-managed Prometheus
and Alertmanager keep their data on a volume of the layer's StorageClass (the region's key), which the release waits
for; and kube-prometheus-stack upgrades its CRDs with the chart, its Job's busybox pinned."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from k8s.layer import make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult
from components.azure.prometheus import azure_rules
from components.k8s.dcgm_metrics import XID_COUNT_METRIC, XID_COUNT_WINDOW_MINUTES
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
XID = "max by (node, gpu, UUID, modelName, xid) (DCGM_EXP_XID_ERRORS_COUNT) > 0"


def xid_rule(groups: list[dict[str, Any]]) -> dict[str, Any]:
    [rule] = [r for g in groups for r in g["rules"] if r.get("alert") == "GpuXidError"]
    return rule


# --- The XID alert, in every mode ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def managed() -> PlanResult:
    return plan_layer(make_spec(addons={"monitoring": "managed"}))


def test_every_mode_carries_the_counting_xid_rule(three_cloud_plan: PlanResult, managed: PlanResult) -> None:
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
    assert xid_expression() == XID and XID_COUNT_METRIC in XID and "offset" not in XID and "[" not in XID  # no subquery
    # What a receiver reads: the code (the `xid` label the expression keeps) and how often, in the exporter's window.
    description = xid_rule(alert_rule_groups())["annotations"]["description"]
    assert "{{ $labels.xid }}" in description and "{{ $value }} time(s) in the last 5 minutes;" in description
    # dcgm-exporter pkg/cmd/app.go: `--xid-count-window-size` defaults to 300000 ms, which the values leave as it is.
    assert XID_COUNT_WINDOW_MINUTES * 60_000 == 300_000


WINDOW = XID_COUNT_WINDOW_MINUTES
"""The exporter's XID window, in minutes."""
LOOKBACK = 5
"""Prometheus's lookback: an instant query sees a series' last sample of the last 5 minutes."""
GPU = {"node": "n1", "gpu": "0", "UUID": "GPU-1", "modelName": "H100"}


def scrape(xids: list[tuple[int, int]], minute: int, pod: str) -> list[tuple[dict[str, str], float]]:
    """What dcgm-exporter serves at `minute` (internal/pkg/collector/expcollector.go): per XID code the XIDs DCGM recorded
    in the last window, labelled `xid`, or one series of 0 without `xid`; every series labelled with the pod on the GPU."""
    counts: dict[int, int] = {}
    for at, code in xids:
        if minute - WINDOW < at <= minute:
            counts[code] = counts.get(code, 0) + 1
    if not counts:
        return [({**GPU, "pod": pod}, 0.0)]
    return [({**GPU, "pod": pod, "xid": str(code)}, float(n)) for code, n in counts.items()]


def fires(stored: dict[int, list[tuple[dict[str, str], float]]], minute: int) -> dict[tuple[str, ...], float]:
    """`XID` at `minute` over the stored scrapes (by minute): the series of the target's last scrape within the lookback
    (a series missing from a later scrape is marked stale), `max by (node, gpu, UUID, modelName, xid)`, `> 0`."""
    last = [m for m in stored if minute - LOOKBACK <= m <= minute]
    out: dict[tuple[str, ...], float] = {}
    for labels, value in stored[max(last)] if last else []:
        key = (*(labels[k] for k in GPU), labels.get("xid", ""))
        out[key] = max(out.get(key, value), value)
    return {key: value for key, value in out.items() if value > 0}


def test_the_xid_alert_fires_on_every_xid_and_clears() -> None:
    xids = [(30, 79), (60, 79), (70, 48), (71, 48)]  # XID 79, the same again later, then XID 48 twice
    stored = {m: scrape(xids, m, "a" if m < 50 else "b") for m in range(0, 90)}  # another pod on the GPU from 50
    key = lambda code: (*GPU.values(), str(code))  # noqa: E731
    assert fires(stored, 29) == {}
    assert fires(stored, 30) == {key(79): 1.0} and fires(stored, 34) == {key(79): 1.0}
    assert fires(stored, 35) == {}  # cleared one window after the XID
    assert fires(stored, 52) == {}  # a new pod on the GPU is no XID
    assert fires(stored, 60) == {key(79): 1.0}  # the same code again alerts again
    assert fires(stored, 71) == {key(48): 2.0} and fires(stored, 76) == {}


def test_a_gap_in_the_stored_data_brings_no_old_xid_back() -> None:
    """A Prometheus restart or a GMP/AMP collector outage: nothing stored from minute 41 to 59. The exporter counts
    the last window at each scrape, so the XIDs of minute 30 do not fire again after the gap; an XID shortly before
    the first scrape after it does; one that came and left the window inside the gap is not seen."""
    xids = [(30, 79), (45, 13), (58, 48)]
    stored = {m: scrape(xids, m, "a") for m in range(0, 90) if not 41 <= m <= 59}
    key = lambda code: (*GPU.values(), str(code))  # noqa: E731
    assert fires(stored, 30) == {key(79): 1.0}
    assert all(fires(stored, m) == {} for m in range(35, 60))  # the last sample (0) lingers, then nothing
    assert fires(stored, 60) == {key(48): 1.0}  # XID 48 at minute 58 is still in the exporter's window
    assert all(fires(stored, m) == {} for m in range(63, 90))  # XID 79 never comes back; XID 13 fell in the gap
    # The old rule (the last-XID gauge `unless` equal to itself `offset 10m`) fired again from minute 60 to 69 for
    # every GPU whose last XID was not 0: with nothing stored from 41 to 59, `offset 10m` had nothing to compare with.


# --- Prometheus and Alertmanager storage ------------------------------------------------------------------------


def _gib(size: str) -> float:
    match = re.fullmatch(r"(\d+)(GiB|Gi)", size)
    assert match, size
    return float(match.group(1))


CLAIM_CLASS = {AWS: None, GCP: "pd-balanced-cmek", AZURE: "managed-csi-cmk"}
"""The class Prometheus's and Alertmanager's claims name: none on EKS (the layer's gp3-encrypted is the cluster's
default), the layer's CMEK class on GKE and AKS (their default classes use Google- and platform-managed keys)."""


@pytest.mark.parametrize("cluster", [AWS, GCP, AZURE])
def test_prometheus_and_alertmanager_keep_their_data_on_a_volume(three_cloud_plan: PlanResult, cluster: str) -> None:
    values = three_cloud_plan.one(RELEASE, f"{cluster}-prometheus-stack").inputs["values"]
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "15d"
    claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    named = {"storageClassName": CLAIM_CLASS[cluster]} if CLAIM_CLASS[cluster] else {}
    assert claim == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": f"{PROMETHEUS_VOLUME_GIB}Gi"}},
                     **named}
    assert spec["retentionSize"] == PROMETHEUS_RETENTION_SIZE
    assert _gib(spec["retentionSize"]) < _gib(claim["resources"]["requests"]["storage"])  # blocks go before the disk fills
    assert re.fullmatch(r"(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$", spec["retentionSize"])  # the CRD's pattern
    alertmanager = values["alertmanager"]["alertmanagerSpec"]["storage"]["volumeClaimTemplate"]["spec"]
    assert alertmanager == {"accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": f"{ALERTMANAGER_VOLUME_GIB}Gi"}}, **named}
    assert ALERTMANAGER_VOLUME_GIB >= 10  # GKE's smallest pd-balanced disk
    # The class the claims name is the one the layer makes on that cluster.
    if named:
        classes = [r.inputs["metadata"]["name"] for r in three_cloud_plan.of_type(STORAGE_CLASS)
                   if r.name == f"{cluster}-block-storage-class"]
        assert classes == [CLAIM_CLASS[cluster]]


@pytest.mark.parametrize("cluster", [AWS, GCP, AZURE])
def test_the_release_waits_for_the_layers_class(three_cloud_plan: PlanResult, cluster: str) -> None:
    """Installed first, the release's claims would wait for their class and the atomic install time out."""
    [storage_class] = [r for r in three_cloud_plan.of_type(STORAGE_CLASS) if r.name.startswith(f"{cluster}-block-storage")]
    assert storage_class.urn in three_cloud_plan.one(RELEASE, f"{cluster}-prometheus-stack").dependencies


# --- CRD upgrades -----------------------------------------------------------------------------------------------


def busybox_image(upgrade_job: dict[str, Any]) -> str:
    """The init container image kube-prometheus-stack 88.5.3 renders (charts/crds/templates/upgrade/job.yaml) from the
    chart's defaults merged with `crds.upgradeJob`: the digest is appended only `if .Values.upgradeJob.image.sha`."""
    image = upgrade_job.get("image", {})
    busybox = {"registry": "docker.io", "repository": "busybox", "tag": "latest", "sha": "", **image.get("busybox", {})}
    ref = f"{busybox['registry']}/{busybox['repository']}:{busybox['tag']}"
    return f"{ref}@sha256:{busybox['sha']}" if image.get("sha") else ref


def test_kube_prometheus_stack_upgrades_its_crds(three_cloud_plan: PlanResult) -> None:
    for cluster in (AWS, GCP, AZURE):
        release = three_cloud_plan.one(RELEASE, f"{cluster}-prometheus-stack").inputs
        assert (release["chart"], release["version"]) == ("kube-prometheus-stack", "88.5.3")
        # 88.5.3 charts/crds/templates/upgrade: a pre-install/pre-upgrade hook Job applying the CRDs server-side.
        job = release["values"]["crds"]["upgradeJob"]
        assert job["enabled"] is True
        # busybox pinned to a release and its index digest, not the chart's docker.io/busybox:latest.
        assert busybox_image(job) == ("docker.io/busybox:1.38.0@sha256:"
                                      "dc2d74b28e4cf8984fa52af1f39bc7c3d9c73760b41a74d629f5d11b1ab28616")
        assert "kubectl" not in job["image"]  # registry.k8s.io/kubectl at the cluster's version, the chart's default
        assert release["namespace"] == "monitoring"
    assert busybox_image({"enabled": True}) == "docker.io/busybox:latest"  # what the chart alone would run
    # Its namespace carries no NetworkPolicy or Pod Security label that would stop the Job.
    namespace = three_cloud_plan.one("kubernetes:core/v1:Namespace", f"{AWS}-namespace").inputs["metadata"]
    assert not [k for k in namespace.get("labels", {}) if k.startswith("pod-security.kubernetes.io/")]
    assert not [r for r in three_cloud_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
                if r.inputs["metadata"]["namespace"] == "monitoring"]


def test_the_alert_groups_are_the_same_everywhere() -> None:
    assert [r["alert"] for r in alert_rule_groups()[0]["rules"]] == ["GpuAllocatedButIdle", "GpuXidError"]
