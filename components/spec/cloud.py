"""What every cloud's config shares: regions with their network, cluster, pools and storage."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .common import Name, SpecModel
from .compute import ClusterSpec, GpuPoolSpec, TpuSliceSpec
from .endpoint import GlobalEndpointSpec, InferenceSpec
from .network import NetworkSpec
from .storage import BucketSpec, LustreSpec


class RegionSpec(SpecModel):
    """Everything one environment runs in one cloud region."""

    network: NetworkSpec
    """The region's encrypted network (required)."""
    cluster: ClusterSpec | None = None
    """A Kubernetes cluster. Default: none. GPU pools and TPU slices in GKE mode need one."""
    gpu_pools: dict[Name, GpuPoolSpec] = {}
    """GPU/accelerator node pools by name. Default none."""
    tpu_slices: dict[Name, TpuSliceSpec] = {}
    """TPU slices by name — GCP only. Default none."""
    lustre: dict[Name, LustreSpec] = {}
    """Lustre file systems by name. Default none."""
    buckets: dict[Name, BucketSpec] = {}
    """Object storage buckets by name. Default none."""
    inference: InferenceSpec | None = None
    """An inference service behind a regional load balancer, joined to the cloud's global endpoint. Default none."""
    resource_group: str | None = None
    """Azure only: an existing resource group to deploy into. Default: one is created per environment and region."""


class CloudSpec(SpecModel):
    regions: Annotated[dict[str, RegionSpec], Field(min_length=1)]
    """Regions by the cloud's own region name (us-east-1, us-central1, westeurope); the name must be in the cloud's
    region list in components/catalog/data/regions.json."""
    global_endpoint: GlobalEndpointSpec | None = None
    """Multi-region load balancer in front of every region with `inference`. Default none."""
