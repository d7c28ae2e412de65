"""Inference endpoints: a regional load balancer (ALB or NLB) with a TLS 1.2+ listener in front of the cluster's
pods, and one global entry point across regions: Global Accelerator (anycast, traffic dials) or Route 53 latency
records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.spec import GlobalEndpointSpec, GlobalRouting, InferenceSpec
from components.spec.aws import LoadBalancerKind

from .context import AwsContext
from .policies import GLOBAL_ACCELERATOR_LOG_PREFIX, LB_ACCESS_LOG_PREFIX
from .storage import LogTarget

HTTPS = 443
# Global Accelerator closes TCP connections idle for 340 s, a fixed value ("Idle timeout in AWS Global Accelerator",
# docs.aws.amazon.com/global-accelerator/latest/dg/introduction-how-it-works.html). The ALB closes idle connections
# first (its default is 60 s, too short for long generations), so clients see its clean close, not GA's. An NLB's TLS
# listener keeps its fixed 350 s (tcp_idle_timeout_seconds is for TCP listeners only): GA's 340 s governs there.
ALB_IDLE_TIMEOUT_SECONDS = 300
# TLS 1.3 and 1.2 only (Elastic Load Balancing security policies).
TLS_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"
# AWS managed rule groups; the common set's 8 KB body limit would block long prompts, so it only counts.
WAF_RULE_GROUPS = (("AWSManagedRulesCommonRuleSet", ("SizeRestrictions_BODY",)),
                   ("AWSManagedRulesKnownBadInputsRuleSet", ()), ("AWSManagedRulesAmazonIpReputationList", ()))
_NAME_PREFIX = "infer-"  # load balancers and target groups: AWS adds a unique suffix (32-character names)
# WAF logs only to destinations named aws-waf-logs-*, in the web ACL's account and Region
# (https://docs.aws.amazon.com/waf/latest/developerguide/logging-cw-logs.html).
WAF_LOG_GROUP_PREFIX = "aws-waf-logs-"
# Credentials clients send to the endpoint: kept out of the logs (RedactedFields, SingleHeader names in lowercase;
# https://docs.aws.amazon.com/waf/latest/APIReference/API_LoggingConfiguration.html).
WAF_REDACTED_HEADERS = ("authorization", "cookie", "x-api-key")


@dataclass(frozen=True)
class InferenceEndpointArgs:
    context: AwsContext
    spec: InferenceSpec
    vpc_id: pulumi.Input[str]
    vpc_cidr: str
    subnet_ids: Sequence[pulumi.Input[str]]
    """Private subnets (internal load balancer) or public subnets (internet-facing)."""
    node_security_group_id: pulumi.Input[str]
    """Security group of the pods' nodes (the EKS cluster security group): admits the load balancer on the service port."""
    logs: LogTarget
    """The region's log bucket (access logs)."""
    kind: LoadBalancerKind = LoadBalancerKind.APPLICATION
    """Default: Application Load Balancer."""
    internet_facing: bool = False
    """Default: internal, reachable from the VPC and through Global Accelerator only."""
    open_to_internet: bool = False
    """Admit HTTPS from any address: the internet (internet-facing) or Global Accelerator clients, whose addresses
    it preserves. Default: the VPC only."""
    waf: bool = True
    """Attach an AWS WAF web ACL with AWS managed rules. Default on for ALBs; AWS WAF can't attach to an NLB."""
    kms_key_arn: pulumi.Input[str] | None = None
    """The region's KMS key: encrypts the WAF log group. Without it (or `log_retention_days`) the web ACL is not logged."""
    log_retention_days: int | None = None
    """Days WAF logs are kept (the network's flow log retention, as for the other log groups of the region)."""


class InferenceEndpoint(pulumi.ComponentResource):
    """`ai-infra:aws:InferenceEndpoint`. Children: `<name>-lb-sg`, `<name>-lb`, `<name>-tg` (IP targets, bound
    to the inference pods by the Kubernetes layer), `<name>-https`, `<name>-nodes-from-lb`, `<name>-waf` (+ association),
    and with a KMS key `<name>-waf-logs` (log group `aws-waf-logs-<name>`, protected and kept outside dev) and
    `<name>-waf-logging`."""

    load_balancer: aws.lb.LoadBalancer
    target_group: aws.lb.TargetGroup
    security_group: aws.ec2.SecurityGroup
    """The load balancer's security group (the pods admit it on the service port)."""

    def __init__(self, name: str, args: InferenceEndpointArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:InferenceEndpoint", name, None, opts)
        ctx, spec = args.context, args.spec
        child = pulumi.ResourceOptions(parent=self)
        alb = args.kind is LoadBalancerKind.APPLICATION
        sources = ["0.0.0.0/0"] if args.open_to_internet else [args.vpc_cidr]
        group = aws.ec2.SecurityGroup(f"{name}-lb-sg", aws.ec2.SecurityGroupArgs(
            vpc_id=args.vpc_id, description=f"HTTPS into the {name} inference load balancer, out to the pods only",
            ingress=[aws.ec2.SecurityGroupIngressArgs(protocol="tcp", from_port=HTTPS, to_port=HTTPS, cidr_blocks=sources,
                                                      description="HTTPS (TLS 1.2+) from clients")],
            egress=[aws.ec2.SecurityGroupEgressArgs(protocol="tcp", from_port=spec.port, to_port=spec.port,
                                                    cidr_blocks=[args.vpc_cidr], description="to the inference pods")],
            tags={"Name": f"{name}-lb"}, region=ctx.region), opts=child)
        self.security_group = group
        self.load_balancer = aws.lb.LoadBalancer(f"{name}-lb", aws.lb.LoadBalancerArgs(
            name_prefix=_NAME_PREFIX, load_balancer_type=args.kind.value, internal=not args.internet_facing,
            subnets=list(args.subnet_ids), security_groups=[group.id],
            drop_invalid_header_fields=True if alb else None, enable_deletion_protection=ctx.protected,
            idle_timeout=ALB_IDLE_TIMEOUT_SECONDS if alb else None,
            access_logs=aws.lb.LoadBalancerAccessLogsArgs(bucket=args.logs.bucket, prefix=LB_ACCESS_LOG_PREFIX, enabled=True),
            tags={"Name": name}, region=ctx.region), opts=pulumi.ResourceOptions(parent=self, depends_on=[args.logs.ready]))
        self.target_group = aws.lb.TargetGroup(f"{name}-tg", aws.lb.TargetGroupArgs(
            name_prefix=_NAME_PREFIX, target_type="ip", port=spec.port, protocol="HTTP" if alb else "TCP",
            vpc_id=args.vpc_id, deregistration_delay=30,
            health_check=aws.lb.TargetGroupHealthCheckArgs(
                enabled=True, protocol="HTTP", path=spec.health_check_path, port="traffic-port",
                matcher="200-399" if alb else None, healthy_threshold=2, unhealthy_threshold=3, interval=15),
            region=ctx.region), opts=child)
        aws.lb.Listener(f"{name}-https", aws.lb.ListenerArgs(
            load_balancer_arn=self.load_balancer.arn, port=HTTPS, protocol="HTTPS" if alb else "TLS",
            ssl_policy=TLS_POLICY, certificate_arn=spec.certificate,
            default_actions=[aws.lb.ListenerDefaultActionArgs(type="forward", target_group_arn=self.target_group.arn)],
            region=ctx.region), opts=child)
        # The TargetGroupBinding's `networking` asks the Load Balancer Controller for this same permission: it compares
        # rules without their descriptions, finds this one and adds none, and it revokes only rules whose description
        # carries its label (elbv2.k8s.aws/targetGroupBinding=shared), so it never removes this one (pkg/networking
        # networking_manager.go, security_group_reconciler.go). The description must stay free of key=value pairs.
        aws.vpc.SecurityGroupIngressRule(f"{name}-nodes-from-lb", aws.vpc.SecurityGroupIngressRuleArgs(
            security_group_id=args.node_security_group_id, referenced_security_group_id=group.id, ip_protocol="tcp",
            from_port=spec.port, to_port=spec.port, description=f"{name} load balancer to inference pods",
            region=ctx.region), opts=child)
        if args.waf and alb:
            self._waf(name, args)
        self.register_outputs({"arn": self.load_balancer.arn, "dns_name": self.load_balancer.dns_name,
                               "target_group_arn": self.target_group.arn})

    def _waf(self, name: str, args: InferenceEndpointArgs) -> None:
        ctx = args.context

        def visibility(metric: str) -> dict:
            return {"cloudwatch_metrics_enabled": True, "metric_name": metric, "sampled_requests_enabled": True}

        rules = [
            aws.wafv2.WebAclRuleArgs(
                name=group, priority=priority,
                override_action=aws.wafv2.WebAclRuleOverrideActionArgs(none=aws.wafv2.WebAclRuleOverrideActionNoneArgs()),
                statement=aws.wafv2.WebAclRuleStatementArgs(
                    managed_rule_group_statement=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementArgs(
                        name=group, vendor_name="AWS",
                        rule_action_overrides=[
                            aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideArgs(
                                name=rule, action_to_use=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideActionToUseArgs(
                                    count=aws.wafv2.WebAclRuleStatementManagedRuleGroupStatementRuleActionOverrideActionToUseCountArgs()))
                            for rule in counted] or None)),
                visibility_config=aws.wafv2.WebAclRuleVisibilityConfigArgs(**visibility(group)))
            for priority, (group, counted) in enumerate(WAF_RULE_GROUPS, start=1)
        ]
        acl = aws.wafv2.WebAcl(f"{name}-waf", aws.wafv2.WebAclArgs(
            scope="REGIONAL", default_action=aws.wafv2.WebAclDefaultActionArgs(allow=aws.wafv2.WebAclDefaultActionAllowArgs()),
            rules=rules, visibility_config=aws.wafv2.WebAclVisibilityConfigArgs(**visibility(f"{name}-waf")),
            description=f"Managed rules in front of the {name} inference endpoint", region=ctx.region),
            opts=pulumi.ResourceOptions(parent=self))
        aws.wafv2.WebAclAssociation(f"{name}-waf-association", aws.wafv2.WebAclAssociationArgs(
            resource_arn=self.load_balancer.arn, web_acl_arn=acl.arn, region=ctx.region), opts=pulumi.ResourceOptions(parent=self))
        if args.kms_key_arn is None or args.log_retention_days is None:
            pulumi.log.warn(f"{name}: the WAF web ACL is not logged (no KMS key and retention for its log group)", self)
            return
        # Encrypted with the region's key like the other log groups: its policy already lets CloudWatch Logs use it for
        # any log group of the account in the region (key_policy; encryption context aws:logs:arn,
        # https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html).
        logs = aws.cloudwatch.LogGroup(f"{name}-waf-logs", aws.cloudwatch.LogGroupArgs(
            name=f"{WAF_LOG_GROUP_PREFIX}{name}", kms_key_id=args.kms_key_arn, retention_in_days=args.log_retention_days,
            region=ctx.region), opts=ctx.stateful(self))
        # WAF adds the log group resource policy its log delivery needs when logging is enabled (PutLoggingConfiguration,
        # https://docs.aws.amazon.com/waf/latest/APIReference/API_LoggingConfiguration.html).
        aws.wafv2.WebAclLoggingConfiguration(f"{name}-waf-logging", aws.wafv2.WebAclLoggingConfigurationArgs(
            resource_arn=acl.arn, log_destination_configs=[logs.arn],
            redacted_fields=[aws.wafv2.WebAclLoggingConfigurationRedactedFieldArgs(
                single_header=aws.wafv2.WebAclLoggingConfigurationRedactedFieldSingleHeaderArgs(name=header))
                for header in WAF_REDACTED_HEADERS],
            region=ctx.region), opts=pulumi.ResourceOptions(parent=self))


@dataclass(frozen=True)
class Origin:
    """One region's inference load balancer behind the global endpoint."""

    region: str
    load_balancer: aws.lb.LoadBalancer
    traffic_percent: int
    health_check_path: str
    kind: LoadBalancerKind = LoadBalancerKind.APPLICATION
    """The load balancer's type: Global Accelerator preserves client IP addresses for ALBs only. Default ALB."""
    vpc: Sequence[pulumi.Resource] = ()
    """What the endpoint group is created after and deleted before: the VPC's internet gateway, which Global
    Accelerator needs attached to reach an internal load balancer. Default none."""


@dataclass(frozen=True)
class GlobalEndpointArgs:
    spec: GlobalEndpointSpec
    origins: Sequence[Origin]
    flow_logs: LogTarget | None = None
    """A log bucket for Global Accelerator flow logs. Default: flow logs off."""


class GlobalEndpoint(pulumi.ComponentResource):
    """`ai-infra:aws:GlobalEndpoint`. Anycast: `<name>-accelerator`, `<name>-listener` (TCP 443: TLS ends at the
    regional load balancers), `<name>-<region>` endpoint groups, and with `domain` a `<name>-dns` Route 53 alias record
    to the accelerator. Latency DNS: `<name>-<region>` Route 53 records.

    With client IP preservation (ALB origins) GA creates, in each origin's VPC, network interfaces and a security group
    named `GlobalAccelerator`, which it never deletes (GA guide, "Best practices for ENIs and security groups with client
    IP address preservation"): it blocks the VPC's deletion until removed by hand (see the README's teardown steps)."""

    dns_name: pulumi.Output[str]

    def __init__(self, name: str, args: GlobalEndpointArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:GlobalEndpoint", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        if spec.routing is GlobalRouting.LATENCY_DNS:
            assert spec.domain and spec.hosted_zone_id  # the spec checks require both
            for origin in args.origins:
                aws.route53.Record(f"{name}-{origin.region}", aws.route53.RecordArgs(
                    zone_id=spec.hosted_zone_id, name=spec.domain, type="A", set_identifier=origin.region,
                    latency_routing_policies=[aws.route53.RecordLatencyRoutingPolicyArgs(region=origin.region)],
                    aliases=[aws.route53.RecordAliasArgs(name=origin.load_balancer.dns_name, zone_id=origin.load_balancer.zone_id,
                                                         evaluate_target_health=True)]), opts=child)
            self.dns_name = pulumi.Output.from_input(spec.domain)
            self.register_outputs({"dns_name": self.dns_name})
            return
        logs = args.flow_logs
        accelerator = aws.globalaccelerator.Accelerator(f"{name}-accelerator", aws.globalaccelerator.AcceleratorArgs(
            name=name, ip_address_type="IPV4", enabled=True,
            attributes=aws.globalaccelerator.AcceleratorAttributesArgs(
                flow_logs_enabled=logs is not None, flow_logs_s3_bucket=logs.bucket if logs else None,
                # Without a trailing slash: GA adds one, so "prefix/" would write to "prefix//AWSLogs/<account>/".
                flow_logs_s3_prefix=GLOBAL_ACCELERATOR_LOG_PREFIX if logs else None)),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[logs.ready] if logs else []))
        listener = aws.globalaccelerator.Listener(f"{name}-listener", aws.globalaccelerator.ListenerArgs(
            accelerator_arn=accelerator.arn, protocol="TCP", client_affinity="NONE",
            port_ranges=[aws.globalaccelerator.ListenerPortRangeArgs(from_port=HTTPS, to_port=HTTPS)]), opts=child)
        for origin in args.origins:
            aws.globalaccelerator.EndpointGroup(f"{name}-{origin.region}", aws.globalaccelerator.EndpointGroupArgs(
                listener_arn=listener.arn, endpoint_group_region=origin.region,
                traffic_dial_percentage=origin.traffic_percent,
                # Used for EC2/EIP endpoints; load balancer endpoints report their own target health.
                health_check_protocol="HTTPS", health_check_port=HTTPS, health_check_path=origin.health_check_path,
                health_check_interval_seconds=10, threshold_count=3,
                # Client IP preservation for ALBs (their access and WAF logs see the client); off, explicitly, for an
                # NLB: GA refuses it with a TLS listener (EndpointConfiguration.ClientIPPreservationEnabled, GA API).
                endpoint_configurations=[aws.globalaccelerator.EndpointGroupEndpointConfigurationArgs(
                    endpoint_id=origin.load_balancer.arn, weight=100,
                    client_ip_preservation_enabled=origin.kind is LoadBalancerKind.APPLICATION)]),
                # GA reaches a load balancer in a VPC only through the VPC's internet gateway (docs.aws.amazon.com/
                # global-accelerator/latest/dg/secure-vpc-connections.html): the gateway outlives the endpoint group.
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(origin.vpc)))
        self.dns_name = accelerator.dns_name
        if spec.domain and spec.hosted_zone_id:
            aws.route53.Record(f"{name}-dns", aws.route53.RecordArgs(
                zone_id=spec.hosted_zone_id, name=spec.domain, type="A",  # the accelerator is IPv4 only
                aliases=[aws.route53.RecordAliasArgs(name=accelerator.dns_name, zone_id=accelerator.hosted_zone_id,
                                                     evaluate_target_health=True)]), opts=child)
            self.dns_name = pulumi.Output.from_input(spec.domain)
        self.register_outputs({"dns_name": self.dns_name})
