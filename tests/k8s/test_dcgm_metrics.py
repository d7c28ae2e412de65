"""Both DCGM exporters run with the layer's metrics list, which turns on the XID counter the XID alert reads and keeps
what the dashboard and the idle alert read; a changed list rolls the exporter pods."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re

import pytest
from k8s.layer import make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult
from components.k8s.dcgm_metrics import (
    METRICS_CHECKSUM_ANNOTATION,
    OPERATOR_METRICS_CONFIGMAP,
    XID_COUNT_METRIC,
    metrics_csv,
)
from components.k8s.monitoring_objects import alert_rule_groups

RELEASE = "kubernetes:helm.sh/v3:Release"
AWS, GCP, AZURE = "test-us-east-1", "test-us-central1", "test-eastus2"

# dcgm-exporter 4.5.3-4.8.2 etc/dcp-metrics-included.csv: the metrics it turns on (its non-comment lines), in order.
EXPORTER_DEFAULTS = [
    "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL",
    "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_VGPU_LICENSE_STATUS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DRIVER_VERSION",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
    "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES",
]


def metric_names(csv_text: str) -> list[str]:
    """The metrics a counters CSV turns on (its non-comment lines' first field)."""
    return [line.split(",", 1)[0].strip() for line in csv_text.splitlines() if line.strip() and not line.startswith("#")]


def test_the_list_is_the_exporters_own_plus_the_xid_counter() -> None:
    names = metric_names(metrics_csv())
    assert [n for n in names if n != XID_COUNT_METRIC] == EXPORTER_DEFAULTS
    assert names.count(XID_COUNT_METRIC) == 1
    # The exporter reads every line as exactly three fields (counter_config.go ExtractCounters: "expected 3 fields",
    # Go's csv reader with '#' comments, spaces trimmed); an exporter field's type is taken as written.
    rows = [r for r in csv.reader(io.StringIO(metrics_csv())) if r and not r[0].startswith("#")]
    assert all(len(r) == 3 for r in rows)
    [xid] = [[f.strip() for f in r] for r in rows if r[0].strip() == XID_COUNT_METRIC]
    assert xid[1] == "gauge"  # a count over a moving window falls again


def test_the_list_carries_what_the_alerts_and_dashboard_read(three_cloud_plan: PlanResult) -> None:
    names = set(metric_names(metrics_csv()))
    exprs = [r["expr"] for g in alert_rule_groups() for r in g["rules"]]
    board = json.loads(three_cloud_plan.one("kubernetes:core/v1:ConfigMap", f"{AWS}-dashboard").inputs["data"]["ai-infra-gpu.json"])
    exprs += [t["expr"] for p in board["panels"] for t in p["targets"]]
    read = {name for e in exprs for name in re.findall(r"DCGM_[A-Z0-9_]+", e)}
    assert read and read <= names
    assert {"DCGM_FI_DEV_XID_ERRORS", XID_COUNT_METRIC} <= read  # the dashboard's last XID, the alert's count


def test_the_gpu_operator_runs_its_exporter_with_the_list(three_cloud_plan: PlanResult) -> None:
    for cluster in (AWS, AZURE):
        exporter = three_cloud_plan.one(RELEASE, f"{cluster}-gpu-operator").inputs["values"]["dcgmExporter"]
        # gpu-operator v26.7.0: the chart creates ConfigMap `name` (key dcgm-metrics.csv) from `data`; the operator
        # mounts it and points DCGM_EXPORTER_COLLECTORS at it.
        assert exporter["config"] == {"name": OPERATOR_METRICS_CONFIGMAP, "create": True, "data": metrics_csv()}
        assert exporter["annotations"] == {
            METRICS_CHECKSUM_ANNOTATION: hashlib.sha256(metrics_csv().encode()).hexdigest()}


@pytest.fixture(scope="module")
def gke_with_operator() -> PlanResult:
    return plan_layer(make_spec(("gcp",), addons={"gpu_operator_on_gke": True}))


def test_gke_runs_the_same_list_with_either_exporter(three_cloud_plan: PlanResult, gke_with_operator: PlanResult) -> None:
    standalone = three_cloud_plan.one(RELEASE, f"{GCP}-dcgm-exporter").inputs["values"]
    # dcgm-exporter chart 4.8.2: `customMetrics` replaces exporter-metrics-config-map's data, the file `-f` reads.
    assert standalone["customMetrics"] == metrics_csv()
    assert standalone["podAnnotations"] == {METRICS_CHECKSUM_ANNOTATION: hashlib.sha256(metrics_csv().encode()).hexdigest()}
    assert "arguments" not in standalone  # the chart's ["-f", "/etc/dcgm-exporter/default-counters.csv"]
    mounts = {m["mountPath"]: m for m in standalone["extraVolumeMounts"]}
    assert mounts["/etc/dcgm-exporter/default-counters.csv"]["name"] == "exporter-metrics-volume"
    operator = gke_with_operator.one(RELEASE, f"{GCP}-gpu-operator").inputs["values"]["dcgmExporter"]
    assert operator["config"]["data"] == metrics_csv()
