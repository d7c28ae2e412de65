"""A team's GPU training cluster on ai-infra components: network, cluster, GPU pool, Lustre, tiered buckets."""

import pulumi

from components.compose import deploy, validate
from components.compose.answers import (DEFAULT_ACCELERATORS, check_accelerator, check_budget, check_cloud, check_region,
                                        check_stack, check_team, pool_quota, team_platform)

# The CLI asks the template's questions in sorted key order (accelerator and region before cloud), so their defaults
# are empty and the program picks the chosen cloud's here; Pulumi.yaml's prompts list the same values.
REGIONS = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus2"}
USD_PER_NODE, MAX_NODES = 2500, 8
"""The GPU pool's node limit: one node per 2,500 USD of monthly budget, at least 1, at most 8, whatever the accelerator
(a fixed rule of thumb, not a price: ai-infra holds no prices)."""
# Lustre sizes and tiers each cloud accepts at its smallest (see `aiinfra catalog`).
LUSTRE = {"aws": {"size_gib": 1200, "throughput_mbps_per_tib": 125, "bucket": "datasets"},
          "gcp": {"size_gib": 18000, "throughput_mbps_per_tib": 500, "bucket": "datasets"},
          "azure": {"size_gib": 16384, "throughput_mbps_per_tib": 125}}

config = pulumi.Config()


# --- The answers, checked before the platform is built -----------------------------------------------------------
# The checks are components.compose.answers': each mistake is reported against the config key to change, with
# the `pulumi config set` command that fixes it.
check_stack(pulumi.get_stack())
team, cloud = config.require("team"), config.require("cloud")
check_team(team)
check_cloud(cloud, default="aws")
region = config.get("region") or REGIONS[cloud]
check_region(region, cloud)
accelerator = config.get("accelerator") or DEFAULT_ACCELERATORS[cloud]
check_accelerator(accelerator, cloud, prefer=(DEFAULT_ACCELERATORS[cloud],))
budget = check_budget(config.require("monthlyBudgetUsd"))
nodes = max(1, min(MAX_NODES, budget // USD_PER_NODE))

# --- The platform --------------------------------------------------------------------------------------------------
region_spec = {
    "network": {"cidr": "10.100.0.0/16", "transit_encryption": "monitor" if cloud == "azure" else "enforce"},
    "cluster": {},
    "gpu_pools": {"train": {"accelerator": accelerator, "capacity": "spot", "min_nodes": 0,
                            "max_nodes": nodes}},
    "lustre": {"scratch": LUSTRE[cloud]},
    "buckets": {"datasets": {"data_class": "datasets"}, "checkpoints": {"data_class": "checkpoints"}},
}
# The team may use the whole pool: GPU, CPU and memory quotas sized to max_nodes of the resolved instance type.
deploy(validate(team_platform(config, team, budget, {cloud: {"regions": {region: region_spec}}},
                              pool_quota(cloud, accelerator, nodes))))
