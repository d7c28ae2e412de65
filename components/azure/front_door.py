"""Azure Front Door (Standard or Premium) in front of the inference service of several regions: one endpoint,
one origin group with health probes and an origin per region, an HTTPS-only route that redirects HTTP,
a WAF policy in prevention mode (unless `global_endpoint.waf` is false), TLS 1.2 minimum on the custom domain, and
access/WAF logs.

Premium reaches each region privately: the origin is the region's internal inference load balancer, through
the Private Link service the AKS cloud provider creates for it, and Front Door speaks plain HTTP to the pods' port.
Standard has no Private Link, so its origins are public addresses that only Front Door's backend range may reach (the
network component's NSG rule). That hop crosses the Internet, so Standard speaks HTTPS to the pods' port, for requests
and health probes, and checks the certificate's name against `domain` (Microsoft recommends HTTPS to a public origin:
learn.microsoft.com/azure/frontdoor/end-to-end-tls). The pods must therefore serve TLS themselves on that port, with a
certificate for `domain` (the origin host header Front Door sends) issued by a public certificate authority; the
Service passes TCP through. The backend range serves every Front Door customer: only the pods, checking the
X-Azure-FDID header against `front_door_id`, can tell this profile's requests from theirs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_azure_native as azure_native

from components.spec import AzureFrontDoorTier, GlobalEndpointSpec

from .base import AzureComponent
from .context import AzureContext, grant, send_logs
from .naming import alphanumeric_name, fitted_name

_SKU = {AzureFrontDoorTier.STANDARD: "Standard_AzureFrontDoor", AzureFrontDoorTier.PREMIUM: "Premium_AzureFrontDoor"}
# Managed rule sets need Premium (Standard policies take custom rules only).
_MANAGED_RULE_SETS = (("Microsoft_DefaultRuleSet", "2.1", "Block"), ("Microsoft_BotManagerRuleSet", "1.0", None))
_PROBE_INTERVAL_SECONDS = 30
_ORIGIN_RESPONSE_TIMEOUT_SECONDS = 120  # generation requests can take a while
_PRIVATE_LINK_STATUS = "sharedPrivateLinkResource.status"
ORIGIN_MAX_NAME = 50
"""Microsoft.Cdn profiles/originGroups/origins names: 1-50 characters
(learn.microsoft.com/azure/templates/microsoft.cdn/2023-05-01/profiles/origingroups/origins)."""


def key_vault_of(secret_id: str) -> str:
    """The resource ID of the Key Vault holding a secret (`.../vaults/<vault>/secrets/<name>`, as the spec checks)."""
    return re.split(r"/secrets/", secret_id, maxsplit=1, flags=re.IGNORECASE)[0]


@dataclass(frozen=True)
class FrontDoorOrigin:
    """One region's inference entry point."""

    region: str
    host_name: pulumi.Input[str]
    """Private IP of the internal load balancer (Premium), or the public IP address (Standard)."""
    port: int
    weight: int
    """Share of traffic (the spec's traffic_percent); 0 disables the origin."""
    private_link_service_id: pulumi.Input[str] | None = None
    """Private Link service in front of the internal load balancer (Premium only)."""
    depends_on: pulumi.Resource | None = None
    """What the origin waits for: the region's inference Service, once AKS has built its load balancer and Private
    Link service. Default None."""


@dataclass(frozen=True)
class FrontDoorArgs:
    context: AzureContext
    """`region` is where the Front Door resource group lives; the profile itself is global."""
    endpoint: GlobalEndpointSpec
    origins: Sequence[FrontDoorOrigin]
    health_check_path: str
    workspace_id: pulumi.Input[str]
    """Log Analytics workspace for access, health probe and WAF logs."""


class FrontDoor(AzureComponent):
    """`ai-infra:azure:FrontDoor`. Children: `<name>-rg`, `-waf` (unless `waf` is false), `-profile`, `-endpoint`,
    `-origin-group`, `-origin-<region>`, `-certificate-access` and `-certificate` (with a certificate), `-domain`, `-route`,
    `-waf-link` (unless `waf` is false), `-logs`."""

    def __init__(self, name: str, args: FrontDoorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:azure:FrontDoor", name, opts)
        ctx, spec = args.context, args.endpoint
        premium = spec.azure_tier is AzureFrontDoorTier.PREMIUM
        child = pulumi.ResourceOptions(parent=self)
        group = azure_native.resources.ResourceGroup(
            f"{name}-rg",
            azure_native.resources.ResourceGroupArgs(resource_group_name=f"rg-{name}", location=ctx.region, tags=ctx.tags()),
            # The group's location is only metadata for a global service: never replace it when regions change.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["location"]),
        )
        rg = group.name
        # `global_endpoint.waf: false` leaves the endpoint without a WAF policy, as on GCP and AWS.
        waf = None if not spec.waf else azure_native.frontdoor.Policy(
            f"{name}-waf",
            azure_native.frontdoor.PolicyArgs(
                resource_group_name=rg,
                policy_name=alphanumeric_name(name, "waf"),
                location="Global",
                sku=azure_native.frontdoor.SkuArgs(name=_SKU[spec.azure_tier]),
                policy_settings=azure_native.frontdoor.PolicySettingsArgs(
                    enabled_state="Enabled", mode="Prevention", request_body_check="Enabled"),
                managed_rules=azure_native.frontdoor.ManagedRuleSetListArgs(managed_rule_sets=[
                    azure_native.frontdoor.ManagedRuleSetArgs(rule_set_type=kind, rule_set_version=version, rule_set_action=action)
                    for kind, version, action in _MANAGED_RULE_SETS
                ]) if premium else None,
                tags=ctx.tags(),
            ),
            opts=child,
        )
        self.profile = azure_native.cdn.Profile(
            f"{name}-profile",
            azure_native.cdn.ProfileArgs(
                resource_group_name=rg, location="Global", sku=azure_native.cdn.SkuArgs(name=_SKU[spec.azure_tier]),
                origin_response_timeout_seconds=_ORIGIN_RESPONSE_TIMEOUT_SECONDS, tags=ctx.tags(),
                # Reads a customer certificate from Key Vault as itself (Microsoft's recommended way; the shared app
                # registration is being retired).
                identity=azure_native.cdn.ManagedServiceIdentityArgs(type="SystemAssigned") if spec.certificate else None),
            opts=child,
        )
        profile = self.profile.name
        self.endpoint = azure_native.cdn.AFDEndpoint(
            f"{name}-endpoint",
            azure_native.cdn.AFDEndpointArgs(
                resource_group_name=rg, profile_name=profile, location="Global", enabled_state="Enabled",
                auto_generated_domain_name_label_scope="TenantReuse", tags=ctx.tags()),
            opts=child,
        )
        origin_group = azure_native.cdn.AFDOriginGroup(
            f"{name}-origin-group",
            azure_native.cdn.AFDOriginGroupArgs(
                resource_group_name=rg,
                profile_name=profile,
                health_probe_settings=azure_native.cdn.HealthProbeParametersArgs(
                    # Standard probes the pods' TLS port (see the module docstring).
                    probe_path=args.health_check_path, probe_protocol="Http" if premium else "Https",
                    probe_request_type="GET", probe_interval_in_seconds=_PROBE_INTERVAL_SECONDS),
                load_balancing_settings=azure_native.cdn.LoadBalancingSettingsParametersArgs(
                    sample_size=4, successful_samples_required=3, additional_latency_in_milliseconds=50),
                session_affinity_state="Disabled",
            ),
            opts=child,
        )
        origins = [self._origin(name, rg, profile, origin_group, origin, premium, spec.domain) for origin in args.origins]

        domains = [azure_native.cdn.ActivatedResourceReferenceArgs(id=self.endpoint.id)]
        custom_domains = []
        self.domain_validation_token: pulumi.Output[str | None] = pulumi.Output.from_input(None)
        """The value of the TXT record that proves the custom domain is yours, None without a domain. Azure issues it
        when the domain is created and it lasts seven days; one regenerated in Azure reaches the stack's outputs with
        `pulumi up --refresh` (learn.microsoft.com/azure/frontdoor/domain, "TXT record validation")."""
        if spec.domain:
            custom_domain = self._custom_domain(name, rg, ctx, spec)
            self.domain_validation_token = custom_domain.validation_properties.apply(
                lambda validation: validation.validation_token if validation else None)
            custom_domains.append(azure_native.cdn.ActivatedResourceReferenceArgs(id=custom_domain.id))
            domains.append(azure_native.cdn.ActivatedResourceReferenceArgs(id=custom_domain.id))
        self.route = azure_native.cdn.Route(
            f"{name}-route",
            azure_native.cdn.RouteArgs(
                resource_group_name=rg,
                profile_name=profile,
                endpoint_name=self.endpoint.name,
                origin_group=azure_native.cdn.ResourceReferenceArgs(id=origin_group.id),
                custom_domains=custom_domains or None,
                # Clients may arrive over HTTP only to be redirected; requests are served over HTTPS.
                supported_protocols=["Http", "Https"],
                https_redirect="Enabled",
                # Premium's origin hop stays inside Azure's Private Link; Standard's crosses the Internet.
                forwarding_protocol="HttpOnly" if premium else "HttpsOnly",
                patterns_to_match=["/*"],
                link_to_default_domain="Enabled",
                enabled_state="Enabled",
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=origins),
        )
        if waf is not None:
            azure_native.cdn.SecurityPolicy(
                f"{name}-waf-link",
                azure_native.cdn.SecurityPolicyArgs(
                    resource_group_name=rg,
                    profile_name=profile,
                    parameters=azure_native.cdn.SecurityPolicyWebApplicationFirewallParametersArgs(
                        type="WebApplicationFirewall",
                        waf_policy=azure_native.cdn.ResourceReferenceArgs(id=waf.id),
                        associations=[azure_native.cdn.SecurityPolicyWebApplicationFirewallAssociationArgs(
                            domains=domains, patterns_to_match=["/*"])],
                    ),
                ),
                opts=child,
            )
        send_logs(f"{name}-logs", self, self.profile.id, args.workspace_id, category_group="allLogs")
        self.host_name: pulumi.Output[str] = self.endpoint.host_name
        self.front_door_id: pulumi.Output[str] = self.profile.front_door_id
        """The profile's Front Door ID, which Front Door sends to every origin in the `X-Azure-FDID` header. A public
        origin (Standard) is reachable from every Front Door profile, any customer's, through the AzureFrontDoor.Backend
        service tag: the ingress must refuse requests whose header differs (learn.microsoft.com/azure/frontdoor/origin-security)."""
        self.register_outputs({"endpoint_host_name": self.endpoint.host_name, "profile_id": self.profile.id,
                               "front_door_id": self.front_door_id, "domain_validation_token": self.domain_validation_token})

    def _origin(self, name: str, rg: pulumi.Input[str], profile: pulumi.Input[str], group: azure_native.cdn.AFDOriginGroup,
                origin: FrontDoorOrigin, premium: bool, domain: str | None) -> azure_native.cdn.AFDOrigin:
        private_link = None
        if premium:
            # The connection waits for approval on the Private Link service (az network private-endpoint-connection approve).
            private_link = azure_native.cdn.SharedPrivateLinkResourcePropertiesArgs(
                private_link=azure_native.cdn.ResourceReferenceArgs(id=origin.private_link_service_id),
                private_link_location=origin.region,
                request_message=f"ai-infra Front Door {name}",
            )
        return azure_native.cdn.AFDOrigin(
            f"{name}-origin-{origin.region}",
            azure_native.cdn.AFDOriginArgs(
                # A long environment and region name would overflow the 50 characters Front Door allows.
                origin_name=fitted_name(f"{name}-origin-{origin.region}", ORIGIN_MAX_NAME),
                resource_group_name=rg,
                profile_name=profile,
                origin_group_name=group.name,
                host_name=origin.host_name,
                origin_host_header=domain or origin.host_name,
                http_port=origin.port,
                https_port=origin.port if not premium else 443,
                priority=1,
                weight=max(origin.weight, 1),  # Front Door weights are 1-1000; 0 is expressed as a disabled origin
                enabled_state="Enabled" if origin.weight > 0 else "Disabled",
                enforce_certificate_name_check=True,
                shared_private_link_resource=private_link,
            ),
            # Azure reports the connection's approval (Pending -> Approved, after `az network private-endpoint-connection
            # approve`) in sharedPrivateLinkResource.status, which is input-shaped: a refresh copies it into the inputs
            # and the next `up` would update the origin to take it out again.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[origin.depends_on] if origin.depends_on else None,
                                        ignore_changes=[_PRIVATE_LINK_STATUS] if premium else None),
        )

    def _custom_domain(self, name: str, rg: pulumi.Input[str], ctx: AzureContext, spec: GlobalEndpointSpec) -> azure_native.cdn.AFDCustomDomain:
        """The public host name with TLS 1.2 minimum: a Front Door managed certificate, or the given Key Vault one,
        which the profile's identity reads as Key Vault Secrets User on that vault (an Azure RBAC vault)."""
        secret = None
        profile = self.profile.name
        if spec.certificate:
            principal = self.profile.identity.apply(lambda identity: identity.principal_id if identity else None)
            access = grant(f"{name}-certificate-access", self, ctx, "key_vault_secrets_user", key_vault_of(spec.certificate),
                           principal)
            certificate = azure_native.cdn.Secret(
                f"{name}-certificate",
                azure_native.cdn.SecretArgs(
                    resource_group_name=rg,
                    profile_name=profile,
                    parameters=azure_native.cdn.CustomerCertificateParametersArgs(
                        type="CustomerCertificate",
                        secret_source=azure_native.cdn.ResourceReferenceArgs(id=spec.certificate),
                        use_latest_version=True),
                ),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[access]),
            )
            secret = azure_native.cdn.ResourceReferenceArgs(id=certificate.id)
        return azure_native.cdn.AFDCustomDomain(
            f"{name}-domain",
            azure_native.cdn.AFDCustomDomainArgs(
                resource_group_name=rg,
                profile_name=profile,
                host_name=spec.domain,
                tls_settings=azure_native.cdn.AFDDomainHttpsParametersArgs(
                    certificate_type="CustomerCertificate" if secret else "ManagedCertificate",
                    minimum_tls_version="TLS12",
                    secret=secret,
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
