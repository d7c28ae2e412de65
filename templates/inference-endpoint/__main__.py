"""GPU serving pools in several regions behind the cloud's global endpoint, on ai-infra components."""

import pulumi

from components.compose import deploy, validate

config = pulumi.Config()
cloud, team, budget = config.require("cloud"), config.require("team"), config.require_int("monthlyBudgetUsd")
if budget <= 0:
    raise pulumi.RunError(f"monthlyBudgetUsd: a positive number of US dollars; got {budget}")
regions = [r.strip() for r in config.require("region").split(",") if r.strip()]
certificates = [c.strip() for c in (config.get("certificateArns") or "").split(",") if c.strip()]
if len(regions) < 2:
    raise pulumi.RunError(f"region: give two or more comma-separated regions for a multi-region endpoint; got {regions}")
region_specs = {}
for index, region in enumerate(regions):
    inference = {"certificate": certificates[index]} if cloud == "aws" and index < len(certificates) else {}
    region_specs[region] = {
        "network": {"cidr": f"10.{120 + index}.0.0/16", "transit_encryption": "monitor" if cloud == "azure" else "enforce"},
        "cluster": {},
        "gpu_pools": {"serve": {"accelerator": config.require("accelerator"), "capacity": "on_demand", "min_nodes": 1,
                                "max_nodes": max(1, min(8, budget // 5000))}},
        "inference": inference,
    }
cloud_spec = {"regions": region_specs, "global_endpoint": {"domain": config.require("domain")}}
if cloud == "gcp":
    cloud_spec["project"] = config.require("gcpProject")
if cloud == "azure":  # Azure refuses a role assignment whose principal type is wrong: say who deploys
    cloud_spec["deployer"] = config.get("azureDeployer") or "user"
deploy(validate({
    "environment": pulumi.get_stack(),
    "labels": {"owner": team, "team": team, "cost_center": team, "extra": {"monthly-budget-usd": str(budget)}},
    "clouds": {cloud: cloud_spec},
    "teams": {team: {"gpu_quota": 8}},
}))
