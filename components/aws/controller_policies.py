"""IAM policies of the in-cluster AWS controllers (pure: plain strings in, JSON-ready dicts out), in the style of
`policies.py`. Each follows the controller's own documented policy; where that document leaves a scope open, the
narrower scope is stated below.
"""

from __future__ import annotations

from .policies import Document, document

AUTOSCALER_TAG = "k8s.io/cluster-autoscaler"
LB_CLUSTER_TAG = "elbv2.k8s.aws/cluster"
"""The tag the AWS Load Balancer Controller puts on every resource it creates (its policy keys on it)."""


def cluster_autoscaler(cluster_name: str) -> Document:
    """Cluster Autoscaler with ASG auto-discovery (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md,
    "Full Cluster Autoscaler Features Policy"): the read actions on every resource (Describe* cannot be scoped), and
    the two write actions restricted, as that README recommends, with a tag condition to the Auto Scaling groups of
    this cluster: EKS tags every managed node group's ASG `k8s.io/cluster-autoscaler/<cluster>=owned`."""
    return document(
        {"Sid": "DiscoverGroupsAndInstanceTypes", "Effect": "Allow", "Action": [
            "autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeAutoScalingInstances",
            "autoscaling:DescribeLaunchConfigurations", "autoscaling:DescribeScalingActivities",
            "ec2:DescribeImages", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplateVersions",
            "ec2:GetInstanceTypesFromInstanceRequirements", "eks:DescribeNodegroup"], "Resource": "*"},
        {"Sid": "ScaleOnlyThisClustersGroups", "Effect": "Allow",
         "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"], "Resource": "*",
         "Condition": {"StringEquals": {f"aws:ResourceTag/{AUTOSCALER_TAG}/{cluster_name}": "owned"}}},
    )


def load_balancer_controller(partition: str) -> Document:
    """AWS Load Balancer Controller, written from kubernetes-sigs/aws-load-balancer-controller
    docs/install/iam_policy.json at tag v3.5.0 (the app version of the pinned chart). Like that document, creating
    and changing load balancers, target groups and security groups is allowed only on resources carrying the
    controller's `elbv2.k8s.aws/cluster` tag; registering targets and opening ingress on the nodes' security groups
    (TargetGroupBinding `networking`) have no such tag to key on, as in the document. ARNs use the partition."""
    elb = f"arn:{partition}:elasticloadbalancing:*:*"
    security_groups = f"arn:{partition}:ec2:*:*:security-group/*"
    tagged = {"Null": {f"aws:ResourceTag/{LB_CLUSTER_TAG}": "false"}}
    tagging_on_create = {"Null": {f"aws:RequestTag/{LB_CLUSTER_TAG}": "false"}}
    # Tags changed later on resources the controller owns, never its own ownership tag.
    retag_owned = {"Null": {f"aws:RequestTag/{LB_CLUSTER_TAG}": "true", f"aws:ResourceTag/{LB_CLUSTER_TAG}": "false"}}
    balancers_and_groups = [f"{elb}:targetgroup/*/*", f"{elb}:loadbalancer/net/*/*", f"{elb}:loadbalancer/app/*/*"]
    return document(
        {"Sid": "ElbServiceLinkedRole", "Effect": "Allow", "Action": "iam:CreateServiceLinkedRole", "Resource": "*",
         "Condition": {"StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}}},
        {"Sid": "Describe", "Effect": "Allow", "Resource": "*", "Action": [
            "ec2:DescribeAccountAttributes", "ec2:DescribeAddresses", "ec2:DescribeAvailabilityZones",
            "ec2:DescribeInternetGateways", "ec2:DescribeVpcs", "ec2:DescribeVpcPeeringConnections", "ec2:DescribeSubnets",
            "ec2:DescribeSecurityGroups", "ec2:DescribeInstances", "ec2:DescribeNetworkInterfaces", "ec2:DescribeTags",
            "ec2:GetCoipPoolUsage", "ec2:DescribeCoipPools", "ec2:GetSecurityGroupsForVpc", "ec2:DescribeIpamPools",
            "ec2:DescribeRouteTables",
            "elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeLoadBalancerAttributes",
            "elasticloadbalancing:DescribeListeners", "elasticloadbalancing:DescribeListenerCertificates",
            "elasticloadbalancing:DescribeSSLPolicies", "elasticloadbalancing:DescribeRules",
            "elasticloadbalancing:DescribeTargetGroups", "elasticloadbalancing:DescribeTargetGroupAttributes",
            "elasticloadbalancing:DescribeTargetHealth", "elasticloadbalancing:DescribeTags",
            "elasticloadbalancing:DescribeTrustStores", "elasticloadbalancing:DescribeListenerAttributes",
            "elasticloadbalancing:DescribeCapacityReservation"]},
        {"Sid": "CertificatesWafShield", "Effect": "Allow", "Resource": "*", "Action": [
            "cognito-idp:DescribeUserPoolClient", "acm:ListCertificates", "acm:DescribeCertificate",
            "iam:ListServerCertificates", "iam:GetServerCertificate",
            "waf-regional:GetWebACL", "waf-regional:GetWebACLForResource", "waf-regional:AssociateWebACL",
            "waf-regional:DisassociateWebACL", "wafv2:GetWebACL", "wafv2:GetWebACLForResource", "wafv2:AssociateWebACL",
            "wafv2:DisassociateWebACL", "shield:GetSubscriptionState", "shield:DescribeProtection",
            "shield:CreateProtection", "shield:DeleteProtection"]},
        {"Sid": "NodeSecurityGroupIngress", "Effect": "Allow", "Resource": "*",
         "Action": ["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress"]},
        {"Sid": "CreateSecurityGroup", "Effect": "Allow", "Action": "ec2:CreateSecurityGroup", "Resource": "*"},
        {"Sid": "TagSecurityGroupOnCreate", "Effect": "Allow", "Action": "ec2:CreateTags", "Resource": security_groups,
         "Condition": {"StringEquals": {"ec2:CreateAction": "CreateSecurityGroup"}, **tagging_on_create}},
        {"Sid": "RetagOwnedSecurityGroups", "Effect": "Allow", "Action": ["ec2:CreateTags", "ec2:DeleteTags"],
         "Resource": security_groups, "Condition": retag_owned},
        {"Sid": "ManageOwnedSecurityGroups", "Effect": "Allow", "Resource": "*", "Condition": tagged,
         "Action": ["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:DeleteSecurityGroup"]},
        {"Sid": "CreateTaggedLoadBalancers", "Effect": "Allow", "Resource": "*", "Condition": tagging_on_create,
         "Action": ["elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateTargetGroup"]},
        {"Sid": "ListenersAndRules", "Effect": "Allow", "Resource": "*", "Action": [
            "elasticloadbalancing:CreateListener", "elasticloadbalancing:DeleteListener",
            "elasticloadbalancing:CreateRule", "elasticloadbalancing:DeleteRule"]},
        {"Sid": "RetagOwnedLoadBalancers", "Effect": "Allow", "Resource": balancers_and_groups, "Condition": retag_owned,
         "Action": ["elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags"]},
        {"Sid": "TagListenersAndRules", "Effect": "Allow",
         "Action": ["elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags"],
         "Resource": [f"{elb}:listener/net/*/*/*", f"{elb}:listener/app/*/*/*",
                      f"{elb}:listener-rule/net/*/*/*", f"{elb}:listener-rule/app/*/*/*"]},
        {"Sid": "ModifyOwnedLoadBalancers", "Effect": "Allow", "Resource": "*", "Condition": tagged, "Action": [
            "elasticloadbalancing:ModifyLoadBalancerAttributes", "elasticloadbalancing:SetIpAddressType",
            "elasticloadbalancing:SetSecurityGroups", "elasticloadbalancing:SetSubnets",
            "elasticloadbalancing:DeleteLoadBalancer", "elasticloadbalancing:ModifyTargetGroup",
            "elasticloadbalancing:ModifyTargetGroupAttributes", "elasticloadbalancing:DeleteTargetGroup",
            "elasticloadbalancing:ModifyListenerAttributes", "elasticloadbalancing:ModifyCapacityReservation",
            "elasticloadbalancing:ModifyIpPools"]},
        {"Sid": "TagOnCreate", "Effect": "Allow", "Action": "elasticloadbalancing:AddTags", "Resource": balancers_and_groups,
         "Condition": {"StringEquals": {"elasticloadbalancing:CreateAction": ["CreateTargetGroup", "CreateLoadBalancer"]},
                       **tagging_on_create}},
        {"Sid": "RegisterTargets", "Effect": "Allow", "Resource": f"{elb}:targetgroup/*/*",
         "Action": ["elasticloadbalancing:RegisterTargets", "elasticloadbalancing:DeregisterTargets"]},
        {"Sid": "ListenerSettings", "Effect": "Allow", "Resource": "*", "Action": [
            "elasticloadbalancing:SetWebAcl", "elasticloadbalancing:ModifyListener",
            "elasticloadbalancing:AddListenerCertificates", "elasticloadbalancing:RemoveListenerCertificates",
            "elasticloadbalancing:ModifyRule", "elasticloadbalancing:SetRulePriorities"]},
    )
