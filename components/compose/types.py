"""What each cloud's composition hands back: exported outputs and the clusters for the Kubernetes layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.spec import Cloud, Platform, RegionSpec


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


@dataclass
class CloudResult:
    outputs: dict[str, Any]
    """Exported under the cloud's key: per region, network/cluster/storage IDs and endpoints."""
    clusters: list[ClusterHandle] = field(default_factory=list)


def region_name(platform: Platform, region: str) -> str:
    """Instance name of a region's components: `<environment>-<region>` (stable: part of every URN)."""
    return f"{platform.environment}-{region}"
