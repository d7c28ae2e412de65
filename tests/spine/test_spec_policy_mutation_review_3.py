"""Pins behaviour of the accelerator rules of the policy pack (policies/aiinfra_policy/accelerators.py) and of the TPU
slice and alert receiver specs (components/spec/compute.py, components/spec/alerts.py) that the rest of the suite left
free to change. Each case came from a mutation review: a small edit (a taint key dropped, an environment check
widened, a name bound moved by one, a check removed) that no other test caught. Policy cases give props in the wire
form the engine sends; spec cases assert what a user sees: the config path, the value given and what is allowed, or
that a valid config loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import platform_dict, spec_issues
from policy_helpers import run_resource
from spine.test_spec_mutation_review import ACTION_GROUP, aws, gcp

from components.aws.prometheus import alertmanager_definition
from components.spec import load_platform

EKS_POOL, GKE_POOL, AKS_POOL = ("aws:eks/nodeGroup:NodeGroup", "gcp:container/nodePool:NodePool",
                                "azure-native:containerservice:AgentPool")
ROOT = Path(__file__).resolve().parents[2]
SLICE = "platform.clouds.gcp.regions.us-central1.tpu_slices.pretrain"


# --- accelerator-pool-tainted ---------------------------------------------------------------------------------------

def test_a_neuron_pool_tainted_for_neuron_is_tainted() -> None:
    """Trainium and Inferentia nodes carry aws.amazon.com/neuron, not nvidia.com/gpu: that taint keeps CPU pods off."""
    group = {"instanceTypes": ["trn2.48xlarge"], "scalingConfig": {"minSize": 0, "maxSize": 2}}
    assert run_resource("accelerator-pool-tainted", EKS_POOL, group) == [
        "trainium2 pool has no accelerator taint: CPU pods can land on its nodes"]
    neuron = [{"key": "aws.amazon.com/neuron", "value": "true", "effect": "NO_SCHEDULE"}]
    assert run_resource("accelerator-pool-tainted", EKS_POOL, {**group, "taints": neuron}) == []


def test_a_tpu_pool_of_a_generation_outside_the_catalog_needs_no_taint() -> None:
    """GKE taints every TPU node pool google.com/tpu itself, whether or not the catalog knows the generation."""
    pool = {"cluster": "c", "nodeConfig": {"machineType": "ct9x-standard-4t"}, "nodeCount": 1,
            "nodeLocations": ["us-central1-a"]}
    assert run_resource("accelerator-pool-tainted", GKE_POOL, pool) == []


# --- dev-pools-spot-or-scale-to-zero ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("environment", "found"), [
    ("dev", ["dev a100-80gb pool keeps 1 on-demand nodes running; use spot or min 0"]),
    ("staging", []),
    ("test", []),
])
def test_only_dev_pools_must_be_spot_or_scale_to_zero(environment: str, found: list[str]) -> None:
    """A staging pool kept warm on demand is a deliberate choice; only dev is held to spot or zero."""
    pool = {"vmSize": "Standard_NC24ads_A100_v4", "minCount": 1, "maxCount": 2, "scaleSetPriority": "Regular"}
    assert run_resource("dev-pools-spot-or-scale-to-zero", AKS_POOL, pool, {"environment": environment}) == found


@pytest.mark.parametrize("config", ["dev.json", "baseline.json"])
def test_the_dev_pool_rule_runs_in_the_configs_a_dev_stack_uses(config: str) -> None:
    """Dev stacks run the baseline profile (ComplianceSpec's default), so a rule about dev pools must be on there, or a
    dev pool kept warm on demand is never reported."""
    settings = json.loads((ROOT / "policies" / "config" / config).read_text())["dev-pools-spot-or-scale-to-zero"]
    assert settings["enforcementLevel"] == "advisory"
    assert settings["environment"] == ("dev" if config == "dev.json" else "unknown")


@pytest.mark.parametrize(("environment", "found"), [
    ("dev", ["dev a100-80gb pool keeps 1 on-demand nodes running; use spot or min 0"]), ("prod", []), (None, [])])
def test_under_the_baseline_config_the_dev_pool_rule_reads_the_pools_environment_tag(environment: str | None,
                                                                                    found: list[str]) -> None:
    """The baseline config serves any project (`environment: unknown`): the pool's own environment tag says whether
    it is a dev pool; a pool without one is not judged as dev."""
    tags = {"environment": environment} if environment else {}
    pool = {"vmSize": "Standard_NC24ads_A100_v4", "minCount": 1, "maxCount": 2, "scaleSetPriority": "Regular",
            "tags": tags}
    assert run_resource("dev-pools-spot-or-scale-to-zero", AKS_POOL, pool, {"environment": "unknown"}) == found


# --- TPU slices (compute.TpuSliceSpec) ------------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "capacity"), [("gke", "flex_start"), ("tpu_vm", "spot"), ("gke", "on_demand")])
def test_a_tpu_reservation_without_reserved_capacity_is_refused(mode: str, capacity: str) -> None:
    """A reservation the slice would never consume (it buys spot or on-demand capacity) is a config mistake."""
    slices = {"pretrain": {"generation": "v5e", "topology": "2x4", "mode": mode, "capacity": capacity,
                           "reservation": "tpu-res"}}
    clouds = gcp({"network": {"cidr": "10.20.0.0/16"}, "cluster": {}, "tpu_slices": slices})
    assert spec_issues(platform_dict(clouds)) == [
        (f"{SLICE}.reservation", f"reservation is only allowed with capacity 'reserved', not '{capacity}'")]


# --- alert receivers (alerts.AlertsSpec) ---------------------------------------------------------------------------

def managed_aws(alerts: dict[str, Any]) -> dict[str, Any]:
    return platform_dict(aws({"network": {"cidr": "10.10.0.0/16"}, "cluster": {}}),
                         addons={"monitoring": "managed", "alerts": alerts})


@pytest.mark.parametrize("arn", [
    "arn:aws:sns:us-east-1:123456789012:" + "a" * 256,
    "arn:aws-us-gov:sns:us-gov-west-1:123456789012:gpu-alerts",
    "arn:aws-cn:sns:cn-north-1:123456789012:gpu-alerts",
], ids=["longest-name", "govcloud", "china"])
def test_a_standard_topic_of_any_partition_with_a_name_up_to_256_characters_is_a_receiver(arn: str) -> None:
    """SNS names take up to 256 characters, and the toolkit deploys to every AWS partition: AMP signs for the topic's
    region."""
    assert load_platform(managed_aws({"sns_topic_arn": arn})).addons.alerts.sns_topic_arn == arn
    region = arn.split(":")[3]
    assert f"      sigv4:\n        region: {region}\n" in alertmanager_definition(arn)


def test_an_sns_topic_name_over_256_characters_is_refused() -> None:
    arn = "arn:aws:sns:us-east-1:123456789012:" + "a" * 257
    assert spec_issues(managed_aws({"sns_topic_arn": arn})) == [(
        "platform.addons.alerts.sns_topic_arn",
        f"'{arn}' is not a standard SNS topic's ARN, arn:aws:sns:<region>:<12-digit account>:<name> (name: 1 to 256 "
        "letters, digits, '-' and '_'; FIFO topics are not accepted by Amazon Managed Prometheus)")]


def test_an_action_group_without_an_aks_cluster_names_the_azure_clouds_config() -> None:
    """The message tells the user where the missing cluster would go: clouds.azure."""
    value = ACTION_GROUP.format("rg-ml")
    assert spec_issues(managed_aws({"action_group_id": value})) == [(
        "platform.addons.alerts.action_group_id",
        f"'{value}' has no effect: it is the receiver of the AKS clusters' managed Prometheus, and no region of "
        "clouds.azure has a cluster; add one or remove addons.alerts.action_group_id")]
