"""Tests from a hand mutation review of the GCP components and their composition: each pins what Google Cloud would
receive (or the order the engine creates and deletes things in) where a changed line of components/gcp or
components/compose went unnoticed before: TPU VMs' service account and its grants, queued resources replaced
delete-first, legacy metadata endpoints off on every pool, the cluster after its node account's roles, Cloud Armor's
sensitivity, the global health check, unversioned usage logs, and the Lustre service agent after the APIs (a 403 on a
shared reservation is a case of tests/gcp/test_reservations.py)."""

from __future__ import annotations

from gcp.support import by_name

from aiinfra.plan.runtime import PlanResult

PROJECT_IAM = "gcp:projects/iAMMember:IAMMember"
TPU_VM = "gcp:tpu/v2Vm:V2Vm"
QUEUED = "gcp:tpu/v2QueuedResource:V2QueuedResource"
EU = "prod-europe-west4"


def test_a_tpu_vms_own_service_account_writes_logs_and_metrics_before_the_vm_starts(prod_plan: PlanResult) -> None:
    """The account made for a `tpu_vm` slice gets exactly the log and metric writer roles, and each VM waits for both
    grants: a VM started first runs without them (its agents' first writes are refused)."""
    grants = {r.name: r for r in prod_plan.of_type(PROJECT_IAM) if r.name.startswith(f"{EU}-research-sa-")}
    assert {name: g.inputs["role"] for name, g in grants.items()} == {
        f"{EU}-research-sa-logs": "roles/logging.logWriter", f"{EU}-research-sa-metrics": "roles/monitoring.metricWriter"}
    vm = prod_plan.one(TPU_VM, f"{EU}-research-0")
    assert all(g.urn in vm.dependencies for g in grants.values())
    assert all(g.inputs["member"] == f"serviceAccount:{vm.inputs['serviceAccount']['email']}" for g in grants.values())


def test_queued_resources_are_replaced_delete_first(prod_plan: PlanResult) -> None:
    """A queued resource and its node take the child's fixed name, so a replacement (any change to its node spec) must
    delete the old one first, or the API refuses the new one as already existing."""
    queued = prod_plan.of_type(QUEUED)
    assert [q.name for q in queued] == [f"{EU}-batch-0", f"{EU}-batch-1"]
    for q in queued:
        assert q.deleteBeforeReplace is True
        assert q.inputs["name"] == q.name == q.inputs["tpu"]["nodeSpecs"][0]["nodeId"]


def test_every_node_pool_keeps_the_legacy_metadata_endpoints_off(prod_plan: PlanResult) -> None:
    """System, GPU and TPU pools alike set `disable-legacy-endpoints` (the metadata endpoints without the
    Metadata-Flavor header, which a request forged through a workload could reach)."""
    pools = prod_plan.of_type("gcp:container/nodePool:NodePool")
    assert len(pools) >= 10
    assert all(p.inputs["nodeConfig"]["metadata"] == {"disable-legacy-endpoints": "true"} for p in pools)


def test_the_cluster_waits_for_its_node_service_accounts_roles(prod_plan: PlanResult) -> None:
    """GKE's first nodes (the default pool it creates and removes, then the system pool) run as the dedicated account:
    without roles/container.defaultNodeServiceAccount yet they cannot write logs and metrics, and without Artifact
    Registry read they pull no images. The cluster is created after both grants, and deleted before them."""
    cluster = prod_plan.one("gcp:container/cluster:Cluster", "prod-us-central1-gke")
    grants = {r.inputs["role"]: r.urn for r in prod_plan.of_type(PROJECT_IAM) if r.name.startswith("prod-us-central1-nodes-sa-")}
    assert set(grants) == {"roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader"}
    assert set(grants.values()) <= set(cluster.dependencies)


def test_cloud_armor_runs_each_preconfigured_waf_rule_at_sensitivity_one(prod_plan: PlanResult) -> None:
    """The five preconfigured rule sets at sensitivity 1, the fewest false positives on free-text prompts (a higher
    level denies ordinary prompts that merely read like SQL or shell)."""
    rules = by_name(prod_plan, "prod-global-armor")["rules"]
    expected = ["sqli-v33-stable", "xss-v33-stable", "lfi-v33-stable", "rce-v33-stable", "scannerdetection-v33-stable"]
    assert [r["match"]["expr"]["expression"] for r in rules[:-1]] == [
        f"evaluatePreconfiguredWaf('{rule}', {{'sensitivity': 1}})" for rule in expected]
    assert [r["priority"] for r in rules[:-1]] == [1000, 1001, 1002, 1003, 1004]


def test_the_global_health_check_probes_the_serving_port_every_ten_seconds(prod_plan: PlanResult) -> None:
    """How fast the load balancer takes a region's pods out (3 failed probes, 30 s) and back (2 good ones), probing
    the spec's health path on the port the NEG serves, with logs of state changes."""
    health = by_name(prod_plan, "prod-global-health")
    assert {k: health[k] for k in ("checkIntervalSec", "timeoutSec", "healthyThreshold", "unhealthyThreshold")} == {
        "checkIntervalSec": 10, "timeoutSec": 5, "healthyThreshold": 2, "unhealthyThreshold": 3}
    assert health["httpHealthCheck"] == {"portSpecification": "USE_SERVING_PORT", "requestPath": "/health"}
    assert health["logConfig"] == {"enable": True}


def test_usage_logs_are_unversioned_so_the_retention_deletes_them(prod_plan: PlanResult) -> None:
    """The access-log bucket's only lifecycle rule deletes logs at the retention age; in a versioned bucket that delete
    would keep every log as a noncurrent version, with no rule ever removing it."""
    logs = prod_plan.one("gcp:storage/bucket:Bucket", "prod-europe-west4-access-logs-bucket").inputs
    assert logs["versioning"] == {"enabled": False}
    assert [rule["action"]["type"] for rule in logs["lifecycleRules"]] == ["Delete"]


def test_the_lustre_service_agent_is_generated_after_the_apis_are_enabled(prod_plan: PlanResult) -> None:
    """The Managed Lustre service agent exists only once lustre.googleapis.com is enabled: generating it waits for the
    project's API services, Lustre's included."""
    agent = prod_plan.one("gcp:projects/serviceIdentity:ServiceIdentity", "prod-gcp-project-lustre-agent")
    assert agent.inputs["service"] == "lustre.googleapis.com"
    services = {r.inputs["service"]: r.urn for r in prod_plan.of_type("gcp:projects/service:Service")}
    assert {"lustre.googleapis.com", "servicenetworking.googleapis.com"} <= set(services)
    assert set(services.values()) <= set(agent.dependencies)
