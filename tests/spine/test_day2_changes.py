"""Day-2 changes a platform team makes to a running prod platform update resources in place: none replaces or
removes anything, and each reaches the cloud as the one input it should change (`aiinfra plan --diff` of the prod
platform before and after the edit)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import edited_stack_plan

from aiinfra.plan.diff import diff_plans

AWS = "clouds/aws/regions/us-east-1"
GCP = "clouds/gcp/regions/us-central1"
AZURE = "clouds/azure/regions/eastus2"


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return edited_stack_plan("prod", {})


def changed(diff: dict[str, Any]) -> dict[str, dict[str, tuple[str, str]]]:
    """{resource name: {input path: (old, new)}} of the resources the diff updates."""
    return {e["urn"].split("::")[-1]: {c["path"]: (c["old"], c["new"]) for c in e["changes"]}
            for group in diff["components"].values() for e in group["changed"]}


def test_scaling_pools_growing_lustre_retiering_and_quotas_update_in_place(base: dict[str, Any]) -> None:
    diff = diff_plans(base, edited_stack_plan("prod", {
        f"{AWS}/gpu_pools/l4-serve/max_nodes": 24, f"{AWS}/gpu_pools/l4-serve/min_nodes": 3,
        f"{GCP}/gpu_pools/l4-serve/max_nodes": 12,
        f"{AZURE}/gpu_pools/a100-serve/max_nodes": 8, f"{AZURE}/gpu_pools/a100-serve/min_nodes": 2,
        f"{AWS}/lustre/train/size_gib": 7200, f"{GCP}/lustre/train/size_gib": 72000,
        f"{AWS}/buckets/models/tiering/warm_after_days": 45,
        "teams/research/gpu_quota": 40,
    }))
    assert {k: diff["counts"][k] for k in ("added", "replaced", "removed")} == {"added": 0, "replaced": 0, "removed": 0}
    updates = changed(diff)
    # The autoscaler keeps owning the node count: a new floor changes minSize, never the desired size it has set.
    assert updates["prod-us-east-1-l4-serve-nodegroup"] == {"scalingConfig.maxSize": ("16", "24"),
                                                            "scalingConfig.minSize": ("2", "3")}
    assert updates["prod-us-central1-l4-serve-pool"] == {"autoscaling.totalMaxNodeCount": ("8", "12")}
    assert updates["prod-eastus2-a100-serve-agentpool"] == {"maxCount": ("6", "8"), "minCount": ("1", "2")}
    # File systems grow in place (FSx for Lustre and GCP Managed Lustre take a larger capacity as an update).
    assert updates["prod-us-east-1-train-fs"] == {"storageCapacity": ("4800", "7200")}
    assert updates["prod-us-central1-train-lustre"] == {"capacityGib": ('"36000"', '"72000"')}
    assert updates["prod-us-east-1-lustre-train-research-pv"] == {"spec.capacity.storage": ('"4800Gi"', '"7200Gi"')}
    assert updates["prod-us-east-1-models-lifecycle"] == {"rules[0].transitions[0].days": ("60", "45")}
    assert updates["prod-us-east-1-research-quota"]['spec.hard["requests.nvidia.com/gpu"]'] == ('"72"', '"80"')
    # Nothing else moves: no bucket, key, cluster or network is touched by these edits.
    touched_types = {e["type"] for g in diff["components"].values() for e in g["changed"]}
    assert not any(t.split(":")[1].startswith(("s3/bucket:", "kms", "eks/cluster", "ec2/vpc", "keyvault", "storage:Storage"))
                   for t in touched_types if ":" in t), touched_types


def test_relabelling_the_cost_center_only_retags(base: dict[str, Any]) -> None:
    head = edited_stack_plan("prod", {"labels/cost_center": "cc-ml-prod-2"})
    diff = diff_plans(base, head)
    assert {k: diff["counts"][k] for k in ("added", "replaced", "removed")} == {"added": 0, "replaced": 0, "removed": 0}
    updates = changed(diff)
    assert len(updates) > 50
    # Each changed resource differs from before by the label's value alone (a tag, a label, the EBS CSI add-on's
    # volume tags), wherever it sits in its inputs.
    before = {r["urn"]: json.dumps(r["inputs"], sort_keys=True) for r in base["resources"]}
    for resource in head["resources"]:
        if resource["urn"].split("::")[-1] in updates:
            relabelled = json.dumps(resource["inputs"], sort_keys=True).replace("cc-ml-prod-2", "cc-ml-prod")
            assert relabelled == before[resource["urn"]], resource["urn"]
    # AWS resources take the new tag from the provider's default tags, so they are not each rewritten here.
    assert updates["prod-aws"] == {'defaultTags.tags["cost-center"]': ('"cc-ml-prod"', '"cc-ml-prod-2"')}
    assert "prod-us-east-1-train-fs" not in updates



def test_shrinking_fsx_replaces_the_file_system(base: dict[str, Any]) -> None:
    # FSx for Lustre cannot shrink: terraform-provider-aws forces a new file system for a smaller storage_capacity (a
    # larger one is the in-place update above). Prod protects it, so the reviewer reads that `pulumi up` refuses.
    diff = diff_plans(base, edited_stack_plan("prod", {f"{AWS}/lustre/train/size_gib": 2400}))
    replaced = {e["urn"].split("::")[-1]: e for g in diff["components"].values() for e in g["replaced"]}
    assert list(replaced) == ["prod-us-east-1-train-fs"]
    fs = replaced["prod-us-east-1-train-fs"]
    assert fs["replaceBecause"] == ["storageCapacity"] and "protected: `pulumi up` will fail" in fs["notes"]
