"""A team's GPU training cluster on ai-infra components: network, cluster, GPU pool, Lustre, tiered buckets."""

import pulumi

from components.compose import deploy, validate

config = pulumi.Config()
cloud, region = config.require("cloud"), config.require("region")
team, budget = config.require("team"), config.require_int("monthlyBudgetUsd")
if budget <= 0:
    raise pulumi.RunError(f"monthlyBudgetUsd: a positive number of US dollars; got {budget}")
# Lustre sizes and tiers each cloud accepts at its smallest (see `aiinfra catalog`).
LUSTRE = {"aws": {"size_gib": 1200, "throughput_mbps_per_tib": 125, "bucket": "datasets"},
          "gcp": {"size_gib": 18000, "throughput_mbps_per_tib": 500, "bucket": "datasets"},
          "azure": {"size_gib": 16384, "throughput_mbps_per_tib": 125}}

region_spec = {
    "network": {"cidr": "10.100.0.0/16", "transit_encryption": "monitor" if cloud == "azure" else "enforce"},
    "cluster": {},
    "gpu_pools": {"train": {"accelerator": config.require("accelerator"), "capacity": "spot", "min_nodes": 0,
                            "max_nodes": max(1, min(8, budget // 2500))}},  # a rough cap: one spot node per $2.5k/month
    "lustre": {"scratch": LUSTRE[cloud]} if cloud in LUSTRE else {},  # another cloud: the spec names the allowed ones
    "buckets": {"datasets": {"data_class": "datasets"}, "checkpoints": {"data_class": "checkpoints"}},
}
cloud_spec = {"regions": {region: region_spec}}
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
