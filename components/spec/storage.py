"""Storage spec: Lustre file systems and tiered object storage buckets."""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import Field, model_validator

from .common import BUCKET_PREFIX_PATTERN, Days, FieldError, Name, SpecModel


class LustreDeployment(str, enum.Enum):
    PERSISTENT = "persistent"
    """Replicated, survives server failure (AWS PERSISTENT_2, GCP Managed Lustre, Azure AMLFS Durable). Default."""
    SCRATCH = "scratch"
    """Cheaper, no replication, for dev and temporary data (AWS SCRATCH_2 only)."""


class LustreSpec(SpecModel):
    """A managed Lustre file system (FSx for Lustre, GCP Managed Lustre, Azure Managed Lustre)."""

    size_gib: Annotated[int, Field(ge=1)]
    """Capacity in GiB; must follow the cloud's increments for the tier (`aiinfra catalog` lists them)."""
    deployment: LustreDeployment = LustreDeployment.PERSISTENT
    """Default `persistent`."""
    throughput_mbps_per_tib: int | None = None
    """Throughput tier in MB/s per TiB (AWS 125/250/500/1000, GCP 125/250/500/1000, Azure 40/125/250/500).
    Default: the cloud's default tier for the deployment (see the catalog)."""
    bucket: Name | None = None
    """Name of a bucket in the same region to import from and export to. Default: no data repository link.
    A file deleted on the file system is never deleted from the bucket (on AWS, where export is automatic, deletions
    are not exported); delete from the bucket to remove data."""
    bucket_prefix: Annotated[str, Field(pattern=BUCKET_PREFIX_PATTERN)] = ""
    """Prefix inside `bucket` linked to the file system root. Default: the whole bucket."""
    data_zone: Name | None = None
    """Residency zone from `compliance.data_zones` this file system's data must stay in. Default: none."""


class Tiering(SpecModel):
    """Age thresholds (days since object creation) for moving objects to colder storage classes."""

    warm_after_days: Days | None = 30
    """To infrequent-access (S3 STANDARD_IA, GCS NEARLINE, Blob Cool). Default 30. None: skip."""
    cold_after_days: Days | None = 90
    """To cold (S3 GLACIER_IR, GCS COLDLINE, Blob Cold). Default 90. None: skip."""
    archive_after_days: Days | None = 365
    """To archive (S3 DEEP_ARCHIVE, GCS ARCHIVE, Blob Archive). Default 365. None: skip."""
    expire_after_days: Days | None = None
    """Delete current objects after this age. Default: never."""

    @model_validator(mode="after")
    def _ordered(self) -> Tiering:
        steps = [
            (name, getattr(self, name))
            for name in ("warm_after_days", "cold_after_days", "archive_after_days", "expire_after_days")
            if getattr(self, name) is not None
        ]
        for (first, a), (second, b) in zip(steps, steps[1:]):
            if a >= b:
                raise FieldError(second, f"{second} ({b}) must be greater than {first} ({a})")
        return self


class DataClass(str, enum.Enum):
    DATASETS = "datasets"
    MODELS = "models"
    CHECKPOINTS = "checkpoints"
    ARTIFACTS = "artifacts"
    LOGS = "logs"


class BucketSpec(SpecModel):
    """An encrypted, versioned, private bucket (S3, GCS, Blob container) with lifecycle tiering."""

    data_class: DataClass = DataClass.DATASETS
    """What the bucket holds; becomes a label and (Azure) the container name. Default `datasets`."""
    tiering: Tiering = Tiering()
    """Lifecycle transitions. Default: warm 30, cold 90, archive 365 days, never expire."""
    autoclass: bool = False
    """GCP only: let Autoclass move objects instead of `tiering` rules (terminal class ARCHIVE). Default off."""
    versioning: bool = True
    """Keep previous object versions. Default on; turning it off is reported by the policy pack."""
    noncurrent_expire_after_days: Days = 90
    """Delete previous versions this many days after they become noncurrent. Default 90."""
    soft_delete_days: Annotated[int, Field(ge=7, le=90)] = 7
    """GCS soft-delete / Blob soft-delete retention. Default 7 days (the GCS default). GCP and Azure only: setting it on
    AWS is a config error (S3 has no soft delete; versioning keeps deleted objects)."""
    data_zone: Name | None = None
    """Residency zone from `compliance.data_zones` this bucket's data must stay in (e.g. "eu"). Default: none."""
