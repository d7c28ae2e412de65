"""Blob lifecycle management from the spec's tiering thresholds (pure; storage.py turns it into a policy)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from components.spec import BucketSpec

# Blob Archive is not offered on zone-redundant accounts (ZRS, GZRS, RA-GZRS), only on LRS, GRS and RA-GRS: the
# lifecycle policy reference lists TierToArchive as not supported "in accounts that are configured for" zone-redundant
# storage (learn.microsoft.com/azure/storage/blobs/lifecycle-management-policy-structure).
ARCHIVE_SKUS = ("Standard_LRS", "Standard_GRS", "Standard_RAGRS")
# A new account is zone-redundant unless its lifecycle archives, then locally redundant. Chosen at creation only
# (storage.py keeps the SKU an account was created with).
_SKU_WITH_ARCHIVE = "Standard_LRS"
_SKU_WITHOUT_ARCHIVE = "Standard_ZRS"


@dataclass(frozen=True)
class BlobLifecycle:
    """Days after creation for each action of the base blob, and for previous versions. None: no such action."""

    tier_to_cool: int | None
    tier_to_cold: int | None
    tier_to_archive: int | None
    delete: int | None
    delete_versions: int | None
    """Days after a version became noncurrent (its creation) before it is deleted."""

    @property
    def base_blob_actions(self) -> dict[str, int]:
        """Base-blob actions that apply, coldest last, e.g. {"tier_to_cool": 30, "delete": 730}."""
        steps = {"tier_to_cool": self.tier_to_cool, "tier_to_cold": self.tier_to_cold,
                 "tier_to_archive": self.tier_to_archive, "delete": self.delete}
        return {action: days for action, days in steps.items() if days is not None}

    @property
    def empty(self) -> bool:
        return not self.base_blob_actions and self.delete_versions is None

    def without_archive(self) -> BlobLifecycle:
        return dataclasses.replace(self, tier_to_archive=None)


def blob_lifecycle(bucket: BucketSpec) -> BlobLifecycle:
    tiering = bucket.tiering
    return BlobLifecycle(
        tier_to_cool=tiering.warm_after_days,
        tier_to_cold=tiering.cold_after_days,
        tier_to_archive=tiering.archive_after_days,
        delete=tiering.expire_after_days,
        delete_versions=bucket.noncurrent_expire_after_days if bucket.versioning else None,
    )


def account_sku(bucket: BucketSpec) -> str:
    """Redundancy of a new account that supports every tier the lifecycle uses (zone-redundant unless Archive is
    needed). An existing account keeps the SKU it was created with."""
    return _SKU_WITH_ARCHIVE if bucket.tiering.archive_after_days is not None else _SKU_WITHOUT_ARCHIVE
