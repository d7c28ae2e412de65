"""GCP test fixtures: plans of fixed platform specs (planned once per session)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from gcp.support import COMPLIANCE, DEV_GCP, PROD_GCP, gcp_platform, plan_platform

from aiinfra.plan.runtime import PlanResult


@pytest.fixture(scope="session")
def prod_plan() -> PlanResult:
    return plan_platform(gcp_platform(PROD_GCP, environment="prod", compliance=COMPLIANCE), stack="prod")


@pytest.fixture(scope="session")
def dev_plan() -> PlanResult:
    return plan_platform(gcp_platform(DEV_GCP, environment="dev"), stack="dev")


@pytest.fixture
def prod_config() -> dict[str, Any]:
    """The `clouds.gcp` value of the test production environment (a fresh copy)."""
    return copy.deepcopy(PROD_GCP)


@pytest.fixture(scope="session")
def plan_gcp() -> Callable[..., PlanResult]:
    """plan_gcp(gcp_config, environment="test", **top) -> plan of a GCP-only platform (compliance: the prod one)."""

    def plan(gcp: dict[str, Any], environment: str = "test", **top: Any) -> PlanResult:
        top.setdefault("compliance", COMPLIANCE)
        return plan_platform(gcp_platform(gcp, environment=environment, **top), stack=environment)

    return plan

