"""S3 lifecycle math from the spec's tiering thresholds (pure; no Pulumi).

STANDARD -> (warm) STANDARD_IA or INTELLIGENT_TIERING -> (cold) GLACIER_IR -> (archive) DEEP_ARCHIVE, optional
expiry of current objects, expiry of noncurrent versions, and cleanup of incomplete multipart uploads. A bucket linked
to FSx for Lustre comes without the archive step (storage.py: FSx cannot read DEEP_ARCHIVE objects).
"""

from __future__ import annotations

from dataclasses import dataclass

from components.spec import Tiering
from components.spec.aws import WarmStorageClass

COLD_CLASS = "GLACIER_IR"
ARCHIVE_CLASS = "DEEP_ARCHIVE"
ABORT_MULTIPART_AFTER_DAYS = 7
_WARM_CLASS = {WarmStorageClass.STANDARD_IA: "STANDARD_IA", WarmStorageClass.INTELLIGENT_TIERING: "INTELLIGENT_TIERING"}


@dataclass(frozen=True)
class Transition:
    days: int
    storage_class: str


@dataclass(frozen=True)
class Lifecycle:
    transitions: tuple[Transition, ...]
    """Ascending by days."""
    expire_after_days: int | None
    """Delete current objects at this age; None: never (expired delete markers are still cleaned up)."""
    noncurrent_expire_after_days: int | None
    """Delete previous versions this long after they became noncurrent; None for unversioned buckets."""
    abort_multipart_after_days: int = ABORT_MULTIPART_AFTER_DAYS


def lifecycle(tiering: Tiering, warm_class: WarmStorageClass, *, versioned: bool, noncurrent_expire_after_days: int) -> Lifecycle:
    """The lifecycle of a bucket; tiers set to None are skipped (the spec guarantees ascending thresholds)."""
    steps = [(tiering.warm_after_days, _WARM_CLASS[warm_class]), (tiering.cold_after_days, COLD_CLASS),
             (tiering.archive_after_days, ARCHIVE_CLASS)]
    return Lifecycle(
        transitions=tuple(Transition(days, storage_class) for days, storage_class in steps if days is not None),
        expire_after_days=tiering.expire_after_days,
        noncurrent_expire_after_days=noncurrent_expire_after_days if versioned else None,
    )
