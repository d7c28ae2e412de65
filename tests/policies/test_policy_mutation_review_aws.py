"""Behaviour of the AWS rules (aws.py, aws_ec2.py, aws_stack.py), the tagging and protection rules (tagging.py) and
their shared helpers (common.py, props.py) that no other test pinned.

Each test here came from a mutation review: a small edit to the rule source that would be a real compliance bug
(a property misspelt, a default changed, a branch or an allowed value dropped) left the whole policy suite passing.
The tests assert what a user sees: the violation message, or that compliant infrastructure passes."""

from __future__ import annotations

import json

import pytest
from policy_helpers import UNKNOWN, resource, run_resource, run_stack

BUCKET, BUCKET_V2 = "aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"
PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
OPEN_ADMIN = "aws-security-group-no-open-admin-ingress"
ALL_TAGS = {"environment": "prod", "team": "ml", "cost-center": "42"}
LT = "aws:ec2/launchTemplate:LaunchTemplate"
KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
UNVERSIONED = "versioning is not configured; enable it so deletes and overwrites can be undone"


def messages(rule: str, resources: list, config: dict | None = None) -> list[tuple[str, str]]:
    """(resource name, message) of each violation of a stack rule."""
    return [((urn or "").split("::")[-1], message) for urn, message in run_stack(rule, resources, config)]


# --- common.py: security group port ranges ---

def test_an_ingress_rule_that_leaves_its_ports_unset_counts_as_every_port() -> None:
    # Unset ports are read as the whole range (assume the worst), not as port 0.
    open_tcp = {"ipProtocol": "tcp", "cidrIpv4": "0.0.0.0/0"}
    assert run_resource(OPEN_ADMIN, INGRESS_RULE, open_tcp) == ["ingress from 0.0.0.0/0 to all ports"]
    assert run_resource(OPEN_ADMIN, INGRESS_RULE, {**open_tcp, "cidrIpv4": "10.0.0.0/8"}) == []


def test_an_icmp_ingress_rule_open_to_the_internet_opens_no_port() -> None:
    # ICMP has no ports: a rule that leaves them unset allows every ICMP type, not SSH or RDP.
    assert run_resource(OPEN_ADMIN, INGRESS_RULE, {"ipProtocol": "icmp", "cidrIpv4": "0.0.0.0/0"}) == []


def test_a_security_group_rule_open_to_ipv6_anywhere_is_reported() -> None:
    rule = {"type": "ingress", "protocol": "tcp", "fromPort": 22, "toPort": 22, "ipv6CidrBlocks": ["::/0"], "securityGroupId": "sg-1"}
    assert run_resource(OPEN_ADMIN, "aws:ec2/securityGroupRule:SecurityGroupRule", rule) == ["ingress from ::/0 to port 22"]
    assert run_resource(OPEN_ADMIN, "aws:ec2/securityGroupRule:SecurityGroupRule", {**rule, "type": "egress"}) == []


# --- props.py: list indexes and which bucket a side resource configures ---

def test_a_bucket_v2_with_an_empty_versionings_list_is_unversioned() -> None:
    bucket = resource(BUCKET_V2, {"bucket": "data-1", "versionings": []}, "data")
    assert messages("aws-s3-bucket-versioning", [bucket]) == [("data", UNVERSIONED)]


def _two_buckets_one_block(block_bucket: str) -> list:
    a = resource(BUCKET, {"bucket": "data-a"}, "a")
    b = resource(BUCKET, {"bucket": "data-b"}, "b")
    block = resource(PAB, {"bucket": block_bucket, **dict.fromkeys(
        ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"], True)}, "pab", deps=[a, b])
    block.property_dependencies.update({"bucket": [a, b]})  # e.g. bucket=Output.all(a.bucket, b.bucket).apply(...)
    return [a, b, block]


def test_a_side_resource_whose_bucket_depends_on_two_buckets_is_matched_by_name_or_not_at_all() -> None:
    # Its `bucket` depends on both: the known name decides; unknown (preview), it configures no bucket for certain.
    assert messages("aws-s3-bucket-public-access-blocked", _two_buckets_one_block("data-b")) == [
        ("a", "bucket has no public access block")]
    assert messages("aws-s3-bucket-public-access-blocked", _two_buckets_one_block(UNKNOWN)) == [
        ("a", "bucket has no public access block"), ("b", "bucket has no public access block")]


# --- aws.py: resource rules ---

@pytest.mark.parametrize("cidrs", [[], ["10.0.0.0/8", "0.0.0.0/0"]])
def test_a_public_eks_endpoint_with_an_empty_or_open_allowlist_is_public_to_the_internet(cidrs: list) -> None:
    # EKS reads an empty publicAccessCidrs as 0.0.0.0/0.
    vpc = {"endpointPublicAccess": True, "endpointPrivateAccess": True, "publicAccessCidrs": cidrs}
    assert run_resource("aws-eks-private-endpoint", "aws:eks/cluster:Cluster", {"vpcConfig": vpc}) == [
        "the EKS API endpoint is public to the whole internet (publicAccessCidrs includes 0.0.0.0/0 or is unset)"]
    assert run_resource("aws-eks-private-endpoint", "aws:eks/cluster:Cluster",
                        {"vpcConfig": {**vpc, "publicAccessCidrs": ["203.0.113.0/24"]}}) == []


def test_a_listener_that_leaves_its_protocol_unset_is_plain_http() -> None:
    # Unset, an ALB listener's protocol is HTTP: forwarding from it serves plain HTTP.
    props = {"loadBalancerArn": "arn:lb", "port": 80, "defaultActions": [{"type": "forward", "targetGroupArn": "arn:tg"}]}
    assert run_resource("aws-lb-listener-tls", "aws:lb/listener:Listener", props) == [
        "plain-HTTP listener whose default actions (forward) neither redirect to HTTPS nor answer with a fixed response"]


@pytest.mark.parametrize("deployment", ["SCRATCH_1", "SCRATCH_2"])
def test_every_scratch_lustre_deployment_is_reported(deployment: str) -> None:
    props = {"deploymentType": deployment, "storageCapacity": 1200, "kmsKeyId": KEY}
    assert run_resource("aws-fsx-lustre-cmk", "aws:fsx/lustreFileSystem:LustreFileSystem", props) == [
        f"{deployment} cannot use a customer-managed key (AWS-owned keys only); keep regulated data off it"]


# --- aws_ec2.py: AWS-managed keys named by ARN, and what a launch template maps ---

ALIAS_ARN = "arn:aws:kms:us-east-1:123456789012:alias/aws/{}"


@pytest.mark.parametrize(("rule", "type_", "props", "expected"), [
    ("aws-launch-template-encrypted-volumes", "aws:ebs/volume:Volume", {"encrypted": True, "kmsKeyId": ALIAS_ARN.format("ebs")},
     f"the volume uses the AWS-managed EBS key {ALIAS_ARN.format('ebs')}; set kmsKeyId to a customer-managed key"),
    ("aws-efs-encryption", "aws:efs/fileSystem:FileSystem", {"encrypted": True, "kmsKeyId": ALIAS_ARN.format("elasticfilesystem")},
     f"kmsKeyId {ALIAS_ARN.format('elasticfilesystem')}: the file system uses the AWS-managed EFS key; name a customer-managed key"),
    ("aws-fsx-lustre-cmk", "aws:fsx/lustreFileSystem:LustreFileSystem",
     {"deploymentType": "PERSISTENT_2", "kmsKeyId": ALIAS_ARN.format("fsx")},
     f"kmsKeyId {ALIAS_ARN.format('fsx')}: the file system uses the AWS-managed FSx key"),
    ("aws-s3-kms-encryption", "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
     {"bucket": "data", "rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms",
                                                                           "kmsMasterKeyId": ALIAS_ARN.format("s3")}}]},
     f"kmsMasterKeyId {ALIAS_ARN.format('s3')} is the AWS-managed S3 key, not a customer-managed one; name your KMS key"),
])
def test_an_aws_managed_key_named_by_its_alias_arn_is_not_customer_managed(rule: str, type_: str, props: dict, expected: str) -> None:
    assert run_resource(rule, type_, props) == [expected]
    customer = json.loads(json.dumps(props).replace(":alias/aws/", ":key/"))  # a customer-managed key ARN
    assert run_resource(rule, type_, customer) == []


@pytest.mark.parametrize("root", ["/dev/xvda", "/dev/sda1"])  # Amazon Linux; Ubuntu, Windows and others
def test_a_launch_template_mapping_either_root_device_with_only_instance_store_besides_passes(root: str) -> None:
    # An instance-store mapping (virtualName ephemeralN) has no `ebs`: no EBS volume to encrypt.
    template = resource(LT, {"blockDeviceMappings": [
        {"deviceName": root, "ebs": {"encrypted": "true", "kmsKeyId": KEY}},
        {"deviceName": "/dev/sdb", "virtualName": "ephemeral0"}]}, "lt")
    assert messages("aws-ebs-default-encryption", [template]) == []


# --- aws_stack.py ---

def test_a_log_bucket_whose_inline_encryption_names_no_algorithm_keeps_sse_s3_and_is_exempt() -> None:
    # A rule with only bucketKeyEnabled leaves S3's SSE-S3 default, which server access log delivery needs.
    sse = {"serverSideEncryptionConfiguration": {"rule": {"bucketKeyEnabled": True}}}
    assert messages("aws-s3-bucket-default-encryption", [resource(BUCKET, {"bucket": "acme-access-logs", **sse}, "access-logs")]) == []
    assert messages("aws-s3-bucket-default-encryption", [resource(BUCKET, {"bucket": "acme-data", **sse}, "data")]) == [
        ("data", "bucket has no default encryption configuration: S3 encrypts its objects with S3-managed keys (SSE-S3), "
                 "not a customer-managed KMS key")]


def test_suspended_versioning_is_reported() -> None:
    bucket = resource(BUCKET, {"bucket": "data-1"}, "data")
    side = resource("aws:s3/bucketVersioning:BucketVersioning",
                    {"bucket": "data-1", "versioningConfiguration": {"status": "Suspended"}}, "data-versioning")
    assert messages("aws-s3-bucket-versioning", [bucket, side]) == [
        ("data", "versioning is Suspended; enable it so deletes and overwrites can be undone")]


def _deny_plain_http(**statement: object) -> dict:
    return {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": ["arn:aws:s3:::data-1", "arn:aws:s3:::data-1/*"],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}}, **statement}


@pytest.mark.parametrize(("statement", "expected"), [
    (_deny_plain_http(), []),
    (_deny_plain_http(Principal={"AWS": ["*"]}), []),  # the list form of Principal *
    (_deny_plain_http(Condition={"BoolIfExists": {"aws:SecureTransport": "false"}}), []),  # also denies requests without the key
    ({**{k: v for k, v in _deny_plain_http().items() if k != "Resource"}, "NotResource": ["arn:aws:s3:::data-1/public/*"]},
     ["the bucket policy denies non-TLS (aws:SecureTransport=false) requests with NotResource, not on the bucket itself or "
      "all its objects (Resource (none)); deny s3:* (or *) to Principal * on the bucket and its objects "
      "(arn:...:s3:::BUCKET and arn:...:s3:::BUCKET/*)"]),
])
def test_which_deny_statements_make_a_bucket_tls_only(statement: dict, expected: list) -> None:
    bucket = resource(BUCKET, {"bucket": "data-1"}, "data")
    policy = resource("aws:s3/bucketPolicy:BucketPolicy", {"bucket": "data-1", "policy": json.dumps({"Statement": [statement]})}, "p")
    assert [m for _, m in messages("aws-s3-bucket-tls-only", [bucket, policy])] == expected


@pytest.mark.parametrize(("traffic", "expected"), [("ALL", []), ("REJECT", [("vpc", "VPC has no flow log of ALL traffic")])])
def test_only_a_flow_log_of_all_traffic_covers_a_vpc(traffic: str, expected: list) -> None:
    vpc = resource("aws:ec2/vpc:Vpc", {"cidrBlock": "10.0.0.0/16"}, "vpc")
    flow = resource("aws:ec2/flowLog:FlowLog", {"vpcId": UNKNOWN, "trafficType": traffic, "logDestination": "arn:aws:s3:::logs"},
                    "flow", deps=[vpc])
    assert messages("aws-vpc-flow-logs", [vpc, flow]) == expected


def test_a_rule_forwarding_on_a_listener_that_leaves_its_protocol_unset_serves_plain_http() -> None:
    # Unset, an ALB listener's protocol is HTTP.
    arn = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/web/1/2"
    listener = resource("aws:lb/listener:Listener", {"arn": arn, "port": 80, "defaultActions": [
        {"type": "fixed-response", "fixedResponse": {"contentType": "text/plain", "statusCode": "403"}}]}, "web")
    forward = resource("aws:lb/listenerRule:ListenerRule", {"listenerArn": arn, "actions": [
        {"type": "forward", "targetGroupArn": "arn:tg"}]}, "api")
    assert messages("aws-lb-listener-rules-tls", [listener, forward]) == [
        ("api", "the rule's actions (forward) serve plain HTTP: its listener web is HTTP, where rules may only redirect to "
                "HTTPS or answer with a fixed response")]


def test_a_launch_template_volume_set_unencrypted_is_reported_once_by_the_resource_rule() -> None:
    props = {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "false"}}]}
    assert run_resource("aws-launch-template-encrypted-volumes", LT, props) == ["volume /dev/xvda is not encrypted"]
    assert messages("aws-ebs-default-encryption", [resource(LT, props, "lt")]) == []


# --- tagging.py ---

def test_an_untagged_ebs_volume_misses_the_required_tags() -> None:
    volume = "aws:ebs/volume:Volume"
    assert messages("required-tags", [resource(volume, {"availabilityZone": "us-east-1a", "size": 100}, "vol")]) == [
        ("vol", "missing tags: environment, team, cost-center")]
    assert messages("required-tags", [resource(volume, {"size": 100, "tags": ALL_TAGS}, "vol")]) == []


def test_azure_resources_without_a_location_carry_no_tags_and_are_not_flagged() -> None:
    # Sub-resources such as a storage account's blob service have no location and take no tags.
    blob_service = resource("azure-native:storage:BlobServiceProperties", {"accountName": "sa", "blobServicesName": "default"}, "blobs")
    account = resource("azure-native:storage:StorageAccount", {"location": "westeurope", "kind": "StorageV2"}, "sa")
    assert messages("required-tags", [blob_service, account]) == [("sa", "missing tags: environment, team, cost-center")]


@pytest.mark.parametrize(("default_tags", "expected"), [
    ({"environment": "dev"}, []),
    ({"environment": "prod"}, ["a Key is not protected: `pulumi destroy` or a refactor could delete its data"]),
])
def test_with_environment_unknown_the_providers_default_environment_tag_decides(default_tags: dict, expected: list) -> None:
    provider = {"region": "us-east-1", "defaultTags": json.dumps({"tags": default_tags})}
    assert run_resource("stateful-resources-protected", "aws:kms/key:Key", {"description": "k"}, {"environment": "unknown"},
                        provider=provider) == expected


def test_an_unprotected_rds_instance_outside_dev_is_reported() -> None:
    rds = "aws:rds/instance:Instance"
    assert run_resource("stateful-resources-protected", rds, {"engine": "postgres"}, {"environment": "prod"}) == [
        "a Instance is not protected: `pulumi destroy` or a refactor could delete its data"]
    assert run_resource("stateful-resources-protected", rds, {"engine": "postgres"}, {"environment": "prod"}, protect=True) == []


@pytest.mark.parametrize(("soft_delete", "expected"), [
    ({"retentionDurationSeconds": 604800}, []),  # soft delete keeps deleted and overwritten objects for 7 days
    ({"retentionDurationSeconds": 0}, ["versioning is off"]),  # 0 turns soft delete off
])
def test_gcs_soft_delete_stands_in_for_versioning(soft_delete: dict, expected: list) -> None:
    props = {"location": "US", "versioning": {"enabled": False}, "softDeletePolicy": soft_delete}
    assert run_resource("gcs-bucket-versioning", "gcp:storage/bucket:Bucket", props, resource_name="models") == expected
