"""GCP-specific platform settings (owned by the GCP components; no cloud SDK imports here)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .cloud import CloudSpec


class GcpCloudSpec(CloudSpec):
    project: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")]
    """GCP project ID to deploy into (required)."""


def extra_checks(platform, cloud_spec: GcpCloudSpec) -> list:  # noqa: ANN001
    """GCP-only semantic checks: (path relative to platform, message) issues."""
    return []
