"""The global external Application Load Balancer: EXTERNAL_MANAGED backend service with a health check and Cloud
Armor, TLS 1.2+ SSL policy, managed or configured certificate, HTTP -> HTTPS redirect, autoneg wiring."""

from __future__ import annotations

import json

import pulumi
from gcp.support import COMPLIANCE, PROD_GCP, PROJECT, by_name, gcp_platform

from aiinfra.plan.runtime import PlanResult, run_program
from components.spec import load_platform


def test_one_external_managed_backend_service_behind_an_https_forwarding_rule(prod_plan: PlanResult) -> None:
    backend = prod_plan.one("gcp:compute/backendService:BackendService")
    assert (backend.inputs["loadBalancingScheme"], backend.inputs["protocol"]) == ("EXTERNAL_MANAGED", "HTTP")
    assert backend.inputs["healthChecks"] == "prod-global-health-id"
    assert backend.inputs["securityPolicy"] == "prod-global-armor-id"
    assert backend.inputs["logConfig"] == {"enable": True, "sampleRate": 1}
    assert backend.inputs["name"] == "prod-inference"
    assert backend.ignoreChanges == ["backends"]  # autoneg adds each region's NEGs
    https = by_name(prod_plan, "prod-global-https")
    assert (https["portRange"], https["loadBalancingScheme"]) == ("443", "EXTERNAL_MANAGED")
    assert (https["target"], https["ipAddress"]) == ("prod-global-https-proxy-id", "prod-global-ip-id")
    assert by_name(prod_plan, "prod-global-urlmap")["defaultService"] == "prod-global-backend-id"
    health = by_name(prod_plan, "prod-global-health")["httpHealthCheck"]
    assert health == {"portSpecification": "USE_SERVING_PORT", "requestPath": "/health"}


def test_the_anycast_ip_dns_points_at_is_protected_outside_dev_but_not_retained(prod_plan: PlanResult, plan_gcp,  # noqa: ANN001
                                                                                  prod_config) -> None:  # noqa: ANN001
    address = prod_plan.one("gcp:compute/globalAddress:GlobalAddress", "prod-global-ip")
    assert (address.protect, address.retainOnDelete) == (True, False)
    assert (address.inputs["addressType"], address.inputs["ipVersion"]) == ("EXTERNAL", "IPV4")
    dev = plan_gcp(prod_config, environment="dev").one("gcp:compute/globalAddress:GlobalAddress", "dev-global-ip")
    assert (dev.protect, dev.retainOnDelete) == (False, False)


def test_tls_policy_and_certificate(prod_plan: PlanResult, plan_gcp, prod_config) -> None:  # noqa: ANN001
    policy = by_name(prod_plan, "prod-global-ssl-policy")
    assert (policy["minTlsVersion"], policy["profile"]) == ("TLS_1_2", "RESTRICTED")  # HIPAA profile
    proxy = by_name(prod_plan, "prod-global-https-proxy")
    assert (proxy["sslPolicy"], proxy["sslCertificates"]) == ("prod-global-ssl-policy-id", ["prod-global-cert-id"])
    assert by_name(prod_plan, "prod-global-cert")["managed"] == {"domains": ["infer.example.com"]}
    certificate = f"projects/{PROJECT}/global/sslCertificates/infer"
    prod_config["global_endpoint"] = {"certificate": certificate}
    plan = plan_gcp(prod_config, compliance={"data_zones": COMPLIANCE["data_zones"]})
    assert by_name(plan, "test-global-ssl-policy")["profile"] == "MODERN"
    assert by_name(plan, "test-global-https-proxy")["sslCertificates"] == [certificate]
    assert not plan.of_type("gcp:compute/managedSslCertificate:ManagedSslCertificate")


def test_http_redirects_to_https(prod_plan: PlanResult) -> None:
    redirect = by_name(prod_plan, "prod-global-redirect")["defaultUrlRedirect"]
    assert redirect == {"httpsRedirect": True, "stripQuery": False, "redirectResponseCode": "MOVED_PERMANENTLY_DEFAULT"}
    http = by_name(prod_plan, "prod-global-http")
    assert (http["portRange"], http["target"], http["ipAddress"]) == ("80", "prod-global-http-proxy-id", "prod-global-ip-id")


def test_cloud_armor_is_attached_with_waf_rules(prod_plan: PlanResult, plan_gcp, prod_config) -> None:  # noqa: ANN001
    armor = by_name(prod_plan, "prod-global-armor")
    rules = armor["rules"]
    assert rules[-1]["priority"] == 2147483647 and rules[-1]["action"] == "allow"
    assert all(r["action"] == "deny(403)" and "evaluatePreconfiguredWaf" in r["match"]["expr"]["expression"] for r in rules[:-1])
    assert armor["adaptiveProtectionConfig"] == {"layer7DdosDefenseConfig": {"enable": True}}
    prod_config["global_endpoint"]["waf"] = False
    plan = plan_gcp(prod_config)
    assert not plan.of_type("gcp:compute/securityPolicy:SecurityPolicy")
    assert "securityPolicy" not in plan.one("gcp:compute/backendService:BackendService").inputs


def test_autoneg_gets_a_least_privilege_role_through_workload_identity(prod_plan: PlanResult) -> None:
    role = by_name(prod_plan, "prod-global-autoneg-role")
    assert role["roleId"] == "aiInfraAutoneg_prod"
    assert set(role["permissions"]) == {"compute.backendServices.get", "compute.backendServices.update",
                                        "compute.networkEndpointGroups.use", "compute.healthChecks.useReadOnly"}
    member = by_name(prod_plan, "prod-global-autoneg")
    assert member["role"] == f"projects/{PROJECT}/roles/aiInfraAutoneg_prod"
    assert member["member"] == (f"principal://iam.googleapis.com/projects/987654321098/locations/global/workloadIdentityPools/"
                                f"{PROJECT}.svc.id.goog/subject/ns/autoneg-system/sa/autoneg-controller-manager")
    # The project's Workload Identity pool exists once a cluster with Workload Identity does: the grant waits for the
    # clusters, or IAM refuses it on a new project ("Identity Pool does not exist").
    record = prod_plan.one("gcp:projects/iAMMember:IAMMember", "prod-global-autoneg")
    clusters = {r.urn for r in prod_plan.of_type("gcp:container/cluster:Cluster")}
    assert len(clusters) >= 2 and clusters <= set(record.dependencies)


def test_each_serving_region_exports_the_neg_and_autoneg_annotations() -> None:
    spec = load_platform(gcp_platform(PROD_GCP, environment="prod", compliance=COMPLIANCE))

    def program() -> None:
        from components.compose import gcp as compose_gcp

        pulumi.export("gcp", compose_gcp.build(spec, spec.clouds.gcp).outputs)

    outputs = run_program(program, project="ai-infra", stack="prod").outputs["gcp"]
    assert outputs["global_endpoint"]["domain"] == "infer.example.com"
    for region in ("us-central1", "europe-west4"):
        inference = outputs[region]["inference"]
        assert inference["neg"] == f"prod-{region}-inference"
        annotations = inference["service_annotations"]
        assert json.loads(annotations["cloud.google.com/neg"]) == {"exposed_ports": {"8000": {"name": f"prod-{region}-inference"}}}
        assert json.loads(annotations["controller.autoneg.dev/neg"]) == {
            "backend_services": {"8000": [{"name": "prod-inference", "max_rate_per_endpoint": 100}]}}
