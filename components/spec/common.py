"""Shared building blocks of the platform spec: the strict base model and the cross-cloud enums.

This package is cloud-neutral: it imports no cloud SDK and no Pulumi.
"""

from __future__ import annotations

import enum
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
NAME_PATTERN = r"^[a-z]([a-z0-9-]{0,22}[a-z0-9])?$"
NAME_RULE = "lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters"
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]

# Platform labels become AWS tags, GCP labels and Azure tags on every resource, so keys and values follow the strictest
# of the three, GCP labels: keys 1 to 63 characters, values at most 63, both only lower-case letters, digits, '_' and
# '-', keys starting with a lower-case letter (cloud.google.com/kms/docs/labeling-keys, "Label requirements"). AWS tag
# keys take up to 128 letters, digits, spaces and + - = . _ : / @, values up to 256
# (docs.aws.amazon.com/sdkfornet/v3/apidocs/items/ECS/TTag.html); Azure tag names take up to 512 characters except
# < > % & \ ? / (learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations): both accept
# every GCP label. Values here must also be non-empty and start with a letter or digit.
LABEL_KEY_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"
LABEL_KEY_RULE = "1 to 63 lower-case letters, digits, '_' and '-', starting with a lower-case letter"
LabelKey = Annotated[str, StringConstraints(pattern=LABEL_KEY_PATTERN)]
"""A key of the platform labels (AWS tag, GCP label and Azure tag keys): `LABEL_KEY_RULE`."""

LABEL_VALUE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
LABEL_VALUE_RULE = "1 to 63 lower-case letters, digits, '_' and '-', starting with a letter or digit"
LabelValue = Annotated[str, StringConstraints(pattern=LABEL_VALUE_PATTERN)]
"""A value of the platform labels (valid as a GCP label value, the strictest of the three clouds): `LABEL_VALUE_RULE`."""

PATTERN_RULES: dict[str, tuple[str, str]] = {
    NAME_PATTERN: ("name", NAME_RULE),
    LABEL_KEY_PATTERN: ("label key", LABEL_KEY_RULE),
    LABEL_VALUE_PATTERN: ("label value", LABEL_VALUE_RULE),
}
"""Pattern -> (what the value is, the rule in words), so an error message states the rule once, in words that match
the pattern (tests check that they agree)."""

Days = Annotated[int, Field(ge=1, le=36500)]


class FieldError(ValueError):
    """A cross-field check failed; `field` is the field the message is about, so the loader can name its path."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)
