"""AWS resource rules: S3, EKS, EC2 instances, spot requests and launch templates, EBS volumes, subnets, FSx, EFS,
KMS, security groups, load balancers, IAM, SageMaker notebook instances."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .aws_ec2 import (
    EBS_VOLUME,
    INSTANCES,
    LAUNCH_TEMPLATE,
    aws_managed_key,
    ebs_volumes,
    known_output,
    outside_template_part,
)
from .common import OPEN_CIDRS, aws_ssl_policy_tls12, port_range_hits
from .props import Unknown, as_json, get, is_unknown, items, log_named, need
from .registry import Context, rule

S3_PAB = ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",)
S3_SSE = ("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
          "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2")
S3_BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")
"""S3 default-encryption algorithms that use a KMS key (DSSE-KMS adds a second layer on top of SSE-KMS)."""
EKS_CLUSTER = ("aws:eks/cluster:Cluster",)
NOTEBOOK = "aws:sagemaker/notebookInstance:NotebookInstance"
SG_TYPES = ("aws:ec2/securityGroup:SecurityGroup", "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup",
            "aws:ec2/securityGroupRule:SecurityGroupRule", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
INLINE_INGRESS = SG_TYPES[:2]
"""Security groups that take their rules inline, as `ingress[]` of the same shape."""
IAM_POLICIES = ("aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy", "aws:iam/userPolicy:UserPolicy",
                "aws:iam/groupPolicy:GroupPolicy")
IAM_ROLE = "aws:iam/role:Role"
IAM_EXCLUSIVE = ("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
                 "aws:iam/userPolicyAttachmentsExclusive:UserPolicyAttachmentsExclusive",
                 "aws:iam/groupPolicyAttachmentsExclusive:GroupPolicyAttachmentsExclusive")
"""Resources that attach a list of managed policies (`policyArns`), as a Role's deprecated `managedPolicyArns` does."""
ENC = {"HIPAA": ("164.312(a)(2)(iv)",), "SOC2": ("CC6.1",), "PCI-DSS-v4": ("3.5.1",), "GDPR": ("Art.32",), "NIST-800-53": ("SC-28",)}
EXPOSURE = {"HIPAA": ("164.312(e)(1)",), "SOC2": ("CC6.6",), "PCI-DSS-v4": ("1.3.1",), "NIST-800-53": ("SC-7",)}
LOGGING = {"HIPAA": ("164.312(b)",), "SOC2": ("CC7.2",), "PCI-DSS-v4": ("10.2.1",), "NIST-800-53": ("AU-12",)}
PRIVILEGE = {"HIPAA": ("164.312(a)(1)",), "SOC2": ("CC6.3",), "PCI-DSS-v4": ("7.2.1",), "NIST-800-53": ("AC-6",)}
# CIS IDs below: CIS AWS Foundations Benchmark v3.0.0 ("AWS ...") and CIS Amazon EKS Benchmark v1.7.0 ("EKS ...").


@rule("aws-s3-public-access-block", "Checks whether an S3 public access block turns on all four settings.",
      severity="critical", types=S3_PAB, remediation="Set blockPublicAcls, blockPublicPolicy, ignorePublicAcls and restrictPublicBuckets to true.",
      frameworks={**EXPOSURE, "GDPR": ("Art.32",), "CIS": ("AWS 2.1.4",)})
def s3_public_access_block(props: Any, ctx: Context) -> Iterator[str]:
    off = [k for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets") if need(props, k) is not True]
    if off:
        yield f"public access block leaves {', '.join(off)} off; all four must be true"


@rule("aws-s3-kms-encryption", "Checks whether S3 encryption configurations use SSE-KMS with a customer-managed key.",
      severity="high", types=S3_SSE, remediation="Use sseAlgorithm aws:kms with kmsMasterKeyId of your KMS key (server access log buckets may use AES256: S3 log delivery supports only SSE-S3).",
      frameworks=ENC)  # CIS AWS v3.0.0 has no S3 encryption control (v1.4/v1.5 2.1.1 was; v3 2.1.1 is TLS-only)
def s3_kms(props: Any, ctx: Context) -> Iterator[str]:
    # A bucket's inline setting is judged by `aws-s3-bucket-default-encryption`, on the outputs, where S3 reports the
    # encryption a bucket without one gets (SSE-S3).
    for default in sse_defaults(ctx.type, props):
        algorithm = need(default, "sseAlgorithm")
        if algorithm == "AES256" and log_named(ctx.name):
            continue  # S3 server access logs can only be delivered to SSE-S3 buckets (named with a log/logs segment)
        if algorithm not in KMS_ALGORITHMS:
            yield f"default encryption is {algorithm}; use aws:kms with a customer-managed key"
        elif not (key := get(default, "kmsMasterKeyId")):
            yield "aws:kms without kmsMasterKeyId uses the AWS-managed key; name a customer-managed key"
        elif aws_managed_key(key):
            yield f"kmsMasterKeyId {key} is the AWS-managed S3 key, not a customer-managed one; name your KMS key"


def sse_defaults(type_: str, props: Any) -> Iterator[Any]:
    """The default-encryption settings ({sseAlgorithm, kmsMasterKeyId}) of an S3 encryption configuration, or of a
    bucket's inline one, in each type's wire shape: the configuration resources' `rules[].applyServerSideEncryptionByDefault`,
    Bucket's single `serverSideEncryptionConfiguration.rule.applyServerSideEncryptionByDefault`, and BucketV2's lists
    `serverSideEncryptionConfigurations[].rules[].applyServerSideEncryptionByDefaults[]`. A rule without one yields {}."""
    if type_ == "aws:s3/bucket:Bucket":
        if get(props, "serverSideEncryptionConfiguration") is not None:
            yield get(props, "serverSideEncryptionConfiguration.rule.applyServerSideEncryptionByDefault") or {}
    elif type_ == "aws:s3/bucketV2:BucketV2":
        for config in items(props, "serverSideEncryptionConfigurations"):
            for entry in items(config, "rules"):
                yield from list(items(entry, "applyServerSideEncryptionByDefaults")) or [{}]
    else:
        for entry in items(props, "rules"):
            yield get(entry, "applyServerSideEncryptionByDefault") or {}


@rule("aws-eks-private-endpoint", "Checks whether the EKS API endpoint is private or limited to an allowlist.",
      severity="critical", types=EKS_CLUSTER, remediation="Set vpcConfig.endpointPublicAccess false, or list publicAccessCidrs without 0.0.0.0/0.",
      frameworks={**EXPOSURE, "CIS": ("EKS 5.4.1",)})  # 5.4.1 restrict endpoint access; 5.4.2 = no public access at all
def eks_endpoint(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "vpcConfig.endpointPublicAccess", True) is not False:
        cidrs = need(props, "vpcConfig.publicAccessCidrs", ["0.0.0.0/0"])
        if not cidrs or set(cidrs) & OPEN_CIDRS:
            yield "the EKS API endpoint is public to the whole internet (publicAccessCidrs includes 0.0.0.0/0 or is unset)"


@rule("aws-eks-secrets-encryption", "Checks whether EKS envelope-encrypts Kubernetes secrets with a customer-managed KMS key.",
      severity="high", types=EKS_CLUSTER, remediation="Add encryptionConfig {resources: [secrets], provider: {keyArn}}.",
      frameworks={**ENC, "CIS": ("EKS 5.3.1",)})
def eks_secrets(props: Any, ctx: Context) -> Iterator[str]:
    if "secrets" not in list(items(props, "encryptionConfig.resources")):
        # EKS 1.28+ envelope-encrypts all API data with an AWS-owned key by default: the gap is the customer-managed key.
        yield "Kubernetes secrets are not encrypted with a customer-managed KMS key"


@rule("aws-eks-control-plane-logs", "Checks whether EKS sends api, audit and authenticator logs to CloudWatch.",
      severity="medium", types=EKS_CLUSTER, remediation="Set enabledClusterLogTypes to include api, audit and authenticator.",
      frameworks={**LOGGING, "CIS": ("EKS 2.1.1",)})
def eks_logs(props: Any, ctx: Context) -> Iterator[str]:
    missing = {"api", "audit", "authenticator"} - set(items(props, "enabledClusterLogTypes"))
    if missing:
        yield f"control-plane logs {', '.join(sorted(missing))} are off"


@rule("aws-eks-access-entries", "Checks whether EKS grants cluster access with access entries only, with no implicit admin for its creator.",
      severity="medium", types=EKS_CLUSTER,
      remediation="Set accessConfig {authenticationMode: API, bootstrapClusterCreatorAdminPermissions: false} and grant admins, "
                  "the deploying role included, with access entries.",
      frameworks=PRIVILEGE)
def eks_access(props: Any, ctx: Context) -> Iterator[str]:
    # The EKS API's defaults when unset: CONFIG_MAP and true (docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessConfigRequest.html).
    mode = need(props, "accessConfig.authenticationMode", "CONFIG_MAP")
    if mode != "API":
        yield (f"authenticationMode is {mode}: the aws-auth ConfigMap can grant access from inside the cluster, where IAM "
               "and the stack don't see it; use API (access entries only)")
    if need(props, "accessConfig.bootstrapClusterCreatorAdminPermissions", True) is not False:
        yield ("bootstrapClusterCreatorAdminPermissions is true: EKS gives whoever creates the cluster cluster-admin through "
               "an access entry outside the stack's state (changing the flag replaces the cluster)")


@rule("aws-launch-template-encrypted-volumes", "Checks whether EBS volumes of launch templates, instances, spot requests "
      "and aws.ebs.Volume are encrypted and name no AWS-managed KMS key.",
      severity="high", types=(LAUNCH_TEMPLATE, *INSTANCES, EBS_VOLUME),
      remediation="Set encrypted true and kmsKeyId to a customer-managed key (launch templates: "
                  "blockDeviceMappings[].ebs; instances: rootBlockDevice and ebsBlockDevices[]). Volumes that leave "
                  "encrypted unset, or set it without kmsKeyId, take the account's EBS encryption by default and "
                  "default EBS key: aws-ebs-default-encryption checks those.",
      frameworks={**ENC, "CIS": ("AWS 2.2.1",)})  # CIS AWS Foundations v3.0.0
def lt_volumes(props: Any, ctx: Context) -> Iterator[str]:
    for label, encrypted, key in ebs_volumes(ctx.type, props):
        if encrypted is False:
            yield f"{label} is not encrypted"
        elif encrypted and aws_managed_key(key):
            yield f"{label} uses the AWS-managed EBS key {key}; set kmsKeyId to a customer-managed key"


def _imds_outside(props: Any, template: str) -> Iterator[str]:
    if known_output(props, "metadataOptions.httpEndpoint") == "disabled":
        return
    tokens = known_output(props, "metadataOptions.httpTokens")
    hops = known_output(props, "metadataOptions.httpPutResponseHopLimit")
    if left := [k for k, v in (("httpTokens", tokens), ("httpPutResponseHopLimit", hops)) if v is None]:
        yield (f"metadataOptions {' and '.join(left)} come from {template}, which is not in this stack, so no rule "
               "sees them; set metadataOptions {httpTokens: required, httpPutResponseHopLimit: 1} on the instance (they "
               "override the template's) or manage the template in this stack")
    elif tokens != "required" or int(hops) > 1:  # after `pulumi up`: what EC2 took from the template
        yield (f"metadataOptions are httpTokens {tokens}, httpPutResponseHopLimit {hops} ({template} is not in this "
               "stack); require IMDSv2 with a hop limit of 1 on the instance or in the template")


def _public_ip_outside(props: Any, template: str) -> Iterator[str]:
    public = known_output(props, "associatePublicIpAddress")
    if public is None and any(isinstance(get(props, k), (list, dict)) and get(props, k)
                              for k in ("networkInterfaces", "primaryNetworkInterface")):
        return  # the network interfaces it attaches decide, as for any instance
    if public is None:
        yield (f"the instance takes its network settings from {template}, which is not in this stack, so whether it "
               "gets a public IP address can't be checked; set associatePublicIpAddress false on the instance or "
               "manage the template in this stack")
    elif public:  # after `pulumi up`: what EC2 took from the template or the subnet
        yield f"the instance has a public IP address ({template} is not in this stack); set associatePublicIpAddress false"


@rule("aws-launch-template-imdsv2", "Checks whether instances require IMDSv2 with a hop limit of 1.",
      severity="high", types=(LAUNCH_TEMPLATE, *INSTANCES),
      remediation="Set metadataOptions {httpTokens: required, httpPutResponseHopLimit: 1}, or httpEndpoint disabled.",
      frameworks={"SOC2": ("CC6.6",), "PCI-DSS-v4": ("2.2.1",), "NIST-800-53": ("SC-7",), "CIS": ("AWS 5.6",)})
@outside_template_part(_imds_outside)
def imdsv2(props: Any, ctx: Context) -> Iterator[str]:
    # An instance launched from a template takes the template's metadata options (this rule checks the template, its
    # stack part a template outside the stack); it is judged only on what it overrides.
    templated = ctx.type in INSTANCES and get(props, "launchTemplate")
    endpoint = get(props, "metadataOptions.httpEndpoint")
    if endpoint == "disabled":
        return  # no metadata service at all: neither IMDSv1 nor credentials for pods to reach
    tokens = need(props, "metadataOptions.httpTokens")
    if tokens != "required" and not (templated and tokens is None):
        if is_unknown(endpoint):
            raise Unknown("metadataOptions.httpEndpoint")
        yield "IMDSv1 is allowed: set metadataOptions.httpTokens to required"
    hops = need(props, "metadataOptions.httpPutResponseHopLimit", 1)
    if int(hops) > 1:
        yield f"metadata hop limit is {hops}; pods could reach the node's credentials, use 1"


@rule("aws-ec2-no-public-ip", "Checks whether instances, spot requests, launch templates and SageMaker notebook "
      "instances avoid public IP addresses and direct internet access.",
      severity="high", types=(LAUNCH_TEMPLATE, *INSTANCES, NOTEBOOK),
      remediation="Set associatePublicIpAddress false and reach instances through private networking or SSM; set a "
                  "notebook instance's directInternetAccess to Disabled with a subnetId and securityGroups.",
      frameworks=EXPOSURE)  # no CIS AWS Foundations control covers instance public IPs (5.1 is network ACLs)
@outside_template_part(_public_ip_outside)
def no_public_ip(props: Any, ctx: Context) -> Iterator[str]:
    if ctx.type == NOTEBOOK:
        access = need(props, "directInternetAccess", "Enabled")  # SageMaker's default: Enabled
        if access != "Disabled":
            yield (f"directInternetAccess is {access}: SageMaker gives the notebook instance internet access from a "
                   "network outside your VPC's controls; set it to Disabled (with a subnetId)")
        return
    # An instance sets it at the top level (a bool); a launch template per network interface (a "true"/"false" string).
    public = need(props, "associatePublicIpAddress") if ctx.type in INSTANCES else None
    if public is True:
        yield "the instance gets a public IP address"
    elif (public is None and ctx.type in INSTANCES and get(props, "subnetId") is None
          and not any(get(props, k) for k in ("networkInterfaces", "primaryNetworkInterface", "launchTemplate"))):
        # An existing network interface (primaryNetworkInterface, networkInterfaces) or a launch template names the
        # subnet; the template's interfaces are checked as the template (one outside the stack by the stack part).
        # EC2: "If launching into a default subnet, the default value is true" (InstanceNetworkInterfaceSpecification).
        yield ("the instance names no subnet, so it launches in a default subnet of the default VPC, where instances "
               "get a public IP address unless associatePublicIpAddress is false")
    for nic in items(props, "networkInterfaces") if ctx.type == LAUNCH_TEMPLATE else ():
        if str(get(nic, "associatePublicIpAddress", "false")).lower() == "true":
            yield "a network interface gets a public IP address"


@rule("aws-subnet-no-public-ip-on-launch", "Checks whether subnets avoid giving every instance launched in them a public IP address.",
      severity="high", types=("aws:ec2/subnet:Subnet",),
      remediation="Set mapPublicIpOnLaunch false (the API's default). Public subnets do not need it: NAT gateways take an "
                  "Elastic IP and internet-facing load balancers get their own addresses.",
      frameworks=EXPOSURE)
def subnet_public_ip(props: Any, ctx: Context) -> Iterator[str]:
    # The instance-level rule cannot see this: an instance or node that sets nothing inherits the subnet's attribute.
    if need(props, "mapPublicIpOnLaunch") is True:
        yield "mapPublicIpOnLaunch is true: every instance and EKS node launched in this subnet gets a public IP address"


@rule("aws-eks-nodegroup-no-ssh", "Checks whether EKS node groups avoid SSH remote access.",
      severity="high", types=("aws:eks/nodeGroup:NodeGroup",), remediation="Remove remoteAccess; use SSM Session Manager.",
      frameworks=EXPOSURE)  # CIS EKS has no node SSH control (3.1 is worker node config file permissions)
def nodegroup_ssh(props: Any, ctx: Context) -> Iterator[str]:
    if get(props, "remoteAccess"):
        yield "remoteAccess opens SSH to the nodes"


@rule("aws-fsx-lustre-cmk", "Checks whether FSx for Lustre is encrypted with a customer-managed KMS key.",
      severity="high", types=("aws:fsx/lustreFileSystem:LustreFileSystem",),
      remediation="Use a PERSISTENT deployment type with kmsKeyId; SCRATCH file systems only use an AWS-owned key.",
      frameworks=ENC)
def fsx_cmk(props: Any, ctx: Context) -> Iterator[str]:
    deployment = need(props, "deploymentType", "SCRATCH_1")
    if str(deployment).startswith("SCRATCH"):
        yield f"{deployment} cannot use a customer-managed key (AWS-owned keys only); keep regulated data off it"
    elif not (key := get(props, "kmsKeyId")) or aws_managed_key(key):
        yield f"{'kmsKeyId ' + key if key else 'no kmsKeyId'}: the file system uses the AWS-managed FSx key"


@rule("aws-efs-encryption", "Checks whether EFS file systems are encrypted at rest with a customer-managed KMS key.",
      severity="high", types=("aws:efs/fileSystem:FileSystem",),
      remediation="Set encrypted true and kmsKeyId (encryption can only be chosen when the file system is created).",
      frameworks={**ENC, "CIS": ("AWS 2.4.1",)})
def efs_encryption(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "encrypted") is not True:  # the EFS API's default: unencrypted
        yield "the file system is not encrypted at rest (encrypted is unset or false)"
    elif not (key := get(props, "kmsKeyId")) or aws_managed_key(key):
        yield f"{'kmsKeyId ' + key if key else 'no kmsKeyId'}: the file system uses the AWS-managed EFS key; name a customer-managed key"


@rule("aws-kms-key-rotation", "Checks whether KMS keys rotate automatically.",
      severity="medium", types=("aws:kms/key:Key",), remediation="Set enableKeyRotation true.",
      frameworks={"PCI-DSS-v4": ("3.7.4",), "NIST-800-53": ("SC-12",), "SOC2": ("CC6.1",), "CIS": ("AWS 3.6",)})
def kms_rotation(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "customerMasterKeySpec", "SYMMETRIC_DEFAULT") == "SYMMETRIC_DEFAULT" and need(props, "enableKeyRotation") is not True:
        yield "automatic key rotation is off"


def _sg_rules(props: Any, ctx: Context) -> Iterator[dict]:
    if ctx.type in INLINE_INGRESS:
        yield from items(props, "ingress")
    elif ctx.type == "aws:ec2/securityGroupRule:SecurityGroupRule":
        if need(props, "type") == "ingress":
            yield {k: get(props, k) for k in ("fromPort", "toPort", "protocol", "cidrBlocks", "ipv6CidrBlocks")}
    else:
        yield {"fromPort": get(props, "fromPort"), "toPort": get(props, "toPort"), "protocol": get(props, "ipProtocol"),
               "cidrBlocks": [get(props, "cidrIpv4")] if get(props, "cidrIpv4") else [],
               "ipv6CidrBlocks": [get(props, "cidrIpv6")] if get(props, "cidrIpv6") else []}


@rule("aws-security-group-no-open-admin-ingress", "Checks whether security groups keep SSH, RDP and all ports closed to the internet.",
      severity="critical", types=SG_TYPES, remediation="Limit ingress to known CIDRs or security groups; never 0.0.0.0/0 or ::/0.",
      frameworks={**EXPOSURE, "CIS": ("AWS 5.2", "AWS 5.3")})
def sg_ingress(props: Any, ctx: Context) -> Iterator[str]:
    for ingress in _sg_rules(props, ctx):
        cidrs = set(items(ingress, "cidrBlocks")) | set(items(ingress, "ipv6CidrBlocks"))
        if cidrs & OPEN_CIDRS:
            for hit in port_range_hits(need(ingress, "fromPort"), need(ingress, "toPort"), need(ingress, "protocol")):
                yield f"ingress from {', '.join(sorted(cidrs & OPEN_CIDRS))} to {hit}"


@rule("aws-lb-listener-tls", "Checks whether load balancer listeners use TLS 1.2+ or redirect HTTP to HTTPS.",
      severity="high", types=("aws:lb/listener:Listener", "aws:alb/listener:Listener"),
      remediation="Use protocol HTTPS/TLS with an ELBSecurityPolicy-TLS13-1-2-2021-06 class policy; HTTP listeners may "
                  "only redirect to HTTPS or answer with a fixed response.",
      frameworks={"HIPAA": ("164.312(e)(1)",), "SOC2": ("CC6.7",), "PCI-DSS-v4": ("4.2.1",), "NIST-800-53": ("SC-8",), "GDPR": ("Art.32",)})
def lb_tls(props: Any, ctx: Context) -> Iterator[str]:
    protocol = need(props, "protocol", "HTTP")
    if protocol in ("HTTPS", "TLS"):
        policy = need(props, "sslPolicy", "ELBSecurityPolicy-2016-08")
        if not aws_ssl_policy_tls12(str(policy)):
            yield (f"ssl policy {policy} allows TLS below 1.2; use one whose name sets the minimum to 1.2 or 1.3, such as "
                   "ELBSecurityPolicy-TLS13-1-2-Res-PQ-2025-09 or ELBSecurityPolicy-TLS13-1-2-FIPS-2023-04")
    elif protocol == "HTTP":
        if plain := plain_http_actions(items(props, "defaultActions")):
            yield (f"plain-HTTP listener whose default actions ({', '.join(plain)}) neither redirect to HTTPS nor "
                   "answer with a fixed response")


def plain_http_actions(actions: Iterator[Any]) -> list[str]:
    """The types of a listener's or listener rule's actions that serve a plain-HTTP request from the load balancer's
    targets or identity provider (forward, authenticate-*, jwt-validation, a redirect that keeps HTTP, which a
    redirect does by default). A redirect to HTTPS and a fixed response (the load balancer's own answer, e.g. 403)
    forward nothing."""
    plain = []
    for action in actions:
        kind = need(action, "type")
        if kind == "fixed-response" or (kind == "redirect" and need(action, "redirect.protocol") == "HTTPS"):
            continue
        plain.append(str(kind) if kind != "redirect" else f"redirect to {need(action, 'redirect.protocol') or 'the same protocol'}")
    return plain


def policy_statements(document: Any) -> Iterator[dict]:
    """The statements of an IAM policy document (one statement may stand alone, not in a list)."""
    statements = (document or {}).get("Statement", []) if isinstance(document, dict) else []
    yield from ([statements] if isinstance(statements, dict) else statements)


@rule("aws-iam-no-wildcard-policy", "Checks whether IAM policies avoid allowing every action on every resource.",
      severity="critical", types=(*IAM_POLICIES, IAM_ROLE), remediation="Name the actions and resources the workload needs.",
      frameworks={**PRIVILEGE, "CIS": ("AWS 1.16",)})
def iam_wildcards(props: Any, ctx: Context) -> Iterator[str]:
    if ctx.type == IAM_ROLE:  # a role's inline policies, `inlinePolicies[].policy` (an empty entry has none)
        documents = [as_json(need(p, "policy"), f"inlinePolicies.{i}.policy")
                     for i, p in enumerate(items(props, "inlinePolicies")) if need(p, "policy") is not None]
    else:
        documents = [as_json(need(props, "policy"), "policy")]
    for statement in (s for document in documents for s in policy_statements(document)):
        if statement.get("Effect") != "Allow":
            continue
        actions = statement.get("Action", [])
        actions = [actions] if isinstance(actions, str) else actions
        resources = statement.get("Resource", [])
        resources = [resources] if isinstance(resources, str) else resources
        not_actions = statement.get("NotAction")
        not_actions = [not_actions] if isinstance(not_actions, str) else not_actions
        # NotResource allows every resource but the ones it lists (NotResource "*" allows none).
        not_resources = statement.get("NotResource")
        not_resources = [not_resources] if isinstance(not_resources, str) else not_resources
        every_resource = "*" in resources or (not_resources is not None and "*" not in not_resources)
        if any(a in ("*", "*:*") for a in actions):
            yield "a statement allows every action (Action: *)"
        elif not_actions is not None and every_resource:
            yield (f"a statement allows every action except {', '.join(map(str, not_actions)) or 'none'} on every resource "
                   "(an Allow with NotAction)")
        elif every_resource and any(a.endswith(":*") for a in actions):
            yield f"a statement allows {', '.join(a for a in actions if a.endswith(':*'))} on every resource"


@rule("aws-iam-no-admin-attachment", "Checks whether roles and users avoid the AdministratorAccess managed policy.",
      severity="critical", types=("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws:iam/userPolicyAttachment:UserPolicyAttachment",
                                  "aws:iam/groupPolicyAttachment:GroupPolicyAttachment", "aws:iam/policyAttachment:PolicyAttachment",
                                  IAM_ROLE, *IAM_EXCLUSIVE),
      remediation="Attach least-privilege policies; workloads get IRSA roles scoped to what they call.",
      frameworks={**PRIVILEGE, "CIS": ("AWS 1.16",)})
def iam_admin(props: Any, ctx: Context) -> Iterator[str]:
    lists = {IAM_ROLE: "managedPolicyArns", **dict.fromkeys(IAM_EXCLUSIVE, "policyArns")}
    arns = items(props, lists[ctx.type]) if ctx.type in lists else [need(props, "policyArn", "")]
    for arn in map(str, arns):
        if arn.endswith(":policy/AdministratorAccess") or arn.endswith(":policy/PowerUserAccess"):
            yield f"attaches {arn.rsplit('/', 1)[-1]}"
