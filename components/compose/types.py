"""What each cloud's composition hands back: exported outputs and the clusters for the Kubernetes layer."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi

from components.spec import Cloud, InferenceSpec, Platform, RegionSpec

if TYPE_CHECKING:
    from components.k8s.block_storage import StorageClassSpec
    from components.k8s.lustre import LustreMount


@dataclass(frozen=True)
class AutonegBinding:
    """What the autoneg controller needs on a GKE cluster behind the GCP global load balancer."""

    project: str
    """GCP project of the global backend service."""
    namespace: str
    service_account: str
    """The Kubernetes service account the load balancer's IAM binding grants its role to (Workload Identity)."""
    iam: pulumi.Resource
    """The global load balancer component (custom role and IAM binding); the controller starts after it."""


@dataclass(frozen=True)
class IrsaAccount:
    """A Kubernetes service account and the IAM role (IRSA) whose trust names exactly it."""

    namespace: str
    name: str
    role_arn: pulumi.Output[str]


@dataclass(frozen=True)
class InferenceTarget:
    """A region's inference target group (AWS), for the TargetGroupBinding that fills it with the Service's pods."""

    target_group_arn: pulumi.Output[str]
    load_balancer_security_group_id: pulumi.Output[str] | None
    """The load balancer's security group: admitted to the pods on the port. None: no rule."""
    endpoint: pulumi.Resource
    """The inference endpoint component (target group, security group rules); the binding waits for it."""


@dataclass(frozen=True)
class InferenceBackend:
    """A serving region's inference Service, as the Kubernetes layer creates it (components.k8s.inference)."""

    spec: InferenceSpec
    """Namespace, name, port and pod selector of the Service."""
    sources: tuple[str, ...]
    """CIDRs the region's load balancer and its health checks reach the pods from: the namespace admits them on the
    port. Empty: no NetworkPolicy (nothing outside the cluster reaches the Service)."""
    annotations: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    """The cloud's annotations on the Service (GCP: NEG and autoneg; Azure: load balancer and Private Link). Default
    none."""
    load_balancer: bool = False
    """Azure: type LoadBalancer (AKS's cloud provider builds the load balancer), ready once it has an address. Default
    off: ClusterIP, which the load balancer reaches at the pods' own addresses."""
    target: InferenceTarget | None = None
    """AWS: the target group a TargetGroupBinding fills with the Service's pods. Default None (no binding)."""


@dataclass(frozen=True)
class EksControllers:
    """What the Cluster Autoscaler and the AWS Load Balancer Controller need on an EKS cluster."""

    region: str
    cluster_name: pulumi.Output[str]
    kubernetes_version: str
    """The cluster's Kubernetes minor version, which picks the autoscaler chart: the spec's value or
    `EKS_KUBERNETES_VERSION`, so the chart is known (and checked) while planning."""
    version_path: str
    """Config path of `cluster.kubernetes_version`, for error messages."""
    vpc_id: pulumi.Output[str]
    autoscaler: IrsaAccount
    lb_controller: IrsaAccount
    iam: pulumi.Resource
    """The IAM roles component; the controllers start after it."""


@dataclass
class ClusterHandle:
    """A cluster built by a cloud composition, as the Kubernetes layer needs it."""

    cloud: Cloud
    region: str
    spec: RegionSpec
    """The region's spec: GPU pools, TPU slices and storage drive what the layer installs."""
    name: str
    """Logical name, `<environment>-<region>`; prefixes the Kubernetes layer's resource names."""
    kubeconfig: pulumi.Output[str]
    """Secret kubeconfig that authenticates through the cloud CLI's exec plugin (no static credentials)."""
    resource: pulumi.Resource
    """The cluster component; Kubernetes objects depend on it."""
    node_pools: list[pulumi.Resource] = field(default_factory=list)
    """Accelerator node pools; device plugins wait for them."""
    autoneg: AutonegBinding | None = None
    """Set by the GCP composition on GKE clusters in the global endpoint's serving regions: the Kubernetes layer
    installs the autoneg controller there. Default None (no controller)."""
    eks: EksControllers | None = None
    """Set by the AWS composition on every EKS cluster: the layer installs the Cluster Autoscaler and the AWS Load
    Balancer Controller (and binds the inference target group). Default None (neither)."""
    lustre: tuple[LustreMount, ...] = ()
    """Set by each cloud's composition: the region's Lustre file systems, as the CSI driver mounts them; the layer
    gives every team a volume and claim of each. Default none (no Lustre volumes)."""
    inference: InferenceBackend | None = None
    """Set by each cloud's composition in regions with `inference`: the layer creates the Service and admits the
    load balancer to it. Default None (no inference Service)."""
    storage_class: StorageClassSpec | None = None
    """Set by every composition: block volumes encrypted with the region's key (`components.k8s.block_storage`). The
    layer creates the class before the claims that use it (Prometheus's and Alertmanager's): on EKS, which has no
    default StorageClass, as the default; on GKE and AKS beside the platform's default class, and the claims name it.
    Default None (no class: the claims use the cluster's own default)."""


@dataclass
class CloudResult:
    outputs: dict[str, Any]
    """Exported under the cloud's key: per region, network/cluster/storage IDs and endpoints."""
    clusters: list[ClusterHandle] = field(default_factory=list)
    after_kubernetes: Callable[[Mapping[str, pulumi.Resource]], dict[str, Any]] | None = None
    """Resources that need the Kubernetes layer's objects (Azure Front Door: its origins need the Private Link
    services AKS makes for the inference Services). Called once the layer is registered, with each cluster's
    inference Service by cluster name (none when `addons.enabled` is false); returns outputs to add to `outputs`.
    Default None."""


def region_name(platform: Platform, region: str) -> str:
    """Instance name of a region's components: `<environment>-<region>` (stable: part of every URN)."""
    return f"{platform.environment}-{region}"
