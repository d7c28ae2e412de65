"""Kubernetes-layer fixtures (helpers in tests/k8s/layer.py, imported as `k8s.layer`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from k8s.layer import make_spec, plan_layer

from aiinfra.plan.runtime import PlanResult


@pytest.fixture(scope="session")
def three_cloud_plan() -> PlanResult:
    return plan_layer(make_spec())


@pytest.fixture
def planner() -> Callable[..., PlanResult]:
    return lambda **kw: plan_layer(make_spec(**kw))
