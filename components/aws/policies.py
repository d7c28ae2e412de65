"""IAM, KMS and bucket policy documents (pure: plain strings in, JSON-ready dicts out).

The components render them with `pulumi.Output.all(...).apply(...)`, so what AWS receives is exactly what
tests/aws/test_pure.py checks.
"""

from __future__ import annotations

from typing import Any

from components.spec.aws import LoadBalancerKind

from .elb_logs import LOG_DELIVERY, access_log_writer, needs_own_statement

Document = dict[str, Any]
_ENCRYPT = ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"]
MIN_TLS_VERSION = "1.2"
# Prefixes inside the region's log bucket, one per log source.
S3_ACCESS_LOG_PREFIX = "s3/"
LB_ACCESS_LOG_PREFIX = "lb"
FLOW_LOG_PREFIX = "vpc-flow-logs"
GLOBAL_ACCELERATOR_LOG_PREFIX = "global-accelerator"


def document(*statements: Document) -> Document:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def key_policy(account_id: str, partition: str, region: str, dns_suffix: str, prometheus: bool = False) -> Document:
    """Policy of the environment's regional KMS key.

    - the account administers the key through IAM (AWS's default key policy statement);
    - CloudWatch Logs encrypts this account's log groups in this region (flow logs, EKS and FSx logs);
    - EBS (via EC2) and S3 use the key for principals of this account only. Service-linked roles act here:
      AWSServiceRoleForAutoScaling launches node volumes, the FSx S3 role reads SSE-KMS objects. Naming those
      roles would fail in accounts where they don't exist yet, so the statements are scoped by
      kms:CallerAccount + kms:ViaService instead (the statement AWS puts in its own aws/ebs key).
    - with `prometheus`, Amazon Managed Prometheus workspaces of this account (the statement of the AMP guide,
      "Encryption at rest"): AMP validates the key and creates its grants through the caller's request.
    """
    account = f"arn:{partition}:iam::{account_id}:root"

    def via(service: str) -> dict[str, str]:
        return {"kms:CallerAccount": account_id, "kms:ViaService": f"{service}.{region}.{dns_suffix}"}

    return document(
        {"Sid": "AccountAdministersKeyThroughIam", "Effect": "Allow", "Principal": {"AWS": account},
         "Action": "kms:*", "Resource": "*"},
        {"Sid": "CloudWatchLogsEncryptsThisAccountsLogGroups", "Effect": "Allow",
         "Principal": {"Service": f"logs.{region}.{dns_suffix}"}, "Action": _ENCRYPT, "Resource": "*",
         "Condition": {"ArnLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account_id}:log-group:*"}}},
        {"Sid": "EbsVolumesOfThisAccount", "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": _ENCRYPT,
         "Resource": "*", "Condition": {"StringEquals": via("ec2")}},
        {"Sid": "EbsGrantsForAttachedVolumes", "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:CreateGrant",
         "Resource": "*", "Condition": {"StringEquals": via("ec2"), "Bool": {"kms:GrantIsForAWSResource": "true"}}},
        {"Sid": "S3ObjectsOfThisAccount", "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": _ENCRYPT,
         "Resource": "*", "Condition": {"StringEquals": via("s3")}},
        *([{"Sid": "PrometheusWorkspacesOfThisAccount", "Effect": "Allow", "Principal": {"AWS": "*"},
            "Action": ["kms:DescribeKey", "kms:CreateGrant", "kms:GenerateDataKey", "kms:Decrypt"], "Resource": "*",
            "Condition": {"StringEquals": via("aps")}}] if prometheus else []),
    )


def _deny_insecure_transport(bucket_arn: str) -> list[Document]:
    resources = [bucket_arn, f"{bucket_arn}/*"]
    return [
        {"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": resources,
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
        {"Sid": "DenyTlsOlderThan12", "Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": resources,
         "Condition": {"NumericLessThan": {"s3:TlsVersion": MIN_TLS_VERSION}}},
    ]


def bucket_policy(bucket_arn: str, key_arn: str) -> Document:
    """TLS 1.2+ only, and uploads either rely on the bucket's default SSE-KMS or ask for exactly that key.

    `...IfExists` lets requests without encryption headers through (default encryption applies to them);
    requests that ask for another encryption (SSE-S3, another key) are denied.
    """
    objects = f"{bucket_arn}/*"
    return document(
        *_deny_insecure_transport(bucket_arn),
        {"Sid": "DenyUploadsNotEncryptedWithKms", "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
         "Resource": objects, "Condition": {"StringNotEqualsIfExists": {"s3:x-amz-server-side-encryption": "aws:kms"}}},
        {"Sid": "DenyUploadsWithAnotherKmsKey", "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
         "Resource": objects, "Condition": {"StringNotEqualsIfExists": {"s3:x-amz-server-side-encryption-aws-kms-key-id": key_arn}}},
    )


def log_bucket_policy(bucket_arn: str, account_id: str, load_balancer: LoadBalancerKind | None = None) -> Document:
    """The region's log bucket: TLS only; S3 server access logs, AWS log delivery (VPC and Global Accelerator
    flow logs, NLB access logs) and, with an Application `load_balancer`, ALB access logs may write, for this
    account only. Who writes what, with sources: components/aws/elb_logs.py."""
    source = {"aws:SourceAccount": account_id}
    statements = [
        *_deny_insecure_transport(bucket_arn),
        {"Sid": "S3ServerAccessLogs", "Effect": "Allow", "Principal": {"Service": "logging.s3.amazonaws.com"},
         "Action": "s3:PutObject", "Resource": f"{bucket_arn}/{S3_ACCESS_LOG_PREFIX}*", "Condition": {"StringEquals": source}},
        {"Sid": "LogDeliveryWrite", "Effect": "Allow", "Principal": {"Service": LOG_DELIVERY},
         "Action": "s3:PutObject", "Resource": f"{bucket_arn}/*/AWSLogs/{account_id}/*",
         "Condition": {"StringEquals": {**source, "s3:x-amz-acl": "bucket-owner-full-control"}}},
        {"Sid": "LogDeliveryAclCheck", "Effect": "Allow", "Principal": {"Service": LOG_DELIVERY},
         "Action": ["s3:GetBucketAcl", "s3:ListBucket"], "Resource": bucket_arn, "Condition": {"StringEquals": source}},
    ]
    if load_balancer is not None and needs_own_statement(load_balancer):
        # The documented statement as is (no condition: the guide shows none for this principal); the resource
        # keeps it to this account's logs under the load balancer prefix.
        statements.append(
            {"Sid": "LoadBalancerAccessLogs", "Effect": "Allow", "Principal": {"Service": access_log_writer(load_balancer)},
             "Action": "s3:PutObject", "Resource": f"{bucket_arn}/{LB_ACCESS_LOG_PREFIX}/AWSLogs/{account_id}/*"})
    return document(*statements)


def assume_role(service: str, account_id: str | None = None) -> Document:
    """Trust policy for an AWS service; with `account_id`, only on behalf of that account (confused deputy)."""
    statement: Document = {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
    if account_id is not None:
        statement["Condition"] = {"StringEquals": {"aws:SourceAccount": account_id}}
    return document(statement)


def irsa_trust(oidc_provider_arn: str, issuer_url: str, namespace: str, service_account: str) -> Document:
    """Trust policy for IAM Roles for Service Accounts: one Kubernetes service account, audience STS."""
    issuer = issuer_url.removeprefix("https://")
    return document({
        "Effect": "Allow", "Principal": {"Federated": oidc_provider_arn}, "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                                       f"{issuer}:aud": "sts.amazonaws.com"}},
    })


def ebs_csi_kms(key_arn: str) -> Document:
    """What the EBS CSI driver's controller needs of the region's key for volumes encrypted with it, on that key only:
    the statements of the EKS user guide ("Create an Amazon EBS CSI driver IAM role", custom KMS key). Grants only for
    AWS resources (EC2's grant on an attached volume); the key policy lets this account's IAM policies grant its use."""
    return document(
        {"Effect": "Allow", "Action": ["kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"], "Resource": [key_arn],
         "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}}},
        {"Effect": "Allow", "Action": _ENCRYPT, "Resource": [key_arn]},
    )


def flow_log_delivery(log_group_arn: str) -> Document:
    """What VPC Flow Logs needs to write into one log group: the actions the VPC user guide lists ("IAM role for
    publishing flow logs to CloudWatch Logs": CreateLogStream, PutLogEvents, DescribeLogGroups, DescribeLogStreams), on
    that group only where IAM allows it. Not CreateLogGroup, which the guide also lists: the group exists before the
    flow log, and with it Flow Logs recreates a destroyed group, without its key and retention, from records still in
    flight (rackspace-infrastructure-automation/aws-terraform-vpc_basenetwork#35). DescribeLogGroups
    lists groups and is authorized against the account's `log-group:*` in the region, never one group's ARN
    (hashicorp/terraform-provider-aws#8804, maxbanton/cwh#83): it gets that, read-only."""
    groups = log_group_arn.split(":log-group:", 1)[0] + ":log-group:*"
    return document(
        {"Effect": "Allow",
         "Action": ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
         "Resource": [log_group_arn, f"{log_group_arn}:*"]},
        {"Effect": "Allow", "Action": "logs:DescribeLogGroups", "Resource": groups},
    )


def managed_policy_arn(partition: str, name: str) -> str:
    """ARN of an AWS managed policy, e.g. AmazonEKSWorkerNodePolicy."""
    return f"arn:{partition}:iam::aws:policy/{name}"


# Amazon Managed Prometheus managed collectors (AMP guide, "Using an AWS managed collector"): a scraper writing into a
# workspace encrypted with a customer managed key needs a role configuration, a source role the scraper assumes and
# a target role it assumes from there, both in this account. The scraper's ARN only exists once it is created, so
# the trust conditions admit this account's scrapers in this region instead of one ARN.
SCRAPER_PRINCIPAL = "scraper.aps.amazonaws.com"


def scrapers_of(account_id: str, partition: str, region: str) -> str:
    return f"arn:{partition}:aps:{region}:{account_id}:scraper/*"


def scraper_source_trust(account_id: str, partition: str, region: str) -> Document:
    """Trust of the source role: the AMP scraper service, for scrapers of this account and region only."""
    return document({
        "Effect": "Allow", "Principal": {"Service": SCRAPER_PRINCIPAL}, "Action": "sts:AssumeRole",
        "Condition": {"ArnLike": {"aws:SourceArn": scrapers_of(account_id, partition, region)},
                      "StringEquals": {"aws:SourceAccount": account_id}},
    })


def scraper_target_trust(source_role_arn: str, account_id: str, partition: str, region: str) -> Document:
    """Trust of the target role: the source role, with a scraper of this account and region as external ID."""
    return document({
        "Effect": "Allow", "Principal": {"AWS": source_role_arn}, "Action": "sts:AssumeRole",
        "Condition": {"StringLike": {"sts:ExternalId": scrapers_of(account_id, partition, region)}},
    })


def assume(role_arn: str) -> Document:
    """May assume exactly one role."""
    return document({"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": role_arn})


def remote_write(workspace_arn: str) -> Document:
    """May write metrics into exactly one AMP workspace (AmazonPrometheusRemoteWriteAccess, scoped to it)."""
    return document({"Effect": "Allow", "Action": "aps:RemoteWrite", "Resource": workspace_arn})
