"""WAF logging of the inference endpoint: a web ACL logging configuration into a CloudWatch Logs log group named
`aws-waf-logs-<endpoint>` (the prefix WAF requires), encrypted with the region's KMS key, kept for the region's log
retention, protected and kept outside dev, with client credentials redacted.

Planned at the component: the platform composition passes the key and retention once `components/compose/aws.py`
hands them to `InferenceEndpointArgs`."""

from __future__ import annotations

import pytest

from aiinfra.plan.runtime import PlanMocks, PlanResult, run_program
from components.aws.context import AwsContext
from components.aws.endpoint import InferenceEndpoint, InferenceEndpointArgs
from components.aws.storage import LogBucket, LogBucketArgs
from components.spec import InferenceSpec

ACCOUNT = "123456789012"
REGION = "us-east-1"
KEY = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
CERT = f"arn:aws:acm:{REGION}:{ACCOUNT}:certificate/1c2d3e4f-5061-7283-94a5-b6c7d8e9f0a1"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
LOGGING = "aws:wafv2/webAclLoggingConfiguration:WebAclLoggingConfiguration"


class Deployed(PlanMocks):
    """Log groups and web ACLs get the ARNs AWS gives them, so the logging configuration's inputs are known."""

    def answer(self, type_: str, name: str, outputs: dict) -> tuple[str, dict]:
        id_, outputs = super().answer(type_, name, outputs)
        if type_ == LOG_GROUP:
            outputs = {**outputs, "arn": f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{outputs['name']}"}
        elif type_ == "aws:wafv2/webAcl:WebAcl":
            outputs = {**outputs, "arn": f"arn:aws:wafv2:{REGION}:{ACCOUNT}:regional/webacl/{name}/{id_}"}
        return id_, outputs


def endpoint_plan(environment: str, *, key: str | None = KEY, waf: bool = True) -> PlanResult:
    def program() -> None:
        ctx = AwsContext(environment=environment, region=REGION, labels={}, account_id=ACCOUNT, partition="aws",
                         dns_suffix="amazonaws.com", dns_prefix="com.amazonaws", protected=environment != "dev")
        logs = LogBucket(f"{environment}-{REGION}-log-archive", LogBucketArgs(ctx, 365)).target
        InferenceEndpoint(f"{environment}-{REGION}-inference", InferenceEndpointArgs(
            ctx, InferenceSpec(certificate=CERT), "vpc-0123", "10.60.0.0/16", ["subnet-a", "subnet-b"], "sg-nodes", logs,
            waf=waf, kms_key_arn=key, log_retention_days=365))
    return run_program(program, project="ai-infra", stack=environment, mocks_=Deployed())


@pytest.mark.parametrize("environment", ["prod", "dev"])
def test_web_acl_logs_to_an_encrypted_aws_waf_logs_group(environment: str) -> None:
    plan = endpoint_plan(environment)
    name = f"{environment}-{REGION}-inference"
    group = plan.one(LOG_GROUP, f"{name}-waf-logs")
    assert group.inputs["name"] == f"aws-waf-logs-{name}"  # WAF rejects destinations without this prefix
    assert group.inputs["kmsKeyId"] == KEY and group.inputs["retentionInDays"] == 365
    assert group.inputs["region"] == REGION
    # stateful like the other log groups: protected and kept outside dev only
    assert group.protect is (environment != "dev") and group.retainOnDelete is (environment != "dev")
    logging = plan.one(LOGGING, f"{name}-waf-logging")
    acl = plan.one("aws:wafv2/webAcl:WebAcl", f"{name}-waf")
    assert logging.inputs["resourceArn"] == f"arn:aws:wafv2:{REGION}:{ACCOUNT}:regional/webacl/{name}-waf/{name}-waf-id"
    assert logging.inputs["logDestinationConfigs"] == [f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:aws-waf-logs-{name}"]
    assert {group.urn, acl.urn} <= set(logging.dependencies)
    assert logging.inputs["redactedFields"] == [{"singleHeader": {"name": h}} for h in ("authorization", "cookie", "x-api-key")]
    assert "loggingFilter" not in logging.inputs  # every request is logged
    assert logging.inputs["region"] == REGION and logging.parent == group.parent


def test_the_key_policy_lets_cloudwatch_logs_use_the_key_for_the_waf_log_group() -> None:
    from fnmatch import fnmatch

    from components.aws.policies import key_policy

    statement = next(s for s in key_policy(ACCOUNT, "aws", REGION, "amazonaws.com")["Statement"]
                     if s["Principal"] == {"Service": f"logs.{REGION}.amazonaws.com"})
    assert {"kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey*"} <= set(statement["Action"])
    pattern = statement["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
    assert fnmatch(f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:aws-waf-logs-prod-{REGION}-inference", pattern)


def test_no_log_group_without_a_web_acl() -> None:
    plan = endpoint_plan("prod", waf=False)
    assert not plan.of_type(LOGGING) and not [r for r in plan.of_type(LOG_GROUP) if "waf" in r.name]


def test_without_a_key_the_web_acl_is_not_logged_into_an_unencrypted_group() -> None:
    plan = endpoint_plan("prod", key=None)
    assert plan.one("aws:wafv2/webAcl:WebAcl", f"prod-{REGION}-inference-waf")
    assert not plan.of_type(LOGGING) and not [r for r in plan.of_type(LOG_GROUP) if "waf" in r.name]
