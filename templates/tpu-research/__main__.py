"""A team's TPU research setup on ai-infra components (GCP only): TPU slices (GKE node pools, Cloud TPU VMs or
queued resources, per `tpuMode`) and a bucket."""

import pulumi

from components.compose import deploy, validate

config = pulumi.Config()
team, budget, cloud = config.require("team"), config.require_int("monthlyBudgetUsd"), config.require("cloud")
if budget <= 0:
    raise pulumi.RunError(f"monthlyBudgetUsd: a positive number of US dollars; got {budget}")
generation, _, topology = config.require("accelerator").partition(":")
# gke: TPU node pools in a GKE cluster. tpu_vm: Cloud TPU VMs with their own service account, no cluster.
# queued_resource: Cloud TPU queued resources, no cluster; on-demand only, and their VMs run as the Compute Engine
# default service account (the policy pack reports it), which is why it is never the default.
mode = config.get("tpuMode") or "gke"
region = {
    "network": {"cidr": "10.110.0.0/16"},
    **({"cluster": {}} if mode == "gke" else {}),
    "tpu_slices": {"research": {"generation": generation, "topology": topology, "mode": mode,
                                "capacity": "on_demand" if mode == "queued_resource" else "spot"}},
    "buckets": {"checkpoints": {"data_class": "checkpoints"}},
}
# Any cloud but gcp is refused by the spec with "TPU slices are GCP-only".
cloud_spec = {"regions": {config.require("region"): region}, **({"project": config.require("gcpProject")} if cloud == "gcp" else {})}
deploy(validate({
    "environment": pulumi.get_stack(),
    "labels": {"owner": team, "team": team, "cost_center": team, "extra": {"monthly-budget-usd": str(budget)}},
    "clouds": {cloud: cloud_spec},
    "teams": {team: {"tpu_quota": 64}},
}))
