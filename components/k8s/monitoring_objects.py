"""GPU monitoring objects (pure): alert rules, the kube-prometheus-stack values, and the scrape configs of each
cloud's managed Prometheus.

Where DCGM metrics go:
- `self_managed`: kube-prometheus-stack; the exporter charts' ServiceMonitor; our PrometheusRule.
- `managed` on GKE: Managed Service for Prometheus (managed collection, on by default on GKE 1.27+): our
  ClusterPodMonitoring and ClusterRules. GMP reserves `namespace` for the target's, so the workload's namespace
  (the team) arrives as `exported_namespace`.
- `managed` on AKS: Azure Monitor managed Prometheus (the ama-metrics add-on, enabled by the Azure cluster):
  our `ama-metrics-prometheus-config` ConfigMap. Its alert rules are Azure resources (Prometheus rule groups),
  built by the Azure components from `alert_rule_groups()`.
- `managed` on EKS: an Amazon Managed Prometheus managed collector (an AWS scraper resource, built by the AWS
  components with `scrape_config_yaml()`). On our access-entry-only clusters AMP gives the scraper its access entry
  and policy itself; the ClusterRole and binding for user `aps-collector-user` (the AMP guide's manual, aws-auth
  setup) are not what grants it access there, and stay as that documented fallback. Its alert rules are an AMP
  rule groups namespace (`rules_yaml()`), also built by the AWS components.

XID errors: the alert counts XIDs (`DCGM_EXP_XID_ERRORS_COUNT`, which both exporters emit with the metrics list of
`dcgm_metrics`), so a repeated XID alerts again and a gap in the stored data (a Prometheus restart, a GMP or AMP
collector outage) makes no old XID alert again. `DCGM_FI_DEV_XID_ERRORS`, the last XID code per GPU (a gauge that
never resets), stays for the dashboard; alone it could not show a repeat of the same code.
"""

from __future__ import annotations

from typing import Any

import yaml

from components.spec import Cloud

from .cluster import ACCELERATOR_LABEL, CAPACITY_LABEL, GPU_NAMESPACE, POOL_LABEL
from .dcgm_metrics import XID_COUNT_METRIC, XID_COUNT_WINDOW_MINUTES

IDLE_UTILISATION_PERCENT = 10
IDLE_FOR = "1h"
GPU_IDENTITY = "node, gpu, UUID, modelName"
"""Labels that name one GPU whatever pod uses it."""
OPERATOR_EXPORTER_LABELS = {"app": "nvidia-dcgm-exporter"}
"""Pod labels of the GPU Operator's DCGM exporter (gpu-operator assets/state-dcgm-exporter)."""
STANDALONE_EXPORTER_LABELS = {"app.kubernetes.io/name": "dcgm-exporter"}
"""Pod labels of the dcgm-exporter chart (its selectorLabels template)."""
EXPORTER_PORT = "metrics"
"""Container port name of the exporter in both (9400)."""
PROMETHEUS_OPERATOR_API = "monitoring.coreos.com/v1"
GMP_API = "monitoring.googleapis.com/v1"
AMA_CONFIGMAP = "ama-metrics-prometheus-config"
"""Azure Monitor's custom scrape config: this name in kube-system, key `prometheus-config` (run by its replica)."""
AMA_CONFIG_KEY = "prometheus-config"
AMP_COLLECTOR_USER = "aps-collector-user"
"""Kubernetes user of the AMP guide's manual (aws-auth) setup for the managed collector."""
GMP_RULE_INTERVAL = "1m"
"""Evaluation interval of our GMP rule groups. GMP's ClusterRules CRD requires `groups[].interval` up to v0.15.x
(GoogleCloudPlatform/prometheus-engine v0.15.3, charts/operator/crds/monitoring.googleapis.com_clusterrules.yaml:
`required: [interval, name, rules]`); from v0.17.0 it is optional with default 1m, the same value."""


def team_label(gmp: bool) -> str:
    """The label holding a GPU's workload namespace (the team) in stored series."""
    return "exported_namespace" if gmp else "namespace"


def xid_expression() -> str:
    """A GPU that reported an XID in the exporter's last window (`dcgm_metrics.XID_COUNT_WINDOW_MINUTES`), per XID
    code; the value is how many times. The exporter counts DCGM's own record at each scrape, so the alert fires while
    XIDs keep coming, repeats of one code included, and clears one window after the last, whatever the stored data
    missed: after a gap in it no old XID comes back (the last-XID gauge `DCGM_FI_DEV_XID_ERRORS` compared with itself
    `offset 10m`, the rule before this one, re-fired for every GPU whose last XID was not 0 once the gap outlasted
    Prometheus's 5-minute lookback). An XID that came and left the window inside a gap is not seen (the dashboard's
    last-XID panel still shows it). `max` merges the GPU's series (MIG instances and the pods on it). Subquery-free,
    so every rule engine here evaluates it (Prometheus, GMP, AMP, Azure Monitor)."""
    return f"max by ({GPU_IDENTITY}, xid) ({XID_COUNT_METRIC}) > 0"


def alert_rules(team: str = "namespace") -> list[dict[str, Any]]:
    """Idle GPUs: allocated to a pod (the series has `pod`) and averaging under 10% over every 10-minute window for
    an hour (so a short burst does not hide an idle hour, and a pod loading its model for minutes does not alert).
    XID errors: a GPU reported an XID in the exporter's window (`XID_COUNT_WINDOW_MINUTES`), repeats included
    (`xid_expression`); the alert clears one window after the last."""
    keep = f"{GPU_IDENTITY}, {team}"
    return [
        {
            "alert": "GpuAllocatedButIdle",
            "expr": f'avg by ({keep}, pod) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{{pod!=""}}[10m])) < {IDLE_UTILISATION_PERCENT}',
            "for": IDLE_FOR,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "GPU allocated but idle for an hour",
                "description": f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.node }}}} is allocated to pod {{{{ $labels.pod }}}} "
                               f"({{{{ $labels.{team} }}}}) and has used under {IDLE_UTILISATION_PERCENT}% for {IDLE_FOR}.",
            },
        },
        {
            "alert": "GpuXidError",
            "expr": xid_expression(),
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": "GPU reported an XID error",
                "description": "GPU {{ $labels.gpu }} on {{ $labels.node }} reported XID {{ $labels.xid }} "
                               f"{{{{ $value }}}} time(s) in the last {XID_COUNT_WINDOW_MINUTES} minutes; see NVIDIA's "
                               "XID catalog, and drain the node if it repeats.",
            },
        },
    ]


def alert_rule_groups(team: str = "namespace") -> list[dict[str, Any]]:
    return [{"name": "ai-infra-gpu", "rules": alert_rules(team)}]


def prometheus_rule(namespace: str) -> dict[str, Any]:
    """PrometheusRule for kube-prometheus-stack (which we configure to load every PrometheusRule)."""
    return {"apiVersion": PROMETHEUS_OPERATOR_API, "kind": "PrometheusRule",
            "metadata": {"name": "ai-infra-gpu", "namespace": namespace},
            "spec": {"groups": alert_rule_groups()}}


def gmp_cluster_rules() -> dict[str, Any]:
    """ClusterRules: GMP's rule evaluator over metrics of every namespace (the exporter's and the teams')."""
    groups = [{**group, "interval": GMP_RULE_INTERVAL} for group in alert_rule_groups(team_label(gmp=True))]
    return {"apiVersion": GMP_API, "kind": "ClusterRules", "metadata": {"name": "ai-infra-gpu"},
            "spec": {"groups": groups}}


def gmp_cluster_pod_monitoring(exporter_labels: dict[str, str]) -> dict[str, Any]:
    """ClusterPodMonitoring of the DCGM exporter pods. `targetLabels.metadata: [node]` adds the node and keeps the
    exporter's own `pod`/`container` labels (the workload's) unprefixed."""
    return {"apiVersion": GMP_API, "kind": "ClusterPodMonitoring", "metadata": {"name": "ai-infra-dcgm-exporter"},
            "spec": {"selector": {"matchLabels": dict(exporter_labels)},
                     "endpoints": [{"port": EXPORTER_PORT, "interval": "30s"}],
                     "targetLabels": {"metadata": ["node"]}}}


def _dcgm_scrape_job(exporter_labels: dict[str, str]) -> dict[str, Any]:
    keep = [{"source_labels": [f"__meta_kubernetes_pod_label_{_sanitize(k)}"], "regex": v, "action": "keep"}
            for k, v in exporter_labels.items()]
    return {
        "job_name": "dcgm-exporter",
        "honor_labels": True,  # the exporter's namespace/pod label the workload, i.e. the team
        "scrape_interval": "30s",
        "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": [GPU_NAMESPACE]}}],
        "relabel_configs": [
            *keep,
            {"source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": EXPORTER_PORT, "action": "keep"},
            {"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node", "action": "replace"},
        ],
    }


def _sanitize(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label)


def scrape_config_yaml(exporter_labels: dict[str, str] = OPERATOR_EXPORTER_LABELS) -> str:
    """Prometheus scrape config of the DCGM exporter: the Azure ConfigMap's `prometheus-config`, and the
    configuration blob of an AMP managed collector."""
    return yaml.safe_dump({"global": {"scrape_interval": "30s"}, "scrape_configs": [_dcgm_scrape_job(exporter_labels)]},
                          sort_keys=False)


def rules_yaml() -> str:
    """The alert rules as a Prometheus rules file (an AMP rule groups namespace's data)."""
    return yaml.safe_dump({"groups": alert_rule_groups()}, sort_keys=False)


# AWS docs, "Configuring your Amazon EKS cluster" for AMP managed collectors: the collector's in-cluster permissions.
AMP_COLLECTOR_RULES: list[dict[str, Any]] = [
    {"api_groups": [""], "resources": ["nodes", "nodes/proxy", "nodes/metrics", "services", "endpoints", "pods",
                                       "ingresses", "configmaps"], "verbs": ["describe", "get", "list", "watch"]},
    {"api_groups": ["extensions", "networking.k8s.io"], "resources": ["ingresses/status", "ingresses"],
     "verbs": ["describe", "get", "list", "watch"]},
    {"api_groups": ["metrics.eks.amazonaws.com"], "resources": ["kcm/metrics", "ksh/metrics"], "verbs": ["get"]},
    {"non_resource_urls": ["/metrics"], "verbs": ["get"]},
]


PROMETHEUS_RETENTION = "15d"
PROMETHEUS_VOLUME_GIB = 100
"""Prometheus TSDB volume. Prometheus needs about retention x samples/s x 1-2 bytes per sample (prometheus.io,
"Storage: Operational aspects"): a cluster of ~50 nodes with kube-prometheus-stack's default scrapes (node-exporter,
cAdvisor, kube-state-metrics, the API server) and DCGM is ~250k series every 30s, ~8k samples/s, so 15 days take
~20 GB; 100 GiB leaves room for larger clusters and the WAL."""
PROMETHEUS_RETENTION_SIZE = "80GiB"
"""Below the volume, so size-based retention deletes old blocks before the disk fills (the WAL and head chunks count
toward it too); the CRD's pattern `(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$`."""
ALERTMANAGER_VOLUME_GIB = 10
"""Alertmanager keeps silences and its notification log (kilobytes); 10 GiB is GKE's smallest balanced persistent disk."""
BUSYBOX_TAG = "1.38.0"
BUSYBOX_SHA = "dc2d74b28e4cf8984fa52af1f39bc7c3d9c73760b41a74d629f5d11b1ab28616"
"""The CRD upgrade Job's init container, pinned instead of the chart's `docker.io/busybox:latest`. Reproducible: with
`latest` each node runs whatever the tag named when that node first pulled it (the chart's IfNotPresent), so a fixed
chart version does not fix the image; a digest also survives a re-pushed tag. Docker Hub limits anonymous pulls per
source address, which the nodes share behind NAT: a digest-pinned image is pulled once per node, and a registry mirror
or pull-through cache serves exactly this content. 1.38.0 is what `latest` names today; the digest is its
multi-platform index (docker-library/repo-info repos/busybox/remote/1.38.0.md and latest.md at
01a7054230d50b3dccaf8d579f161c522be8c9f0)."""


def _claim(size_gib: int, storage_class: str | None) -> dict[str, Any]:
    """A volumeClaimTemplate on `storage_class`, or with None the cluster's default StorageClass."""
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": f"{size_gib}Gi"}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"volumeClaimTemplate": {"spec": spec}}


def crd_upgrade_job() -> dict[str, Any]:
    """`crds.upgradeJob`: on, with busybox pinned (`BUSYBOX_TAG`, `BUSYBOX_SHA`). The chart's job template (88.5.3
    charts/crds/templates/upgrade/job.yaml) appends `image.busybox.sha` only `if .Values.upgradeJob.image.sha`, a key
    nothing else reads, so that gate carries the digest too."""
    return {"enabled": True, "image": {"sha": BUSYBOX_SHA, "busybox": {"tag": BUSYBOX_TAG, "sha": BUSYBOX_SHA}}}


def alertmanager_spec(storage_class: str | None, config_secret: str | None) -> dict[str, Any]:
    """`alertmanager.alertmanagerSpec`: its volume, and with `config_secret` (`addons.alerts.alertmanager_secret`)
    the user's Secret as its whole configuration. kube-prometheus-stack 88.5.3: `useExistingSecret: true` stops the
    chart rendering its own config Secret (templates/alertmanager/secret.yaml) and `configSecret` names the one the
    Alertmanager object reads (templates/alertmanager/alertmanager.yaml); both are needed, as the operator otherwise
    reads `alertmanager-<name>`, which then nobody writes. The operator takes the key `alertmanager.yaml` and, if the
    Secret or key is missing, runs one empty receiver (prometheus-operator API, AlertmanagerSpec.configSecret)."""
    spec: dict[str, Any] = {"storage": _claim(ALERTMANAGER_VOLUME_GIB, storage_class)}
    if config_secret is not None:
        spec |= {"useExistingSecret": True, "configSecret": config_secret}
    return spec


def kube_prometheus_stack_values(cloud: Cloud, storage_class: str | None = None,
                                 alertmanager_secret: str | None = None) -> dict[str, Any]:
    """kube-prometheus-stack values: load every ServiceMonitor, PodMonitor and PrometheusRule (not only the chart's
    own), Grafana picks up ConfigMaps labelled grafana_dashboard=1 in every namespace, kube-state-metrics exposes our
    pool labels (for per-pool views), and no scraping of control-plane components that EKS, GKE and AKS manage and
    don't expose (their targets would only be down and alert).

    Storage: Prometheus keeps 15 days, and with Alertmanager (enabled by the chart) keeps its data on a volume of
    `storage_class`, or with None the cluster's default class; the chart's default is an emptyDir, lost with the pod.
    The class is the one the layer makes from the cloud composition's `block_storage` spec, encrypted with the
    region's key: on EKS (no default class of its own: EKS 1.30+ no longer marks `gp2` default) `gp3-encrypted`, the
    cluster's default, so the claims name no class; on GKE `pd-balanced-cmek` and on AKS `managed-csi-cmk`, which are
    not default (GKE's `standard-rwo` and AKS's `default` stay so, with Google- and platform-managed keys), so the
    claims name them. The release waits for the class.

    CRDs: Helm installs the chart's `crds/` once and never upgrades them; `crds.upgradeJob` (preview in 88.5.3,
    charts/crds/templates/upgrade) applies them server-side in a pre-install/pre-upgrade hook Job with its own
    ServiceAccount and a ClusterRole limited to those CRDs. It runs in the monitoring namespace, which has no
    NetworkPolicy or Pod Security label, and needs images docker.io/busybox (pinned: `crd_upgrade_job`) and
    registry.k8s.io/kubectl:<cluster version>.

    Cluster DNS: EKS and AKS run CoreDNS (metrics on 9153, the chart's `coreDns` default); GKE runs kube-dns, whose
    `k8s-app: kube-dns` pods serve metrics on 10054/10055 (dnsmasq, skydns) and nothing on 9153, so there the
    chart's `kubeDns` scrape replaces `coreDns` (both keys in kube-prometheus-stack 88.5.3 values.yaml).

    Alerts: Alertmanager uses `alertmanager_secret` as its configuration when given (`alertmanager_spec`), else the
    chart's, which routes everything to the receiver `null`."""
    gke = cloud is Cloud.GCP
    prometheus: dict[str, Any] = {
        "serviceMonitorSelectorNilUsesHelmValues": False,
        "podMonitorSelectorNilUsesHelmValues": False,
        "ruleSelectorNilUsesHelmValues": False,
        "retention": PROMETHEUS_RETENTION,
        "retentionSize": PROMETHEUS_RETENTION_SIZE,
        "storageSpec": _claim(PROMETHEUS_VOLUME_GIB, storage_class),
    }
    return {
        "crds": {"upgradeJob": crd_upgrade_job()},
        "prometheus": {"prometheusSpec": prometheus},
        "alertmanager": {"alertmanagerSpec": alertmanager_spec(storage_class, alertmanager_secret)},
        "grafana": {"sidecar": {"dashboards": {"enabled": True, "label": "grafana_dashboard", "labelValue": "1",
                                               "searchNamespace": "ALL"}}},
        "kube-state-metrics": {"metricLabelsAllowlist": [f"nodes=[{POOL_LABEL},{ACCELERATOR_LABEL},{CAPACITY_LABEL}]"]},
        "kubeControllerManager": {"enabled": False},
        "kubeScheduler": {"enabled": False},
        "kubeEtcd": {"enabled": False},
        "kubeProxy": {"enabled": False},
        "coreDns": {"enabled": not gke},
        "kubeDns": {"enabled": gke},
    }
