"""GCP test data and helpers: fixed platform specs, planning, lookups (imported as `gcp.support`)."""

from __future__ import annotations

import copy
from typing import Any

from helpers import platform_dict

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform
PROJECT = "acme-ml-test"
LABELS = {"environment", "team", "cost-center", "managed-by", "owner"}

# Two regions exercising every GCP feature; the URN snapshot is taken from it.
PROD_GCP: dict[str, Any] = {
    "project": PROJECT,
    "zones": {"us-central1": ["us-central1-a", "us-central1-b", "us-central1-c"]},
    "tpu_zones": {"us-central1": {"serve": "us-central1-b"}},
    "regions": {
        "us-central1": {
            "network": {"cidr": "10.20.0.0/16"},
            "cluster": {"kubernetes_version": "1.34", "admins": ["group:ml-platform@example.com"]},
            "gpu_pools": {
                "train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "reserved",
                          "reservation": "a3-res", "max_nodes": 4, "placement": "compact"},
                "serve": {"accelerator": "l4", "capacity": "spot", "max_nodes": 6,
                          "sharing": {"mode": "time_slicing", "replicas_per_gpu": 4}},
                "mig": {"accelerator": "a100-80gb", "accelerators_per_node": 1, "min_nodes": 1, "max_nodes": 3,
                        "sharing": {"mode": "mig", "mig_profile": "1g.10gb"}},
                "batch": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "queued", "max_nodes": 8},
                "flex": {"accelerator": "l4", "capacity": "flex_start", "max_nodes": 2,
                         "sharing": {"mode": "mps", "replicas_per_gpu": 2}},
                "compact": {"accelerator": "a100-80gb", "accelerators_per_node": 8, "max_nodes": 2,
                            "placement": "compact", "zones": ["us-central1-c"],
                            "taints": [{"key": "team", "value": "research", "effect": "NoExecute"}]},
            },
            "tpu_slices": {
                "pretrain": {"generation": "v5p", "topology": "2x4x4", "slices": 2, "capacity": "reserved", "reservation": "v5p-res"},
                "serve": {"generation": "v6e", "topology": "2x2", "capacity": "spot"},
            },
            "lustre": {"scratch": {"size_gib": 18000, "throughput_mbps_per_tib": 500, "bucket": "datasets", "bucket_prefix": "train/"}},
            "buckets": {"datasets": {}, "ckpt": {"data_class": "checkpoints", "autoclass": True}},
            "inference": {"port": 8000, "health_check_path": "/health"},
        },
        "europe-west4": {
            "network": {"cidr": "10.21.0.0/16", "flow_log_retention_days": 400},
            "cluster": {"api_access": "public_restricted", "authorized_cidrs": ["203.0.113.0/24"],
                        "admins": ["group:ml-platform@example.com", "user:oncall@example.com"]},
            "gpu_pools": {"serve": {"accelerator": "l4", "max_nodes": 4}},
            "tpu_slices": {"research": {"generation": "v5e", "topology": "2x4", "mode": "tpu_vm", "capacity": "spot"},
                           "batch": {"generation": "v6e", "topology": "4x4", "mode": "queued_resource", "slices": 2}},
            "buckets": {"eu-data": {"data_zone": "eu", "tiering": {"cold_after_days": None, "expire_after_days": 730}}},
            "inference": {"port": 8000, "health_check_path": "/health"},
        },
    },
    "global_endpoint": {"domain": "infer.example.com"},
}
COMPLIANCE = {"profiles": ["baseline", "hipaa"], "data_zones": {"eu": ["europe-west4"]}}

DEV_GCP: dict[str, Any] = {
    "project": PROJECT,
    "regions": {"us-central1": {
        "network": {"cidr": "10.30.0.0/20", "zones": 2, "nat": "single", "flow_log_retention_days": 30},
        "cluster": {"system_pool": {"min_nodes": 1, "max_nodes": 2}},
        "gpu_pools": {"dev": {"accelerator": "l4", "capacity": "spot", "max_nodes": 1}},
        "buckets": {"scratch": {"versioning": False, "tiering": {"cold_after_days": None, "archive_after_days": None, "expire_after_days": 60}}},
    }},
}


def gcp_platform(gcp: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A platform config with only GCP; the Kubernetes layer is off (tests here plan GCP resources only)."""
    top.setdefault("addons", {"enabled": False})
    return platform_dict({"gcp": copy.deepcopy(gcp)}, **top)


def plan_platform(data: dict[str, Any], stack: str = "test") -> PlanResult:
    spec = load_platform(data)
    return run_program(lambda: build_platform(spec), project="ai-infra", stack=stack)


def by_name(plan: PlanResult, name: str) -> dict[str, Any]:
    """Inputs of the one resource named `name`."""
    found = [r for r in plan.resources if r.name == name]
    assert len(found) == 1, f"{name}: {[r.name for r in found]}"
    return found[0].inputs
