"""Azure-specific platform settings (owned by the Azure components; no cloud SDK imports here)."""

from __future__ import annotations

from .cloud import CloudSpec


class AzureCloudSpec(CloudSpec):
    admin_group_object_ids: list[str] = []
    """Entra ID groups given cluster-admin on AKS through Azure RBAC. Default none."""


def extra_checks(platform, cloud_spec: AzureCloudSpec) -> list:  # noqa: ANN001
    """Azure-only semantic checks: (path relative to platform, message) issues."""
    return []
