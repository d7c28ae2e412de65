"""Tests from a second hand mutation review of components/aws (node groups, inference endpoints, controller policies):
each pins what AWS would receive where a changed line went unnoticed before: the ALB's target group speaking plain
HTTP to the pods and its health check matcher, Global Accelerator's listener without client affinity, no web ACL on a
Network Load Balancer even with `waf` left on, and the Load Balancer Controller's rights to tag the load balancers it
creates and to delete the target groups it owns."""

from __future__ import annotations

from aiinfra.plan.runtime import PlanResult, run_program
from components.aws import controller_policies
from components.aws.context import AwsContext
from components.aws.endpoint import InferenceEndpoint, InferenceEndpointArgs
from components.aws.storage import LogBucket, LogBucketArgs
from components.spec import InferenceSpec
from components.spec.aws import LoadBalancerKind

EAST = "prod-us-east-1"
TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"
CERT = "arn:aws:acm:us-east-1:123456789012:certificate/1c2d3e4f-5061-7283-94a5-b6c7d8e9f0a1"
ELB = "arn:aws:elasticloadbalancing:*:*"


def test_the_alb_forwards_plain_http_to_the_pods_and_counts_redirects_as_healthy(prod_plan: PlanResult) -> None:
    """TLS ends at the ALB's listener; the pods serve plain HTTP on the service port, so the target group must not
    speak HTTPS to them (every target would fail its TLS handshake). A health path answering with a redirect still
    counts as healthy: the ALB's default matcher (200 only) would take such pods out of service."""
    group = prod_plan.one(TARGET_GROUP, f"{EAST}-inference-tg").inputs
    assert (group["protocol"], group["port"]) == ("HTTP", 8080)
    check = group["healthCheck"]
    assert (check["protocol"], check["port"], check["matcher"]) == ("HTTP", "traffic-port", "200-399")


def test_global_accelerator_spreads_connections_without_client_affinity(prod_plan: PlanResult) -> None:
    """With source-IP affinity every client behind one NAT address would stick to a single region, so the traffic
    dials would no longer split load as configured: the listener leaves affinity off."""
    listener = prod_plan.one("aws:globalaccelerator/listener:Listener", "prod-global-listener").inputs
    assert listener["clientAffinity"] == "NONE"


def test_a_network_load_balancer_never_gets_a_web_acl_even_with_waf_left_on() -> None:
    """AWS WAF cannot attach to an NLB (the association would fail at deploy): the component skips the web ACL for
    an NLB whatever `waf` says, including its default of on."""
    def program() -> None:
        ctx = AwsContext(environment="prod", region="us-east-1", labels={}, account_id="123456789012", partition="aws",
                         dns_suffix="amazonaws.com", dns_prefix="com.amazonaws", protected=True)
        logs = LogBucket("prod-us-east-1-log-archive", LogBucketArgs(ctx, 365)).target
        InferenceEndpoint("nlb", InferenceEndpointArgs(
            ctx, InferenceSpec(certificate=CERT), "vpc-0123", "10.60.0.0/16", ["subnet-a", "subnet-b"], "sg-nodes",
            logs, kind=LoadBalancerKind.NETWORK))

    plan = run_program(program, project="ai-infra", stack="prod")
    assert plan.one("aws:lb/loadBalancer:LoadBalancer", "nlb-lb").inputs["loadBalancerType"] == "network"
    assert not plan.of_type("aws:wafv2/webAcl:WebAcl")
    assert not plan.of_type("aws:wafv2/webAclAssociation:WebAclAssociation")


def test_the_lb_controller_tags_every_load_balancer_and_target_group_it_creates() -> None:
    """CreateLoadBalancer and CreateTargetGroup with tags also need elasticloadbalancing:AddTags on the new resource;
    without it for either action or for application load balancers, the controller's creates fail with AccessDenied.
    Tag changes later are allowed on the same owned resources."""
    statements = {s["Sid"]: s for s in controller_policies.load_balancer_controller("aws")["Statement"]}
    created = [f"{ELB}:targetgroup/*/*", f"{ELB}:loadbalancer/net/*/*", f"{ELB}:loadbalancer/app/*/*"]
    on_create = statements["TagOnCreate"]
    assert on_create["Resource"] == created
    assert on_create["Condition"]["StringEquals"] == {
        "elasticloadbalancing:CreateAction": ["CreateTargetGroup", "CreateLoadBalancer"]}
    assert statements["RetagOwnedLoadBalancers"]["Resource"] == created


def test_the_lb_controller_cleans_up_the_load_balancers_and_target_groups_it_owns() -> None:
    """When a TargetGroupBinding, Ingress or Service goes away the controller deletes what it created: without
    DeleteTargetGroup (or DeleteLoadBalancer) on its tagged resources they would be left behind and keep costing."""
    statements = {s["Sid"]: s for s in controller_policies.load_balancer_controller("aws")["Statement"]}
    owned = statements["ModifyOwnedLoadBalancers"]
    assert {"elasticloadbalancing:DeleteTargetGroup", "elasticloadbalancing:DeleteLoadBalancer"} <= set(owned["Action"])
    assert owned["Condition"] == {"Null": {"aws:ResourceTag/elbv2.k8s.aws/cluster": "false"}}
