"""False positives of the rules added after the third review: volumes left to the account's EBS encryption by default
(`ebsDefaultEncryption`), TLS-only bucket policies with lower-case condition keys or split over two statements,
class-less Ingresses, HTTP listener rules answering with a fixed response, and the pack refusing to load on an SDK
whose servicer the TypedAnalyzer can't replace (the stack parts of the accelerator rules run only there)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
from policy_helpers import RULES, UNKNOWN, resource, run_resource, run_stack
from pulumi_policy import policy as sdk

from aiinfra.plan.outputs import preview_outputs
from aiinfra.plan.runtime import run_program
from aiinfra.policy_eval import evaluate_pack
from aiinfra_policy import pack, server

ROOT = Path(__file__).resolve().parents[2]
KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
INSTANCE, LT, VOLUME = "aws:ec2/instance:Instance", "aws:ec2/launchTemplate:LaunchTemplate", "aws:ebs/volume:Volume"
EBD, DEFAULT_KEY = "aws:ebs/encryptionByDefault:EncryptionByDefault", "aws:ebs/defaultKmsKey:DefaultKmsKey"
VOLUMES, DEFAULT_ENC = "aws-launch-template-encrypted-volumes", "aws-ebs-default-encryption"
BUCKET, POLICY = "aws:s3/bucket:Bucket", "aws:s3/bucketPolicy:BucketPolicy"
LISTENER, LISTENER_RULE = "aws:lb/listener:Listener", "aws:lb/listenerRule:ListenerRule"
INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"
TAGS = {"environment": "dev", "team": "t", "cost-center": "c"}
IMDS = {"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": 1}
CUSTOMER, AWS_MANAGED = {"ebsDefaultEncryption": "customer_key"}, {"ebsDefaultEncryption": "aws_managed_key"}


def outputs(type_: str, inputs: dict, name: str) -> object:
    """The resource as a stack rule sees it in preview: its inputs plus unknown computed outputs."""
    return resource(type_, preview_outputs(type_, inputs), name)


def names(found: list[tuple[str | None, str]]) -> list[str]:
    return [(urn or "").split("::")[-1] for urn, _ in found]


# --- 1. volumes left to the account's EBS encryption by default ---

def landing_zone_program() -> None:
    """The reviewer's /tmp/fp/aws2, EBS part: an instance relying on the account's encryption by default, one whose
    root volume is encrypted with the account's default key, and an EKS launch template that maps no root volume
    (IMDS options and user data only), next to compliant ones."""
    key = aws.kms.Key("key", enable_key_rotation=True, tags=TAGS)
    aws.ec2.Instance("vm-enc", ami="ami-0123", instance_type="m6i.large", subnet_id="subnet-1", associate_public_ip_address=False,
                     metadata_options=IMDS, root_block_device={"encrypted": True, "kms_key_id": key.arn, "volume_size": 50}, tags=TAGS)
    aws.ec2.Instance("vm-default", ami="ami-0123", instance_type="m6i.large", subnet_id="subnet-1",
                     associate_public_ip_address=False, metadata_options=IMDS, tags=TAGS)
    aws.ec2.Instance("vm-default-key", ami="ami-0123", instance_type="m6i.large", subnet_id="subnet-1",
                     associate_public_ip_address=False, metadata_options=IMDS, root_block_device={"encrypted": True}, tags=TAGS)
    lt_br = aws.ec2.LaunchTemplate("lt-br", metadata_options=IMDS, tags=TAGS, block_device_mappings=[
        {"device_name": "/dev/xvda", "ebs": {"encrypted": "true", "kms_key_id": key.arn, "volume_size": 4}},
        {"device_name": "/dev/xvdb", "ebs": {"encrypted": "true", "kms_key_id": key.arn, "volume_size": 100}}])
    lt_imds = aws.ec2.LaunchTemplate("lt-imds", metadata_options=IMDS, user_data="IyEvYmluL2Jhc2g=", tags=TAGS)
    for name, lt in (("ng-br", lt_br), ("ng-imds", lt_imds)):
        aws.eks.NodeGroup(name, cluster_name="c1", node_role_arn="arn:aws:iam::123456789012:role/n", subnet_ids=["subnet-1"],
                          instance_types=["m6i.xlarge"], scaling_config={"min_size": 1, "max_size": 3, "desired_size": 1},
                          launch_template={"id": lt.id, "version": lt.latest_version.apply(str)}, tags=TAGS)


def ebs_findings(config: dict | None) -> set[tuple[str, str, str]]:
    """(rule, resource, level) of the EBS rules' findings on the program, run by the pack with baseline.json, its
    aws-ebs-default-encryption's ebsDefaultEncryption set to `config`'s."""
    baseline = json.loads((ROOT / "policies" / "config" / "baseline.json").read_text())
    level = baseline[DEFAULT_ENC] if isinstance(baseline[DEFAULT_ENC], str) else baseline[DEFAULT_ENC]["enforcementLevel"]
    baseline[DEFAULT_ENC] = {"enforcementLevel": level, **(config or {})}
    records = [r.to_json() for r in run_program(landing_zone_program, project="p", stack="dev").resources]
    report = evaluate_pack(ROOT / "policies", records, config=baseline, project="p", stack="dev")
    return {(v.policy, v.urn.split("::")[-1], v.enforcementLevel) for v in report.violations if v.policy in (VOLUMES, DEFAULT_ENC)}


def test_volumes_left_to_the_accounts_default_block_the_preview_unless_the_config_says_it_uses_a_customer_key() -> None:
    assert ebs_findings(None) == {(DEFAULT_ENC, "vm-default", "mandatory"), (DEFAULT_ENC, "lt-imds", "mandatory"),
                                  (DEFAULT_ENC, "vm-default-key", "mandatory")}
    assert ebs_findings(AWS_MANAGED) == ebs_findings(None)
    assert ebs_findings(CUSTOMER) == set()


def test_encrypted_true_without_a_key_uses_the_accounts_default_key() -> None:
    default_key = {"rootBlockDevice": {"encrypted": True}, "ebsBlockDevices": [{"deviceName": "/dev/sdb", "encrypted": True}]}
    lt = {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true"}}]}
    volumes = [resource(INSTANCE, default_key, "vm"), resource(LT, lt, "lt"), resource(VOLUME, {"encrypted": True}, "vol")]
    assert run_stack(DEFAULT_ENC, volumes, CUSTOMER) == []
    assert [m for _, m in run_stack(DEFAULT_ENC, volumes[2:], AWS_MANAGED)] == [
        "the volume: encrypted without kmsKeyId, so EC2 uses the account's default EBS key, the AWS-managed aws/ebs "
        "(ebsDefaultEncryption aws_managed_key); set kmsKeyId to a customer-managed key, or make the account's default "
        "EBS key customer-managed (aws.ebs.DefaultKmsKey; ebsDefaultEncryption customer_key)"]
    assert names(run_stack(DEFAULT_ENC, volumes)) == ["vm", "lt", "vol"]  # the default, off
    # What the config can't excuse, the resource rule reports: an unencrypted volume, or one naming the AWS-managed key.
    assert run_resource(VOLUMES, VOLUME, {"encrypted": False}) == ["the volume is not encrypted"]
    assert run_resource(VOLUMES, VOLUME, {"encrypted": True, "kmsKeyId": "alias/aws/ebs"}) == [
        "the volume uses the AWS-managed EBS key alias/aws/ebs; set kmsKeyId to a customer-managed key"]


def test_one_rule_reads_the_documented_config_property() -> None:
    schema = RULES[DEFAULT_ENC].config["ebsDefaultEncryption"]
    assert schema["enum"] == ["off", "aws_managed_key", "customer_key"] and schema["default"] == "off"
    assert "ebsDefaultEncryption" in RULES[DEFAULT_ENC].remediation and "customer_key" in RULES[DEFAULT_ENC].remediation
    assert RULES[VOLUMES].config == {} and "aws-ebs-default-encryption" in RULES[VOLUMES].remediation


def unset_volumes() -> list:
    return [outputs(LT, {"imageId": "ami-1", "region": "us-east-1"}, "bare-lt"),
            outputs(INSTANCE, {"ami": "ami-1", "subnetId": "s"}, "vm"),
            outputs(VOLUME, {"size": 10, "availabilityZone": "us-east-1a"}, "vol")]


def test_unset_volumes_follow_the_config_when_the_stack_declares_nothing() -> None:
    off = run_stack(DEFAULT_ENC, unset_volumes())
    assert names(off) == ["bare-lt", "vm", "vol"] and all("not encrypted unless its snapshot is" in m for _, m in off)
    managed = run_stack(DEFAULT_ENC, unset_volumes(), AWS_MANAGED)
    assert names(managed) == ["bare-lt", "vm", "vol"]
    assert managed[0][1] == (
        "the AMI's root volume (no mapping for /dev/xvda or /dev/sda1): encrypted by the account's EBS encryption by "
        "default with the AWS-managed key aws/ebs (ebsDefaultEncryption aws_managed_key); set encrypted true with a "
        "customer-managed kmsKeyId, or make the account's default EBS key customer-managed (aws.ebs.DefaultKmsKey; "
        "ebsDefaultEncryption customer_key)")
    assert run_stack(DEFAULT_ENC, unset_volumes(), CUSTOMER) == []


def test_the_stacks_own_account_settings_decide_for_their_region() -> None:
    ebd, cmk = outputs(EBD, {}, "ebd"), outputs(DEFAULT_KEY, {"keyArn": KEY}, "ebs-key")
    # Encryption by default alone: aws/ebs.
    managed = run_stack(DEFAULT_ENC, [*unset_volumes(), ebd])
    assert len(managed) == 3 and all("AWS-managed key aws/ebs (the stack's aws.ebs.EncryptionByDefault" in m for _, m in managed)
    assert run_stack(DEFAULT_ENC, [*unset_volumes(), ebd, cmk]) == []
    # A default key made in the same update (its ARN unknown in preview) is a customer-managed key...
    assert run_stack(DEFAULT_ENC, [*unset_volumes(), ebd, outputs(DEFAULT_KEY, {"keyArn": UNKNOWN}, "k")]) == []
    # ...the AWS-managed alias is not.
    assert len(run_stack(DEFAULT_ENC, [*unset_volumes(), ebd, outputs(DEFAULT_KEY, {"keyArn": "alias/aws/ebs"}, "k")])) == 3
    # The stack's setting wins over the config: turned off, nothing is encrypted whatever the config says...
    assert names(run_stack(DEFAULT_ENC, [*unset_volumes(), outputs(EBD, {"enabled": False}, "ebd")], CUSTOMER)) == ["bare-lt", "vm", "vol"]
    # ...and the config's customer key stands for a DefaultKmsKey set elsewhere.
    assert run_stack(DEFAULT_ENC, [*unset_volumes(), ebd], CUSTOMER) == []
    # Another region's settings don't count.
    west = outputs(EBD, {"region": "eu-west-1"}, "ebd-west")
    assert names(run_stack(DEFAULT_ENC, [unset_volumes()[0], west, outputs(DEFAULT_KEY, {"keyArn": KEY, "region": "eu-west-1"}, "k")])) == ["bare-lt"]


# --- 2, 3. TLS-only bucket policies ---

ARN = "arn:aws:s3:::data-1"
DENY = {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": [ARN, f"{ARN}/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}}}


def tls_findings(*statements: dict) -> list[str]:
    bucket = resource(BUCKET, {"bucket": "data-1", "arn": ARN}, "data")
    policy = resource(POLICY, {"bucket": "data-1", "policy": json.dumps({"Statement": list(statements)})}, "data-policy")
    return [m for _, m in run_stack("aws-s3-bucket-tls-only", [bucket, policy])]


@pytest.mark.parametrize("key", ["aws:securetransport", "AWS:SecureTransport", "aws:SECURETRANSPORT"])
def test_condition_keys_are_matched_whatever_their_case(key: str) -> None:
    assert tls_findings({**DENY, "Condition": {"Bool": {key: "false"}}}) == []


def test_condition_operators_are_matched_as_aws_spells_them() -> None:
    # The IAM user guide makes context key names case-insensitive, not operator names.
    assert tls_findings({**DENY, "Condition": {"bool": {"aws:SecureTransport": "false"}}}) == [
        "the bucket policy denies non-TLS (aws:SecureTransport=false) requests only when its Condition "
        "{'bool': {'aws:SecureTransport': 'false'}} holds; deny s3:* (or *) to Principal * on the bucket and its objects "
        "(arn:...:s3:::BUCKET and arn:...:s3:::BUCKET/*)"]


def test_complete_statements_on_the_bucket_and_on_its_objects_add_up() -> None:
    assert tls_findings({**DENY, "Resource": ARN}, {**DENY, "Resource": f"{ARN}/*"}) == []
    assert tls_findings({**DENY, "Resource": f"{ARN}/*"}, {**DENY, "Resource": ARN, "Condition": {"Bool": {"aws:securetransport": False}}}) == []
    # Only complete statements count: the object-level one here is for one principal.
    narrow = {**DENY, "Resource": f"{ARN}/*", "Principal": {"AWS": "arn:aws:iam::123456789012:root"}}
    assert tls_findings({**DENY, "Resource": ARN}, narrow) == [
        "the bucket policy denies non-TLS (aws:SecureTransport=false) requests not on all its objects (Resource "
        f"{ARN}); deny s3:* (or *) to Principal * on the bucket and its objects (arn:...:s3:::BUCKET and arn:...:s3:::BUCKET/*)"]
    assert len(tls_findings({**DENY, "Resource": ARN}, {**DENY, "Resource": f"{ARN}/private/*"})) == 1


def test_statements_add_up_across_the_inline_policy_and_the_bucket_policy() -> None:
    bucket = resource(BUCKET, {"bucket": "data-1", "arn": ARN, "policy": json.dumps({"Statement": [{**DENY, "Resource": ARN}]})}, "data")
    policy = resource(POLICY, {"bucket": "data-1", "policy": json.dumps({"Statement": [{**DENY, "Resource": f"{ARN}/*"}]})}, "p")
    assert run_stack("aws-s3-bucket-tls-only", [bucket, policy]) == []


# --- 5. Ingresses without a class ---

def planned_ingress(annotations: dict | None = None, class_name: str | None = None) -> tuple[str, dict]:
    def build() -> None:
        k8s.networking.v1.Ingress("ing", metadata={"namespace": "t", "annotations": annotations}, spec={
            "ingress_class_name": class_name, "default_backend": {"service": {"name": "s", "port": {"number": 80}}}})

    [found] = [(r.type, r.inputs) for r in run_program(build, project="p", stack="s").resources if r.name == "ing"]
    return found


def test_an_ingress_without_a_class_takes_the_clusters_default_and_is_not_flagged() -> None:
    assert run_resource("k8s-internal-load-balancer", *planned_ingress()) == []
    # Only what names a public load balancer is.
    assert run_resource("k8s-internal-load-balancer", *planned_ingress({"kubernetes.io/ingress.class": "gce"})) == [
        "kubernetes.io/ingress.class gce: GKE gives the Ingress an external Application Load Balancer; use gce-internal"]
    assert run_resource("k8s-internal-load-balancer", *planned_ingress(class_name="gce")) != []
    assert run_resource("k8s-internal-load-balancer", *planned_ingress({"alb.ingress.kubernetes.io/scheme": "internet-facing"})) == [
        "alb.ingress.kubernetes.io/scheme is internet-facing: the AWS Load Balancer Controller gives the Ingress a public ALB"]
    rule = RULES["k8s-internal-load-balancer"]
    assert "default IngressClass" in rule.description and "external Application Load Balancer" in rule.remediation


# --- 6. HTTP listener rules answering with a fixed response ---

LISTENER_ARN = "arn:aws:elasticloadbalancing:us-east-1:1:listener/app/a/1/"
FIXED = {"type": "fixed-response", "fixedResponse": {"statusCode": "403", "contentType": "text/plain"}}


def rule_findings(*actions: dict) -> list[str]:
    http = resource(LISTENER, {"arn": f"{LISTENER_ARN}p", "id": f"{LISTENER_ARN}p", "protocol": "HTTP", "port": 80}, "http")
    listener_rule = resource(LISTENER_RULE, {"listenerArn": f"{LISTENER_ARN}p", "actions": list(actions)}, "r")
    return [m for _, m in run_stack("aws-lb-listener-rules-tls", [http, listener_rule])]


def test_a_fixed_response_on_an_http_listener_forwards_nothing() -> None:
    assert rule_findings(FIXED) == []
    assert rule_findings({"type": "redirect", "redirect": {"protocol": "HTTPS", "port": "443", "statusCode": "HTTP_301"}}) == []
    assert run_resource("aws-lb-listener-tls", LISTENER, {"protocol": "HTTP", "defaultActions": [FIXED]}) == []


def test_forwarding_and_authenticating_over_plain_http_are_reported() -> None:
    oidc = {"type": "authenticate-oidc", "authenticateOidc": {"issuer": "https://idp"}}
    assert rule_findings(oidc, {"type": "forward", "targetGroupArn": "tg"}) == [
        "the rule's actions (authenticate-oidc, forward) serve plain HTTP: its listener http is HTTP, where rules may "
        "only redirect to HTTPS or answer with a fixed response"]
    assert rule_findings({"type": "redirect", "redirect": {"port": "8080"}}) == [
        "the rule's actions (redirect to the same protocol) serve plain HTTP: its listener http is HTTP, where rules may "
        "only redirect to HTTPS or answer with a fixed response"]
    assert run_resource("aws-lb-listener-tls", LISTENER, {"protocol": "HTTP", "defaultActions": [{"type": "forward", "targetGroupArn": "tg"}]}) == [
        "plain-HTTP listener whose default actions (forward) neither redirect to HTTPS nor answer with a fixed response"]


# --- 4. the pack does not run without its TypedAnalyzer ---

def test_the_pack_refuses_to_load_when_the_typed_analyzer_cant_be_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    built = []
    monkeypatch.setattr(pack, "install", lambda: False)
    monkeypatch.setattr(pack, "PolicyPack", lambda **kw: built.append(kw))
    with pytest.raises(RuntimeError) as caught:
        pack.build_pack()
    assert not built
    message = str(caught.value)
    assert f"pulumi-policy {pack.sdk_version()} " in message and f"pulumi-policy {server.TESTED_SDK}" in message
    assert "stack parts" in message and "policies/requirements.txt" in message


def test_install_says_no_when_the_sdk_lacks_what_the_typed_analyzer_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    class Bare:  # a servicer by the same name without the SDK's helpers
        pass

    monkeypatch.setattr(sdk, "_PolicyAnalyzerServicer", Bare)
    assert server.install() is False and sdk._PolicyAnalyzerServicer is Bare  # noqa: SLF001
    monkeypatch.delattr(sdk, "_PolicyAnalyzerServicer")
    assert server.install() is False


def test_the_installed_sdk_is_the_tested_minor_and_the_requirements_pin_it() -> None:
    assert re.match(rf"{re.escape(server.TESTED_SDK)}\.\d+$", pack.sdk_version())
    requirement = re.search(r"^pulumi-policy(.*)$", (ROOT / "policies" / "requirements.txt").read_text(), re.M)[1]
    assert re.fullmatch(rf"=={re.escape(server.TESTED_SDK)}\.\d+", requirement)  # uv.lock's version, of the tested minor
