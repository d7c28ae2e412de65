"""Fixes from the final review of the pack: the EBS default key judged in one place (the stack rule, which sees an
aws.ebs.DefaultKmsKey), its setting reachable from gen_config, launch templates outside the stack reported instead of
left "unknown" forever, S3 log buckets judged alike by both encryption rules, and dead code removed."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pulumi_aws as aws
import pytest
from helpers import script_module
from policy_helpers import RULES, UNKNOWN, resource, run_resource, run_stack
from pulumi_policy import StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from aiinfra.plan.outputs import preview_outputs
from aiinfra.plan.runtime import run_program
from aiinfra.policy_eval import evaluate_pack
from aiinfra_policy import pools, registry
from aiinfra_policy.pack import stack_validator

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "policies"
KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
INSTANCE, SPOT, LT = "aws:ec2/instance:Instance", "aws:ec2/spotInstanceRequest:SpotInstanceRequest", "aws:ec2/launchTemplate:LaunchTemplate"
VOLUME, EBD, DEFAULT_KEY = "aws:ebs/volume:Volume", "aws:ebs/encryptionByDefault:EncryptionByDefault", "aws:ebs/defaultKmsKey:DefaultKmsKey"
EKS, KMS_KEY = "aws:eks/nodeGroup:NodeGroup", "aws:kms/key:Key"
BUCKET, DIRECTORY = "aws:s3/bucket:Bucket", "aws:s3/directoryBucket:DirectoryBucket"
VOLUMES, DEFAULT_ENC = "aws-launch-template-encrypted-volumes", "aws-ebs-default-encryption"
BUCKET_ENC, S3_KMS = "aws-s3-bucket-default-encryption", "aws-s3-kms-encryption"
EAST = {"region": "us-east-1"}
TAGS = {"environment": "dev", "team": "t", "cost-center": "c"}
OUTSIDE = ("instance type is in launch template lt-0123external outside this stack; name instanceTypes on the node "
           "group or manage the launch template in this stack")


def names(found: list[tuple[str | None, str]]) -> list[str]:
    return [(urn or "").split("::")[-1] for urn, _ in found]


def stack_part(name: str, resources: list, config: dict | None = None) -> list[tuple[str | None, str]]:
    """The violations a resource rule's stack part reports (the TypedAnalyzer runs it in AnalyzeStack)."""
    rule = RULES[name]
    part = dataclasses.replace(rule, check=rule.stack_check, types=())
    found: list[tuple[str | None, str]] = []
    config = {**{k: v["default"] for k, v in rule.config.items()}, **(config or {})}
    stack_validator(part)(StackValidationArgs(resources, config), lambda message, urn=None: found.append((urn, message)))
    return found


# --- 1. encrypted true without kmsKeyId: the account's default EBS key, judged by the stack rule alone ---

KEYLESS_LT = {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true"}}]}


def test_a_default_kms_key_in_the_stack_makes_encrypted_volumes_without_a_key_compliant() -> None:
    # The reviewer's /tmp/rev_a.py: the resource rule flagged this though the stack names a customer-managed default key.
    assert run_resource(VOLUMES, LT, KEYLESS_LT) == []
    lt = resource(LT, KEYLESS_LT, "lt", provider=EAST)
    dk = resource(DEFAULT_KEY, {"keyArn": KEY}, "dk", provider=EAST)
    assert run_stack(DEFAULT_ENC, [lt, resource(EBD, {"enabled": True}, "ebd", provider=EAST), dk]) == []
    # The default key counts without encryption by default: it encrypts every volume created encrypted without a key.
    assert run_stack(DEFAULT_ENC, [lt, dk]) == []
    # Without one, or with the AWS-managed alias, it is aws/ebs.
    assert [m for _, m in run_stack(DEFAULT_ENC, [lt])] == [
        "volume /dev/xvda: encrypted without kmsKeyId, so EC2 uses the account's default EBS key, the AWS-managed "
        "aws/ebs (ebsDefaultEncryption off); set kmsKeyId to a customer-managed key, or make the account's default EBS "
        "key customer-managed (aws.ebs.DefaultKmsKey; ebsDefaultEncryption customer_key)"]
    aws_managed = resource(DEFAULT_KEY, {"keyArn": "alias/aws/ebs"}, "dk", provider=EAST)
    assert "aws/ebs (aws.ebs.DefaultKmsKey)" in run_stack(DEFAULT_ENC, [lt, aws_managed])[0][1]
    # Another region's default key is not this one's.
    west = resource(DEFAULT_KEY, {"keyArn": KEY}, "dk-west", provider={"region": "eu-west-1"})
    assert names(run_stack(DEFAULT_ENC, [lt, west])) == ["lt"]
    # The rule's config stands for a default key set outside the stack.
    assert run_stack(DEFAULT_ENC, [lt], {"ebsDefaultEncryption": "customer_key"}) == []


def test_the_setting_lives_on_the_stack_rule_only() -> None:
    assert RULES[VOLUMES].config == {}
    assert list(RULES[DEFAULT_ENC].config) == ["ebsDefaultEncryption"]
    description = RULES[DEFAULT_ENC].config["ebsDefaultEncryption"]["description"]
    assert "encrypted true without kmsKeyId" in description and "aws.ebs.DefaultKmsKey" in description
    # What no account setting excuses stays with the resource rule.
    assert run_resource(VOLUMES, VOLUME, {"encrypted": False}) == ["the volume is not encrypted"]
    assert run_resource(VOLUMES, VOLUME, {"encrypted": True, "kmsKeyId": "alias/aws/ebs"}) == [
        "the volume uses the AWS-managed EBS key alias/aws/ebs; set kmsKeyId to a customer-managed key"]


def test_a_key_unknown_in_preview_is_told_apart_by_its_dependency_on_a_kms_key() -> None:
    key = resource(KMS_KEY, {"enableKeyRotation": True}, "key")
    # A volume's kmsKeyId is computed: left unset it is unknown in preview, like the ARN of a key made in the same update.
    unset = resource(VOLUME, preview_outputs(VOLUME, {"availabilityZone": "us-east-1a", "encrypted": True}), "unset")
    from_key = resource(VOLUME, {"availabilityZone": "us-east-1a", "encrypted": True, "kmsKeyId": UNKNOWN}, "from-key")
    from_key.property_dependencies["kmsKeyId"] = [key]
    root = resource(INSTANCE, {"rootBlockDevice": {"encrypted": True, "kmsKeyId": UNKNOWN}, "subnetId": "s"}, "vm")
    root.property_dependencies["rootBlockDevice"] = [key]
    # A template's outputs are its inputs: an unknown key there is one the program set.
    lt = resource(LT, {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "kmsKeyId": UNKNOWN}}]}, "lt")
    assert names(run_stack(DEFAULT_ENC, [key, unset, from_key, root, lt])) == ["unset"]


def test_a_volume_both_unset_and_keyless_gets_both_findings() -> None:
    vm = resource(SPOT, {"rootBlockDevice": {"encrypted": True}, "ebsBlockDevices": [{"deviceName": "/dev/sdb"}]}, "spot")
    found = [m for _, m in run_stack(DEFAULT_ENC, [vm])]
    assert [m.split(":")[0] for m in found] == ["root volume", "EBS volume /dev/sdb (encrypted unset)"]


def test_the_encrypted_volumes_program_blocks_only_on_the_stack_rule() -> None:
    def program() -> None:
        key = aws.kms.Key("key", enable_key_rotation=True, tags=TAGS)
        aws.ebs.Volume("keyed", availability_zone="us-east-1a", size=10, encrypted=True, kms_key_id=key.arn, tags=TAGS)
        aws.ebs.Volume("keyless", availability_zone="us-east-1a", size=10, encrypted=True, tags=TAGS)

    records = [r.to_json() for r in run_program(program, project="p", stack="dev").resources]
    config = json.loads((PACK / "config" / "baseline.json").read_text())
    found = {(v.policy, v.urn.split("::")[-1], v.enforcementLevel) for v in
             evaluate_pack(PACK, records, config=config, project="p", stack="dev").violations if v.policy in (VOLUMES, DEFAULT_ENC)}
    assert found == {(DEFAULT_ENC, "keyless", "mandatory")}
    config[DEFAULT_ENC] = {"enforcementLevel": "mandatory", "ebsDefaultEncryption": "customer_key"}
    assert not [v for v in evaluate_pack(PACK, records, config=config, project="p", stack="dev").violations
                if v.policy in (VOLUMES, DEFAULT_ENC)]


# --- 2. ebsDefaultEncryption reaches the generated configs ---

def gen_config() -> object:
    return script_module(PACK / "aiinfra_policy" / "gen_config.py")


def test_every_generated_config_sets_ebs_default_encryption_and_a_change_reaches_it() -> None:
    module = gen_config()
    assert all(e["params"]["ebsDefaultEncryption"] == "off" for e in module.ENVIRONMENTS.values())
    assert module.BASELINE["params"]["ebsDefaultEncryption"] == "off"
    for path in (PACK / "config").glob("*.json"):
        entry = json.loads(path.read_text())[DEFAULT_ENC]
        assert entry["ebsDefaultEncryption"] == "off", path.name
        assert json.loads(path.read_text())[VOLUMES] in ("mandatory", "advisory", "disabled"), path.name  # no setting
    customer = {**module.BASELINE, "params": {**module.BASELINE["params"], "ebsDefaultEncryption": "customer_key"}}
    assert module.config_for(customer)[DEFAULT_ENC] == {"enforcementLevel": "mandatory", "ebsDefaultEncryption": "customer_key"}


# --- 3. a launch template outside the stack is a violation, with the resource's URN ---

def external_group(**extra: object) -> object:
    props = {"launchTemplate": {"id": "lt-0123external", "version": "1"}, "instanceTypes": UNKNOWN,
             "scalingConfig": {"minSize": 0, "maxSize": 2, "desiredSize": 0}, **extra}
    return resource(EKS, props, "ng")


@pytest.mark.parametrize("name", ["gpu-cap-per-pool", "allowed-accelerators", "accelerator-pool-tainted"])
def test_a_node_group_sized_by_a_template_outside_the_stack_is_reported(name: str) -> None:
    group = external_group()
    assert stack_part(name, [group], {"allowedAccelerators": ["l4"]}) == [(group.urn, OUTSIDE)]


def test_only_rules_that_need_the_instance_type_report_the_outside_template() -> None:
    group = external_group()
    assert stack_part("allowed-accelerators", [group]) == []  # no list: every model is allowed
    assert stack_part("dev-pools-spot-or-scale-to-zero", [group], {"environment": "prod"}) == []
    assert stack_part("dev-pools-spot-or-scale-to-zero", [group], {"environment": "dev"}) == [(group.urn, OUTSIDE)]
    # Named on the group, the instance type is the resource rules' to judge.
    assert stack_part("gpu-cap-per-pool", [external_group(instanceTypes=["g6.xlarge"])]) == []
    # The environment cap counts what it can read and leaves that group to the pool rules.
    assert run_stack("gpu-cap-per-environment", [group]) == []


def test_instances_and_groups_name_what_they_can_set_instead() -> None:
    vm = resource(INSTANCE, {"launchTemplate": {"id": "lt-0123external"}, "subnetId": "s"}, "vm")
    asg = resource("aws:autoscaling/group:Group", {"launchTemplate": {"name": "shared"}, "minSize": 0, "maxSize": 2}, "asg")
    assert stack_part("gpu-cap-per-pool", [vm, asg]) == [
        (vm.urn, "instance type is in launch template lt-0123external outside this stack; name instanceType on the "
                 "resource or manage the launch template in this stack"),
        (asg.urn, "instance type is in launch template shared outside this stack; name the instance types in "
                  "mixedInstancesPolicy.launchTemplate.overrides or manage the launch template in this stack")]


def test_a_template_reference_unknown_in_preview_still_waits_for_pulumi_up() -> None:
    group = external_group(launchTemplate={"id": UNKNOWN, "version": UNKNOWN})
    with pytest.raises(UnknownValueError):
        stack_part("gpu-cap-per-pool", [group])


def external_instance(**props: object) -> object:
    """An instance launched from a template outside the stack, as a stack rule sees it in preview."""
    return resource(INSTANCE, preview_outputs(INSTANCE, {"ami": "ami-1", "launchTemplate": {"id": "lt-0123external"},
                                                         "subnetId": "s", **props}), "vm")


def test_imds_of_an_instance_whose_template_is_outside_the_stack_must_be_set_on_the_instance() -> None:
    bare = external_instance()
    assert run_resource("aws-launch-template-imdsv2", INSTANCE, {"launchTemplate": {"id": "lt-0123external"}}) == []
    assert stack_part("aws-launch-template-imdsv2", [bare]) == [(bare.urn, (
        "metadataOptions httpTokens and httpPutResponseHopLimit come from launch template lt-0123external, which is not "
        "in this stack, so no rule sees them; set metadataOptions {httpTokens: required, httpPutResponseHopLimit: 1} on "
        "the instance (they override the template's) or manage the template in this stack"))]
    own = external_instance(metadataOptions={"httpTokens": "required", "httpPutResponseHopLimit": 1})
    assert stack_part("aws-launch-template-imdsv2", [own]) == []
    assert stack_part("aws-launch-template-imdsv2", [external_instance(metadataOptions={"httpEndpoint": "disabled"})]) == []
    # After `pulumi up` the outputs hold what EC2 took from the template.
    after = resource(INSTANCE, {"launchTemplate": {"id": "lt-0123external"}, "metadataOptions": {
        "httpEndpoint": "enabled", "httpTokens": "optional", "httpPutResponseHopLimit": 2}}, "vm")
    assert [m for _, m in stack_part("aws-launch-template-imdsv2", [after])] == [
        "metadataOptions are httpTokens optional, httpPutResponseHopLimit 2 (launch template lt-0123external is not in "
        "this stack); require IMDSv2 with a hop limit of 1 on the instance or in the template"]
    # IMDSv2 required is not enough: a hop limit of 2 lets a container on the node reach the instance's credentials.
    hops = resource(INSTANCE, {"launchTemplate": {"id": "lt-0123external"}, "metadataOptions": {
        "httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 2}}, "vm")
    assert [m for _, m in stack_part("aws-launch-template-imdsv2", [hops])] == [
        "metadataOptions are httpTokens required, httpPutResponseHopLimit 2 (launch template lt-0123external is not in "
        "this stack); require IMDSv2 with a hop limit of 1 on the instance or in the template"]


def test_a_public_ip_of_an_instance_whose_template_is_outside_the_stack_must_be_ruled_out_on_the_instance() -> None:
    bare = external_instance()
    assert stack_part("aws-ec2-no-public-ip", [bare]) == [(bare.urn, (
        "the instance takes its network settings from launch template lt-0123external, which is not in this stack, so "
        "whether it gets a public IP address can't be checked; set associatePublicIpAddress false on the instance or "
        "manage the template in this stack"))]
    assert stack_part("aws-ec2-no-public-ip", [external_instance(associatePublicIpAddress=False)]) == []
    after = resource(INSTANCE, {"launchTemplate": {"id": "lt-0123external"}, "associatePublicIpAddress": True}, "vm")
    assert [m for _, m in stack_part("aws-ec2-no-public-ip", [after])] == [
        "the instance has a public IP address (launch template lt-0123external is not in this stack); set "
        "associatePublicIpAddress false"]


def test_the_root_volume_of_an_instance_whose_template_is_outside_the_stack_needs_the_accounts_default() -> None:
    bare = external_instance()
    assert [m for _, m in run_stack(DEFAULT_ENC, [bare])] == [
        "the root volume (launch template lt-0123external is not in this stack: its mapping, else the AMI's): not "
        "encrypted unless its snapshot is, and no aws.ebs.EncryptionByDefault in the stack encrypts new volumes "
        "(ebsDefaultEncryption off); set encrypted true with kmsKeyId, or enable EBS encryption by default (in another "
        "stack or the landing zone: set ebsDefaultEncryption to what it does)"]
    assert run_stack(DEFAULT_ENC, [bare], {"ebsDefaultEncryption": "customer_key"}) == []
    own_root = external_instance(rootBlockDevice={"encrypted": True, "kmsKeyId": KEY})
    assert run_stack(DEFAULT_ENC, [own_root]) == []


def test_an_instance_whose_template_is_in_the_stack_is_left_to_the_template() -> None:
    template = resource(LT, {"id": "lt-0abc", "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
                             "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "kmsKeyId": KEY}}]}, "lt")
    vm = resource(INSTANCE, preview_outputs(INSTANCE, {"ami": "ami-1", "launchTemplate": {"id": "lt-0abc"}}), "vm")
    for name in ("aws-launch-template-imdsv2", "aws-ec2-no-public-ip"):
        assert stack_part(name, [template, vm]) == []
    assert run_stack(DEFAULT_ENC, [template, vm]) == []


def test_the_pack_reports_an_outside_template_at_the_rules_level_with_the_resources_urn() -> None:
    # The reviewer's case through the engine's protocol: before, an advisory "can't run during preview" with no URN.
    def program() -> None:
        aws.eks.NodeGroup("ng-external", cluster_name="c1", node_role_arn="arn:aws:iam::123456789012:role/n",
                          subnet_ids=["subnet-1"], scaling_config={"min_size": 0, "max_size": 2, "desired_size": 0},
                          launch_template={"id": "lt-0123external", "version": "1"}, tags=TAGS)

    records = [r.to_json() for r in run_program(program, project="p", stack="dev").resources]
    config = json.loads((PACK / "config" / "baseline.json").read_text())
    config["allowed-accelerators"] = {"enforcementLevel": "mandatory", "allowedAccelerators": ["l4"]}
    report = evaluate_pack(PACK, records, config=config, project="p", stack="dev")
    found = {(v.policy, v.enforcementLevel, v.urn.split("::")[-1], v.message.endswith(OUTSIDE)) for v in report.violations
             if v.policy in ("allowed-accelerators", "gpu-cap-per-pool")}
    assert found == {(p, "mandatory", "ng-external", True) for p in ("allowed-accelerators", "gpu-cap-per-pool")}


# --- 4. S3 buckets: one rule judges a bucket's inline encryption, with the log-bucket exemption ---

def inline(algorithm: str, key: str | None = None) -> dict:
    default = {"sseAlgorithm": algorithm, **({"kmsMasterKeyId": key} if key else {})}
    return {"serverSideEncryptionConfiguration": {"rule": {"applyServerSideEncryptionByDefault": default}}}


def test_an_access_log_bucket_with_sse_s3_passes_both_encryption_rules() -> None:
    # The reviewer's /tmp/rev_b.py: aws-s3-kms-encryption exempted it, aws-s3-bucket-default-encryption did not.
    logs = {"bucket": "access-logs", **inline("AES256")}
    assert run_resource(S3_KMS, BUCKET, logs, resource_name="access-logs") == []
    assert run_stack(BUCKET_ENC, [resource(BUCKET, logs, "access-logs")]) == []
    # In preview a log bucket's computed setting is unknown; after `pulumi up` S3 reports SSE-S3: both are SSE-S3.
    assert run_stack(BUCKET_ENC, [resource(BUCKET, {"bucket": "l", "serverSideEncryptionConfiguration": UNKNOWN}, "log-archive")]) == []
    # The exemption is SSE-S3 only, and for general purpose buckets (S3 delivers server access logs to those).
    assert names(run_stack(BUCKET_ENC, [resource(BUCKET, {"bucket": "l", **inline("aws:kms")}, "access-logs")])) == ["access-logs"]
    assert names(run_stack(BUCKET_ENC, [resource(DIRECTORY, {"bucket": "l--use1-az4--x-s3"}, "access-logs")])) == ["access-logs"]


def test_a_data_bucket_with_sse_s3_is_reported_once() -> None:
    data = {"bucket": "data", **inline("AES256")}
    assert run_resource(S3_KMS, BUCKET, data, resource_name="data") == []  # not this rule's type any more
    assert run_stack(BUCKET_ENC, [resource(BUCKET, data, "data")]) == [(
        "urn:pulumi:s::p::aws:s3/bucket:Bucket::data", "bucket's default encryption is AES256 and no encryption "
        "configuration sets it to aws:kms or aws:kms:dsse with a customer-managed kmsMasterKeyId")]
    assert run_stack(BUCKET_ENC, [resource(BUCKET, {"bucket": "data", **inline("aws:kms", KEY)}, "data")]) == []
    assert RULES[S3_KMS].types == ("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
                                   "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2")


# --- 5, 6. dead code and docs ---

def test_unknown_mappings_of_a_template_are_reported_before_the_root_device_is_looked_for() -> None:
    # aws_ec2.maps_root never sees unknown mappings: ebs_volumes raises first (the "can't run during preview" advisory).
    with pytest.raises(UnknownValueError):
        run_stack(DEFAULT_ENC, [resource(LT, {"blockDeviceMappings": UNKNOWN}, "lt")])
    with pytest.raises(UnknownValueError):
        run_stack(DEFAULT_ENC, [resource(LT, {"blockDeviceMappings": [UNKNOWN]}, "lt")])


def test_no_module_registers_rules_of_another_and_no_unused_names_remain() -> None:
    source = ast.parse((PACK / "aiinfra_policy" / "crosscloud.py").read_text())
    imported = {alias.name for node in ast.walk(source) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert "accelerators" not in imported
    assert not hasattr(registry, "SEVERITIES")
    assert pools.TEMPLATED == (pools.EKS_POOL, pools.EC2, pools.EC2_SPOT, pools.ASG)
    assert "server.TypedAnalyzer" in registry.Rule.stack_check.__doc__
