"""Where a region's subnet flow logs and firewall logs are kept: a CMEK-encrypted Cloud Logging bucket with the
spec's retention, fed by a sink that selects the region's subnet, and kept out of `_Default` by an exclusion. Cloud
Logging's `_Default` bucket keeps logs 30 days only, too short for HIPAA/PCI look-backs, in its own location and
under Google's key."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from .context import GcpContext
from .naming import resource_id

# Subnet flow logs and firewall rule logs are both written against the subnet (resource type gce_subnetwork).
LOG_IDS = ("compute.googleapis.com/vpc_flows", "compute.googleapis.com/firewall")


def sink_filter(subnet_name: str) -> str:
    """Cloud Logging filter for one subnet's flow and firewall logs."""
    ids = " OR ".join(f'log_id("{log_id}")' for log_id in LOG_IDS)
    return f'resource.type="gce_subnetwork" AND resource.labels.subnetwork_name="{subnet_name}" AND ({ids})'


@dataclass(frozen=True)
class FlowLogsArgs:
    context: GcpContext
    subnet_name: pulumi.Input[str]
    retention_days: int
    """Days logs are kept (Cloud Logging allows 1 to 3650; the spec checks enforce it)."""
    kms_key_id: pulumi.Input[str]
    """Key in the bucket's region; Cloud Logging's CMEK service account must hold Encrypter/Decrypter on it."""


def routed_log_bucket(parent: pulumi.Resource, name: str, ctx: GcpContext, kind: str, retention_days: int,
                      kms_key_id: pulumi.Input[str], log_filter: pulumi.Input[str], descriptions: tuple[str, str],
                      exclusion_kind: str) -> gcp.logging.ProjectBucketConfig:
    """`<name>-<kind>`, a CMEK Cloud Logging bucket in the context's region (protected outside dev) keeping logs
    `retention_days`; `<name>-<kind>-sink` routing `log_filter` to it; and `<name>-<kind>-default-exclusion`, which
    keeps those logs out of `_Default` (outside the region, under Google's key, 30 days). `descriptions`: the
    bucket's, the sink's; `exclusion_kind` names the exclusion (unique in the project with environment and region)."""
    bucket = gcp.logging.ProjectBucketConfig(f"{name}-{kind}", gcp.logging.ProjectBucketConfigArgs(
        project=ctx.project, location=ctx.region, bucket_id=resource_id(ctx.environment, ctx.region, kind, max_length=100),
        retention_days=retention_days, locked=False,
        cmek_settings=gcp.logging.ProjectBucketConfigCmekSettingsArgs(kms_key_name=kms_key_id),
        description=descriptions[0]), opts=ctx.stateful(parent))
    # A bucket in the same project needs no grant for the sink's writer identity.
    sink = gcp.logging.ProjectSink(f"{name}-{kind}-sink", gcp.logging.ProjectSinkArgs(
        project=ctx.project, destination=pulumi.Output.concat("logging.googleapis.com/", bucket.id),
        filter=log_filter, unique_writer_identity=True, description=descriptions[1]),
        opts=pulumi.ResourceOptions(parent=parent))
    # Exclusions on a project are the _Default sink's (Cloud Logging API, projects.exclusions) and stop no other
    # sink; made after the sink, so no log goes unrouted meanwhile.
    gcp.logging.ProjectExclusion(f"{name}-{kind}-default-exclusion", gcp.logging.ProjectExclusionArgs(
        project=ctx.project, name=resource_id(ctx.environment, ctx.region, exclusion_kind, max_length=100),
        filter=log_filter, description=f"Kept in {ctx.region} by the {ctx.environment} {kind} sink instead"),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[sink]))
    return bucket


class FlowLogs(pulumi.ComponentResource):
    """`ai-infra:gcp:FlowLogs`. Children: `<name>-flow-logs` (log bucket), `<name>-flow-logs-sink`,
    `<name>-flow-logs-default-exclusion` (the subnet's flow and firewall logs are kept in the region's bucket only)."""

    bucket: gcp.logging.ProjectBucketConfig

    def __init__(self, name: str, args: FlowLogsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:FlowLogs", name, None, opts)
        ctx = args.context
        self.bucket = routed_log_bucket(
            self, name, ctx, "flow-logs", args.retention_days, args.kms_key_id,
            pulumi.Output.from_input(args.subnet_name).apply(sink_filter),
            (f"Subnet flow and firewall logs of {ctx.environment} in {ctx.region}",
             f"Flow and firewall logs of {ctx.environment} in {ctx.region}"), "vpc-flows")
        self.register_outputs({"bucket_id": self.bucket.id})


# The global external Application Load Balancer's request logs (cloud.google.com/load-balancing/docs/https/https-logging-monitoring).
LOAD_BALANCER_LOGS = 'resource.type="http_load_balancer"'


@dataclass(frozen=True)
class RequestLogsArgs:
    context: GcpContext
    retention_days: int
    """Days logs are kept (the region's flow log retention)."""
    kms_key_id: pulumi.Input[str]
    """Key in the bucket's region; Cloud Logging's CMEK service account must hold Encrypter/Decrypter on it."""


class RequestLogs(pulumi.ComponentResource):
    """`ai-infra:gcp:RequestLogs`: where the global load balancer's request logs (client IP addresses: personal data
    under GDPR) are kept when `global_endpoint.logs_data_zone` names a zone: a CMEK Cloud Logging bucket in this
    region, fed by a sink, and an exclusion on `_Default`, which would otherwise keep a copy in its own location.
    Children: `<name>-request-logs` (log bucket), `<name>-request-logs-sink`, `<name>-request-logs-default-exclusion`."""

    def __init__(self, name: str, args: RequestLogsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:RequestLogs", name, None, opts)
        ctx = args.context
        self.bucket = routed_log_bucket(
            self, name, ctx, "request-logs", args.retention_days, args.kms_key_id, LOAD_BALANCER_LOGS,
            (f"Global load balancer request logs of {ctx.environment}, kept in {ctx.region}",
             f"Global load balancer request logs of {ctx.environment}"), "lb-requests")
        self.register_outputs({"bucket_id": self.bucket.id})
