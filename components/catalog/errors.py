"""The catalog's error type and the helpers that build its messages."""

from __future__ import annotations

from collections.abc import Iterable

CLOUDS = ("aws", "gcp", "azure")
CLOUD_NAMES = {"aws": "AWS", "gcp": "GCP", "azure": "Azure"}
"""Each cloud as people write it, for messages that name the cloud rather than its config key."""


def with_article(name: str) -> str:
    """'an AWS', 'a GCP', 'an Azure': the article a cloud's name takes."""
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"


class CatalogError(ValueError):
    """A lookup or validation against the catalog failed.

    The message says what went wrong, the value given and the allowed values. `argument` names the parameter of
    the catalog function whose value was refused (e.g. "size_gib" of `resolve_lustre`), so a caller can point at
    the config field that holds it; None when no single argument is at fault.
    """

    def __init__(self, message: str, argument: str | None = None):
        super().__init__(message)
        self.argument = argument


def allowed(values: Iterable[object]) -> str:
    """Comma-separated list of allowed values for error messages."""
    return ", ".join(str(v) for v in values)


def check_cloud(cloud: str) -> None:
    if cloud not in CLOUDS:
        raise CatalogError(f"unknown cloud '{cloud}'; allowed: {allowed(CLOUDS)}", argument="cloud")
