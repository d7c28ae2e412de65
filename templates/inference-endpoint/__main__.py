"""GPU serving pools in several regions behind the cloud's global endpoint, on ai-infra components."""

import pulumi

from components import catalog
from components.compose import deploy, validate
from components.compose.answers import (DEFAULT_ACCELERATORS, check_accelerator, check_budget, check_cloud, check_region,
                                        check_stack, check_team, pool_quota, stop, team_platform)
from components.spec.aws import ACM_CERTIFICATE, HOSTED_ZONE  # the spec's own ARN and zone ID rules
from components.spec.hostnames import HOST_NAME_RULE, bare_host, host_name_problem
from components.spec.network import NetworkSpec

# The CLI asks the template's questions in sorted key order (accelerator before cloud), so region and accelerator
# default to empty and the program picks the chosen cloud's here; Pulumi.yaml's prompts list the same values.
REGION_PAIRS = {"aws": "us-east-1,eu-west-1", "gcp": "us-central1,europe-west4", "azure": "eastus2,westeurope"}
USD_PER_NODE, MAX_NODES = 5000, 8
"""Each region's serving pool's node limit: one on-demand node per 5,000 USD of monthly budget, at least 1, at most 8,
in every region and whatever the accelerator (a fixed rule of thumb, not a price: ai-infra holds no prices)."""
GKE_ZONES = NetworkSpec.model_fields["zones"].default
"""The zones of a GCP region's network (network.zones, left at its default)."""

config = pulumi.Config()


# --- The answers, checked before the platform is built -----------------------------------------------------------
# The checks the templates share are in components.compose.answers; this template's own below report the same way,
# with `stop`: against the config key to change, with the `pulumi config set` command that fixes it.

def check_regions(text: str, cloud: str) -> list[str]:
    """The regions of `region` (comma-separated): two or more different regions of `cloud`."""
    regions = [r.strip() for r in text.split(",") if r.strip()]
    if len(regions) < 2:
        stop("region", f"a multi-region endpoint needs two or more comma-separated {cloud} regions; got '{text}'",
             REGION_PAIRS[cloud])
    twice = next((r for r in regions if regions.count(r) > 1), None)
    if twice is not None:
        stop("region", f"'{twice}' is listed twice in '{text}'; give two or more different regions", REGION_PAIRS[cloud])
    for region in regions:
        def in_its_place(suggested: str, region: str = region) -> str:
            """The list with `suggested` for `region`, unless it would then name a region twice."""
            fixed = [suggested if r == region else r for r in regions]
            return ",".join(fixed) if len(set(fixed)) == len(fixed) else REGION_PAIRS[cloud]

        others_too = all(catalog.region_clouds(r) == catalog.region_clouds(region) for r in regions)
        check_region(region, cloud, fix=in_its_place, switch=others_too)
    return regions


def check_domain(domain: str) -> None:
    problem = host_name_problem(domain)
    if problem is not None:
        stop("domain", f"'{domain}' is not a host name ({problem}); domain is the endpoint's public host name, "
                       f"{HOST_NAME_RULE}", bare_host(domain) or "infer.example.com")


def check_certificates(text: str, regions: list[str]) -> list[str]:
    """AWS: the ACM certificate ARN of each region's TLS listener, in the order of `region`."""
    arns = [c.strip() for c in text.split(",") if c.strip()]
    example = ",".join(f"arn:aws:acm:{r}:<account>:certificate/<id>" for r in regions)
    if len(arns) != len(regions):
        got = f"{len(arns)} ({', '.join(arns)})" if arns else "none"
        stop("certificateArns", f"on AWS each region's TLS listener needs an ACM certificate ARN from its region: one per "
                                f"region, in the order of region ({', '.join(regions)}); got {got}", example)
    for arn, region in zip(arns, regions):
        match = ACM_CERTIFICATE.match(arn)
        if match is None:
            stop("certificateArns", f"'{arn}' is not an ACM certificate ARN (arn:aws:acm:{region}:<account>:certificate/<id>)",
                 example)
        if match["region"] != region:
            stop("certificateArns", f"certificate '{arn}' is in {match['region']}, but the listener in {region} (the same "
                                    f"place in region: {', '.join(regions)}) needs an ACM certificate from {region}", example)
    return arns


def check_hosted_zone(zone: str) -> None:
    """AWS: the Route 53 hosted zone that gets the domain's alias record to the Global Accelerator, if any."""
    if zone and not HOSTED_ZONE.match(zone):
        stop("awsHostedZoneId", f"'{zone}' is not a Route 53 hosted zone ID (Z followed by upper-case letters and digits, "
                                "from `aws route53 list-hosted-zones`)", "Z0123456789ABCDEFGHIJ")


check_stack(pulumi.get_stack())
team, cloud = config.require("team"), config.require("cloud")
check_team(team)
check_cloud(cloud, default="gcp")
regions = check_regions(config.get("region") or REGION_PAIRS[cloud], cloud)
accelerator = config.get("accelerator") or DEFAULT_ACCELERATORS[cloud]
check_accelerator(accelerator, cloud, prefer=(DEFAULT_ACCELERATORS[cloud],))
budget = check_budget(config.require("monthlyBudgetUsd"))
nodes = max(1, min(MAX_NODES, budget // USD_PER_NODE))
domain = config.require("domain")
check_domain(domain)
certificates = check_certificates(config.get("certificateArns") or "", regions) if cloud == "aws" else []
hosted_zone = (config.get("awsHostedZoneId") or "").strip() if cloud == "aws" else ""
check_hosted_zone(hosted_zone)

# --- The platform --------------------------------------------------------------------------------------------------
region_specs = {}
for index, region in enumerate(regions):
    region_specs[region] = {
        "network": {"cidr": f"10.{120 + index}.0.0/16", "transit_encryption": "monitor" if cloud == "azure" else "enforce"},
        "cluster": {},
        # GKE starts a pool with its minimum in every zone (initial_node_count is per zone): one warm node per zone
        # needs a limit of at least one per zone, so below that the GCP pool starts empty and scales from zero.
        "gpu_pools": {"serve": {"accelerator": accelerator, "capacity": "on_demand",
                                "min_nodes": 0 if cloud == "gcp" and nodes < GKE_ZONES else 1, "max_nodes": nodes}},
        "inference": {"certificate": certificates[index]} if certificates else {},
    }
cloud_spec: dict = {"regions": region_specs, "global_endpoint": {"domain": domain}}
if cloud == "aws":  # Global Accelerator has no host name of its own: the domain is a Route 53 record, or your DNS's
    cloud_spec["global_endpoint"] = {"domain": domain, "hosted_zone_id": hosted_zone} if hosted_zone else {}
    if not hosted_zone:
        pulumi.log.warn(f"domain {domain} gets no DNS record on AWS without awsHostedZoneId: point it (CNAME) at the "
                        "exported global_endpoint dns_name, or `pulumi config set awsHostedZoneId <Route 53 zone ID>`")
# The quota applies on each region's cluster: GPU, CPU and memory sized to max_nodes of the resolved instance type.
deploy(validate(team_platform(config, team, budget, {cloud: cloud_spec}, pool_quota(cloud, accelerator, nodes))))
