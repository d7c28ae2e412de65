"""Storage spec: Lustre file systems and tiered object storage buckets."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated

from pydantic import Field, model_validator

from .common import BUCKET_PREFIX_PATTERN, Cloud, Days, FieldError, Name, SpecModel


class LustreDeployment(str, enum.Enum):
    PERSISTENT = "persistent"
    """Replicated, survives server failure (AWS PERSISTENT_2, GCP Managed Lustre, Azure AMLFS Durable). Default."""
    SCRATCH = "scratch"
    """Cheaper, no replication, for dev and temporary data (AWS SCRATCH_2 only)."""


class LustreSpec(SpecModel):
    """A managed Lustre file system (FSx for Lustre, GCP Managed Lustre, Azure Managed Lustre)."""

    size_gib: Annotated[int, Field(ge=1)]
    """Capacity in GiB; must follow the cloud's increments for the tier (`aiinfra catalog` lists them). A later change
    may only grow it (AWS and GCP refuse decreases). On GCP the size at creation also caps growth: a tier with a finer
    step below a threshold (250 MB/s/TiB: 36,000 GiB steps up to 6,120,000 GiB) grows an instance created at or below
    the threshold only up to it (cloud.google.com/managed-lustre/docs/increase-capacity); create it above the threshold
    to go further."""
    deployment: LustreDeployment = LustreDeployment.PERSISTENT
    """Default `persistent`."""
    throughput_mbps_per_tib: int | None = None
    """Throughput tier in MB/s per TiB (AWS 125/250/500/1000, GCP 125/250/500/1000, Azure 40/125/250/500).
    Default: the cloud's default tier for the deployment (see the catalog)."""
    bucket: Name | None = None
    """Name of a bucket in the same region to import from and export to. Default: no data repository link.
    A file deleted on the file system is never deleted from the bucket (on AWS, where export is automatic, deletions
    are not exported); delete from the bucket to remove data. On AWS and Azure the linked bucket gets no archive step
    by default, and setting its `tiering.archive_after_days` is a config error: FSx for Lustre and Azure Managed Lustre
    cannot read an object in S3 Glacier Deep Archive or the Blob Archive tier until it is restored."""
    bucket_prefix: Annotated[str, Field(pattern=BUCKET_PREFIX_PATTERN)] = ""
    """Folder of `bucket` the file system works on, written with its trailing slash (`train/`). Default: the whole
    bucket. What it maps to differs per cloud:
    AWS: the folder is linked to the file system root (`s3://<bucket>/train/` is `/`), both ways.
    GCP: the exported `import_command` copies the folder into the file system root; export is run by hand.
    Azure: only blobs under the folder are imported, and they keep their full names (`train/x` is `/train/x` on the
    file system, not `/x`); Azure Managed Lustre takes the prefix at creation only: changing it needs a new file
    system."""
    data_zone: Name | None = None
    """Residency zone from `compliance.data_zones` this file system's data must stay in. Default: none."""


class Tiering(SpecModel):
    """Age thresholds (days since object creation) for moving objects to colder storage classes."""

    warm_after_days: Days | None = 30
    """To infrequent-access (S3 STANDARD_IA, GCS NEARLINE, Blob Cool). Default 30. None: skip."""
    cold_after_days: Days | None = 90
    """To cold (S3 GLACIER_IR, GCS COLDLINE, Blob Cold). Default 90. None: skip."""
    archive_after_days: Days | None = 365
    """To archive (S3 DEEP_ARCHIVE, GCS ARCHIVE, Blob Archive). Default 365; on AWS and Azure none for a bucket linked
    to a Lustre file system (`lustre.<name>.bucket`), where setting it is a config error (S3 Deep Archive and Blob
    Archive are offline: the file system cannot read an archived object). None: skip."""
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
    """Lifecycle transitions. Default: warm 30, cold 90, archive 365 days (none on AWS and Azure for a bucket linked to
    Lustre), never expire."""
    autoclass: bool = False
    """GCP only: let Autoclass move objects instead of `tiering` rules (terminal class ARCHIVE); `tiering` then takes
    `expire_after_days` only (a warm, cold or archive step is refused). Default off."""
    versioning: bool = True
    """Keep previous object versions. Default on; turning it off is reported by the policy pack."""
    noncurrent_expire_after_days: Days = 90
    """Delete previous versions this many days after they become noncurrent. Default 90."""
    soft_delete_days: Annotated[int, Field(ge=7, le=90)] = 7
    """GCS soft-delete / Blob soft-delete retention. Default 7 days (the GCS default). GCP and Azure only: setting it on
    AWS is a config error (S3 has no soft delete; versioning keeps deleted objects)."""
    data_zone: Name | None = None
    """Residency zone from `compliance.data_zones` this bucket's data must stay in (e.g. "eu"). Default: none."""


# Archive classes a Lustre file system cannot read from: objects there are offline until restored. S3 Glacier Deep
# Archive objects "are not accessible in real time" (docs.aws.amazon.com/AmazonS3/latest/userguide/restoring-objects.html)
# and FSx for Lustre cannot load them (aws.amazon.com/blogs/storage/automate-file-retrieval-from-s3-glacier-when-using-
# fsx-for-lustre). Azure Managed Lustre pulls a blob's content when its file is first read (learn.microsoft.com/azure/
# azure-managed-lustre/blob-integration), and an archived blob "can't be read or modified" until rehydrated
# (learn.microsoft.com/azure/storage/blobs/storage-blob-rehydration). GCS ARCHIVE is online (low latency, no offline
# retrieval: cloud.google.com/storage/docs/storage-classes), as are S3 GLACIER_IR, S3 Intelligent-Tiering without its
# opt-in archive tiers, and the Blob Cold tier: those steps stay.
_OFFLINE_ARCHIVE = {Cloud.AWS: ("S3 Glacier Deep Archive", "FSx for Lustre", "restored"),
                    Cloud.AZURE: ("the Blob Archive tier", "Azure Managed Lustre", "rehydrated")}


def linked_tiering(tiering: Tiering) -> Tiering:
    """The tiering of a bucket linked to a Lustre file system on AWS or Azure: without the archive step unless it was
    set (which the checks refuse: see `linked_archive_issues`)."""
    if "archive_after_days" in tiering.model_fields_set:
        return tiering
    return tiering.model_copy(update={"archive_after_days": None})


def bucket_folder(prefix: str) -> str:
    """`bucket_prefix` as a folder: `train/` (one trailing slash, none leading), or "" for the whole bucket. `train`
    alone would also match `training/`."""
    folder = prefix.strip("/")
    return f"{folder}/" if folder else ""


def linked_buckets(lustre: Mapping[str, LustreSpec]) -> dict[str, list[str]]:
    """Bucket name -> the Lustre file systems linked to it, in config order."""
    linked: dict[str, list[str]] = {}
    for name, fs in lustre.items():
        if fs.bucket is not None:
            linked.setdefault(fs.bucket, []).append(name)
    return linked


def linked_archive_issues(cloud: Cloud, lustre: Mapping[str, LustreSpec],
                          buckets: Mapping[str, BucketSpec]) -> list[tuple[tuple[str, ...], str]]:
    """An archive step set on a bucket a Lustre file system links, where the archive class is offline: (path inside
    the region, message)."""
    if cloud not in _OFFLINE_ARCHIVE:
        return []
    archive, service, restore = _OFFLINE_ARCHIVE[cloud]
    issues: list[tuple[tuple[str, ...], str]] = []
    for bucket_name, file_systems in linked_buckets(lustre).items():
        bucket = buckets.get(bucket_name)
        days = linked_tiering(bucket.tiering).archive_after_days if bucket is not None else None
        if days is None:
            continue  # not set (so dropped), set to null, or an undeclared bucket (reported at the file system)
        names = " and ".join(f"'{fs}' (lustre.{fs}.bucket)" for fs in file_systems)
        which = "file systems" if len(file_systems) > 1 else "file system"
        issues.append((("buckets", bucket_name, "tiering", "archive_after_days"),
                       f"archive_after_days {days} would move objects of bucket '{bucket_name}' to {archive}, which "
                       f"{service} {which} {names} cannot read until each object is {restore}; remove "
                       "archive_after_days (a bucket linked to Lustre gets no archive step) or set it to null"))
    return issues
