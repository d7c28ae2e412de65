"""GCP resource names that must follow a service's own rules (pure).

Most GCP children keep Pulumi's auto-names (`<child name>-<random>`), which never collide when a resource is
replaced. These are the exceptions, whose name is part of the contract or has to fit a tight pattern:
- bucket names are global across every GCP customer (3-63 characters, no "goog" prefix, no "google");
- service account IDs are 6-30 characters;
- Managed Lustre instance IDs are at most 63 characters and the file system name at most 8 letters/digits.
Each function shortens its parts and appends a hash of all of them in full, so the result is stable across
runs and two different inputs never share a name after shortening.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

_HASH = 6
_FORBIDDEN = ("google", "g00gle")


def _digest(parts: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:_HASH]


def _slug(text: str) -> str:
    """Lower-case letters, digits and single hyphens."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", text.lower())).strip("-")


def hashed_name(parts: Sequence[str], max_length: int, *, min_length: int = 1) -> str:
    """`<parts joined by '-', shortened>-<hash>`: starts with a letter, ends with a letter or digit, at most
    `max_length` characters. The hash covers every part in full."""
    if max_length < _HASH + 3:
        raise ValueError(f"max_length {max_length} leaves no room for a name and its {_HASH}-character hash")
    body = _slug("-".join(parts)) or "x"
    if not body[0].isalpha():
        body = f"x{body}"
    body = body[: max_length - _HASH - 1].rstrip("-")
    name = f"{body}-{_digest(parts)}"
    return name if len(name) >= min_length else name.ljust(min_length, "0")


def bucket_name(project: str, environment: str, region: str, bucket: str) -> str:
    """A globally unique GCS bucket name for a platform bucket: `<project>-<environment>-<bucket>-<hash>`.

    The project ID is globally unique, so including it (and hashing project, environment, region and bucket)
    keeps names from colliding with other customers' buckets. Names with "google" are not allowed by GCS,
    so that word is replaced before hashing the original.
    """
    name = hashed_name([project, environment, bucket, region], 63, min_length=3)
    for word in _FORBIDDEN:
        name = name.replace(word, "gcp")
    if name.startswith("goog"):
        name = f"b{name[1:]}"
    return name


def service_account_id(environment: str, region: str, purpose: str) -> str:
    """A service account ID (6-30 characters, `[a-z]([-a-z0-9]*[a-z0-9])`) for one purpose in one region."""
    name = resource_id(environment, region, purpose, max_length=30)
    return name if len(name) >= 6 else hashed_name([environment, region, purpose], 30, min_length=6)


def resource_id(*parts: str, max_length: int = 63) -> str:
    """An explicit resource ID (Lustre instance, log bucket): RFC 1035 style, at most `max_length` characters."""
    slug = _slug("-".join(parts))
    if slug and slug[0].isalpha() and len(slug) <= max_length:
        return slug
    return hashed_name(parts, max_length)


def member_key(member: str) -> str:
    """A short stable key of an IAM member (`user:...`, `group:...`) for child names: the same member keeps its
    name wherever it sits in a list, unlike an index."""
    return _digest([member])


def lustre_filesystem(name: str) -> str:
    """The Lustre file system name clients mount: at most 8 letters and digits, from the spec's name."""
    compact = re.sub(r"[^a-z0-9]", "", name.lower())
    return (compact or "lustre")[:8]
