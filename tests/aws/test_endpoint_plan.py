"""Multi-region inference: regional load balancers with TLS 1.2+ listeners, WAF, Global Accelerator endpoint groups
with traffic dials, and Route 53 latency records as the alternative."""

from __future__ import annotations

import copy

from aiinfra.plan.runtime import PlanResult

EAST = "prod-us-east-1"
WEST = "prod-eu-west-1"
LB = "aws:lb/loadBalancer:LoadBalancer"
LISTENER = "aws:lb/listener:Listener"
GROUP = "aws:globalaccelerator/endpointGroup:EndpointGroup"
CERT_EAST = "arn:aws:acm:us-east-1:123456789012:certificate/1c2d3e4f-5061-7283-94a5-b6c7d8e9f0a1"


def test_internal_alb_with_tls12_listener_and_access_logs(prod_plan: PlanResult) -> None:
    lb = prod_plan.one(LB, f"{EAST}-inference-lb")
    assert lb.inputs["loadBalancerType"] == "application" and lb.inputs["internal"] is True
    assert lb.inputs["subnets"] == [f"{EAST}-private-{i}-id" for i in range(3)]
    assert lb.inputs["dropInvalidHeaderFields"] is True and lb.inputs["enableDeletionProtection"] is True
    assert lb.inputs["accessLogs"]["enabled"] is True and lb.inputs["accessLogs"]["prefix"] == "lb"
    assert prod_plan.one("aws:s3/bucketPolicy:BucketPolicy", f"{EAST}-log-archive-policy").urn in lb.dependencies
    listener = prod_plan.one(LISTENER, f"{EAST}-inference-https").inputs
    assert listener["protocol"] == "HTTPS" and listener["port"] == 443
    assert listener["sslPolicy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06" and listener["certificateArn"] == CERT_EAST
    assert listener["defaultActions"][0]["type"] == "forward"
    tg = prod_plan.one("aws:lb/targetGroup:TargetGroup", f"{EAST}-inference-tg").inputs
    assert tg["targetType"] == "ip" and tg["port"] == 8080 and tg["healthCheck"]["path"] == "/healthz"


def test_load_balancer_reaches_the_pods_on_the_service_port_only(prod_plan: PlanResult) -> None:
    group = prod_plan.one("aws:ec2/securityGroup:SecurityGroup", f"{EAST}-inference-lb-sg").inputs
    assert [(r["fromPort"], r["toPort"]) for r in group["ingress"]] == [(443, 443)]
    assert [(r["fromPort"], r["toPort"], r["cidrBlocks"]) for r in group["egress"]] == [(8080, 8080, ["10.60.0.0/16"])]
    rule = prod_plan.one("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", f"{EAST}-inference-nodes-from-lb").inputs
    assert (rule["fromPort"], rule["toPort"], rule["ipProtocol"]) == (8080, 8080, "tcp")
    assert rule["referencedSecurityGroupId"] == f"{EAST}-inference-lb-sg-id"


def test_waf_with_managed_rules_that_let_long_prompts_through(prod_plan: PlanResult) -> None:
    acl = prod_plan.one("aws:wafv2/webAcl:WebAcl", f"{EAST}-inference-waf").inputs
    assert acl["scope"] == "REGIONAL" and acl["defaultAction"] == {"allow": {}}
    groups = [r["statement"]["managedRuleGroupStatement"] for r in acl["rules"]]
    assert [g["name"] for g in groups] == ["AWSManagedRulesCommonRuleSet", "AWSManagedRulesKnownBadInputsRuleSet",
                                           "AWSManagedRulesAmazonIpReputationList"]
    assert groups[0]["ruleActionOverrides"] == [{"name": "SizeRestrictions_BODY", "actionToUse": {"count": {}}}]
    association = prod_plan.one("aws:wafv2/webAclAssociation:WebAclAssociation", f"{EAST}-inference-waf-association").inputs
    assert association["webAclArn"]


def test_global_accelerator_has_one_endpoint_group_per_region(prod_plan: PlanResult) -> None:
    accelerator = prod_plan.one("aws:globalaccelerator/accelerator:Accelerator", "prod-global-accelerator").inputs
    assert accelerator["ipAddressType"] == "IPV4" and accelerator["attributes"]["flowLogsEnabled"] is True
    # No trailing slash: Global Accelerator adds its own, so "prefix/" would write under "prefix//AWSLogs/".
    assert accelerator["attributes"]["flowLogsS3Prefix"] == "global-accelerator"
    listener = prod_plan.one("aws:globalaccelerator/listener:Listener", "prod-global-listener").inputs
    assert listener["protocol"] == "TCP" and listener["portRanges"] == [{"fromPort": 443, "toPort": 443}]
    groups = {g.inputs["endpointGroupRegion"]: g.inputs for g in prod_plan.of_type(GROUP)}
    assert sorted(groups) == ["eu-west-1", "us-east-1"]
    assert groups["us-east-1"]["trafficDialPercentage"] == 100 and groups["eu-west-1"]["trafficDialPercentage"] == 40
    assert groups["eu-west-1"]["healthCheckPath"] == "/healthz" and groups["eu-west-1"]["healthCheckProtocol"] == "HTTPS"
    config = groups["us-east-1"]["endpointConfigurations"][0]
    assert config["clientIpPreservationEnabled"] is True and config["weight"] == 100
    # Global Accelerator reaches internal load balancers through an internet gateway attached to their VPC
    assert prod_plan.one("aws:ec2/internetGateway:InternetGateway", f"{WEST}-igw")


def test_latency_dns_alternative_uses_internet_facing_albs_in_public_subnets(plan_aws, prod_config) -> None:  # noqa: ANN001
    config = copy.deepcopy(prod_config)
    config["global_endpoint"] = {"routing": "latency_dns", "domain": "infer.example.com", "hosted_zone_id": "Z0123456789ABCDEFGHIJ"}
    plan = plan_aws(config, environment="prod")
    assert not plan.of_type("aws:globalaccelerator/accelerator:Accelerator")
    records = {r.inputs["setIdentifier"]: r.inputs for r in plan.of_type("aws:route53/record:Record")}
    assert sorted(records) == ["eu-west-1", "us-east-1"]
    east = records["us-east-1"]
    assert east["name"] == "infer.example.com" and east["type"] == "A" and east["zoneId"] == "Z0123456789ABCDEFGHIJ"
    assert east["latencyRoutingPolicies"] == [{"region": "us-east-1"}]
    assert east["aliases"][0]["evaluateTargetHealth"] is True
    lb = plan.one(LB, f"{EAST}-inference-lb").inputs
    assert lb["internal"] is False and lb["subnets"] == [f"{EAST}-public-{i}-id" for i in range(3)]
    assert plan.one("aws:wafv2/webAclAssociation:WebAclAssociation", f"{EAST}-inference-waf-association")


def test_anycast_domain_is_an_alias_record_to_the_accelerator(plan_aws, prod_config) -> None:  # noqa: ANN001
    config = copy.deepcopy(prod_config)
    config["global_endpoint"] = {"routing": "anycast", "domain": "infer.example.com", "hosted_zone_id": "Z0123456789ABCDEFGHIJ"}
    plan = plan_aws(config, environment="prod")
    record = plan.one("aws:route53/record:Record", "prod-global-dns")
    accelerator = plan.one("aws:globalaccelerator/accelerator:Accelerator", "prod-global-accelerator")
    assert (record.inputs["name"], record.inputs["type"], record.inputs["zoneId"]) == ("infer.example.com", "A", "Z0123456789ABCDEFGHIJ")
    assert "setIdentifier" not in record.inputs and record.inputs["aliases"][0]["evaluateTargetHealth"] is True
    # the alias target (the accelerator's DNS name and Route 53 zone) is known only once the accelerator exists
    assert accelerator.urn in record.dependencies and record.parent == plan.one("ai-infra:aws:GlobalEndpoint", "prod-global").urn
    assert len(plan.of_type("aws:route53/record:Record")) == 1


def test_network_load_balancer_option_terminates_tls_without_waf(plan_aws, prod_config) -> None:  # noqa: ANN001
    config = copy.deepcopy(prod_config)
    config["inference_load_balancer"] = "network"
    config["global_endpoint"]["waf"] = False
    plan = plan_aws(config, environment="prod")
    lb = plan.one(LB, f"{EAST}-inference-lb").inputs
    assert lb["loadBalancerType"] == "network" and "dropInvalidHeaderFields" not in lb
    listener = plan.one(LISTENER, f"{EAST}-inference-https").inputs
    assert listener["protocol"] == "TLS" and listener["sslPolicy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    assert plan.one("aws:lb/targetGroup:TargetGroup", f"{EAST}-inference-tg").inputs["protocol"] == "TCP"
    assert not plan.of_type("aws:wafv2/webAcl:WebAcl")


def test_regional_inference_without_a_global_endpoint_stays_inside_the_vpc(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16", "nat": "none"}, "cluster": {},
                                               "inference": {"certificate": CERT_EAST}}}})
    group = plan.one("aws:ec2/securityGroup:SecurityGroup", "test-us-east-1-inference-lb-sg").inputs
    assert group["ingress"][0]["cidrBlocks"] == ["10.9.0.0/16"]
    assert not plan.of_type("aws:ec2/internetGateway:InternetGateway")
    assert plan.one("aws:wafv2/webAclAssociation:WebAclAssociation")  # WAF is on unless turned off


def test_the_nodes_rule_is_one_the_load_balancer_controller_leaves_alone(prod_plan: PlanResult) -> None:
    """The TargetGroupBinding asks the controller for the same permission: it matches this rule (protocol, ports, source
    group; descriptions ignored) and adds no duplicate, and it revokes only rules whose description parses as its
    label elbv2.k8s.aws/targetGroupBinding=shared (aws-load-balancer-controller pkg/networking). So no key=value in it."""
    rule = prod_plan.one("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", f"{EAST}-inference-nodes-from-lb").inputs
    assert (rule["ipProtocol"], rule["fromPort"], rule["toPort"]) == ("tcp", 8080, 8080)
    assert rule["referencedSecurityGroupId"] == f"{EAST}-inference-lb-sg-id"
    assert "=" not in rule["description"]
