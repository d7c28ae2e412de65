"""The Grafana dashboard of GPU use (pure): utilisation, framebuffer memory, power and XID errors per node and
per team, plus utilisation per pool.

Metric names and labels are dcgm-exporter's (NVIDIA/dcgm-exporter, etc/default-counters.csv and
dcp-metrics-included.csv, both of which list the four fields): DCGM_FI_DEV_GPU_UTIL (%), DCGM_FI_DEV_FB_USED (MiB),
DCGM_FI_DEV_POWER_USAGE (W), DCGM_FI_DEV_XID_ERRORS (last XID). With Kubernetes mapping on, a series of a GPU in
use carries the workload's `namespace` and `pod`; the team is the namespace. Every scrape config here adds `node`.
"""

from __future__ import annotations

import json
from typing import Any

DASHBOARD_UID = "ai-infra-gpu"
DASHBOARD_KEY = "ai-infra-gpu.json"
"""Key of the dashboard JSON in its ConfigMap."""
# kube-state-metrics exposes the allowlisted node label ai-infra/pool as label_ai_infra_pool on kube_node_labels.
POOL_METRIC_LABEL = "label_ai_infra_pool"
_WIDTH = 12
_HEIGHT = 8


def _panel(panel_id: int, title: str, expr: str, legend: str, unit: str) -> dict[str, Any]:
    row, col = divmod(panel_id - 1, 2)
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": _HEIGHT, "w": _WIDTH, "x": col * _WIDTH, "y": row * _HEIGHT},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right"}, "tooltip": {"mode": "multi"}},
        "targets": [{"refId": "A", "expr": expr, "legendFormat": legend}],
    }


def panel_queries(team_label: str = "namespace") -> list[tuple[str, str, str, str]]:
    """(title, PromQL, legend, unit) of each panel, in layout order: per node on the left, per team on the right."""
    team = f'{team_label}=~"$team"'
    by_team = f"{{{{{team_label}}}}}"
    return [
        ("GPU utilisation by node", "avg by (node) (DCGM_FI_DEV_GPU_UTIL)", "{{node}}", "percent"),
        ("GPU utilisation by team", f"avg by ({team_label}) (DCGM_FI_DEV_GPU_UTIL{{{team}}})", by_team, "percent"),
        ("GPU memory used by node", "sum by (node) (DCGM_FI_DEV_FB_USED)", "{{node}}", "mbytes"),
        ("GPU memory used by team", f"sum by ({team_label}) (DCGM_FI_DEV_FB_USED{{{team}}})", by_team, "mbytes"),
        ("GPU power by node", "sum by (node) (DCGM_FI_DEV_POWER_USAGE)", "{{node}}", "watt"),
        ("GPU power by team", f"sum by ({team_label}) (DCGM_FI_DEV_POWER_USAGE{{{team}}})", by_team, "watt"),
        ("Last XID error by node", "max by (node, gpu) (DCGM_FI_DEV_XID_ERRORS)", "{{node}} gpu {{gpu}}", "none"),
        ("Last XID error by team", f"max by ({team_label}) (DCGM_FI_DEV_XID_ERRORS{{{team}}})", by_team, "none"),
        ("GPU utilisation by pool",
         f"avg by ({POOL_METRIC_LABEL}) (DCGM_FI_DEV_GPU_UTIL * on (node) group_left ({POOL_METRIC_LABEL}) kube_node_labels)",
         f"{{{{{POOL_METRIC_LABEL}}}}}", "percent"),
    ]


def gpu_dashboard(teams: list[str], team_label: str = "namespace") -> dict[str, Any]:
    """Dashboard JSON. `$team` offers the teams of the spec ("All" means all of them, not every namespace);
    `$datasource` picks any Prometheus data source, so the same JSON imports into managed Grafana services."""
    names = sorted(teams)
    options = [{"text": n, "value": n, "selected": False} for n in names]
    return {
        "uid": DASHBOARD_UID,
        "title": "AI infra / GPUs",
        "tags": ["ai-infra", "gpu", "dcgm"],
        "schemaVersion": 39,
        "editable": False,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
            {"name": "team", "label": "Team", "type": "custom", "query": ",".join(names), "options": options,
             "multi": True, "includeAll": True, "allValue": "|".join(names) or ".*",
             "current": {"text": "All", "value": "$__all"}},
        ]},
        "panels": [_panel(i, *query) for i, query in enumerate(panel_queries(team_label), start=1)],
    }


def dashboard_json(teams: list[str], team_label: str = "namespace") -> str:
    return json.dumps(gpu_dashboard(teams, team_label), indent=1, sort_keys=True)
