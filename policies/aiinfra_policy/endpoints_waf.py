"""Web application firewalls in front of internet-facing HTTP endpoints, on every cloud: a stack rule, since the
firewall is often a resource of its own that names the endpoint (an AWS WAF association, a Front Door security
policy).

What counts as an internet-facing HTTP endpoint, and as its firewall:

- AWS: an application load balancer (`loadBalancerType` application or unset) that is internet-facing (`internal`
  false or unset: AWS's default scheme), or internal but named by a Global Accelerator endpoint group (the platform's
  anycast endpoint: GA carries Internet traffic to it). Its firewall: an `aws.wafv2.WebAclAssociation` (or WAF
  Classic's `aws.wafregional.WebAclAssociation`) whose `resourceArn` is the load balancer. AWS WAF does not attach to
  network and gateway load balancers, so they are exempt, except a network load balancer behind Global Accelerator
  with a TLS listener (the platform's `inference_load_balancer: network`): HTTPS from the Internet reaches it with no
  WAF possible, which is reported as such. A CloudFront distribution is a global endpoint too: its firewall is its
  `webAclId`.
- GCP: a backend service of an external load balancer (`loadBalancingScheme` EXTERNAL or EXTERNAL_MANAGED; unset
  is EXTERNAL_MANAGED for a global backend service, INTERNAL for a regional one) that speaks HTTP (`protocol` HTTP,
  HTTPS, HTTP2, H2C, GRPC, or unset: HTTP). Its firewall: a Cloud Armor `securityPolicy` (an `edgeSecurityPolicy`
  filters only what Cloud CDN serves from cache: no WAF rules). TCP, SSL and UDP backends carry no HTTP to inspect.
- Azure: a Front Door Standard/Premium profile (`azure-native:cdn:Profile`, sku Standard_AzureFrontDoor or
  Premium_AzureFrontDoor). Its firewall: `azure-native:cdn:SecurityPolicy`s of type WebApplicationFirewall in the
  profile, whose associations cover every endpoint and custom domain of the profile in the stack (a domain left out
  is served without the WAF). Also Front Door (classic), `webApplicationFirewallPolicyLink` on each frontend
  endpoint, and an Application Gateway with a public frontend IP, a WAF tier with a WAF policy.

In preview a setting the program leaves to the provider is unknown (an ALB's `internal`, a backend service's
`protocol`): as everywhere in the pack an unknown value is never a finding, so the rule says it can't run during
preview (and judges that endpoint on `pulumi up`) unless the endpoint's firewall is found anyway.

Not covered: an internal ALB reached through an internet-facing NLB (an `alb` target group), a CloudFront VPC origin
or an API Gateway VPC link (each fronting service takes its own WAF), Azure CDN (classic) endpoints, and whether the
firewall found blocks anything (its rules, detection or prevention mode). Reported although they may be fine: an
endpoint whose firewall is attached from another stack (the rule sees one stack), and an internet-facing ALB whose
listeners only redirect HTTP to HTTPS (no listener is read).

Cross-references: Checkov CKV2_AWS_28 (public ALB protected by WAF), CKV_AWS_68 (CloudFront WAF), CKV_AZURE_121
(Front Door classic WAF), CKV_AZURE_120 (Application Gateway WAF); AWS Security Hub ELB.16 and CloudFront.6;
PSRule Azure.FrontDoor.UseWAF (a WAF policy on each Front Door endpoint); CloudSploit "CLB Security Policy Enabled"
(Cloud Armor on every backend service; Checkov has no such check).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .props import Unknown, Unknowns, get, is_unknown, items, need, of_type, owner_of, refs, urns
from .registry import Context, rule

LOAD_BALANCERS = ("aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer")
LB_LISTENERS = ("aws:lb/listener:Listener", "aws:alb/listener:Listener")
WAF_ASSOCIATIONS = ("aws:wafv2/webAclAssociation:WebAclAssociation", "aws:wafregional/webAclAssociation:WebAclAssociation")
GA_ENDPOINT_GROUP = "aws:globalaccelerator/endpointGroup:EndpointGroup"
CLOUDFRONT = "aws:cloudfront/distribution:Distribution"
BACKEND_SERVICES = {"gcp:compute/backendService:BackendService": "EXTERNAL_MANAGED",
                    "gcp:compute/regionBackendService:RegionBackendService": "INTERNAL"}
"""GCP backend service types and their default loadBalancingScheme (pulumi-gcp 10.2 docs)."""
EXTERNAL_SCHEMES = ("EXTERNAL", "EXTERNAL_MANAGED")
HTTP_PROTOCOLS = ("HTTP", "HTTPS", "HTTP2", "H2C", "GRPC")
CDN_PROFILE, SECURITY_POLICY = "azure-native:cdn:Profile", "azure-native:cdn:SecurityPolicy"
AFD_DOMAINS = {"azure-native:cdn:AFDEndpoint": "endpoint", "azure-native:cdn:AFDCustomDomain": "custom domain"}
FRONT_DOOR_SKUS = ("Standard_AzureFrontDoor", "Premium_AzureFrontDoor")
FRONT_DOOR_CLASSIC = "azure-native:frontdoor:FrontDoor"
APP_GATEWAY = "azure-native:network:ApplicationGateway"
WAF_TYPE = "WebApplicationFirewall"


def _refs(resource: Any, *keys: str) -> set[str]:
    """What another resource may name this one by: its URN, its planned ID and its known `keys` (ARN, ID, name); also
    in lower case, as Azure resource IDs are not case-sensitive."""
    found = refs(resource, *keys)
    return found | {r.lower() for r in found}


def _named(holder: Any, prop: str, ids: list[Any], candidates: list[Any]) -> set[str]:
    """URNs of the `candidates` that `holder` names in `prop` by the `ids` found there: those the property depends on,
    and those whose refs hold a known id. An unknown id in a property that depends on no resource raises Unknown (an
    output of a resource made in the same update always brings its dependency)."""
    depends = urns((getattr(holder, "property_dependencies", None) or {}).get(prop))
    found = depends & {c.urn for c in candidates}
    for value in ids:
        if is_unknown(value):
            if not depends:
                raise Unknown(prop)
        elif isinstance(value, str):
            found |= {c.urn for c in candidates if value.lower() in _refs(c, "arn", "id")}
    return found


# --- AWS ---

def _fronted(resources: list[Any], lbs: list[Any], unknowns: Unknowns) -> dict[str, str]:
    """Load balancer URN -> the Global Accelerator endpoint group that names it in endpointConfigurations."""
    fronted: dict[str, str] = {}
    for group in of_type(resources, GA_ENDPOINT_GROUP):
        with unknowns.skip():
            ids = [get(c, "endpointId") for c in items(group.props, "endpointConfigurations")]
            for urn in sorted(_named(group, "endpointConfigurations", ids, lbs)):
                fronted.setdefault(urn, group.name)
    return fronted


def _aws(resources: list[Any], unknowns: Unknowns) -> Iterator[tuple[str, str]]:
    lbs = of_type(resources, *LOAD_BALANCERS)
    protected = set()
    for association in of_type(resources, *WAF_ASSOCIATIONS):
        owner = owner_of(association, "resourceArn", get(association.props, "resourceArn"), lbs, lambda r: _refs(r, "arn", "id"))
        if owner is not None:
            protected.add(owner.urn)
    fronted = _fronted(resources, lbs, unknowns)
    tls = set()  # load balancers with a TLS listener
    for listener in of_type(resources, *LB_LISTENERS):
        owner = owner_of(listener, "loadBalancerArn", get(listener.props, "loadBalancerArn"), lbs, lambda r: _refs(r, "arn", "id"))
        if owner is not None and get(listener.props, "protocol") == "TLS":
            tls.add(owner.urn)
    for lb in lbs:
        if lb.urn in protected:
            continue
        with unknowns.skip():
            kind = need(lb.props, "loadBalancerType") or "application"
            if kind == "network" and lb.urn in fronted and lb.urn in tls:
                yield lb.urn, (f"network load balancer fronted by Global Accelerator (endpoint group {fronted[lb.urn]}) "
                               "terminates TLS for Internet traffic, and AWS WAF does not attach to network load "
                               "balancers: requests reach the targets unfiltered (inference_load_balancer: network); "
                               "use an application load balancer with a web ACL")
                continue
            if kind != "application":
                continue  # other network and gateway load balancers can't take AWS WAF
            if lb.urn in fronted:
                why = f"fronted by Global Accelerator (endpoint group {fronted[lb.urn]}), so reachable from the Internet"
            elif (internal := need(lb.props, "internal")) is not True:  # unset: AWS's default scheme, internet-facing
                why = f"internet-facing (internal {'unset' if internal is None else str(internal).lower()})"
            else:
                continue
            yield lb.urn, (f"application load balancer {why} has no AWS WAF web ACL: no aws.wafv2.WebAclAssociation "
                           "names its ARN (global_endpoint.waf: false creates none); associate a REGIONAL web ACL "
                           "with managed rules")
    for distribution in of_type(resources, CLOUDFRONT):
        if not get(distribution.props, "webAclId"):  # unknown: the ARN of a web ACL made in the same update
            yield distribution.urn, ("CloudFront distribution has no AWS WAF web ACL (webAclId unset); set webAclId to "
                                     "the ARN of a CLOUDFRONT-scope web ACL")


# --- GCP ---

def _gcp(resources: list[Any], unknowns: Unknowns) -> Iterator[tuple[str, str]]:
    for service in of_type(resources, *BACKEND_SERVICES):
        if get(service.props, "securityPolicy"):  # unknown: the ID of a policy made in the same update
            continue
        with unknowns.skip():
            scheme = need(service.props, "loadBalancingScheme") or BACKEND_SERVICES[service.resource_type]
            protocol = need(service.props, "protocol") or "HTTP"
            if scheme not in EXTERNAL_SCHEMES or protocol not in HTTP_PROTOCOLS:
                continue  # internal, or TCP/SSL/UDP: no HTTP from the Internet for a WAF to inspect
            edge = " (its edgeSecurityPolicy filters only Cloud CDN's cache, with no WAF rules)" if get(
                service.props, "edgeSecurityPolicy") else ""
            yield service.urn, (f"backend service of an external load balancer (loadBalancingScheme {scheme}, protocol "
                                f"{protocol}) has no Cloud Armor security policy (securityPolicy unset){edge}; "
                                "global_endpoint.waf: false creates none; set securityPolicy to a CLOUD_ARMOR policy "
                                "with preconfigured WAF rules")


# --- Azure ---

def _profile_of(resource: Any, profiles: list[Any]) -> Any:
    return owner_of(resource, "profileName", get(resource.props, "profileName"), profiles,
                    lambda p: _refs(p, "profileName", "name", "id"))


def _covered(policy: Any, domains: list[Any]) -> set[str]:
    """URNs of the endpoints and custom domains a WAF security policy's associations name."""
    ids = [get(d, "id") for a in items(policy.props, "parameters.associations") for d in items(a, "domains")]
    return _named(policy, "parameters", ids, domains)


def _front_door(resources: list[Any], unknowns: Unknowns) -> Iterator[tuple[str, str]]:
    profiles = []
    for profile in of_type(resources, CDN_PROFILE):
        with unknowns.skip():
            if need(profile.props, "sku.name") in FRONT_DOOR_SKUS:
                profiles.append(profile)
    domains: dict[str, list[Any]] = {p.urn: [] for p in profiles}
    for domain in of_type(resources, *AFD_DOMAINS):
        if (owner := _profile_of(domain, profiles)) is not None:
            domains[owner.urn].append(domain)
    wafs: dict[str, list[Any]] = {p.urn: [] for p in profiles}
    undecided: set[str] = set()
    for policy in of_type(resources, SECURITY_POLICY):
        if (owner := _profile_of(policy, profiles)) is None:
            continue
        known = False
        with unknowns.skip():
            kind, known = need(policy.props, "parameters.type"), True
        if not known:
            undecided.add(owner.urn)  # this policy may be the WAF: the profile is not reported until it is known
        elif kind == WAF_TYPE:
            wafs[owner.urn].append(policy)
    for profile in profiles:
        with unknowns.skip():
            sku = get(profile.props, "sku.name")
            if not wafs[profile.urn]:
                if profile.urn in undecided:
                    continue
                yield profile.urn, (f"Front Door profile ({sku}) has no WAF: no azure-native:cdn:SecurityPolicy of type "
                                    "WebApplicationFirewall links a Front Door WAF policy to its domains "
                                    "(global_endpoint.waf: false creates none); add one covering every endpoint and "
                                    "custom domain")
                continue
            covered = set().union(*(_covered(p, domains[profile.urn]) for p in wafs[profile.urn]))
            missing = [f"{AFD_DOMAINS[d.resource_type]} {d.name}" for d in domains[profile.urn] if d.urn not in covered]
            if missing and profile.urn not in undecided:
                names = ", ".join(p.name for p in wafs[profile.urn])
                yield profile.urn, (f"Front Door profile ({sku}): its WAF security policies ({names}) leave out "
                                    f"{', '.join(missing)}, served without the WAF; add them to a WebApplicationFirewall "
                                    "security policy's associations")


def _gateway_policy(props: Any) -> bool:
    """Whether an Application Gateway has a WAF policy: its own, the legacy WAF configuration, or one on every
    listener (an unknown ID: a policy made in the same update)."""
    if get(props, "firewallPolicy.id") or get(props, "webApplicationFirewallConfiguration.enabled") is True:
        return True
    listeners = list(items(props, "httpListeners"))
    return bool(listeners) and all(get(x, "firewallPolicy.id") for x in listeners)


def _azure(resources: list[Any], unknowns: Unknowns) -> Iterator[tuple[str, str]]:
    yield from _front_door(resources, unknowns)
    for door in of_type(resources, FRONT_DOOR_CLASSIC):
        with unknowns.skip():
            bare = [str(get(e, "name") or i) for i, e in enumerate(items(door.props, "frontendEndpoints"))
                    if not get(e, "webApplicationFirewallPolicyLink.id")]
            if bare:
                yield door.urn, (f"Front Door (classic) frontend endpoints {', '.join(bare)} have no "
                                 "webApplicationFirewallPolicyLink; link a Front Door WAF policy to each")
    for gateway in of_type(resources, APP_GATEWAY):
        with unknowns.skip():
            public = [str(get(c, "name") or i) for i, c in enumerate(items(gateway.props, "frontendIPConfigurations"))
                      if get(c, "publicIPAddress") is not None]
            if not public:
                continue
            tier = str(need(gateway.props, "sku.tier") or need(gateway.props, "sku.name") or "unset")
            if tier.startswith("WAF") and _gateway_policy(gateway.props):
                continue
            what = "no WAF policy (firewallPolicy) on it or on every listener" if tier.startswith("WAF") else f"sku tier {tier}"
            yield gateway.urn, (f"Application Gateway with a public frontend IP ({', '.join(public)}) has no WAF: "
                                f"{what}; use tier WAF_v2 with a firewallPolicy (an "
                                "ApplicationGatewayWebApplicationFirewallPolicy)")


# PCI DSS v4.0.1 6.4.2 (an automated technical solution, e.g. a WAF, in front of public-facing web applications;
# required from 31 March 2025); SOC 2 CC6.6 (logical access security against threats from outside the system
# boundaries); NIST SP 800-53 SC-7 (boundary protection). No CIS Foundations benchmark (AWS v3.0.0, GCP, Azure) has a
# WAF control. Severity high (Prowler, tfsec; Security Hub ELB.16 says medium): an internet-facing HTTP endpoint
# without one is the unfiltered entry point of every web attack. Advisory in every config (gen_config.ALWAYS_ADVISORY):
# `global_endpoint.waf: false` is an explicit opt-in, which the pack reports without blocking it.
@rule("global-endpoint-waf", "Checks whether every internet-facing or globally fronted HTTP endpoint (AWS ALB and "
      "CloudFront, GCP external backend service, Azure Front Door and Application Gateway) has a web application firewall.",
      severity="high", remediation="Keep global_endpoint.waf on (the default) for the platform's global endpoint. For "
                                   "your own endpoints: associate an AWS WAF web ACL with each internet-facing or "
                                   "Global Accelerator-fronted ALB (aws.wafv2.WebAclAssociation) and set CloudFront's "
                                   "webAclId; set a Cloud Armor securityPolicy on each external HTTP(S) backend "
                                   "service; add a WebApplicationFirewall security policy covering every Front Door "
                                   "endpoint and custom domain, and a WAF_v2 tier with a WAF policy on public "
                                   "Application Gateways.",
      frameworks={"SOC2": ("CC6.6",), "PCI-DSS-v4": ("6.4.2",), "NIST-800-53": ("SC-7",)})
def endpoints_waf(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
    unknowns = Unknowns()
    for cloud in (_aws, _gcp, _azure):
        yield from cloud(resources, unknowns)
    unknowns.raise_first()
