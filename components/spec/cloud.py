"""What every cloud's config shares: regions with their network, cluster, pools and storage."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from .common import Name, SpecModel, null_not_in_schema, refuse_null_block
from .compute import ClusterSpec, GpuPoolSpec, TpuSliceSpec
from .endpoint import GlobalEndpointSpec, InferenceSpec
from .network import NetworkSpec
from .storage import BucketSpec, LustreSpec


class RegionSpec(SpecModel):
    """Everything one environment runs in one cloud region."""

    network: NetworkSpec
    """The region's encrypted network (required)."""
    cluster: ClusterSpec | None = Field(None, json_schema_extra=null_not_in_schema)
    """A Kubernetes cluster. Default: none. GPU pools and TPU slices in GKE mode need one. `cluster: {}` gives one with
    the default settings; an empty `cluster:` (YAML null) is refused rather than read as none."""
    gpu_pools: dict[Name, GpuPoolSpec] = {}
    """GPU/accelerator node pools by name. Default none."""
    tpu_slices: dict[Name, TpuSliceSpec] = {}
    """TPU slices by name — GCP only. Default none."""
    lustre: dict[Name, LustreSpec] = {}
    """Lustre file systems by name. Default none."""
    buckets: dict[Name, BucketSpec] = {}
    """Object storage buckets by name. Default none."""
    inference: InferenceSpec | None = Field(None, json_schema_extra=null_not_in_schema)
    """An inference service behind a regional load balancer, joined to the cloud's global endpoint. Default none (an
    empty `inference:`, YAML null, is refused: write `inference: {}` or leave the key out)."""
    resource_group: str | None = None
    """Azure only: an existing resource group to deploy into. Default: one is created per environment and region."""

    @field_validator("cluster", "inference", mode="before")
    @classmethod
    def _not_null(cls, value: object, info: ValidationInfo) -> object:
        what = {"cluster": "a cluster", "inference": "an inference service"}[info.field_name]
        return refuse_null_block(value, info.field_name, f"write `{info.field_name}: {{}}` for {what} with the default settings",
                                 f"no {what.split(' ', 1)[1]}")


class CloudSpec(SpecModel):
    regions: Annotated[dict[str, RegionSpec], Field(min_length=1)]
    """Regions by the cloud's own region name (us-east-1, us-central1, westeurope); the name must be in the cloud's
    region list in components/catalog/data/regions.json."""
    global_endpoint: GlobalEndpointSpec | None = Field(None, json_schema_extra=null_not_in_schema)
    """Multi-region load balancer in front of every region with `inference`. Default none (an empty
    `global_endpoint:`, YAML null, is refused: write `global_endpoint: {}` or leave the key out)."""

    @field_validator("global_endpoint", mode="before")
    @classmethod
    def _not_null(cls, value: object, info: ValidationInfo) -> object:
        return refuse_null_block(value, "global_endpoint", "write `global_endpoint: {}` for a global endpoint with the default "
                                 "settings", "no global endpoint")
