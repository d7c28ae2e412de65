"""AWS rules after review: side resources credited to the bucket they name, inline bucket policies, instances that
take their network and metadata settings elsewhere, instance-store mappings, more IAM and security group types, the
EKS secrets message, and which names count as log buckets."""

from __future__ import annotations

import json

import pulumi_aws as aws
import pytest
from policy_helpers import UNKNOWN, resource, run_resource, run_stack
from pulumi_policy import PolicyResource

from aiinfra.plan.runtime import run_program

BUCKET, POLICY = "aws:s3/bucket:Bucket", "aws:s3/bucketPolicy:BucketPolicy"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
INSTANCE, LT = "aws:ec2/instance:Instance", "aws:ec2/launchTemplate:LaunchTemplate"
DENY_PLAIN_HTTP = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "*",
                                                            "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}
NO_TLS = "no bucket policy denies non-TLS (aws:SecureTransport=false) requests"
ADMIN = "arn:aws:iam::aws:policy/AdministratorAccess"
ALLOW_ALL = json.dumps({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})


def with_property_deps(side: PolicyResource, **deps: list[PolicyResource]) -> PolicyResource:
    side.property_dependencies = deps
    return side


# --- 3. a side resource counts for the bucket it names, not for every bucket it depends on ---

def test_a_log_buckets_policy_is_not_the_source_buckets() -> None:
    # The log bucket's policy names the source bucket's ARN, so it depends on both buckets; before, the source bucket
    # was credited with it.
    # Deployed (an S3 bucket's ID is its name): the policy names the log bucket by its name.
    source, logs = resource(BUCKET, {"bucket": "data-5e1f"}, "data"), resource(BUCKET, {"bucket": "data-logs-9c2d"}, "data-logs")
    policy = resource(POLICY, {"bucket": "data-logs-9c2d", "policy": json.dumps(DENY_PLAIN_HTTP)}, "logs-policy", deps=[logs, source])
    assert run_stack("aws-s3-bucket-tls-only", [source, logs, policy]) == [(source.urn, NO_TLS)]


def test_a_side_naming_a_bucket_outside_the_stack_counts_for_none() -> None:
    bucket = resource(BUCKET, {}, "data")
    policy = resource(POLICY, {"bucket": "elsewhere", "policy": json.dumps(DENY_PLAIN_HTTP)}, "p", deps=[bucket])
    assert run_stack("aws-s3-bucket-tls-only", [bucket, policy]) == [(bucket.urn, NO_TLS)]


def test_an_unknown_bucket_falls_back_to_the_one_bucket_it_depends_on() -> None:
    source, logs = resource(BUCKET, {}, "data"), resource(BUCKET, {}, "data-logs")
    tls = json.dumps(DENY_PLAIN_HTTP)
    # Two buckets among the dependencies: neither can be told to be the one configured.
    both = resource(POLICY, {"bucket": UNKNOWN, "policy": tls}, "p", deps=[logs, source])
    assert run_stack("aws-s3-bucket-tls-only", [source, logs, both]) == [(source.urn, NO_TLS), (logs.urn, NO_TLS)]
    # The `bucket` property's own dependencies name it.
    named = with_property_deps(resource(POLICY, {"bucket": UNKNOWN, "policy": tls}, "p", deps=[logs, source]), bucket=[logs])
    assert run_stack("aws-s3-bucket-tls-only", [source, logs, named]) == [(source.urn, NO_TLS)]
    # Only one bucket among the dependencies.
    one = resource(POLICY, {"bucket": UNKNOWN, "policy": tls}, "p", deps=[logs])
    assert run_stack("aws-s3-bucket-tls-only", [source, logs, one]) == [(source.urn, NO_TLS)]


def test_two_sides_of_one_bucket_give_the_same_verdict_in_any_order() -> None:
    bucket = resource(BUCKET, {"bucket": "data-5e1f"}, "data")
    on = resource(VERSIONING, {"bucket": "data-5e1f", "versioningConfiguration": {"status": "Enabled"}}, "a-versioning")
    off = resource(VERSIONING, {"bucket": "data-5e1f", "versioningConfiguration": {"status": "Suspended"}}, "b-versioning")
    assert run_stack("aws-s3-bucket-versioning", [bucket, on, off]) == run_stack("aws-s3-bucket-versioning", [bucket, off, on]) == []


# --- 6. a bucket's inline policy ---

@pytest.mark.parametrize("type_", ["aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"])
def test_an_inline_policy_denying_plain_http_counts(type_: str) -> None:
    assert run_stack("aws-s3-bucket-tls-only", [resource(type_, {"policy": json.dumps(DENY_PLAIN_HTTP)}, "b")]) == []
    assert run_stack("aws-s3-bucket-tls-only", [resource(type_, {"policy": DENY_PLAIN_HTTP}, "b")]) == []  # as an object
    allow_tls = {"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Condition": {"Bool": {"aws:SecureTransport": "true"}}}]}
    bucket = resource(type_, {"policy": json.dumps(allow_tls)}, "b")
    assert run_stack("aws-s3-bucket-tls-only", [bucket]) == [(bucket.urn, NO_TLS)]
    unknown = resource(type_, {"policy": UNKNOWN}, "b")  # a preview's computed output: counted as unset
    assert run_stack("aws-s3-bucket-tls-only", [unknown]) == [(unknown.urn, NO_TLS)]


def test_the_sdk_puts_an_inline_bucket_policy_on_the_wire_as_policy() -> None:
    result = run_program(lambda: aws.s3.BucketV2("b", policy=json.dumps(DENY_PLAIN_HTTP)), project="p", stack="s")
    [(type_, inputs)] = [(r.type, r.inputs) for r in result.resources if r.name == "b"]
    assert run_stack("aws-s3-bucket-tls-only", [resource(type_, inputs, "b")]) == []


# --- 5. instances that take their network or metadata settings from a network interface or launch template ---

def test_an_instance_on_an_existing_network_interface_is_not_in_a_default_subnet() -> None:
    eni = {"primaryNetworkInterface": {"networkInterfaceId": "eni-1"}}
    assert run_resource("aws-ec2-no-public-ip", INSTANCE, eni) == []
    assert run_resource("aws-ec2-no-public-ip", INSTANCE, {"launchTemplate": {"id": "lt-1"}}) == []
    assert run_resource("aws-ec2-no-public-ip", INSTANCE, {"ami": "ami-1"})  # still flagged: names nothing
    assert run_resource("aws-ec2-no-public-ip", INSTANCE, {**eni, "associatePublicIpAddress": True}) == ["the instance gets a public IP address"]


def test_an_instance_from_a_launch_template_is_judged_on_what_it_overrides() -> None:
    templated = {"launchTemplate": {"id": "lt-1", "version": "$Latest"}}
    assert run_resource("aws-launch-template-imdsv2", INSTANCE, templated) == []
    optional = {**templated, "metadataOptions": {"httpTokens": "optional"}}
    assert run_resource("aws-launch-template-imdsv2", INSTANCE, optional) == ["IMDSv1 is allowed: set metadataOptions.httpTokens to required"]
    hops = {**templated, "metadataOptions": {"httpPutResponseHopLimit": 2}}
    assert run_resource("aws-launch-template-imdsv2", INSTANCE, hops) == [
        "metadata hop limit is 2; pods could reach the node's credentials, use 1"]
    assert run_resource("aws-launch-template-imdsv2", INSTANCE, {}) == ["IMDSv1 is allowed: set metadataOptions.httpTokens to required"]


# --- 8. instance-store and suppressed mappings have no EBS volume to encrypt ---

def test_instance_store_mappings_are_not_ebs_volumes() -> None:
    mappings = [{"deviceName": "/dev/sdb", "virtualName": "ephemeral0"}, {"deviceName": "/dev/sdc", "noDevice": ""},
                {"deviceName": "/dev/xvda", "ebs": {"encrypted": "false"}}]
    assert run_resource("aws-launch-template-encrypted-volumes", LT, {"blockDeviceMappings": mappings}) == [
        "volume /dev/xvda is not encrypted"]


# --- 7. default security groups, role inline policies and managed policy lists ---

def test_a_default_security_group_open_to_ssh_is_reported() -> None:
    sg = {"vpcId": "vpc-1", "ingress": [{"fromPort": 22, "toPort": 22, "protocol": "tcp", "cidrBlocks": ["0.0.0.0/0"]}]}
    assert run_resource("aws-security-group-no-open-admin-ingress", "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", sg) == [
        "ingress from 0.0.0.0/0 to port 22"]


def test_a_roles_inline_policies_are_checked_for_wildcards() -> None:
    role = {"assumeRolePolicy": "{}", "inlinePolicies": [{"name": "ok", "policy": json.dumps(DENY_PLAIN_HTTP)},
                                                          {"name": "all", "policy": ALLOW_ALL}, {}]}
    assert run_resource("aws-iam-no-wildcard-policy", "aws:iam/role:Role", role) == ["a statement allows every action (Action: *)"]
    assert run_resource("aws-iam-no-wildcard-policy", "aws:iam/role:Role", {"assumeRolePolicy": "{}"}) == []


@pytest.mark.parametrize(("type_", "prop"), [
    ("aws:iam/role:Role", "managedPolicyArns"),
    ("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "policyArns"),
    ("aws:iam/userPolicyAttachmentsExclusive:UserPolicyAttachmentsExclusive", "policyArns"),
    ("aws:iam/groupPolicyAttachmentsExclusive:GroupPolicyAttachmentsExclusive", "policyArns")])
def test_lists_of_managed_policies_are_checked_for_admin(type_: str, prop: str) -> None:
    found = run_resource("aws-iam-no-admin-attachment", type_, {prop: ["arn:aws:iam::aws:policy/ReadOnlyAccess", ADMIN]})
    assert found == ["attaches AdministratorAccess"]
    assert run_resource("aws-iam-no-admin-attachment", type_, {prop: ["arn:aws:iam::aws:policy/ReadOnlyAccess"]}) == []


def test_the_sdk_wire_shapes_of_the_new_types_are_read() -> None:
    def build() -> None:
        aws.iam.Role("role", assume_role_policy="{}", managed_policy_arns=[ADMIN],
                     inline_policies=[aws.iam.RoleInlinePolicyArgs(name="all", policy=ALLOW_ALL)])
        aws.iam.RolePolicyAttachmentsExclusive("exclusive", role_name="r", policy_arns=[ADMIN])
        aws.ec2.DefaultSecurityGroup("default", vpc_id="vpc-1", ingress=[aws.ec2.DefaultSecurityGroupIngressArgs(
            from_port=0, to_port=0, protocol="-1", cidr_blocks=["0.0.0.0/0"])])

    planned = {r.name: (r.type, r.inputs) for r in run_program(build, project="p", stack="s").resources}
    assert run_resource("aws-iam-no-admin-attachment", *planned["role"]) == ["attaches AdministratorAccess"]
    assert run_resource("aws-iam-no-wildcard-policy", *planned["role"]) == ["a statement allows every action (Action: *)"]
    assert run_resource("aws-iam-no-admin-attachment", *planned["exclusive"]) == ["attaches AdministratorAccess"]
    assert run_resource("aws-security-group-no-open-admin-ingress", *planned["default"]) == ["ingress from 0.0.0.0/0 to all ports"]


# --- 9. EKS secrets: encrypted by default since 1.28, with an AWS-owned key ---

def test_the_eks_secrets_message_names_the_customer_managed_key() -> None:
    assert run_resource("aws-eks-secrets-encryption", "aws:eks/cluster:Cluster", {}) == [
        "Kubernetes secrets are not encrypted with a customer-managed KMS key"]


# --- 10. log buckets are named by a segment, not a substring ---

@pytest.mark.parametrize(("name", "log"), [
    ("prod-us-east-1-log-archive-encryption", True), ("prod-us-central1-access-logs-bucket", True), ("app_logs", True),
    ("logs.example", True), ("catalog-encryption", False), ("blog-bucket", False), ("dialog", False), ("logger", False)])
def test_log_names(name: str, log: bool) -> None:
    from aiinfra_policy.props import log_named  # noqa: PLC0415 (here, so the other tests also run on a pack without it)

    assert log_named(name) is log


def test_catalog_and_blog_buckets_are_not_exempt() -> None:
    sse = {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]}
    sse_type = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
    assert run_resource("aws-s3-kms-encryption", sse_type, sse, resource_name="catalog-encryption") == [
        "default encryption is AES256; use aws:kms with a customer-managed key"]
    assert run_resource("aws-s3-kms-encryption", sse_type, sse, resource_name="log-archive-encryption") == []
    gcs = "gcp:storage/bucket:Bucket"
    assert run_resource("gcs-bucket-versioning", gcs, {"location": "US"}, resource_name="blog-assets") == ["versioning is off"]
    assert run_resource("gcs-bucket-versioning", gcs, {"location": "US"}, resource_name="access-logs-bucket") == []
