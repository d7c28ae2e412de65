"""Network, KMS and flow logs: custom-mode VPC, subnet ranges, Private Google Access, flow logs, Cloud NAT, a
default-deny firewall with minimal allows, the Lustre private services range, the region's KMS key, labels."""

from __future__ import annotations

import json

from gcp.support import LABELS, PROJECT, by_name

from aiinfra.plan.runtime import PlanResult


def test_vpc_is_custom_mode_with_one_regional_node_subnet(prod_plan: PlanResult) -> None:
    vpc = by_name(prod_plan, "prod-us-central1-vpc")
    assert (vpc["autoCreateSubnetworks"], vpc["routingMode"], vpc["mtu"]) == (False, "REGIONAL", 8896)
    subnet = by_name(prod_plan, "prod-us-central1-nodes")
    assert (subnet["region"], subnet["ipCidrRange"]) == ("us-central1", "10.20.0.0/17")
    assert subnet["privateIpGoogleAccess"] is True
    ranges = {r["rangeName"]: r["ipCidrRange"] for r in subnet["secondaryIpRanges"]}
    assert ranges == {"pods": "100.80.0.0/14", "services": "172.20.0.0/16"}
    assert subnet["logConfig"] == {"aggregationInterval": "INTERVAL_5_SEC", "flowSampling": 1.0, "metadata": "INCLUDE_ALL_METADATA"}


def test_flow_logs_report_every_flow_outside_dev_and_half_in_dev(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    for name in ("prod-us-central1-nodes", "prod-europe-west4-nodes"):
        assert by_name(prod_plan, name)["logConfig"]["flowSampling"] == 1.0
    assert by_name(dev_plan, "dev-us-central1-nodes")["logConfig"] == {
        "aggregationInterval": "INTERVAL_5_SEC", "flowSampling": 0.5, "metadata": "INCLUDE_ALL_METADATA"}


def test_cloud_nat_serves_every_range_of_the_node_subnet(prod_plan: PlanResult) -> None:
    nat = by_name(prod_plan, "prod-us-central1-nat")
    assert nat["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert nat["subnetworks"] == [{"name": "prod-us-central1-nodes-id", "sourceIpRangesToNats": ["ALL_IP_RANGES"]}]
    assert (nat["natIpAllocateOption"], nat["enableDynamicPortAllocation"], nat["enableEndpointIndependentMapping"]) == ("AUTO_ONLY", True, False)
    assert nat["logConfig"] == {"enable": True, "filter": "ERRORS_ONLY"}


def test_nat_none_builds_no_router(plan_gcp, prod_config) -> None:  # noqa: ANN001
    region = prod_config["regions"]["europe-west4"]
    region["network"]["nat"] = "none"
    plan = plan_gcp({"project": PROJECT, "regions": {"europe-west4": region}})
    assert not plan.of_type("gcp:compute/router:Router") and not plan.of_type("gcp:compute/routerNat:RouterNat")


def test_firewall_denies_ingress_by_default_and_allows_only_the_minimum(prod_plan: PlanResult) -> None:
    rules = {r.name.removeprefix("prod-us-central1-"): r.inputs for r in prod_plan.of_type("gcp:compute/firewall:Firewall")
             if r.name.startswith("prod-us-central1-")}
    assert set(rules) == {"deny-ingress", "allow-internal", "allow-gfe", "allow-lustre"}
    deny = rules["deny-ingress"]
    assert (deny["direction"], deny["sourceRanges"], deny["denies"], deny["priority"]) == ("INGRESS", ["0.0.0.0/0"], [{"protocol": "all"}], 65534)
    assert rules["allow-internal"]["sourceRanges"] == ["10.20.0.0/16", "100.80.0.0/14"]
    gfe = rules["allow-gfe"]
    assert gfe["sourceRanges"] == ["35.191.0.0/16", "130.211.0.0/22"]
    assert gfe["allows"] == [{"protocol": "tcp", "ports": ["8000"]}]
    assert rules["allow-lustre"]["allows"] == [{"protocol": "tcp", "ports": ["988", "6988"]}]
    assert rules["allow-lustre"]["sourceRanges"] == ["10.20.128.0/18"]
    for name, rule in rules.items():
        assert rule["logConfig"] == {"metadata": "INCLUDE_ALL_METADATA"}, name
        assert "0.0.0.0/0" not in rule["sourceRanges"] or "denies" in rule, name


def test_lustre_region_peers_a_private_services_range(prod_plan: PlanResult) -> None:
    reserved = by_name(prod_plan, "prod-us-central1-lustre-range")
    assert (reserved["purpose"], reserved["addressType"], reserved["address"], reserved["prefixLength"]) == (
        "VPC_PEERING", "INTERNAL", "10.20.128.0", 18)
    peering = by_name(prod_plan, "prod-us-central1-lustre-peering")
    assert peering["service"] == "servicenetworking.googleapis.com"
    assert peering["deletionPolicy"] == "REMOVE_PEERING"
    assert not [r for r in prod_plan.resources if r.name == "prod-europe-west4-lustre-range"]


def test_proxy_only_subnet_uses_the_services_block(prod_plan: PlanResult) -> None:
    proxy = by_name(prod_plan, "prod-us-central1-proxy-only")
    assert (proxy["purpose"], proxy["role"], proxy["ipCidrRange"]) == ("REGIONAL_MANAGED_PROXY", "ACTIVE", "10.20.224.0/19")


def test_kms_key_rotates_within_90_days_and_is_protected(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    key = prod_plan.one("gcp:kms/cryptoKey:CryptoKey", "prod-us-central1-key")
    assert key.inputs["rotationPeriod"] == "7776000s"
    assert key.inputs["purpose"] == "ENCRYPT_DECRYPT"
    ring = prod_plan.one("gcp:kms/keyRing:KeyRing", "prod-us-central1-keyring")
    assert ring.inputs["location"] == "us-central1"
    assert key.protect and key.retainOnDelete and ring.protect and ring.retainOnDelete
    assert not any(r.protect for r in dev_plan.resources)


def test_key_users_are_the_service_agents_of_the_region(prod_plan: PlanResult) -> None:
    members = {r.name.rsplit("-", 1)[1]: r.inputs for r in prod_plan.of_type("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember")
               if r.name.startswith("prod-us-central1-key-")}
    assert set(members) == {"gke", "compute", "logging", "storage", "lustre"}
    assert all(m["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter" for m in members.values())
    assert members["gke"]["member"] == "serviceAccount:service-987654321098@container-engine-robot.iam.gserviceaccount.com"
    assert members["compute"]["member"] == "serviceAccount:service-987654321098@compute-system.iam.gserviceaccount.com"
    assert members["lustre"]["member"] == "serviceAccount:service-987654321098@gcp-sa-lustre.iam.gserviceaccount.com"
    assert "lustre" not in {r.name.rsplit("-", 1)[1] for r in prod_plan.of_type("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember")
                            if r.name.startswith("prod-europe-west4-")}


def test_flow_logs_are_kept_in_a_cmek_log_bucket_for_the_retention(prod_plan: PlanResult) -> None:
    bucket = prod_plan.one("gcp:logging/projectBucketConfig:ProjectBucketConfig", "prod-europe-west4-flow-logs")
    assert (bucket.inputs["location"], bucket.inputs["retentionDays"]) == ("europe-west4", 400)
    assert bucket.inputs["cmekSettings"] == {"kmsKeyName": "prod-europe-west4-key-id"}
    assert bucket.protect
    sink = prod_plan.one("gcp:logging/projectSink:ProjectSink", "prod-europe-west4-flow-logs-sink")
    assert sink.inputs["uniqueWriterIdentity"] is True
    assert sink.inputs["destination"] == "logging.googleapis.com/prod-europe-west4-flow-logs-id"
    # the filter names the subnet (sink_filter is tested in test_pure), so the sink waits for it
    assert prod_plan.one("gcp:compute/subnetwork:Subnetwork", "prod-europe-west4-nodes").urn in sink.dependencies


def test_platform_labels_come_from_the_provider_default_labels(prod_plan: PlanResult) -> None:
    provider = prod_plan.one("pulumi:providers:gcp")
    assert provider.inputs["project"] == PROJECT
    labels = json.loads(provider.inputs["defaultLabels"])
    assert set(labels) >= LABELS
    assert (labels["environment"], labels["managed-by"], labels["cost-center"]) == ("prod", "ai-infra", "cc-1234")


def test_every_gcp_resource_uses_the_one_provider_and_a_component_parent(prod_plan: PlanResult) -> None:
    provider = prod_plan.one("pulumi:providers:gcp")
    provider_ref = f"{provider.urn}::{provider.name}-id"
    components = {r.urn: r for r in prod_plan.resources if not r.custom and r.type != "pulumi:pulumi:Stack"}
    assert all(r.type.startswith("ai-infra:gcp:") for r in components.values())
    assert {r.type.rsplit(":", 1)[1] for r in components.values()} == {
        "Project", "Kms", "Network", "FlowLogs", "AccessLogBucket", "Bucket", "Lustre", "Cluster", "GpuPool",
        "TpuSlice", "TpuVm", "TpuQueuedResource", "GlobalLoadBalancer"}
    gcp = [r for r in prod_plan.resources if r.type.startswith("gcp:")]
    assert len(gcp) > 90
    for record in gcp:
        assert record.provider == provider_ref, record.name
        assert record.parent in components, record.name


def test_apis_are_enabled_and_never_disabled_on_destroy(prod_plan: PlanResult, plan_gcp, prod_config) -> None:  # noqa: ANN001
    services = {r.inputs["service"]: r.inputs for r in prod_plan.of_type("gcp:projects/service:Service")}
    # cloudresourcemanager: project IAM members, custom roles, log sinks and the project lookup call it.
    assert {"container.googleapis.com", "cloudkms.googleapis.com", "lustre.googleapis.com", "tpu.googleapis.com",
            "servicenetworking.googleapis.com", "cloudresourcemanager.googleapis.com"} <= set(services)
    assert all(s["disableOnDestroy"] is False for s in services.values())
    prod_config["enable_apis"] = False
    assert not plan_gcp(prod_config).of_type("gcp:projects/service:Service")
