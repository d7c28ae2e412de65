"""Network review 5: subnet flow logs kept out of `_Default`, Cloud KMS key use audited, and the key grants protected
like the keys."""

from __future__ import annotations

import copy

from gcp.support import PROD_GCP, PROJECT

from aiinfra.plan.runtime import PlanResult, run_program
from components.gcp.context import GcpContext
from components.gcp.flow_logs import FlowLogs, FlowLogsArgs

EXCLUSION = "gcp:logging/projectExclusion:ProjectExclusion"
SINK = "gcp:logging/projectSink:ProjectSink"
AUDIT = "gcp:projects/iAMAuditConfig:IAMAuditConfig"
GRANT = "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember"


def test_each_regions_flow_logs_are_excluded_from_default_with_the_sinks_filter(prod_plan: PlanResult) -> None:
    for region in ("us-central1", "europe-west4"):
        name = f"prod-{region}"
        sink = prod_plan.one(SINK, f"{name}-flow-logs-sink")
        exclusion = prod_plan.one(EXCLUSION, f"{name}-flow-logs-default-exclusion")
        # The subnet's auto-name is unknown at preview: the exclusion takes the sink's filter, whatever it resolves to.
        assert exclusion.inputs["filter"] == sink.inputs["filter"]
        assert exclusion.inputs["project"] == PROJECT and exclusion.inputs["name"] == f"{name}-vpc-flows"
        assert exclusion.inputs["description"] == f"Kept in {region} by the prod flow-logs sink instead"
        assert sink.urn in exclusion.dependencies  # the sink takes them before _Default drops them
        assert not exclusion.inputs.get("disabled")


def test_the_flow_log_exclusion_drops_exactly_the_subnets_flow_and_firewall_logs() -> None:
    ctx = GcpContext(environment="prod", region="us-central1", project=PROJECT, project_number="123", labels={},
                     protected=True)
    plan = run_program(lambda: FlowLogs("prod-us-central1", FlowLogsArgs(ctx, "prod-subnet-1a2b", 365, "key-id")),
                       project="ai-infra", stack="prod")
    expected = ('resource.type="gce_subnetwork" AND resource.labels.subnetwork_name="prod-subnet-1a2b" AND '
                '(log_id("compute.googleapis.com/vpc_flows") OR log_id("compute.googleapis.com/firewall"))')
    assert plan.one(SINK).inputs["filter"] == plan.one(EXCLUSION).inputs["filter"] == expected
    assert not plan.one(EXCLUSION).protect  # an exclusion holds no data


def test_the_request_logs_exclusion_comes_from_the_same_helper_unchanged(plan_gcp) -> None:  # noqa: ANN001
    config = copy.deepcopy(PROD_GCP)
    config["global_endpoint"]["logs_data_zone"] = "eu"
    plan = plan_gcp(config, environment="prod")
    exclusion = plan.one(EXCLUSION, "prod-europe-west4-request-logs-default-exclusion")
    assert exclusion.urn == ("urn:pulumi:prod::ai-infra::ai-infra:gcp:RequestLogs$gcp:logging/projectExclusion:"
                             "ProjectExclusion::prod-europe-west4-request-logs-default-exclusion")
    assert exclusion.inputs == {
        "project": PROJECT, "name": "prod-europe-west4-lb-requests", "filter": 'resource.type="http_load_balancer"',
        "description": "Kept in europe-west4 by the prod request-logs sink instead"}
    names = sorted(r.inputs["name"] for r in plan.of_type(EXCLUSION))
    assert len(names) == len(set(names)) == 3  # two regions' flow logs, one request log: unique in the project


def test_cloud_kms_key_use_is_audited_with_data_read_logs(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    for plan in (prod_plan, dev_plan):
        [audit] = plan.of_type(AUDIT)
        # Encrypt and Decrypt check cloudkms.cryptoKeyVersions.useToEncrypt/useToDecrypt, both DATA_READ.
        assert audit.inputs == {"project": PROJECT, "service": "cloudkms.googleapis.com",
                                "auditLogConfigs": [{"logType": "DATA_READ"}]}
        assert audit.name.endswith("-gcp-project-kms-audit") and "ai-infra:gcp:Project" in audit.parent


def test_key_grants_are_protected_like_the_key_outside_dev(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    grants = prod_plan.of_type(GRANT)
    assert {g.name.rsplit("-key-", 1)[1] for g in grants} >= {"gke", "compute", "logging", "storage", "lustre"}
    for grant in grants:
        assert grant.protect and grant.retainOnDelete, grant.name
        assert grant.inputs["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    dev = dev_plan.of_type(GRANT)
    assert dev and not any(g.protect or g.retainOnDelete for g in dev)
