"""The metrics list (counters CSV) both DCGM exporters run with (pure): the exporter's own list plus the XID counter.

The XID alert (`monitoring_objects.xid_expression`) needs `DCGM_EXP_XID_ERRORS_COUNT`, which dcgm-exporter emits only
when its counters CSV names it (4.5.3-4.8.2 internal/pkg/collector/xid_collector.go `IsDCGMExpXIDErrorsCountEnabled`;
commented out in every list the exporter ships). A counters CSV is "the complete list and is not additive" (the
dcgm-exporter chart's values.yaml, `customMetrics`), so this is the exporter's `etc/dcp-metrics-included.csv` of
4.5.3-4.8.2 (what the GPU Operator's exporter reads by default: gpu-operator v26.7.0
assets/state-dcgm-exporter/0800_daemonset.yaml `DCGM_EXPORTER_COLLECTORS`) with that one line added. Set through:
- the GPU Operator: `dcgmExporter.config` {name, create, data} (v26.7.0 values.yaml; templates/dcgm_exporter_config.yaml
  makes the ConfigMap with key `dcgm-metrics.csv`, which the operator mounts and points DCGM_EXPORTER_COLLECTORS at,
  controllers/object_controls.go);
- the standalone chart (GKE): `customMetrics`, which replaces the data of its `exporter-metrics-config-map`, the file
  its `-f /etc/dcgm-exporter/default-counters.csv` argument reads (chart 4.8.2 templates/metrics-configmap.yaml).

The list is fixed here: metrics a later exporter image adds to its own list appear only once copied in. GKE's
standalone exporter gets the same list as the operator's (its chart default lacks DCGM_FI_DEV_FB_RESERVED and the
driver-version label), so dashboards and alerts see the same series on every cloud.

`DCGM_EXP_XID_ERRORS_COUNT`: per GPU and XID code (label `xid`), how many XIDs DCGM recorded in the last window
(`--xid-count-window-size`, default 300000 ms: pkg/cmd/app.go), read from DCGM's field history
(internal/pkg/collector/expcollector.go `GetValuesSince`), so a repeated XID counts again; a GPU without one reports a
single series of value 0 without `xid`. Declared `gauge`: the value falls as the window moves on (the exporter's help
text, "Count of XID Errors within user-specified time window"); Prometheus reads the type as metadata only.
"""

from __future__ import annotations

import hashlib

XID_COUNT_METRIC = "DCGM_EXP_XID_ERRORS_COUNT"
XID_COUNT_WINDOW_MINUTES = 5
"""The exporter's window for `XID_COUNT_METRIC`, in minutes: its default (`--xid-count-window-size` 300000 ms), which
the values leave as it is. The XID alert's texts name it."""
XID_COUNT_LINE = (f"{XID_COUNT_METRIC}, gauge, Count of XID Errors within user-specified time window "
                  "(see xid-count-window-size param).")
"""No comma inside the help text: the exporter reads each line as exactly three CSV fields."""
METRICS_CHECKSUM_ANNOTATION = "ai-infra/dcgm-metrics-sha256"
"""On the exporter pods (both charts' pod annotations): the list's hash, so a changed list rolls the DaemonSet. The
exporter reads the file once at start, the ConfigMap is mounted by subPath (never refreshed), and neither chart
restarts the pods when its metrics ConfigMap changes."""
OPERATOR_METRICS_CONFIGMAP = "ai-infra-dcgm-metrics"
"""The ConfigMap the GPU Operator chart creates in its namespace from `dcgmExporter.config.data`."""

# dcgm-exporter 4.5.3-4.8.2 etc/dcp-metrics-included.csv: its metric lines verbatim and in order (commented-out ones
# left out), XID_COUNT_LINE added after the XID gauge.
_EXPORTER_LIST = """\
# Format
# If line starts with a '#' it is considered a comment
# DCGM FIELD, Prometheus metric type, help message

# Clocks
DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).
DCGM_FI_DEV_MEM_CLOCK, gauge, Memory clock frequency (in MHz).

# Temperature
DCGM_FI_DEV_MEMORY_TEMP, gauge, Memory temperature (in C).
DCGM_FI_DEV_GPU_TEMP,    gauge, GPU temperature (in C).

# Power
DCGM_FI_DEV_POWER_USAGE,              gauge, Power draw (in W).
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter, Total energy consumption since boot (in mJ).

# PCIE
DCGM_FI_DEV_PCIE_REPLAY_COUNTER, counter, Total number of PCIe retries.

# Utilization (the sample period varies depending on the product)
DCGM_FI_DEV_GPU_UTIL,      gauge, GPU utilization (in %).
DCGM_FI_DEV_MEM_COPY_UTIL, gauge, Memory utilization (in %).
DCGM_FI_DEV_ENC_UTIL,      gauge, Encoder utilization (in %).
DCGM_FI_DEV_DEC_UTIL ,     gauge, Decoder utilization (in %).

# Errors and violations
DCGM_FI_DEV_XID_ERRORS,            gauge,   Value of the last XID error encountered.
{xid_count}

# Memory usage
DCGM_FI_DEV_FB_FREE, gauge, Framebuffer memory free (in MiB).
DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (in MiB).
DCGM_FI_DEV_FB_RESERVED, gauge, Framebuffer memory reserved (in MiB).

# NVLink
DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL,            counter, Total number of NVLink bandwidth counters for all lanes.

# VGPU License status
DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU License status

# Remapped rows
DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for uncorrectable errors
DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS,   counter, Number of remapped rows for correctable errors
DCGM_FI_DEV_ROW_REMAP_FAILURE,           gauge,   Whether remapping of rows has failed

# Static configuration information. These appear as labels on the other metrics
DCGM_FI_DRIVER_VERSION,        label, Driver Version

# DCP metrics
DCGM_FI_PROF_GR_ENGINE_ACTIVE,   gauge, Ratio of time the graphics engine is active.
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, Ratio of cycles the tensor (HMMA) pipe is active.
DCGM_FI_PROF_DRAM_ACTIVE,        gauge, Ratio of cycles the device memory interface is active sending or receiving data.
DCGM_FI_PROF_PCIE_TX_BYTES,      gauge, The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.
DCGM_FI_PROF_PCIE_RX_BYTES,      gauge, The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.
"""


def metrics_csv() -> str:
    """The counters CSV both exporters run with."""
    return _EXPORTER_LIST.format(xid_count=XID_COUNT_LINE)


def metrics_annotations() -> dict[str, str]:
    """Pod annotations that change with the list (`METRICS_CHECKSUM_ANNOTATION`)."""
    return {METRICS_CHECKSUM_ANNOTATION: hashlib.sha256(metrics_csv().encode()).hexdigest()}
