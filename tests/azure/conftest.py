"""Azure test fixtures: fixed platform specs and their plans (planned once per session: a plan takes seconds)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from helpers import platform_dict

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose import build_platform
from components.spec import load_platform

ADMIN_GROUP = "11111111-2222-3333-4444-555555555555"
HPC_CACHE_PRINCIPAL = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
CRG = "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/rg-capacity/providers/Microsoft.Compute/capacityReservationGroups/crg-h200"
TAGS = {"environment", "team", "cost-center", "managed-by"}

# The two-region production environment the tests and the URN snapshot use.
PROD_AZURE: dict[str, Any] = {
    "admin_group_object_ids": [ADMIN_GROUP],
    "hpc_cache_principal_id": HPC_CACHE_PRINCIPAL,
    "allow_shared_key_for_lustre": True,
    "regions": {
        "eastus2": {
            "network": {"cidr": "10.40.0.0/16", "transit_encryption": "monitor"},
            "cluster": {},
            "gpu_pools": {
                "train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "spot", "max_nodes": 4,
                          "sharing": {"mode": "mig", "mig_profile": "3g.40gb"}},
                "batch": {"instance_type": "Standard_ND96isr_H200_v5", "capacity": "reserved", "reservation": CRG,
                          "max_nodes": 2, "driver": "operator"},
            },
            "lustre": {"scratch": {"size_gib": 16384, "bucket": "datasets", "bucket_prefix": "train/"}},
            "buckets": {
                "datasets": {},
                "ckpt": {"data_class": "checkpoints", "tiering": {"archive_after_days": None, "expire_after_days": 400}},
            },
            "inference": {},
        },
        "swedencentral": {
            "network": {"cidr": "10.41.0.0/16", "transit_encryption": "monitor"},
            "cluster": {},
            "gpu_pools": {"serve": {"accelerator": "a100-80gb", "accelerators_per_node": 1, "max_nodes": 2}},
            "inference": {"traffic_percent": 50},
        },
    },
    "global_endpoint": {"domain": "infer.example.com"},
}


def azure_platform(azure: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A platform config with only Azure; the Kubernetes layer is off (tests here plan Azure resources only)."""
    top.setdefault("addons", {"enabled": False})
    return platform_dict({"azure": copy.deepcopy(azure)}, **top)


def plan_platform(data: dict[str, Any], stack: str = "test") -> PlanResult:
    spec = load_platform(data)
    return run_program(lambda: build_platform(spec), project="ai-infra", stack=stack)


@pytest.fixture(scope="session")
def prod_plan() -> PlanResult:
    return plan_platform(azure_platform(PROD_AZURE, environment="prod"), stack="prod")


# A small development environment: one region, a cheap cluster, no Lustre.
DEV_AZURE: dict[str, Any] = {"regions": {"eastus2": {
    "network": {"cidr": "10.50.0.0/20", "transit_encryption": "monitor", "zones": 2, "nat": "single",
                "flow_log_retention_days": 30},
    "cluster": {"system_pool": {"min_nodes": 1, "max_nodes": 2}},
    "gpu_pools": {"dev": {"accelerator": "t4", "capacity": "spot", "max_nodes": 1}},
    "buckets": {"scratch": {"tiering": {"cold_after_days": None, "archive_after_days": None, "expire_after_days": 60}}},
}}}


@pytest.fixture(scope="session")
def dev_plan() -> PlanResult:
    return plan_platform(azure_platform(DEV_AZURE, environment="dev"), stack="dev")


@pytest.fixture(scope="session")
def prod_config() -> dict[str, Any]:
    """The `clouds.azure` value of the production environment (a copy; deep-copy it before changing it)."""
    return copy.deepcopy(PROD_AZURE)


@pytest.fixture(scope="session")
def dev_config() -> dict[str, Any]:
    """The `clouds.azure` value of the development environment (a copy)."""
    return copy.deepcopy(DEV_AZURE)


@pytest.fixture(scope="session")
def plan_azure() -> Callable[..., PlanResult]:
    """plan_azure(azure_config, environment="test", **top) -> plan of an Azure-only platform."""
    return lambda azure, environment="test", **top: plan_platform(azure_platform(azure, environment=environment, **top), stack=environment)


def front_door_plan(tier: str, environment: str, **swedencentral: Any) -> PlanResult:
    """Production with Front Door `tier`, without Lustre, buckets or GPU pools (Front Door only), planned as
    `environment`; `swedencentral` overrides that region's inference settings."""
    config = copy.deepcopy(PROD_AZURE)
    config["global_endpoint"]["azure_tier"] = tier
    config["regions"]["swedencentral"]["inference"].update(swedencentral)
    for region in config["regions"].values():
        region.pop("lustre", None)
        region.pop("buckets", None)
        region["gpu_pools"] = {}
    return plan_platform(azure_platform(config, environment=environment), stack=environment)


@pytest.fixture(scope="session")
def standard_plan() -> PlanResult:
    """Production with Front Door Standard (public origins), planned as staging."""
    return front_door_plan("standard", "staging")
