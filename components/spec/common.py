"""Shared building blocks of the platform spec: the strict base model and the cross-cloud enums.

This package is cloud-neutral: it imports no cloud SDK and no Pulumi.
"""

from __future__ import annotations

import enum
import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints


class SpecModel(BaseModel):
    """Base of every spec model: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Cloud(str, enum.Enum):
    AWS = "aws"
    GCP = "gcp"
    AZURE = "azure"


class ComplianceProfile(str, enum.Enum):
    """Rule sets of the policy pack; `baseline` is always applied."""

    BASELINE = "baseline"
    SOC2 = "soc2"
    HIPAA = "hipaa"
    PCI = "pci"
    GDPR = "gdpr"


# Lower-case DNS labels: they end up in resource names on every cloud and in Kubernetes names and label values,
# which must end with a letter or digit.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z]([a-z0-9-]{0,22}[a-z0-9])?$")]

LabelValue = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]{0,62}$")]
"""Label values must be valid as GCP labels, the strictest of the three clouds."""

Days = Annotated[int, Field(ge=1, le=36500)]

REGION_PATTERNS: dict[Cloud, re.Pattern[str]] = {
    # us-east-1, eu-central-2, us-gov-west-1, ap-southeast-5
    Cloud.AWS: re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$"),
    # us-central1, europe-west4, me-central2
    Cloud.GCP: re.compile(r"^[a-z]+-[a-z]+\d+$"),
    # eastus2, westeurope, swedencentral
    Cloud.AZURE: re.compile(r"^[a-z]+[a-z0-9]*$"),
}


class FieldError(ValueError):
    """A cross-field check failed; `field` is the field the message is about, so the loader can name its path."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)
