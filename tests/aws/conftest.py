"""AWS test fixtures: fixed platform specs and their plans (planned once per session: a plan takes a second or more)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from helpers import platform_dict

from aiinfra.plan.runtime import PlanResult, ResourceRecord, run_program
from components.compose import build_platform
from components.spec import load_platform

EAST = "prod-us-east-1"
WEST = "prod-eu-west-1"
CAPACITY_BLOCK = "cr-0a1b2c3d4e5f60718"
RESERVATION = "cr-0123456789abcdef0"
ADMIN = "arn:aws:iam::123456789012:role/platform-admins"
CERT_EAST = "arn:aws:acm:us-east-1:123456789012:certificate/1c2d3e4f-5061-7283-94a5-b6c7d8e9f0a1"
CERT_WEST = "arn:aws:acm:eu-west-1:123456789012:certificate/2d3e4f50-6172-8394-a5b6-c7d8e9f0a1b2"

# The two-region production environment the tests and the URN snapshot use.
PROD_AWS: dict[str, Any] = {
    "regions": {
        "us-east-1": {
            "network": {"cidr": "10.60.0.0/16"},
            "cluster": {"admins": [ADMIN], "system_pool": {"min_nodes": 3, "max_nodes": 6}},
            "gpu_pools": {
                "h100-train": {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "capacity_block",
                               "reservation": CAPACITY_BLOCK, "zones": ["us-east-1a"], "max_nodes": 4, "efa": True,
                               "placement": "compact"},
                "trn2-train": {"accelerator": "trainium2", "max_nodes": 4, "efa": True, "placement": "compact"},
                "l4-spot": {"accelerator": "l4", "accelerators_per_node": 1, "capacity": "spot", "max_nodes": 8,
                            "taints": [{"key": "team", "value": "research", "effect": "NoSchedule"}], "labels": {"tier": "batch"}},
            },
            "lustre": {"train": {"size_gib": 4800, "throughput_mbps_per_tib": 500, "bucket": "datasets", "bucket_prefix": "train/"}},
            "buckets": {
                "datasets": {},
                "ckpt": {"data_class": "checkpoints",
                         "tiering": {"warm_after_days": 30, "cold_after_days": 90, "archive_after_days": None, "expire_after_days": 400},
                         "noncurrent_expire_after_days": 14},
            },
            "inference": {"certificate": CERT_EAST, "traffic_percent": 100},
        },
        "eu-west-1": {
            "network": {"cidr": "10.61.0.0/16"},
            "cluster": {},
            "gpu_pools": {"serve": {"instance_type": "g6e.xlarge", "min_nodes": 1, "max_nodes": 4}},
            "buckets": {"eu-models": {"data_class": "models", "data_zone": "eu"}},
            "inference": {"certificate": CERT_WEST, "traffic_percent": 40},
        },
    },
    "global_endpoint": {"routing": "anycast"},
}

DEV_AWS: dict[str, Any] = {
    "regions": {"us-east-1": {
        "network": {"cidr": "10.10.0.0/20", "zones": 2, "nat": "single", "transit_encryption": "monitor",
                    "flow_log_retention_days": 30},
        "cluster": {"system_pool": {"min_nodes": 1, "max_nodes": 2}},
        "gpu_pools": {"l4-spot": {"accelerator": "l4", "capacity": "spot", "min_nodes": 0, "max_nodes": 2}},
        "lustre": {"scratch": {"deployment": "scratch", "size_gib": 1200, "bucket": "datasets"}},
        "buckets": {"datasets": {"tiering": {"cold_after_days": None, "archive_after_days": None, "expire_after_days": 60}}},
    }},
}

COMPLIANCE = {"data_zones": {"eu": ["eu-west-1"]}}


def aws_platform(aws: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A platform config with only AWS; the Kubernetes layer is off (tests here plan AWS resources only)."""
    top.setdefault("addons", {"enabled": False})
    top.setdefault("compliance", COMPLIANCE)
    return platform_dict({"aws": copy.deepcopy(aws)}, **top)


def plan_platform(data: dict[str, Any], stack: str = "test") -> PlanResult:
    spec = load_platform(data)
    return run_program(lambda: build_platform(spec), project="ai-infra", stack=stack)


def children_of(plan: PlanResult, component: str, type_: str | None = None) -> list[ResourceRecord]:
    """Resources parented to the component named `component` (optionally of one type)."""
    parents = {r.urn for r in plan.resources if r.name == component and not r.custom}
    return [r for r in plan.resources if r.parent in parents and (type_ is None or r.type == type_)]


@pytest.fixture(scope="session")
def children() -> Callable[..., list[ResourceRecord]]:
    """children(plan, component_name, type=None) -> the component's child resources."""
    return children_of


@pytest.fixture(scope="session")
def prod_plan() -> PlanResult:
    return plan_platform(aws_platform(PROD_AWS, environment="prod"), stack="prod")


@pytest.fixture(scope="session")
def dev_plan() -> PlanResult:
    return plan_platform(aws_platform(DEV_AWS, environment="dev"), stack="dev")


@pytest.fixture(scope="session")
def prod_config() -> dict[str, Any]:
    """The `clouds.aws` value of the production environment (a copy; deep-copy it before changing it)."""
    return copy.deepcopy(PROD_AWS)


@pytest.fixture(scope="session")
def plan_aws() -> Callable[..., PlanResult]:
    """plan_aws(aws_config, environment="test", **top) -> plan of an AWS-only platform."""
    return lambda aws, environment="test", **top: plan_platform(aws_platform(aws, environment=environment, **top), stack=environment)
