"""Where the GPU alerts (idle GPU, XID errors) go: one receiver per monitoring mode, typed per cloud, because the
receivers differ: kube-prometheus-stack's Alertmanager reads a Secret, Amazon Managed Prometheus sends only to an SNS
topic, Azure Monitor managed Prometheus to an action group. GKE Managed Service for Prometheus needs no field: its
managed Alertmanager reads the Secret `alertmanager` (key `alertmanager.yaml`) in `gmp-public`, which you create.

Pure pydantic: no cloud SDK."""

from __future__ import annotations

import re

from pydantic import field_validator

from .common import GUID_PATTERN, SpecModel
from .kube import is_dns_subdomain

SECRET_NAME_RULE = ("a Kubernetes Secret name: at most 253 lower-case letters, digits, '-' and '.', starting and ending "
                    "with a letter or digit")
"""Secret names are DNS subdomains (kubernetes.io/docs/concepts/overview/working-with-objects/names, "DNS Subdomain
Names"): `kube.is_dns_subdomain`."""

# SNS topic ARN: arn:<partition>:sns:<region>:<account>:<name>; a standard topic's name is 1-256 letters, digits, '-'
# and '_' (a FIFO topic adds `.fifo`, which AMP does not take: "a (new or existing) Standard type Amazon SNS topic",
# docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-config.html).
SNS_TOPIC_PATTERN = re.compile(r"^arn:(aws[-a-z]*):sns:([a-z]{2}(?:-[a-z]+)+-\d+):(\d{12}):([A-Za-z0-9_-]{1,256})$")
"""Groups: partition, region (what AMP signs its SNS requests for, `sigv4.region`), account, topic name."""
SNS_TOPIC_RULE = ("a standard SNS topic's ARN, arn:aws:sns:<region>:<12-digit account>:<name> (name: 1 to 256 letters, "
                  "digits, '-' and '_'; FIFO topics are not accepted by Amazon Managed Prometheus)")

# Azure resource IDs: resource group names 1-90 letters, digits, '_', '-', '.', '(' and ')', not ending in '.'
# (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules, Microsoft.Resources); action group
# names 1-260 characters without '/'. ARM compares provider and type names case-insensitively.
ACTION_GROUP_PATTERN = re.compile(
    rf"^/subscriptions/({GUID_PATTERN[1:-1]})/resourceGroups/([-\w.()]{{0,89}}[-\w()])/providers/"
    r"microsoft\.insights/actionGroups/([^/]{1,260})$", re.IGNORECASE)
ACTION_GROUP_RULE = ("an Azure Monitor action group's resource ID, /subscriptions/<subscription GUID>/resourceGroups/"
                     "<group>/providers/Microsoft.Insights/actionGroups/<name>")


class AlertsSpec(SpecModel):
    """The receiver of the GPU alert rules, per monitoring mode. Default: none, so alerts are only visible where they
    are evaluated (Prometheus/Alertmanager UI, Cloud Monitoring, the AMP or Azure Monitor alert lists). A field that
    would have no effect (another mode, or no cluster of its cloud) is refused."""

    alertmanager_secret: str | None = None
    """`addons.monitoring: self_managed`, every cloud: the name of a Secret you create in the `monitoring` namespace
    of every cluster, holding the whole Alertmanager configuration under the key `alertmanager.yaml` (`route`,
    `receivers`; credentials from other keys of it, mounted under `/etc/alertmanager/config/`). kube-prometheus-stack's
    Alertmanager then uses it (`alertmanager.alertmanagerSpec.useExistingSecret` and `configSecret`) instead of the
    chart's configuration, whose receiver is `null`. A missing Secret or key leaves Alertmanager with one empty
    receiver (the Prometheus Operator's fallback). With `clouds.<cloud>.previewers` the pull-request preview identities
    read every Secret of `monitoring` (a Helm release namespace, whose release records a refresh reads), this one
    included, and unreviewed pull-request code runs as them: give the receivers credentials that can
    only post alerts (a dedicated webhook or integration key), never a shared or broader one. Default: none, the
    chart's `null` receiver."""
    sns_topic_arn: str | None = None
    """`addons.monitoring: managed` with EKS clusters: a standard SNS topic of the deploying account, the receiver of
    an alert manager definition on every cluster's Amazon Managed Prometheus workspace (AMP's only receiver; it routes
    to topics of the same account). Requests are signed for the topic's region, so one topic serves every region. The
    toolkit does not own the topic: its access policy must let `aps.amazonaws.com` call `sns:Publish` and
    `sns:GetTopicAttributes` (conditions `aws:SourceAccount` = the account, `aws:SourceArn` = the workspaces' ARNs,
    exported as `monitoring.workspace_arn`), and a topic encrypted with a customer managed key needs that key's policy
    to let `aps.amazonaws.com` use `kms:GenerateDataKey*` and `kms:Decrypt` (AMP guide, "Giving Amazon Managed Service
    for Prometheus permission to send alert messages to your Amazon SNS topic"). Default: none, alerts stay in AMP."""
    action_group_id: str | None = None
    """`addons.monitoring: managed` with AKS clusters: the resource ID of an Azure Monitor action group, attached to
    every GPU alert rule of every cluster's Prometheus rule group (`actions[].actionGroupId`). Default: none, alerts
    stay in Azure Monitor's alert list."""

    @field_validator("alertmanager_secret")
    @classmethod
    def _secret_name(cls, value: str | None) -> str | None:
        if value is not None and not is_dns_subdomain(value):
            raise ValueError(f"'{value}' is not {SECRET_NAME_RULE}")
        return value

    @field_validator("sns_topic_arn")
    @classmethod
    def _topic_arn(cls, value: str | None) -> str | None:
        if value is not None and not SNS_TOPIC_PATTERN.match(value):
            raise ValueError(f"'{value}' is not {SNS_TOPIC_RULE}")
        return value

    @field_validator("action_group_id")
    @classmethod
    def _action_group(cls, value: str | None) -> str | None:
        if value is not None and not ACTION_GROUP_PATTERN.match(value):
            raise ValueError(f"'{value}' is not {ACTION_GROUP_RULE}")
        return value

    def mode_issue(self, self_managed: bool) -> tuple[str, str] | None:
        """(field, message) for the first receiver the monitoring mode never uses, or None."""
        mode = "self_managed" if self_managed else "managed"
        unused = [("sns_topic_arn", self.sns_topic_arn, "Amazon Managed Prometheus (EKS)"),
                  ("action_group_id", self.action_group_id, "Azure Monitor managed Prometheus (AKS)")] if self_managed \
            else [("alertmanager_secret", self.alertmanager_secret, "kube-prometheus-stack's Alertmanager")]
        for field, value, receiver in unused:
            if value is not None:
                instead = ("addons.alerts.alertmanager_secret" if self_managed
                           else "addons.alerts.sns_topic_arn (EKS), addons.alerts.action_group_id (AKS), or on GKE the "
                                "Secret `alertmanager` in namespace `gmp-public`")
                wanted = "managed" if self_managed else "self_managed"
                return (f"alerts.{field}", f"'{value}' has no effect with addons.monitoring: {mode}: it configures "
                                           f"{receiver}, which only addons.monitoring: {wanted} uses; with {mode} use "
                                           f"{instead}, or remove addons.alerts.{field}")
        return None

    def cloud_issues(self, eks: bool, aks: bool) -> list[tuple[str, str]]:
        """(field, message) for each cloud receiver whose cloud has no cluster (`eks`, `aks`: the platform has one)."""
        issues = []
        for field, value, present, cluster, cloud in (("sns_topic_arn", self.sns_topic_arn, eks, "EKS", "aws"),
                                                       ("action_group_id", self.action_group_id, aks, "AKS", "azure")):
            if value is not None and not present:
                issues.append((f"alerts.{field}", f"'{value}' has no effect: it is the receiver of the {cluster} "
                                                  f"clusters' managed Prometheus, and no region of clouds.{cloud} has a "
                                                  f"cluster; add one or remove addons.alerts.{field}"))
        return issues
