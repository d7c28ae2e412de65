"""Amazon Managed Service for Prometheus for one EKS cluster (`addons.monitoring: managed`): a workspace encrypted
with the region's key and logging to an encrypted log group, the GPU alert rules, and an AWS managed collector
(scraper) that scrapes the DCGM exporter from inside the cluster's VPC.

How the scraper reaches the cluster: the cluster authenticates with access entries only (`authenticationMode: API`),
and for such clusters AMP creates the scraper's access entry and its access policy itself when the scraper is
created (AMP guide, "Configuring your Amazon EKS cluster"). A second access entry for the same role would fail
(one entry per principal), so none is made here. The in-cluster ClusterRole/binding for `aps-collector-user`
(components/k8s/monitoring.py) stays as the documented fallback for clusters that map the role through aws-auth.

How the scraper writes: a workspace with a customer managed key can only be written by a scraper with a role
configuration (a source role it assumes and a target role with remote-write on the workspace, same account), and
the key policy lets AMP use the key (`KmsKeyArgs.prometheus`).

Where alerts go: with `addons.alerts.sns_topic_arn`, an alert manager definition routes every alert to that SNS topic
(AMP's only receiver, topics of the same account); without it the workspace has no alert manager definition and
firing alerts stay in AMP.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import yaml

from components.k8s.monitoring_objects import rules_yaml, scrape_config_yaml
from components.spec.alerts import SNS_TOPIC_PATTERN

from .context import AwsContext, render
from .policies import assume, remote_write, scraper_source_trust, scraper_target_trust

RULES_NAMESPACE = "ai-infra-gpu"
SCRAPER_TAG = "AMPAgentlessScraper"
"""AMP tags a scraper's destination workspace with this key; declared on the workspace so `pulumi up` doesn't strip it."""
ALERT_RECEIVER = "sns"
ALERT_SUBJECT = "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}"
"""SNS subjects take at most 100 printable ASCII characters; Alertmanager's default subject lists every label and can
exceed that (AMP guide, "Configure alert manager to send messages to your Amazon SNS topic")."""


def alertmanager_definition(topic_arn: str) -> str:
    """The alert manager definition that sends every alert to `topic_arn`: AMP's format, the Alertmanager
    configuration as a string under `alertmanager_config` (AMP guide, "Create an alert manager configuration"), with
    `sigv4.region`, which AMP requires of SNS receivers, set to the topic's region. AMP routes only to topics of the
    workspace's account ("Managing and forwarding alerts ... with alert manager"); the account is not checked here,
    as the offline plan does not know it."""
    match = SNS_TOPIC_PATTERN.match(topic_arn)
    if match is None:  # the spec validated it; kept for direct callers
        raise ValueError(f"addons.alerts.sns_topic_arn: '{topic_arn}' is not an SNS topic ARN")
    config = {
        "route": {"receiver": ALERT_RECEIVER, "group_by": ["alertname", "node"]},
        "receivers": [{"name": ALERT_RECEIVER, "sns_configs": [
            {"topic_arn": topic_arn, "sigv4": {"region": match.group(2)}, "subject": ALERT_SUBJECT}]}],
    }
    # The documented form: the configuration as a literal block under `alertmanager_config: |`.
    return "alertmanager_config: |\n" + textwrap.indent(yaml.safe_dump(config, sort_keys=False), "  ")


@dataclass(frozen=True)
class ManagedPrometheusArgs:
    context: AwsContext
    cluster_arn: pulumi.Input[str]
    subnet_ids: Sequence[pulumi.Input[str]]
    """The cluster's private subnets (at least two zones): the scraper puts an interface in each."""
    security_group_id: pulumi.Input[str]
    """The cluster security group, which nodes and the control plane share: the scraper's interfaces join it."""
    kms_key_arn: pulumi.Input[str]
    """The region's key; its policy must admit AMP (`KmsKeyArgs.prometheus`)."""
    log_retention_days: int
    sns_topic_arn: str | None = None
    """`addons.alerts.sns_topic_arn`: the receiver of the workspace's alert manager. Default none: no alert manager
    definition."""


class ManagedPrometheus(pulumi.ComponentResource):
    """`ai-infra:aws:ManagedPrometheus`. Children: `<name>-amp-logs`, `<name>-amp-workspace`, `<name>-amp-rules`,
    `<name>-amp-source-role` (+ `-policy`), `<name>-amp-target-role` (+ `-policy`), `<name>-amp-scraper`,
    `<name>-amp-scraper-logs`, and with an SNS topic `<name>-amp-alerts`."""

    workspace: aws.amp.Workspace
    scraper: aws.amp.Scraper

    def __init__(self, name: str, args: ManagedPrometheusArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:ManagedPrometheus", name, None, opts)
        ctx = args.context
        child = pulumi.ResourceOptions(parent=self)
        # /aws/vendedlogs/: AMP delivers as vended logs; this prefix keeps the log resource policy small.
        logs = aws.cloudwatch.LogGroup(f"{name}-amp-logs", aws.cloudwatch.LogGroupArgs(
            name=f"/aws/vendedlogs/prometheus/{name}", kms_key_id=args.kms_key_arn,
            retention_in_days=args.log_retention_days, region=ctx.region), opts=ctx.stateful(self))
        log_target = pulumi.Output.concat(logs.arn, ":*")  # both logging configurations want the ARN with `:*`
        self.workspace = aws.amp.Workspace(f"{name}-amp-workspace", aws.amp.WorkspaceArgs(
            alias=name, kms_key_arn=args.kms_key_arn,
            logging_configuration=aws.amp.WorkspaceLoggingConfigurationArgs(log_group_arn=log_target),
            tags={SCRAPER_TAG: ""}, region=ctx.region), opts=ctx.stateful(self))
        aws.amp.RuleGroupNamespace(f"{name}-amp-rules", aws.amp.RuleGroupNamespaceArgs(
            name=RULES_NAMESPACE, workspace_id=self.workspace.id, data=rules_yaml(), region=ctx.region), opts=child)
        if args.sns_topic_arn is not None:
            aws.amp.AlertManagerDefinition(f"{name}-amp-alerts", aws.amp.AlertManagerDefinitionArgs(
                workspace_id=self.workspace.id, definition=alertmanager_definition(args.sns_topic_arn),
                region=ctx.region), opts=child)
        source = aws.iam.Role(f"{name}-amp-source-role", aws.iam.RoleArgs(
            assume_role_policy=render(scraper_source_trust, ctx.account_id, ctx.partition, ctx.region),
            description=f"ai-infra {name}: AMP scraper, assumes the target role"), opts=child)
        target = aws.iam.Role(f"{name}-amp-target-role", aws.iam.RoleArgs(
            assume_role_policy=render(scraper_target_trust, source.arn, ctx.account_id, ctx.partition, ctx.region),
            description=f"ai-infra {name}: AMP scraper, writes into the workspace"), opts=child)
        grants = [
            aws.iam.RolePolicy(f"{name}-amp-source-role-policy", aws.iam.RolePolicyArgs(
                role=source.id, policy=render(assume, target.arn)), opts=child),
            aws.iam.RolePolicy(f"{name}-amp-target-role-policy", aws.iam.RolePolicyArgs(
                role=target.id, policy=render(remote_write, self.workspace.arn)), opts=child),
        ]
        self.scraper = aws.amp.Scraper(f"{name}-amp-scraper", aws.amp.ScraperArgs(
            alias=name,
            source=aws.amp.ScraperSourceArgs(eks=aws.amp.ScraperSourceEksArgs(
                cluster_arn=args.cluster_arn, subnet_ids=list(args.subnet_ids), security_group_ids=[args.security_group_id])),
            destination=aws.amp.ScraperDestinationArgs(amp=aws.amp.ScraperDestinationAmpArgs(workspace_arn=self.workspace.arn)),
            role_configuration=aws.amp.ScraperRoleConfigurationArgs(source_role_arn=source.arn, target_role_arn=target.arn),
            scrape_configuration=scrape_config_yaml(),  # the DCGM exporter of the GPU Operator (EKS always runs it)
            region=ctx.region), opts=pulumi.ResourceOptions(parent=self, depends_on=grants))
        aws.amp.ScraperLoggingConfiguration(f"{name}-amp-scraper-logs", aws.amp.ScraperLoggingConfigurationArgs(
            scraper_id=self.scraper.id, region=ctx.region,
            logging_destination=aws.amp.ScraperLoggingConfigurationLoggingDestinationArgs(
                cloudwatch_logs=aws.amp.ScraperLoggingConfigurationLoggingDestinationCloudwatchLogsArgs(log_group_arn=log_target))),
            opts=child)
        self.outputs: dict[str, pulumi.Input[str]] = {
            "workspace_id": self.workspace.id,
            "workspace_arn": self.workspace.arn,
            "prometheus_endpoint": self.workspace.prometheus_endpoint,
            "query_endpoint": pulumi.Output.concat(self.workspace.prometheus_endpoint, "api/v1/query"),
            "scraper_id": self.scraper.id,
            "scraper_role_arn": self.scraper.role_arn,
        }
        self.register_outputs(self.outputs)
