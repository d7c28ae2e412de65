"""GCS lifecycle rules from the spec's tiering (pure).

Objects move STANDARD -> NEARLINE -> COLDLINE -> ARCHIVE at the spec's warm/cold/archive ages (a skipped tier
is skipped), are deleted at `expire_after_days`, and previous versions are deleted `noncurrent_expire_after_days`
after they become noncurrent. Each class change only matches objects in a warmer class, so a rule never moves
an object back up. With Autoclass, GCS moves objects between classes itself and refuses SetStorageClass rules,
so only the delete rules remain.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.spec import BucketSpec

STORAGE_CLASSES = ("STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE")
"""GCS storage classes from warmest to coldest."""
AUTOCLASS_TERMINAL_CLASS = "ARCHIVE"
"""Autoclass terminal class: objects not read for a year end in ARCHIVE (the other choice, NEARLINE, stops early)."""
ABORT_MULTIPART_AFTER_DAYS = 7
"""Incomplete XML multipart uploads are aborted after a week, so their parts stop costing storage."""


@dataclass(frozen=True)
class LifecycleRule:
    """One GCS lifecycle rule, in the provider's vocabulary."""

    action: str
    """"SetStorageClass", "Delete" or "AbortIncompleteMultipartUpload"."""
    age_days: int | None = None
    storage_class: str | None = None
    """Target class of a SetStorageClass rule."""
    matches_storage_classes: tuple[str, ...] = ()
    """Classes the rule applies to (empty: all)."""
    with_state: str | None = None
    """"LIVE" (current versions) or "ARCHIVED" (noncurrent versions); None: both."""
    days_since_noncurrent: int | None = None


def lifecycle_rules(bucket: BucketSpec) -> list[LifecycleRule]:
    """The lifecycle rules of a bucket, class changes first (warm to cold), then deletions."""
    rules: list[LifecycleRule] = []
    tiering = bucket.tiering
    if not bucket.autoclass:
        steps = [("NEARLINE", tiering.warm_after_days), ("COLDLINE", tiering.cold_after_days), ("ARCHIVE", tiering.archive_after_days)]
        for target, age in steps:
            if age is None:
                continue
            warmer = STORAGE_CLASSES[: STORAGE_CLASSES.index(target)]
            rules.append(LifecycleRule(action="SetStorageClass", age_days=age, storage_class=target, matches_storage_classes=warmer))
    if tiering.expire_after_days is not None:
        # In a versioned bucket deleting a live object makes it noncurrent; the noncurrent rule below removes it later.
        rules.append(LifecycleRule(action="Delete", age_days=tiering.expire_after_days, with_state="LIVE"))
    if bucket.versioning:
        rules.append(LifecycleRule(action="Delete", with_state="ARCHIVED", days_since_noncurrent=bucket.noncurrent_expire_after_days))
    rules.append(LifecycleRule(action="AbortIncompleteMultipartUpload", age_days=ABORT_MULTIPART_AFTER_DAYS))
    return rules
