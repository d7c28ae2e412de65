"""AWS-specific platform settings (owned by the AWS components; no cloud SDK imports here)."""

from __future__ import annotations

from .cloud import CloudSpec


class AwsCloudSpec(CloudSpec):
    """AWS regions of the platform. Credentials and the default region come from the usual `aws:` stack config."""


def extra_checks(platform, cloud_spec: AwsCloudSpec) -> list:  # noqa: ANN001
    """AWS-only semantic checks: (path relative to platform, message) issues."""
    return []
