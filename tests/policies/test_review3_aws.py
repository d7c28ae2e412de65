"""AWS rules after the third review: encryption at rest of instance and standalone EBS volumes, launch templates
that leave the root volume to the AMI, EFS, S3 directory buckets and AWS-managed key aliases; SageMaker notebooks and
spot requests in the public-IP and IMDSv2 rules; IMDS turned off; NotAction allow-alls; the account-level public
access block; TLS-only bucket policies that deny only part of the requests; listener rules forwarding plain HTTP;
and the CIS IDs."""

from __future__ import annotations

import json

import pulumi_aws as aws
import pytest
from policy_helpers import RULES, UNKNOWN, resource, run_resource, run_stack
from pulumi_policy.proxy import UnknownValueError

from aiinfra.plan.outputs import preview_outputs
from aiinfra.plan.runtime import run_program
from components.aws.policies import bucket_policy, log_bucket_policy

KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
INSTANCE, SPOT, LT = "aws:ec2/instance:Instance", "aws:ec2/spotInstanceRequest:SpotInstanceRequest", "aws:ec2/launchTemplate:LaunchTemplate"
VOLUME, EBD = "aws:ebs/volume:Volume", "aws:ebs/encryptionByDefault:EncryptionByDefault"
BUCKET, POLICY = "aws:s3/bucket:Bucket", "aws:s3/bucketPolicy:BucketPolicy"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
LISTENER, LISTENER_RULE = "aws:lb/listener:Listener", "aws:lb/listenerRule:ListenerRule"
VOLUMES, DEFAULT_ENC = "aws-launch-template-encrypted-volumes", "aws-ebs-default-encryption"
NO_TLS = "no bucket policy denies non-TLS (aws:SecureTransport=false) requests"
ALL_FOUR = dict.fromkeys(["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"], True)


def planned(program, name: str) -> tuple[str, dict]:  # noqa: ANN001
    """(type, inputs) of resource `name` as the SDK sends it."""
    result = run_program(program, project="p", stack="s")
    [found] = [(r.type, r.inputs) for r in result.resources if r.name == name]
    return found


def outputs(type_: str, inputs: dict, name: str, **kw: object) -> object:
    """The resource as a stack rule sees it in preview: its inputs plus unknown computed outputs."""
    return resource(type_, preview_outputs(type_, inputs), name, **kw)


def names(found: list[tuple[str | None, str]]) -> list[str]:
    return [(urn or "").split("::")[-1] for urn, _ in found]


# --- 6. encryption at rest: instances, spot requests and standalone volumes ---

def test_an_instance_with_unencrypted_root_and_data_volumes_is_reported() -> None:
    type_, inputs = planned(lambda: aws.ec2.Instance("vm", ami="ami-1", instance_type="t3.micro", subnet_id="s",
                                                     root_block_device={"encrypted": False},
                                                     ebs_block_devices=[{"device_name": "/dev/sdb", "encrypted": False}]), "vm")
    assert run_resource(VOLUMES, type_, inputs) == ["root volume is not encrypted", "EBS volume /dev/sdb is not encrypted"]
    encrypted = {"rootBlockDevice": {"encrypted": True, "kmsKeyId": KEY},
                 "ebsBlockDevices": [{"deviceName": "/dev/sdb", "encrypted": True, "kmsKeyId": KEY}]}
    assert run_resource(VOLUMES, INSTANCE, encrypted) == run_resource(VOLUMES, SPOT, encrypted) == []
    # Encrypted without a key: the account's default EBS key, which the stack rule judges (test_final_review_fixes).
    assert run_resource(VOLUMES, SPOT, {"rootBlockDevice": {"encrypted": True}}) == []
    assert [m for _, m in run_stack(DEFAULT_ENC, [resource(SPOT, {"rootBlockDevice": {"encrypted": True}}, "spot")])] == [
        "root volume: encrypted without kmsKeyId, so EC2 uses the account's default EBS key, the AWS-managed aws/ebs "
        "(ebsDefaultEncryption off); set kmsKeyId to a customer-managed key, or make the account's default EBS key "
        "customer-managed (aws.ebs.DefaultKmsKey; ebsDefaultEncryption customer_key)"]


def test_a_standalone_volume_must_be_encrypted_with_a_customer_managed_key() -> None:
    assert run_resource(VOLUMES, VOLUME, {"size": 100, "encrypted": False}) == ["the volume is not encrypted"]
    assert run_resource(VOLUMES, VOLUME, {"encrypted": True, "kmsKeyId": "alias/aws/ebs"}) == [
        "the volume uses the AWS-managed EBS key alias/aws/ebs; set kmsKeyId to a customer-managed key"]
    assert run_resource(VOLUMES, VOLUME, {"encrypted": True, "kmsKeyId": KEY}) == []


def test_volumes_left_unset_need_encryption_by_default_in_the_stack() -> None:
    bare_lt = outputs(LT, {"imageId": "ami-1", "region": "us-east-1"}, "bare-lt")
    data_only = outputs(LT, {"blockDeviceMappings": [{"deviceName": "/dev/sdb", "ebs": {"encrypted": "true", "kmsKeyId": KEY}}]}, "data-lt")
    rooted = outputs(LT, {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "kmsKeyId": KEY}}]}, "root-lt")
    vm = outputs(INSTANCE, {"ami": "ami-1", "subnetId": "s"}, "vm")  # rootBlockDevice computed: unknown in preview
    volume = outputs(VOLUME, {"size": 10, "availabilityZone": "us-east-1a"}, "vol")
    templated = outputs(INSTANCE, {"launchTemplate": {"id": "lt-1"}}, "templated")  # lt-1 is not in the stack
    stack = [bare_lt, data_only, rooted, vm, volume, templated]
    found = run_stack(DEFAULT_ENC, stack)
    assert names(found) == ["bare-lt", "data-lt", "vm", "vol", "templated"]
    assert found[0][1].startswith("the AMI's root volume (no mapping for /dev/xvda or /dev/sda1): not encrypted unless "
                                  "its snapshot is, and no aws.ebs.EncryptionByDefault for us-east-1 in the stack")
    assert found[3][1].startswith("the volume (encrypted unset): ")
    # Account-level EBS encryption by default (enabled defaults to true) with a customer-managed default key encrypts
    # them all (alone it encrypts them with aws/ebs: test_review4_fixes)...
    assert run_stack(DEFAULT_ENC, [*stack, outputs(EBD, {}, "ebd"),
                                   outputs("aws:ebs/defaultKmsKey:DefaultKmsKey", {"keyArn": KEY}, "ebs-key")]) == []
    # ...but not when turned off, or set for another region than the template's.
    assert names(run_stack(DEFAULT_ENC, [*stack, outputs(EBD, {"enabled": False}, "ebd")])) == [
        "bare-lt", "data-lt", "vm", "vol", "templated"]
    assert names(run_stack(DEFAULT_ENC, [bare_lt, outputs(EBD, {"region": "eu-west-1"}, "ebd")])) == ["bare-lt"]


def test_after_up_an_instance_reports_what_ec2_made_of_its_root_volume() -> None:
    unencrypted = resource(INSTANCE, {"rootBlockDevice": {"encrypted": False, "volumeSize": 8}, "ebsBlockDevices": []}, "vm")
    assert [m for _, m in run_stack(DEFAULT_ENC, [unencrypted])] == [
        "root volume (encrypted false): not encrypted unless its snapshot is, and no aws.ebs.EncryptionByDefault in the "
        "stack encrypts new volumes (ebsDefaultEncryption off); set encrypted true with kmsKeyId, or enable EBS "
        "encryption by default (in another stack or the landing zone: set ebsDefaultEncryption to what it does)"]
    encrypted = resource(INSTANCE, {"rootBlockDevice": {"encrypted": True, "kmsKeyId": KEY}, "ebsBlockDevices": []}, "vm")
    assert run_stack(DEFAULT_ENC, [encrypted]) == []


def test_an_unencrypted_efs_file_system_is_reported() -> None:
    type_, inputs = planned(lambda: aws.efs.FileSystem("models"), "models")
    assert run_resource("aws-efs-encryption", type_, inputs) == ["the file system is not encrypted at rest (encrypted is unset or false)"]
    assert run_resource("aws-efs-encryption", type_, {"encrypted": True}) == [
        "no kmsKeyId: the file system uses the AWS-managed EFS key; name a customer-managed key"]
    assert run_resource("aws-efs-encryption", type_, {"encrypted": True, "kmsKeyId": KEY}) == []


def test_a_log_bucket_is_exempt_for_sse_s3_only() -> None:
    # S3 log delivery writes only to SSE-S3 buckets: that alone is exempt; aws:kms on a log bucket still needs a CMK.
    def sse(algorithm: str) -> dict:
        return {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": algorithm}}]}
    assert run_resource("aws-s3-kms-encryption", SSE, sse("AES256"), resource_name="access-logs-encryption") == []
    assert run_resource("aws-s3-kms-encryption", SSE, sse("aws:kms"), resource_name="access-logs-encryption") == [
        "aws:kms without kmsMasterKeyId uses the AWS-managed key; name a customer-managed key"]
    assert run_resource("aws-s3-kms-encryption", SSE, sse("AES256"), resource_name="datasets-encryption") == [
        "default encryption is AES256; use aws:kms with a customer-managed key"]


@pytest.mark.parametrize("key", ["alias/aws/s3", "arn:aws:kms:us-east-1:123456789012:alias/aws/s3"])
def test_the_aws_managed_s3_key_by_alias_is_not_customer_managed(key: str) -> None:
    sse = {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": key}}]}
    assert run_resource("aws-s3-kms-encryption", SSE, sse) == [
        f"kmsMasterKeyId {key} is the AWS-managed S3 key, not a customer-managed one; name your KMS key"]
    inline = resource(BUCKET, {"serverSideEncryptionConfiguration": {"rule": {
        "applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": key}}}}, "b")
    assert [m for _, m in run_stack("aws-s3-bucket-default-encryption", [inline])] == [
        f"bucket's default encryption names kmsMasterKeyId {key}, the AWS-managed key; name a customer-managed key"]
    assert run_resource("aws-fsx-lustre-cmk", "aws:fsx/lustreFileSystem:LustreFileSystem",
                        {"deploymentType": "PERSISTENT_2", "kmsKeyId": "alias/aws/fsx"}) == [
        "kmsKeyId alias/aws/fsx: the file system uses the AWS-managed FSx key"]


def test_a_directory_bucket_needs_a_kms_encryption_configuration() -> None:
    type_, inputs = planned(lambda: aws.s3.DirectoryBucket("express", bucket="train--use1-az4--x-s3",
                                                           location={"name": "use1-az4"}), "express")
    express = outputs(type_, inputs, "express")
    assert [m for _, m in run_stack("aws-s3-bucket-default-encryption", [express])] == [
        "bucket has no default encryption configuration: S3 encrypts its objects with S3-managed keys (SSE-S3), not a "
        "customer-managed KMS key"]
    kms = resource(SSE, {"bucket": "train--use1-az4--x-s3", "rules": [
        {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY}}]}, "express-sse")
    assert run_stack("aws-s3-bucket-default-encryption", [express, kms]) == []
    # Directory buckets always block public access, take HTTPS only and have no versioning: those rules skip them.
    for rule in ("aws-s3-bucket-public-access-blocked", "aws-s3-bucket-tls-only", "aws-s3-bucket-versioning"):
        assert run_stack(rule, [express]) == []


# --- 7. SageMaker notebook instances and spot requests ---

def test_a_notebook_instance_with_direct_internet_access_is_reported() -> None:
    type_, inputs = planned(lambda: aws.sagemaker.NotebookInstance("nb", role_arn="r", instance_type="ml.t3.medium"), "nb")
    assert run_resource("aws-ec2-no-public-ip", type_, inputs) == [
        "directInternetAccess is Enabled: SageMaker gives the notebook instance internet access from a network outside "
        "your VPC's controls; set it to Disabled (with a subnetId)"]
    assert run_resource("aws-ec2-no-public-ip", type_, {**inputs, "directInternetAccess": "Disabled", "subnetId": "s"}) == []


def test_spot_requests_are_checked_like_instances() -> None:
    assert run_resource("aws-ec2-no-public-ip", SPOT, {"subnetId": "s", "associatePublicIpAddress": True}) == [
        "the instance gets a public IP address"]
    assert run_resource("aws-ec2-no-public-ip", SPOT, {"ami": "ami-1"})  # no subnet: the default VPC's public IP
    assert run_resource("aws-launch-template-imdsv2", SPOT, {"metadataOptions": {"httpTokens": "optional"}}) == [
        "IMDSv1 is allowed: set metadataOptions.httpTokens to required"]
    assert run_resource("aws-launch-template-imdsv2", SPOT, {"metadataOptions": {"httpTokens": "required"}}) == []


# --- 13. IMDS turned off ---

@pytest.mark.parametrize("type_", [INSTANCE, SPOT, LT])
def test_a_metadata_service_turned_off_allows_no_imdsv1(type_: str) -> None:
    assert run_resource("aws-launch-template-imdsv2", type_, {"metadataOptions": {"httpEndpoint": "disabled"}}) == []
    assert run_resource("aws-launch-template-imdsv2", type_, {"metadataOptions": {"httpEndpoint": "enabled"}}) == [
        "IMDSv1 is allowed: set metadataOptions.httpTokens to required"]
    with pytest.raises(UnknownValueError):  # the endpoint is unknown: off, or IMDSv1 allowed
        run_resource("aws-launch-template-imdsv2", type_, {"metadataOptions": {"httpEndpoint": UNKNOWN}})


# --- 9. NotAction allow-alls ---

def test_an_allow_with_not_action_on_every_resource_is_a_wildcard() -> None:
    policy = {"Statement": [{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*"], "Resource": "*"}]}
    assert run_resource("aws-iam-no-wildcard-policy", "aws:iam/policy:Policy", {"policy": json.dumps(policy)}) == [
        "a statement allows every action except iam:*, organizations:* on every resource (an Allow with NotAction)"]
    not_resource = {"Statement": [{"Effect": "Allow", "NotAction": "iam:*", "NotResource": "arn:aws:s3:::secret/*"}]}
    assert run_resource("aws-iam-no-wildcard-policy", "aws:iam/policy:Policy", {"policy": json.dumps(not_resource)})
    scoped = {"Statement": [{"Effect": "Allow", "NotAction": "s3:DeleteObject", "Resource": "arn:aws:s3:::b/*"},
                            {"Effect": "Deny", "NotAction": "s3:GetObject", "Resource": "*"}]}
    assert run_resource("aws-iam-no-wildcard-policy", "aws:iam/policy:Policy", {"policy": json.dumps(scoped)}) == []


# --- 11. the account-level public access block ---

def test_an_account_public_access_block_with_all_four_settings_covers_every_bucket() -> None:
    bucket = resource(BUCKET, {"bucket": "data-1"}, "data")
    account = resource("aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock", ALL_FOUR, "account-pab")
    assert run_stack("aws-s3-bucket-public-access-blocked", [bucket, account]) == []
    partial = resource("aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock", {**ALL_FOUR, "restrictPublicBuckets": False}, "pab")
    assert run_stack("aws-s3-bucket-public-access-blocked", [bucket, partial]) == [
        (bucket.urn, "bucket has no public access block (the account's public access block leaves a setting off)")]
    assert run_stack("aws-s3-bucket-public-access-blocked", [bucket]) == [(bucket.urn, "bucket has no public access block")]


# --- 12. TLS-only bucket policies and listener rules ---

def deny_http(**statement: object) -> str:
    return json.dumps({"Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:*",
                                      "Resource": ["arn:aws:s3:::data-1", "arn:aws:s3:::data-1/*"],
                                      "Condition": {"Bool": {"aws:SecureTransport": "false"}}, **statement}]})


@pytest.mark.parametrize(("statement", "gap"), [
    ({}, None),
    ({"Action": "*", "Principal": {"AWS": "*"}}, None),
    ({"Resource": "arn:aws:s3:::data-*"}, None),
    ({"Action": "s3:PutObject", "Resource": "arn:aws:s3:::data-1/*"},
     "only for Action s3:PutObject, not on the bucket itself (Resource arn:aws:s3:::data-1/*)"),
    ({"Principal": {"AWS": "arn:aws:iam::123456789012:root"}}, "only for Principal {'AWS': 'arn:aws:iam::123456789012:root'}"),
    ({"Resource": ["arn:aws:s3:::data-1", "arn:aws:s3:::data-1/private/*"]},
     "not on all its objects (Resource arn:aws:s3:::data-1, arn:aws:s3:::data-1/private/*)"),
    ({"Condition": {"Bool": {"aws:SecureTransport": "false"}, "StringEquals": {"aws:PrincipalAccount": "1"}}},
     "only when its Condition {'Bool': {'aws:SecureTransport': 'false'}, 'StringEquals': {'aws:PrincipalAccount': '1'}} holds"),
])
def test_the_tls_deny_must_cover_every_request_to_the_bucket_and_its_objects(statement: dict, gap: str | None) -> None:
    bucket = resource(BUCKET, {"bucket": "data-1"}, "data")
    policy = resource(POLICY, {"bucket": "data-1", "policy": deny_http(**statement)}, "data-policy")
    expected = [] if gap is None else [(bucket.urn, (
        f"the bucket policy denies non-TLS (aws:SecureTransport=false) requests {gap}; deny s3:* (or *) to Principal * "
        "on the bucket and its objects (arn:...:s3:::BUCKET and arn:...:s3:::BUCKET/*)"))]
    assert run_stack("aws-s3-bucket-tls-only", [bucket, policy]) == expected


@pytest.mark.parametrize("partition", ["aws", "aws-us-gov"])
def test_the_toolkits_own_bucket_policies_deny_plain_http_after_up(partition: str) -> None:
    arn = f"arn:{partition}:s3:::prod-us-east-1-datasets-1a2b"
    for document in (bucket_policy(arn, KEY), log_bucket_policy(arn, "123456789012")):
        bucket = resource(BUCKET, {"bucket": "prod-us-east-1-datasets-1a2b", "arn": arn}, "data")
        policy = resource(POLICY, {"bucket": "prod-us-east-1-datasets-1a2b", "policy": json.dumps(document)}, "data-policy")
        assert run_stack("aws-s3-bucket-tls-only", [bucket, policy]) == []


def test_a_bucket_whose_name_is_not_known_yet_is_the_one_its_policy_names() -> None:
    bucket = resource(BUCKET, {"bucket": UNKNOWN}, "data")
    full = resource(POLICY, {"bucket": UNKNOWN, "policy": deny_http()}, "p", deps=[bucket])
    assert run_stack("aws-s3-bucket-tls-only", [bucket, full]) == []
    objects_only = resource(POLICY, {"bucket": UNKNOWN, "policy": deny_http(Resource="arn:aws:s3:::data-1/*")}, "p", deps=[bucket])
    assert [m for _, m in run_stack("aws-s3-bucket-tls-only", [bucket, objects_only])] == [
        "the bucket policy denies non-TLS (aws:SecureTransport=false) requests not on the bucket itself (Resource "
        "arn:aws:s3:::data-1/*); deny s3:* (or *) to Principal * on the bucket and its objects (arn:...:s3:::BUCKET "
        "and arn:...:s3:::BUCKET/*)"]


def listener_stack(listener_inputs: dict, actions: list[dict]) -> tuple[object, object]:
    listener = outputs(LISTENER, listener_inputs, "http")
    listener_rule = outputs(LISTENER_RULE, {"listenerArn": UNKNOWN, "priority": 1, "actions": actions,
                                            "conditions": [{"pathPattern": {"values": ["/*"]}}]}, "http-fwd", deps=[listener])
    listener_rule.property_dependencies = {"listenerArn": [listener]}
    return listener, listener_rule


REDIRECT = [{"type": "redirect", "redirect": {"protocol": "HTTPS", "port": "443", "statusCode": "HTTP_301"}}]
FORWARD = [{"type": "forward", "targetGroupArn": "arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/x/1"}]


def test_a_rule_forwarding_plain_http_on_a_redirecting_listener_is_reported() -> None:
    http = {"loadBalancerArn": UNKNOWN, "port": 80, "protocol": "HTTP", "defaultActions": REDIRECT}
    assert run_resource("aws-lb-listener-tls", LISTENER, http) == []  # the default action alone is fine
    listener, forward = listener_stack(http, FORWARD)
    assert run_stack("aws-lb-listener-rules-tls", [listener, forward]) == [(forward.urn, (
        "the rule's actions (forward) serve plain HTTP: its listener http is HTTP, where rules may only redirect to HTTPS "
        "or answer with a fixed response"))]
    assert run_stack("aws-lb-listener-rules-tls", list(listener_stack(http, REDIRECT))) == []
    https = {**http, "port": 443, "protocol": "HTTPS", "sslPolicy": "ELBSecurityPolicy-TLS13-1-2-2021-06", "defaultActions": FORWARD}
    assert run_stack("aws-lb-listener-rules-tls", list(listener_stack(https, FORWARD))) == []
    # A listener that leaves its protocol unset is HTTP (computed, so unknown in preview).
    unset = {k: v for k, v in http.items() if k != "protocol"}
    assert names(run_stack("aws-lb-listener-rules-tls", list(listener_stack(unset, FORWARD)))) == ["http-fwd"]


def test_a_listener_rule_naming_a_known_listener_arn_is_matched_to_it() -> None:
    arn = "arn:aws:elasticloadbalancing:us-east-1:1:listener/app/x/1/2"
    listener = resource("aws:alb/listener:Listener", {"arn": arn, "protocol": "HTTP", "defaultActions": REDIRECT}, "http")
    rule = resource("aws:alb/listenerRule:ListenerRule", {"listenerArn": arn, "actions": FORWARD}, "fwd")
    elsewhere = resource("aws:alb/listenerRule:ListenerRule", {"listenerArn": arn + "9", "actions": FORWARD}, "other")
    assert names(run_stack("aws-lb-listener-rules-tls", [listener, rule, elsewhere])) == ["fwd"]


# --- 14. CIS IDs (CIS AWS Foundations v3.0.0, CIS Amazon EKS v1.7.0) ---

@pytest.mark.parametrize(("rule", "cis"), [
    ("aws-s3-bucket-tls-only", ("AWS 2.1.1",)),
    ("aws-s3-bucket-public-access-blocked", ("AWS 2.1.4",)),
    ("aws-s3-kms-encryption", None),
    ("aws-s3-bucket-default-encryption", None),
    ("aws-s3-bucket-versioning", None),
    ("aws-efs-encryption", ("AWS 2.4.1",)),
    ("aws-ebs-default-encryption", ("AWS 2.2.1",)),
    ("aws-vpc-flow-logs", ("AWS 3.7",)),
    ("aws-eks-nodegroup-no-ssh", None),
    ("aws-eks-private-endpoint", ("EKS 5.4.1",)),
])
def test_cis_ids_name_the_benchmark_controls_the_rules_check(rule: str, cis: tuple[str, ...] | None) -> None:
    assert RULES[rule].frameworks.get("CIS") == cis


@pytest.mark.parametrize("key", ["alias/aws/elasticfilesystem", "arn:aws:kms:us-east-1:123456789012:alias/aws/elasticfilesystem"])
def test_efs_with_the_aws_managed_key_is_reported(key: str) -> None:
    assert run_resource("aws-efs-encryption", "aws:efs/fileSystem:FileSystem", {"encrypted": True, "kmsKeyId": key}) == [
        f"kmsKeyId {key}: the file system uses the AWS-managed EFS key; name a customer-managed key"]
