"""A team's TPU research setup on ai-infra components (GCP only): TPU slices (GKE node pools, Cloud TPU VMs or
queued resources, per `tpuMode`) and a bucket."""

import pulumi

from components import catalog
from components.compose import deploy, validate
from components.compose.answers import (check_budget, check_cloud, check_gcp_project, check_region, check_stack, check_team,
                                        stop, team_platform)
from components.spec.compute import TpuMode

ONLY_GCP = "TPU slices are GCP-only"
MAX_CHIPS = 64
"""The most chips a slice of this template may have, and the team's tpu_quota: the policy pack's gpu-cap-per-pool
(maxGpusPerPool, 64 unless a policy config sets it; baseline.json does not) blocks a bigger slice at preview."""

config = pulumi.Config()


# --- The answers, checked before the platform is built -----------------------------------------------------------
# The checks the templates share are in components.compose.answers; this template's own below report the same way,
# with `stop`: against the config key to change, with the `pulumi config set` command that fixes it.

def check_accelerator(accelerator: str) -> tuple[str, str]:
    """(generation, topology) of `<generation>:<topology>`, a slice shape the catalog knows, of at most MAX_CHIPS chips."""
    generation, colon, topology = accelerator.partition(":")
    generations = ", ".join(g.name for g in catalog.tpu_generations())
    if not colon or not generation or not topology:
        stop("accelerator", f"'{accelerator}' is not <generation>:<topology>; generations: {generations}", "v5e:2x4")
    try:
        chips = catalog.resolve_tpu_slice(generation, topology).chips
    except catalog.CatalogError as err:
        stop("accelerator", f"'{accelerator}': {err}", "v5e:2x4", " (`aiinfra catalog` lists the generations and shapes)")
    if chips > MAX_CHIPS:
        sizes = {t: catalog.resolve_tpu_slice(generation, t).chips for t in catalog.tpu_generation(generation).topologies}
        fitting = max((t for t in sizes if sizes[t] <= MAX_CHIPS), key=sizes.__getitem__)  # the largest that fits
        stop("accelerator", f"'{accelerator}' is a slice of {chips} chips; this template's slices have at most {MAX_CHIPS} "
                            f"(the policy pack's per-pool cap, maxGpusPerPool, and the team's tpu_quota)",
             f"{generation}:{fitting}")
    return generation, topology


def check_mode(mode: str) -> str:
    allowed = [m.value for m in TpuMode]
    if mode not in allowed:
        stop("tpuMode", f"'{mode}' is not a TPU mode; allowed: {', '.join(allowed)}", "gke")
    return mode


check_stack(pulumi.get_stack())
team, cloud = config.require("team"), config.require("cloud")
check_team(team)
check_cloud(cloud, default="gcp", allowed=("gcp",), refused=f"has no TPUs: {ONLY_GCP}")
region_name = config.require("region")
check_region(region_name, "gcp", only=ONLY_GCP)
generation, topology = check_accelerator(config.require("accelerator"))
# gke: TPU node pools in a GKE cluster. tpu_vm: Cloud TPU VMs with their own service account, no cluster.
# queued_resource: Cloud TPU queued resources, no cluster; on-demand only, and their VMs run as the Compute Engine
# default service account (the policy pack reports it), which is why it is never the default.
mode = check_mode(config.get("tpuMode") or "gke")
budget = check_budget(config.require("monthlyBudgetUsd"))
project = check_gcp_project(config.get("gcpProject"))

# --- The platform --------------------------------------------------------------------------------------------------
region = {
    "network": {"cidr": "10.110.0.0/16"},
    **({"cluster": {}} if mode == "gke" else {}),
    "tpu_slices": {"research": {"generation": generation, "topology": topology, "mode": mode,
                                "capacity": "on_demand" if mode == "queued_resource" else "spot"}},
    "buckets": {"checkpoints": {"data_class": "checkpoints"}},
}
deploy(validate(team_platform(config, team, budget, {"gcp": {"regions": {region_name: region}, "project": project}},
                              {"tpu_quota": MAX_CHIPS})))
