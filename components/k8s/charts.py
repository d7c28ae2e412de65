"""Pinned Helm charts of the Kubernetes layer and the one way they are declared (a helm.v3.Release).

Charts cannot be fetched while planning; a real `pulumi up` downloads exactly these versions. Each pin names
the place its version was seen published.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class Chart:
    chart: str
    """Chart name in `repo`, or a full `oci://` reference (then `repo` is None)."""
    version: str
    repo: str | None
    source: str
    """Where the version was seen published."""


GPU_OPERATOR = Chart(
    "gpu-operator", "v26.7.0", "https://nvidia.github.io/gpu-operator",
    "NVIDIA/gpu-operator gh-pages stable/index.yaml (the repo's index.yaml), 'helm release for v26.7.0' merged as "
    "5d1bf54a53bf15ba4d4d4327cd19cea436e7e73a; values read at tag v26.7.0")
DCGM_EXPORTER = Chart(
    "dcgm-exporter", "4.8.2", "https://nvidia.github.io/dcgm-exporter/helm-charts",
    "NVIDIA/dcgm-exporter gh-pages helm-charts/index.yaml ('Update helm charts for 4.5.3-4.8.2', "
    "ecd340dc2e9717757db9d1d662a621fe18e9514d); values read at tag 4.5.3-4.8.2")
NEURON = Chart(
    "oci://public.ecr.aws/neuron/neuron-helm-chart", "1.9.0", None,
    "aws-neuron/neuron-helm-charts release 1.9.0 (Neuron SDK 2.31.0): "
    "'helm upgrade --install neuron-helm-chart oci://public.ecr.aws/neuron/neuron-helm-chart --version 1.9.0'")
KUEUE = Chart(
    "oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", None,
    "kubernetes-sigs/kueue tag v0.19.2, charts/kueue/README.md: "
    "'helm install kueue oci://registry.k8s.io/kueue/charts/kueue --version=\"0.19.2\"'")
KUBE_PROMETHEUS_STACK = Chart(
    "kube-prometheus-stack", "88.5.3", "https://prometheus-community.github.io/helm-charts",
    "prometheus-community/helm-charts chart-releaser tag kube-prometheus-stack-88.5.3 (operator v0.93.1)")
# Its Prometheus Operator CRDs follow a chart bump through the chart's `crds.upgradeJob` (monitoring_objects), not
# through Helm, which never upgrades a chart's crds/.


AUTOSCALER_REPO = "https://kubernetes.github.io/autoscaler"
_AUTOSCALER_SOURCE = ("kubernetes/autoscaler chart-releaser tag cluster-autoscaler-chart-{v} ({commit}), "
                      "charts/cluster-autoscaler/Chart.yaml appVersion {app}: the last chart of that minor")
CLUSTER_AUTOSCALER = {  # Kubernetes minor -> chart; the autoscaler's minor must match the cluster's (its README)
    minor: Chart("cluster-autoscaler", version, AUTOSCALER_REPO, _AUTOSCALER_SOURCE.format(v=version, commit=commit, app=app))
    for minor, version, app, commit in (
        ("1.32", "9.46.6", "1.32.0", "13dba1751ce0b86465026c04afcaec32d2fcff1f"),
        ("1.33", "9.51.0", "1.33.0", "9befb31fd94d73ae0b888bd9536ae085cd9304e1"),
        ("1.34", "9.53.0", "1.34.2", "a2db9eb71c285fe5779c622e9255b17b08e78147"),
        ("1.35", "9.59.0", "1.35.0", "5a0b98e45f896e98132737240ac131a519d3b33d"),
    )
}
AWS_LOAD_BALANCER_CONTROLLER = Chart(
    "aws-load-balancer-controller", "3.5.0", "https://aws.github.io/eks-charts",
    "aws/eks-charts gh-pages index.yaml (aws-load-balancer-controller-3.5.0.tgz, appVersion v3.5.0, created "
    "2026-08-03), master 5239609242f3430be50fb0b714a24d3ef2b47983 'aws-load-balancer-controller: v3.5.0'")

EFA_DEVICE_PLUGIN = Chart(
    "aws-efa-k8s-device-plugin", "v0.5.30", "https://aws.github.io/eks-charts",
    "aws/eks-charts gh-pages index.yaml (aws-efa-k8s-device-plugin-v0.5.30.tgz, appVersion v0.5.20, created "
    "2026-08-03); master 5239609242f3430be50fb0b714a24d3ef2b47983 stable/aws-efa-k8s-device-plugin/Chart.yaml "
    "version v0.5.30 (last changed in bfe91c4b9257c80f754ad4b3d6a9a3c239b2b8ec); values read there")


def release(name: str, chart: Chart, namespace: str, values: dict[str, Any], opts: pulumi.ResourceOptions,
            *, release_name: str, create_namespace: bool = False) -> k8s.helm.v3.Release:
    """A Helm release of a pinned chart with a fixed release name (resource names inside follow from it)."""
    return k8s.helm.v3.Release(
        name,
        k8s.helm.v3.ReleaseArgs(
            name=release_name,
            chart=chart.chart,
            version=chart.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=chart.repo) if chart.repo else None,
            namespace=namespace,
            create_namespace=create_namespace,
            values=values,
            # A failed install or upgrade rolls back instead of leaving a half-applied release.
            atomic=True,
            max_history=10,
        ),
        opts=opts,
    )
