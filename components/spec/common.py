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

ENVIRONMENT_PATTERN = r"^[a-z][a-z0-9-]{1,15}$"
ENVIRONMENT_RULE = "2 to 16 lower-case letters, digits and '-', starting with a letter"
Environment = Annotated[str, StringConstraints(pattern=ENVIRONMENT_PATTERN)]
"""An environment name (dev, staging, prod): `ENVIRONMENT_RULE`."""

# Patterns of fields declared in other modules (gcp, azure, compute, endpoint, storage), which take them from here: the
# loader finds a rule in words by the pattern a field fails (tests/spine/test_spec_rules.py checks that every pattern
# of the spec is described).
GCP_PROJECT_PATTERN = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"
GCP_PROJECT_RULE = "6 to 30 lower-case letters, digits and '-', starting with a letter, ending with a letter or digit"
"""GCP project IDs (cloud.google.com/resource-manager/docs/creating-managing-projects, "Project ID requirements")."""
GUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
GUID_RULE = "32 hex digits in groups of 8, 4, 4, 4 and 12 joined by '-', like 00000000-0000-0000-0000-000000000000"
"""Azure object, tenant and principal IDs."""
# AI zones (us-central1-ai1a: cloud.google.com/compute/docs/regions-zones/ai-zones) hold accelerator capacity for
# projects that turn them on; they are named after their parent zone's letter.
GCP_REGION_SHAPE = r"[a-z]+-[a-z]+\d+"
GCP_ZONE_SUFFIX = r"[a-z]|ai\d+[a-z]"
"""A zone letter, or an AI zone's `ai<n>` and its parent zone's letter."""
GCP_ZONE_PATTERN = rf"^{GCP_REGION_SHAPE}-(?:{GCP_ZONE_SUFFIX})$"
GCP_ZONE_RULE = "a GCP region name, '-' and a zone letter, like us-central1-a, or an AI zone, like us-central1-ai1a"
KUBERNETES_VERSION_PATTERN = r"^1\.\d{2}$"
KUBERNETES_VERSION_RULE = "1. and a two-digit minor version, like 1.33"
NAMESPACE_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
NAMESPACE_RULE = "lower-case letters, digits and '-', starting and ending with a letter or digit"
SERVICE_NAME_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
SERVICE_NAME_RULE = "lower-case letters, digits and '-', starting with a letter and ending with a letter or digit"
HEALTH_CHECK_PATH_PATTERN = r"^/[A-Za-z0-9._~/-]*$"
HEALTH_CHECK_PATH_RULE = "'/' followed by letters, digits, '.', '_', '~', '/' and '-'"
BUCKET_PREFIX_PATTERN = r"^[A-Za-z0-9._/-]*$"
BUCKET_PREFIX_RULE = "letters, digits, '.', '_', '/' and '-', or empty"

PATTERN_RULES: dict[str, tuple[str, str]] = {
    NAME_PATTERN: ("name", NAME_RULE),
    LABEL_KEY_PATTERN: ("label key", LABEL_KEY_RULE),
    LABEL_VALUE_PATTERN: ("label value", LABEL_VALUE_RULE),
    ENVIRONMENT_PATTERN: ("environment name", ENVIRONMENT_RULE),
    GCP_PROJECT_PATTERN: ("project ID", GCP_PROJECT_RULE),
    GUID_PATTERN: ("GUID", GUID_RULE),
    GCP_ZONE_PATTERN: ("zone", GCP_ZONE_RULE),
    KUBERNETES_VERSION_PATTERN: ("Kubernetes version", KUBERNETES_VERSION_RULE),
    NAMESPACE_PATTERN: ("namespace", NAMESPACE_RULE),
    SERVICE_NAME_PATTERN: ("Service name", SERVICE_NAME_RULE),
    HEALTH_CHECK_PATH_PATTERN: ("health check path", HEALTH_CHECK_PATH_RULE),
    BUCKET_PREFIX_PATTERN: ("prefix", BUCKET_PREFIX_RULE),
}
"""Pattern -> (what the value is, the rule in words), so an error message states the rule once, in words that match
the pattern (tests check that they agree). A pattern that only lists values, `^(a|b|c)$`, needs no entry: the loader
names the values."""

# Tags per resource. AWS: "Maximum number of tags per resource - 50", and tags with the `aws:` prefix, which AWS adds
# itself, "do not count against your tags per resource limit" (docs.aws.amazon.com/sdkfornet/v3/apidocs/items/ECS/TTag.html).
# Azure: 50 tag name/value pairs (learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations).
# GCP: 64 labels (cloud.google.com/compute/docs/labeling-resources, "Requirements for labels").
CLOUD_TAG_LIMIT = 50
"""Tags one AWS or Azure resource can carry (GCP allows 64 labels)."""
PLATFORM_TAG_KEYS = ("environment", "owner", "team", "cost-center", "managed-by")
"""The tags `Platform.tags()` puts on every resource besides `labels.extra`."""
MOST_RESOURCE_TAGS = 7
"""The most tags one resource carries besides the platform's: an EBS volume the EBS CSI driver creates for a claim on
an EKS cluster gets 7 of the driver's (aws-ebs-csi-driver docs/tagging.md: CSIVolumeName, ebs.csi.aws.com/cluster,
kubernetes.io/cluster/<id>, ebs.csi.aws.com/cluster-name, kubernetes.io/created-for/pvc/name, pvc/namespace and
pv/name) besides the platform's, which the driver copies (`extraVolumeTags`). An EKS node (EC2 instance) gets 6: `Name`
from its launch template and, from the node group's Auto Scaling group, eks:cluster-name, eks:nodegroup-name,
kubernetes.io/cluster/<cluster> and the two k8s.io/cluster-autoscaler discovery tags. The toolkit's own additions are
at most 2 on any resource (Name and a subnet role, data-class and data-zone on a bucket, Name and data-zone on a
file system, the two autoscaler tags on a node group)."""
MAX_EXTRA_LABELS = CLOUD_TAG_LIMIT - len(PLATFORM_TAG_KEYS) - MOST_RESOURCE_TAGS
"""How many `labels.extra` entries fit on a platform with AWS or Azure: 38."""
GCP_LABEL_LIMIT = 64
MOST_GCP_RESOURCE_LABELS = 3
"""The most labels the toolkit adds to one GCP resource besides the platform's: a TPU VM's slice, slice-index and
reservation (a bucket gets data-class and data-zone). Labels GKE adds itself (goog-*) are not counted."""
MAX_GCP_EXTRA_LABELS = GCP_LABEL_LIMIT - len(PLATFORM_TAG_KEYS) - MOST_GCP_RESOURCE_LABELS
"""How many `labels.extra` entries fit on a GCP-only platform: 56."""
TOOLKIT_TAG_KEYS: dict[str, str] = {
    "environment": "set by platform.environment",
    "owner": "set by platform.labels.owner",
    "team": "set by platform.labels.team",
    "cost-center": "set by platform.labels.cost_center",
    "managed-by": "always 'ai-infra'",
    "data-zone": "set by a bucket's or Lustre file system's data_zone",
    "data-class": "set by a bucket's data_class",
    "slice": "the TPU slice's name, on its TPU VMs",
    "slice-index": "the slice's index, on TPU VMs",
    "reservation": "a TPU slice's reservation, on its TPU VMs",
}
"""Tag and label keys the toolkit sets -> where their value comes from. `labels.extra` may not use them: as a default tag
an extra label would replace the platform's own tag on every resource (or be replaced on the resources that set it)."""

Days = Annotated[int, Field(ge=1, le=36500)]

# Namespaces a team (or the inference Service) may not take: its quota, network policies and deletion would land on
# them, and the Kubernetes layer would create a second Namespace object of the name ("already exists" at `pulumi up`).
# The layer's own: gpu-operator, kueue-system, monitoring, autoneg-system (GKE global endpoint). The clusters' add-ons:
# gmp-system and gmp-public (GKE Managed Service for Prometheus), gatekeeper-system (AKS Azure Policy add-on),
# calico-system and tigera-operator (AKS Azure-managed Calico), app-routing-system (AKS application routing add-on:
# learn.microsoft.com/azure/aks/app-routing, "Limitations"), amazon-cloudwatch (the Amazon CloudWatch Observability EKS
# add-on: docs.aws.amazon.com/eks/latest/userguide/amazon-cloudwatch-observability.html). GKE runs its managed
# components in gke-* namespaces (gke-gmp-system, gke-managed-system, gke-managed-cim, gke-managed-filestorecsi,
# gke-connect, ...: grafana/beyla pkg/beyla/config.go lists them), so the whole prefix is reserved, like kube-*.
RESERVED_NAMESPACES = frozenset({"default", "gpu-operator", "kueue-system", "monitoring", "autoneg-system", "gmp-public",
                                 "gmp-system", "gatekeeper-system", "calico-system", "tigera-operator",
                                 "app-routing-system", "amazon-cloudwatch"})
RESERVED_NAMESPACE_PREFIXES = ("kube-", "gke-")
RESERVED_NAMESPACES_RULE = f"{', '.join(sorted(RESERVED_NAMESPACES))}, {', '.join(p + '*' for p in RESERVED_NAMESPACE_PREFIXES)}"
"""The reserved namespaces, as messages list them."""


def is_reserved_namespace(name: str) -> bool:
    """Whether `name` is a namespace the Kubernetes layer or the clusters' add-ons use (RESERVED_NAMESPACES, kube-*,
    gke-*): no team, nor the inference Service, may take it."""
    return name in RESERVED_NAMESPACES or name.startswith(RESERVED_NAMESPACE_PREFIXES)


class FieldError(ValueError):
    """A cross-field check failed; `field` is the field the message is about, so the loader can name its path."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def null_not_in_schema(schema: dict) -> None:
    """`json_schema_extra` of an optional block `refuse_null_block` guards: the editor schema refuses null as the
    loader does (the field's `None` default stays what leaving the key out gives)."""
    branches = [b for b in schema.pop("anyOf", []) if b != {"type": "null"}]
    schema.update(branches[0] if len(branches) == 1 else {"anyOf": branches})


def refuse_null_block(value: object, field: str, instead: str, absent: str) -> object:
    """`value` unless it is null. An optional block left empty in YAML (`cluster:`) is null, which pydantic would read
    as the block's absence: turning `cluster: {}` into `cluster:` would plan the cluster's deletion. `instead`: how to
    write the block that was meant; `absent`: what leaving the key out gives."""
    if value is not None:
        return value
    raise ValueError(f"got null (an empty value): YAML reads `{field}:` with nothing after it as null, not as an empty "
                     f"mapping; {instead}, or remove the key for {absent}")
