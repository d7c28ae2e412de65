"""The whole platform of one environment: the value of the `ai-infra:platform` stack config."""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from components.catalog.errors import CLOUD_NAMES

from .alerts import AlertsSpec
from .aws import AwsCloudSpec
from .azure import AzureCloudSpec
from .cloud import CloudSpec
from .common import (
    RESERVED_NAMESPACES_RULE, Cloud, ComplianceProfile, Environment, FieldError, LabelKey, LabelValue,
    Name, SpecModel, is_reserved_namespace, null_not_in_schema, refuse_null_block,
)
from .gcp import GcpCloudSpec


class PlatformLabels(SpecModel):
    """Labels put on every taggable resource (AWS tags, GCP labels, Azure tags)."""

    owner: LabelValue
    """Person or group accountable for the environment."""
    team: LabelValue
    """Owning team."""
    cost_center: LabelValue
    """Cost center billed for the environment."""
    extra: dict[LabelKey, LabelValue] = {}
    """Additional labels. Keys: 1 to 63 lower-case letters, digits, '_' and '-', starting with a lower-case letter; values:
    1 to 63 lower-case letters, digits, '_' and '-' (the rules of GCP labels, which AWS and Azure tags also accept).
    At most 38, so that no resource exceeds the 50 tags AWS and Azure allow (an EKS cluster's EBS volumes carry 7
    tags of the EBS CSI driver's too); not the keys the toolkit sets itself
    (environment, owner, team, cost-center, managed-by, data-zone, data-class, and on TPU VMs slice, slice-index and
    reservation). Default none."""


class ComplianceSpec(SpecModel):
    """Which policy profiles apply, and where data may live."""

    profiles: list[ComplianceProfile] = [ComplianceProfile.BASELINE]
    """Policy profiles enforced for this environment: `policies/aiinfra_policy/gen_config.py` writes the stack's
    policy config from them, and a rule of none of these profiles is disabled. Default: baseline only."""
    allowed_regions: list[str] | None = None
    """Data residency: the only regions any resource may be placed in, of any cloud (each must be a listed region).
    Default: no restriction at load; the policy pack's `data-residency` rule then allows the regions the stack
    declares."""
    data_zones: dict[Name, list[str]] = {}
    """Named residency zones, e.g. {"eu": ["eu-west-1", "europe-west4", "westeurope"]}. A bucket or file
    system with `data_zone: eu` may only live in those regions, and carries the label `data-zone=eu`
    so the policy pack can check it too. Default: none."""


class CloudsSpec(SpecModel):
    """The clouds the environment runs in, each with its regions; at least one of them."""

    aws: AwsCloudSpec | None = Field(None, json_schema_extra=null_not_in_schema)
    """AWS regions. Default: none."""
    gcp: GcpCloudSpec | None = Field(None, json_schema_extra=null_not_in_schema)
    """GCP project and regions. Default: none."""
    azure: AzureCloudSpec | None = Field(None, json_schema_extra=null_not_in_schema)
    """Azure regions. Default: none."""

    @field_validator("aws", "gcp", "azure", mode="before")
    @classmethod
    def _not_null(cls, value: object, info: ValidationInfo) -> object:
        name = CLOUD_NAMES[info.field_name]
        return refuse_null_block(value, info.field_name, f"give the {name} settings under it (its regions at least)",
                                 f"no {name} regions")

    def items(self) -> list[tuple[Cloud, CloudSpec]]:
        """The clouds this environment uses, in a fixed order."""
        return [(cloud, spec) for cloud in Cloud if (spec := getattr(self, cloud.value)) is not None]


def _unreserved(team: str) -> str:
    # A team namespace may not take a reserved one: its quota, network policies and deletion would land on the add-on.
    if is_reserved_namespace(team):
        raise ValueError(f"team name '{team}' is reserved for a namespace the Kubernetes layer or the clusters' add-ons "
                         f"use; not allowed: {RESERVED_NAMESPACES_RULE}")
    return team


TeamName = Annotated[Name, AfterValidator(_unreserved)]
"""A team's name, which names its namespace: a `Name` that is not reserved (checked on the key, so an error names the
team's own path, platform.teams.<team>)."""


class TeamSpec(SpecModel):
    """A tenant team: a namespace, quotas and a Kueue queue on every cluster."""

    gpu_quota: Annotated[int, Field(ge=0)] = 0
    """Nominal GPUs (nvidia.com/gpu) the team may request. Default 0: only borrowed capacity."""
    tpu_quota: Annotated[int, Field(ge=0)] = 0
    """Nominal TPU chips (google.com/tpu). Default 0."""
    cpu_quota: Annotated[int, Field(ge=1)] = 64
    """CPU cores. Default 64."""
    memory_gib_quota: Annotated[int, Field(ge=1)] = 512
    """Memory in GiB. Default 512."""
    can_borrow: bool = True
    """May use other teams' idle quota within the cohort. Default on."""


class MonitoringMode(str, enum.Enum):
    SELF_MANAGED = "self_managed"
    """kube-prometheus-stack in the cluster. Default."""
    MANAGED = "managed"
    """The cloud's managed Prometheus: per EKS cluster an Amazon Managed Prometheus workspace (region key) and managed
    collector; per AKS cluster the metrics add-on, an Azure Monitor workspace and its data collection rule; on GKE
    Managed Service for Prometheus. The GPU alert rules are evaluated there."""


class MigStrategy(str, enum.Enum):
    SINGLE = "single"
    MIXED = "mixed"


class AddonsSpec(SpecModel):
    """The Kubernetes layer installed on every cluster."""

    enabled: bool = True
    """Install GPU enablement, tenancy and monitoring. Default on."""
    gpu_operator_on_gke: bool = False
    """Use the NVIDIA GPU Operator on GKE instead of GKE's own driver and device plugin. Default off."""
    mig_strategy: MigStrategy = MigStrategy.SINGLE
    """GPU Operator MIG strategy when a pool uses MIG. Default `single`."""
    monitoring: MonitoringMode = MonitoringMode.SELF_MANAGED
    """Default `self_managed`."""
    alerts: AlertsSpec = AlertsSpec()
    """Where the GPU alerts go, per monitoring mode (`AlertsSpec`). Default: no receiver."""

    @model_validator(mode="after")
    def _alerts_match_mode(self) -> AddonsSpec:
        issue = self.alerts.mode_issue(self.monitoring is MonitoringMode.SELF_MANAGED)
        if issue is None and not self.enabled and self.alerts.alertmanager_secret is not None:
            issue = ("alerts.alertmanager_secret", f"'{self.alerts.alertmanager_secret}' has no effect with "
                     "addons.enabled: false: kube-prometheus-stack is not installed; remove addons.alerts.alertmanager_secret")
        if issue is not None:
            raise FieldError(*issue)
        return self


class Platform(SpecModel):
    """One environment's AI platform across clouds and regions."""

    environment: Environment
    """Environment name (dev, staging, prod); resource names include it. It must match the stack that deploys it,
    named `<environment>` or `<environment>-<suffix>` (stack `prod-eu` may carry environment `prod`): a stack of any
    other name refuses to deploy it. `dev` changes three things. `protect_stateful` defaults to off, so file
    systems, buckets, keys, log stores and Azure resource groups are neither Pulumi-protected nor kept on delete,
    clusters are not protected (EKS and GKE deletion protection off too), AWS load balancers lose deletion
    protection, `pulumi destroy` deletes S3 and GCS buckets with their objects and team and inference namespaces
    with the stack, and a deleted Azure Key Vault is kept 7 days instead of 90. AKS clusters use the Free tier
    instead of Standard (no uptime SLA). GCP subnet flow logs sample half of the flows instead of all. The policy
    pack's dev config (policies/config/dev.json) does not require protection either, and flags accelerator pools
    that keep on-demand nodes running."""
    labels: PlatformLabels
    """Owner, team and cost-center labels for every taggable resource (required)."""
    compliance: ComplianceSpec = ComplianceSpec()
    """Policy profiles and data residency. Default: baseline, no residency limit."""
    clouds: CloudsSpec
    """Per-cloud regions (at least one cloud)."""
    teams: dict[TeamName, TeamSpec] = {}
    """Tenant teams by name, which name their namespaces: not one the Kubernetes layer or the clusters' add-ons use
    (default, gpu-operator, kueue-system, monitoring, gmp-system, app-routing-system, amazon-cloudwatch, ..., kube-*,
    gke-*). Default none."""
    addons: AddonsSpec = AddonsSpec()
    """Kubernetes layer. Default: on."""
    protect_stateful: bool | None = None
    """Protect file systems, buckets, keys, log stores and clusters from deletion (see `environment` for what
    protection covers). Default: on in every environment except `dev`."""

    @model_validator(mode="after")
    def _some_cloud(self) -> Platform:
        if not self.clouds.items():
            raise FieldError("clouds", "clouds needs at least one of aws, gcp, azure")
        return self

    @model_validator(mode="after")
    def _alert_receivers_have_clusters(self) -> Platform:
        def clusters(cloud: CloudSpec | None) -> bool:
            return cloud is not None and any(region.cluster is not None for region in cloud.regions.values())
        issues = self.addons.alerts.cloud_issues(clusters(self.clouds.aws), clusters(self.clouds.azure))
        if issues:  # one at a time, as a model check can raise only one
            field, message = issues[0]
            raise FieldError(f"addons.{field}", message)
        return self

    @property
    def protected(self) -> bool:
        """Whether stateful resources get `protect` and `retain_on_delete`."""
        return self.protect_stateful if self.protect_stateful is not None else self.environment != "dev"

    def data_tags(self, data_zone: str | None) -> dict[str, str]:
        """Tags for a bucket or file system: the platform tags plus its residency zone, if any."""
        return {**self.tags(), **({"data-zone": data_zone} if data_zone else {})}

    def tags(self) -> dict[str, str]:
        """The tag/label set every resource carries (keys valid on all three clouds)."""
        return {
            "environment": self.environment,
            "owner": self.labels.owner,
            "team": self.labels.team,
            "cost-center": self.labels.cost_center,
            "managed-by": "ai-infra",
            **self.labels.extra,
        }
