"""Physical names that must be globally unique on AWS (pure; no Pulumi)."""

from __future__ import annotations

import hashlib

S3_BUCKET_MAX = 63
_HASH = 8
# S3 reserves these name prefixes (bucket naming rules); such environments get an "ai-" in front.
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")


def short_hash(*parts: str) -> str:
    """A stable 8-hex-digit key of `parts` (joined by '/'): bucket name suffixes, and child names keyed by a value
    rather than a list position (an IAM principal's ARN)."""
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:_HASH]


def bucket_name(environment: str, region: str, name: str, account_id: str, kind: str = "data") -> str:
    """A stable, globally unique S3 bucket name: `<environment>-<name>-<hash>`.

    The hash of account, region, environment, kind and name makes it unique across accounts and regions (and
    keeps a data bucket named "logs" apart from the region's log bucket, kind "logs"), while the readable part
    stays within the 63-character limit (environment <= 16, name <= 24 characters).
    """
    readable = f"{environment}-{name}"
    if readable.startswith(_RESERVED_PREFIXES):
        readable = f"ai-{readable}"
    readable = readable[: S3_BUCKET_MAX - _HASH - 1].rstrip("-")
    return f"{readable}-{short_hash(account_id, region, environment, kind, name)}"

