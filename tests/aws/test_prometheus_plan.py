"""`addons.monitoring: managed` on AWS: the Amazon Managed Prometheus workspace and the managed collector (scraper)
per EKS cluster, as AWS would receive them; nothing of it in `self_managed`."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from aiinfra.plan.runtime import PlanResult
from components.aws.policies import key_policy, scraper_source_trust, scraper_target_trust

DEPLOYER = "arn:aws:iam::123456789012:role/deployer"  # the plan's caller: an assumed role's session
NAME = "prod-us-east-1"
REGION: dict[str, Any] = {"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}, "cluster": {}}}}
MANAGED = {"enabled": False, "monitoring": "managed"}
ACCOUNT = "123456789012"  # the caller-identity placeholder of the offline plan


@pytest.fixture(scope="module")
def managed(plan_aws) -> PlanResult:  # noqa: ANN001
    return plan_aws(REGION, environment="prod", addons=MANAGED)


@pytest.fixture(scope="module")
def self_managed(plan_aws) -> PlanResult:  # noqa: ANN001
    return plan_aws(REGION, environment="prod")


def depends(plan: PlanResult, type_: str, name: str, on: str) -> bool:
    return any(d.endswith(f"::{on}") for d in plan.one(type_, name).dependencies)


def statements(plan: PlanResult) -> dict[str, Any]:
    policy = json.loads(plan.one("aws:kms/key:Key", f"{NAME}-key").inputs["policy"])
    return {s["Sid"]: s for s in policy["Statement"]}


def test_workspace_is_encrypted_with_the_region_key_and_logs_to_an_encrypted_group(managed: PlanResult) -> None:
    workspace = managed.one("aws:amp/workspace:Workspace", f"{NAME}-amp-workspace")
    assert workspace.inputs["alias"] == NAME and workspace.inputs["region"] == "us-east-1"
    assert workspace.inputs["kmsKeyArn"] and depends(managed, "aws:amp/workspace:Workspace", f"{NAME}-amp-workspace", f"{NAME}-key")
    assert workspace.inputs["loggingConfiguration"]["logGroupArn"]
    assert depends(managed, "aws:amp/workspace:Workspace", f"{NAME}-amp-workspace", f"{NAME}-amp-logs")
    # The scraper tags its destination; declaring the tag keeps the next `pulumi up` from removing it.
    assert workspace.inputs["tags"] == {"AMPAgentlessScraper": ""}
    assert workspace.protect and workspace.retainOnDelete
    logs = managed.one("aws:cloudwatch/logGroup:LogGroup", f"{NAME}-amp-logs")
    assert logs.inputs["name"] == f"/aws/vendedlogs/prometheus/{NAME}" and logs.inputs["kmsKeyId"]
    assert logs.inputs["retentionInDays"] == 365 and logs.protect
    scraper_logs = managed.one("aws:amp/scraperLoggingConfiguration:ScraperLoggingConfiguration", f"{NAME}-amp-scraper-logs")
    assert scraper_logs.inputs["loggingDestination"]["cloudwatchLogs"]["logGroupArn"]


def test_the_key_policy_admits_prometheus_only_when_managed(managed: PlanResult, self_managed: PlanResult) -> None:
    aps = statements(managed)["PrometheusWorkspacesOfThisAccount"]
    assert aps["Principal"] == {"AWS": "*"}
    assert set(aps["Action"]) == {"kms:DescribeKey", "kms:CreateGrant", "kms:GenerateDataKey", "kms:Decrypt"}
    assert aps["Condition"] == {"StringEquals": {"kms:CallerAccount": ACCOUNT, "kms:ViaService": "aps.us-east-1.amazonaws.com"}}
    assert "PrometheusWorkspacesOfThisAccount" not in statements(self_managed)
    assert key_policy(ACCOUNT, "aws", "us-east-1", "amazonaws.com") == key_policy(
        ACCOUNT, "aws", "us-east-1", "amazonaws.com", prometheus=False)


def test_scraper_reads_the_cluster_from_its_private_subnets_and_security_group(managed: PlanResult) -> None:
    scraper = managed.one("aws:amp/scraper:Scraper", f"{NAME}-amp-scraper")
    eks = scraper.inputs["source"]["eks"]
    assert eks["subnetIds"] == [f"{NAME}-private-{i}-id" for i in range(3)]
    assert len(eks["securityGroupIds"]) == 1  # the cluster security group (known after the cluster exists)
    assert eks["clusterArn"]
    for needed in (f"{NAME}-eks", f"{NAME}-amp-workspace", f"{NAME}-amp-source-role-policy", f"{NAME}-amp-target-role-policy"):
        assert depends(managed, "aws:amp/scraper:Scraper", f"{NAME}-amp-scraper", needed), needed
    assert scraper.inputs["destination"]["amp"]["workspaceArn"]
    roles = scraper.inputs["roleConfiguration"]
    assert roles["sourceRoleArn"] and roles["targetRoleArn"]  # required for a workspace with a customer managed key


def test_scrape_configuration_keeps_the_dcgm_exporter_pods(managed: PlanResult) -> None:
    config = yaml.safe_load(managed.one("aws:amp/scraper:Scraper", f"{NAME}-amp-scraper").inputs["scrapeConfiguration"])
    assert config["global"]["scrape_interval"] == "30s"  # AMP collectors refuse intervals under 30 s
    (job,) = config["scrape_configs"]
    assert job["job_name"] == "dcgm-exporter" and job["honor_labels"] is True
    assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["gpu-operator"]}}]
    keep = {tuple(r["source_labels"]): r["regex"] for r in job["relabel_configs"] if r["action"] == "keep"}
    assert keep == {("__meta_kubernetes_pod_label_app",): "nvidia-dcgm-exporter",
                    ("__meta_kubernetes_pod_container_port_name",): "metrics"}


def test_scraper_roles_trust_only_this_accounts_scrapers(managed: PlanResult) -> None:
    source = json.loads(managed.one("aws:iam/role:Role", f"{NAME}-amp-source-role").inputs["assumeRolePolicy"])
    assert source == scraper_source_trust(ACCOUNT, "aws", "us-east-1")
    (statement,) = source["Statement"]
    assert statement["Principal"] == {"Service": "scraper.aps.amazonaws.com"}
    assert statement["Condition"]["ArnLike"] == {"aws:SourceArn": f"arn:aws:aps:us-east-1:{ACCOUNT}:scraper/*"}
    assert statement["Condition"]["StringEquals"] == {"aws:SourceAccount": ACCOUNT}
    target = scraper_target_trust("arn:aws:iam::123456789012:role/source", ACCOUNT, "aws", "us-east-1")["Statement"][0]
    assert target["Principal"] == {"AWS": "arn:aws:iam::123456789012:role/source"}
    assert target["Condition"] == {"StringLike": {"sts:ExternalId": f"arn:aws:aps:us-east-1:{ACCOUNT}:scraper/*"}}
    assert depends(managed, "aws:iam/role:Role", f"{NAME}-amp-target-role", f"{NAME}-amp-source-role")


def test_alert_rules_are_a_rule_groups_namespace(managed: PlanResult) -> None:
    rules = managed.one("aws:amp/ruleGroupNamespace:RuleGroupNamespace", f"{NAME}-amp-rules").inputs
    alerts = {r["alert"] for r in yaml.safe_load(rules["data"])["groups"][0]["rules"]}
    assert alerts == {"GpuAllocatedButIdle", "GpuXidError"} and rules["name"] == "ai-infra-gpu"


def test_amp_creates_the_scrapers_access_entry_itself(managed: PlanResult) -> None:
    # The cluster authenticates with access entries only, so AMP adds the scraper's entry when it creates the
    # scraper; a second entry for the same role would fail. Only the deployer and the configured admins (none here)
    # get entries from us.
    assert managed.one("aws:eks/cluster:Cluster", f"{NAME}-eks").inputs["accessConfig"]["authenticationMode"] == "API"
    assert [e.inputs["principalArn"] for e in managed.of_type("aws:eks/accessEntry:AccessEntry")] == [DEPLOYER]


def test_self_managed_builds_no_cloud_prometheus(self_managed: PlanResult) -> None:
    assert not [r for r in self_managed.resources if r.type.startswith("aws:amp/") or "-amp-" in r.name]
    assert not [r for r in self_managed.resources if r.type == "ai-infra:aws:ManagedPrometheus"]
