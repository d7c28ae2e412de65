"""The global external Application Load Balancer (EXTERNAL_MANAGED) in front of every serving region: one
anycast IP, a managed or configured certificate, an SSL policy at TLS 1.2+, HTTP -> HTTPS redirect, one
backend service with a health check and a Cloud Armor policy.

Backends: each region's inference Service is exposed as zonal NEGs by GKE's NEG controller, which creates
and names them itself (it refuses NEGs it did not create). The backend service therefore starts empty and
the autoneg controller (GoogleCloudPlatform/gke-autoneg-controller) in each cluster adds that region's NEGs
to it; `backends` is left to autoneg (`ignore_changes`). The Service annotations that do this are exported
per region, and autoneg's Kubernetes service account gets a least-privilege custom role through Workload
Identity Federation for GKE (no Google service account or key), conditioned to this environment's backend service.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.spec import ComplianceProfile, GlobalEndpointSpec

from .context import GcpContext

HTTPS_PORT = "443"
HTTP_PORT = "80"
BACKEND_TIMEOUT_SECONDS = 600  # long generations and streamed responses
MAX_RATE_PER_ENDPOINT = 100
"""Requests per second one inference pod takes before the load balancer spills traffic to another region."""
AUTONEG_NAMESPACE = "autoneg-system"
AUTONEG_SERVICE_ACCOUNT = "autoneg-controller-manager"
"""Namespace and Kubernetes service account autoneg runs as (the upstream manifest's names); the Kubernetes layer
(components.k8s.autoneg) creates them on each serving cluster with these values."""
AUTONEG_PERMISSIONS = ["compute.backendServices.get", "compute.backendServices.update",
                       "compute.networkEndpointGroups.use", "compute.healthChecks.useReadOnly"]
BACKEND_SERVICE_TYPE = "compute.googleapis.com/BackendService"
"""The IAM Conditions resource type of a global backend service (cloud.google.com/iam/docs/conditions-resource-attributes)."""
# Cloud Armor preconfigured WAF rules at sensitivity 1 (fewest false positives on free-text prompts).
WAF_RULES = ("sqli-v33-stable", "xss-v33-stable", "lfi-v33-stable", "rce-v33-stable", "scannerdetection-v33-stable")
DEFAULT_RULE_PRIORITY = 2147483647
STRICT_PROFILES = (ComplianceProfile.PCI, ComplianceProfile.HIPAA)


def ssl_profile(profiles: Sequence[ComplianceProfile]) -> str:
    """RESTRICTED (the cipher set for PCI DSS style requirements) under PCI or HIPAA, else MODERN; both TLS 1.2+."""
    return "RESTRICTED" if any(p in STRICT_PROFILES for p in profiles) else "MODERN"


def backend_service_name(environment: str) -> str:
    """The backend service's name: fixed, so the region's Service annotations can name it before it exists."""
    return f"{environment}-inference"


def neg_name(environment: str, region: str) -> str:
    """The NEG name GKE gives the region's inference Service (the same name in every zone)."""
    return f"{environment}-{region}-inference"


def autoneg_condition(backend_service: str) -> str:
    """The IAM condition on autoneg's project-wide grant: backend service permissions on `backend_service` only, so an
    annotated Service on any cluster of the project can't add NEGs to another backend service. Compute Engine backend
    services carry resource name and type attributes (IAM Conditions resource attributes); other types, NEGs and health
    checks included, pass unconditioned (`resource.type != ...`, the documented form for restricting one type)."""
    return (f'resource.type != "{BACKEND_SERVICE_TYPE}" || '
            f'resource.name.endsWith("/global/backendServices/{backend_service}")')


def service_annotations(port: int, neg: str, backend_service: str) -> dict[str, str]:
    """Annotations for the region's inference Service: standalone zonal NEGs named `neg`, registered by autoneg
    with the global backend service."""
    return {
        "cloud.google.com/neg": json.dumps({"exposed_ports": {str(port): {"name": neg}}}),
        "controller.autoneg.dev/neg": json.dumps(
            {"backend_services": {str(port): [{"name": backend_service, "max_rate_per_endpoint": MAX_RATE_PER_ENDPOINT}]}}),
    }


def waf_rules() -> list[gcp.compute.SecurityPolicyRuleArgs]:
    rules = [gcp.compute.SecurityPolicyRuleArgs(
        action="deny(403)", priority=1000 + i, description=f"Cloud Armor preconfigured WAF {rule}",
        match=gcp.compute.SecurityPolicyRuleMatchArgs(expr=gcp.compute.SecurityPolicyRuleMatchExprArgs(
            expression=f"evaluatePreconfiguredWaf('{rule}', {{'sensitivity': 1}})")))
        for i, rule in enumerate(WAF_RULES)]
    rules.append(gcp.compute.SecurityPolicyRuleArgs(
        action="allow", priority=DEFAULT_RULE_PRIORITY, description="default: allow",
        match=gcp.compute.SecurityPolicyRuleMatchArgs(versioned_expr="SRC_IPS_V1",
                                                      config=gcp.compute.SecurityPolicyRuleMatchConfigArgs(src_ip_ranges=["*"]))))
    return rules


@dataclass(frozen=True)
class GlobalLoadBalancerArgs:
    context: GcpContext
    """Project, environment, labels; the region is not used (every child is global)."""
    spec: GlobalEndpointSpec
    health_check_path: str
    """HTTP path probed on every backend (the spec checks keep it the same across regions)."""
    ssl_profile: str = "MODERN"
    """SSL policy profile, MODERN or RESTRICTED (see `ssl_profile`). Default MODERN."""
    clusters: Sequence[pulumi.Resource] = ()
    """The GKE clusters of the serving regions. The autoneg grant waits for them: the project's Workload Identity pool
    (`<project>.svc.id.goog`) exists only once a cluster with Workload Identity does, and IAM refuses a grant to a
    principal of a pool that doesn't exist yet ("Identity Pool does not exist"). Default: none to wait for."""


class GlobalLoadBalancer(pulumi.ComponentResource):
    """`ai-infra:gcp:GlobalLoadBalancer`. Children: `<name>-ip` (protected outside dev), `<name>-cert` (managed, unless
    a certificate is configured), `<name>-ssl-policy`, `<name>-health`, `<name>-armor` (unless waf is off), `<name>-backend`,
    `<name>-urlmap`, `<name>-https-proxy`, `<name>-https`, `<name>-redirect`, `<name>-http-proxy`, `<name>-http`,
    `<name>-autoneg-role`, `<name>-autoneg`."""

    backend: gcp.compute.BackendService
    address: gcp.compute.GlobalAddress

    def __init__(self, name: str, args: GlobalLoadBalancerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:GlobalLoadBalancer", name, None, opts)
        ctx, spec = args.context, args.spec
        child = pulumi.ResourceOptions(parent=self)
        project = ctx.project
        # DNS names this address: protected outside dev, so no update replaces or deletes it (a new address would
        # break every record pointing at the old one). Not retained: an address left behind keeps billing.
        self.address = gcp.compute.GlobalAddress(f"{name}-ip", gcp.compute.GlobalAddressArgs(
            project=project, address_type="EXTERNAL", ip_version="IPV4"),
            opts=pulumi.ResourceOptions(parent=self, protect=ctx.protected))
        certificates: list[pulumi.Input[str]]
        if spec.certificate:
            certificates = [spec.certificate]
        else:
            assert spec.domain is not None  # the spec checks require domain or certificate
            cert = gcp.compute.ManagedSslCertificate(f"{name}-cert", gcp.compute.ManagedSslCertificateArgs(
                project=project, type="MANAGED", managed=gcp.compute.ManagedSslCertificateManagedArgs(domains=[spec.domain])), opts=child)
            certificates = [cert.id]
        policy = gcp.compute.SSLPolicy(f"{name}-ssl-policy", gcp.compute.SSLPolicyArgs(
            project=project, profile=args.ssl_profile, min_tls_version="TLS_1_2"), opts=child)
        health = gcp.compute.HealthCheck(f"{name}-health", gcp.compute.HealthCheckArgs(
            project=project, check_interval_sec=10, timeout_sec=5, healthy_threshold=2, unhealthy_threshold=3,
            http_health_check=gcp.compute.HealthCheckHttpHealthCheckArgs(
                port_specification="USE_SERVING_PORT", request_path=args.health_check_path),
            log_config=gcp.compute.HealthCheckLogConfigArgs(enable=True)), opts=child)
        armor = gcp.compute.SecurityPolicy(f"{name}-armor", gcp.compute.SecurityPolicyArgs(
            project=project, type="CLOUD_ARMOR", description=f"ai-infra {ctx.environment} inference WAF", rules=waf_rules(),
            adaptive_protection_config=gcp.compute.SecurityPolicyAdaptiveProtectionConfigArgs(
                layer7_ddos_defense_config=gcp.compute.SecurityPolicyAdaptiveProtectionConfigLayer7DdosDefenseConfigArgs(enable=True)),
            advanced_options_config=gcp.compute.SecurityPolicyAdvancedOptionsConfigArgs(json_parsing="STANDARD", log_level="NORMAL")),
            opts=child) if spec.waf else None
        self.backend = gcp.compute.BackendService(f"{name}-backend", gcp.compute.BackendServiceArgs(
            project=project, name=backend_service_name(ctx.environment),
            load_balancing_scheme="EXTERNAL_MANAGED", protocol="HTTP", timeout_sec=BACKEND_TIMEOUT_SECONDS,
            health_checks=health.id, security_policy=armor.id if armor else None,
            log_config=gcp.compute.BackendServiceLogConfigArgs(enable=True, sample_rate=1.0),
            description=f"ai-infra {ctx.environment} inference, all serving regions"),
            # autoneg owns the NEG backends of every region.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["backends"]))
        url_map = gcp.compute.URLMap(f"{name}-urlmap", gcp.compute.URLMapArgs(project=project, default_service=self.backend.id), opts=child)
        https_proxy = gcp.compute.TargetHttpsProxy(f"{name}-https-proxy", gcp.compute.TargetHttpsProxyArgs(
            project=project, url_map=url_map.id, ssl_certificates=certificates, ssl_policy=policy.id), opts=child)
        self._forwarding_rule(f"{name}-https", project, https_proxy.id, HTTPS_PORT)
        redirect = gcp.compute.URLMap(f"{name}-redirect", gcp.compute.URLMapArgs(
            project=project, default_url_redirect=gcp.compute.URLMapDefaultUrlRedirectArgs(
                https_redirect=True, strip_query=False, redirect_response_code="MOVED_PERMANENTLY_DEFAULT")), opts=child)
        http_proxy = gcp.compute.TargetHttpProxy(f"{name}-http-proxy", gcp.compute.TargetHttpProxyArgs(
            project=project, url_map=redirect.id), opts=child)
        self._forwarding_rule(f"{name}-http", project, http_proxy.id, HTTP_PORT)
        role = gcp.projects.IAMCustomRole(f"{name}-autoneg-role", gcp.projects.IAMCustomRoleArgs(
            project=project, role_id=f"aiInfraAutoneg_{ctx.environment.replace('-', '_')}", title=f"ai-infra autoneg ({ctx.environment})",
            description="Lets the autoneg controller add GKE NEGs to the inference backend service",
            permissions=AUTONEG_PERMISSIONS), opts=child)
        gcp.projects.IAMMember(f"{name}-autoneg", gcp.projects.IAMMemberArgs(
            project=project, role=pulumi.Output.concat("projects/", project, "/roles/", role.role_id),
            member=ctx.workload_principal(AUTONEG_NAMESPACE, AUTONEG_SERVICE_ACCOUNT),
            condition=gcp.projects.IAMMemberConditionArgs(
                title="ai-infra autoneg: this environment's backend service",
                description=f"Backend service permissions on {backend_service_name(ctx.environment)} only",
                expression=autoneg_condition(backend_service_name(ctx.environment)))),
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.clusters)))
        self.register_outputs({"ip_address": self.address.address, "backend_service": self.backend.name})

    def _forwarding_rule(self, name: str, project: str, target: pulumi.Input[str], port: str) -> gcp.compute.GlobalForwardingRule:
        return gcp.compute.GlobalForwardingRule(name, gcp.compute.GlobalForwardingRuleArgs(
            project=project, target=target, ip_address=self.address.id, port_range=port, ip_protocol="TCP",
            load_balancing_scheme="EXTERNAL_MANAGED"), opts=pulumi.ResourceOptions(parent=self))
