"""Shared test fixtures: every plan runs on a fresh event loop with fresh mocks (see aiinfra.plan.runtime)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import importlib
import pkgutil

import hypothesis
import pytest
from helpers import platform_dict
from hypothesis import settings

# Every hypothesis module imported here, at the shallow stack of collection. Hypothesis loads some lazily (the regex
# strategy on a first `st.from_regex`, the optimiser on a first shrink or target phase), and pytest's assertion
# rewriting (hypothesis is a pytest plugin) then parses them deep inside a test's stack, where CPython 3.11.7's parser
# can fail with "SystemError: AST constructor recursion depth mismatch" (fixed in later 3.11 releases): a test failing
# at random under xdist. Its optional extras (numpy, pandas, ...) are left out.
for _module in pkgutil.walk_packages(hypothesis.__path__, "hypothesis."):
    if not _module.name.startswith(("hypothesis.extra", "hypothesis.vendor")):
        importlib.import_module(_module.name)

# No per-example deadline: the first example of a property test may import a provider SDK module
# (seconds on a cold machine), which the default 200 ms deadline turns into a flaky failure.
settings.register_profile("ai-infra", deadline=None)
settings.load_profile("ai-infra")

from aiinfra.plan.runtime import PlanResult, RecordingMonitor, run_program
from components.spec import Platform, load_platform


@pytest.fixture
def make_platform() -> Callable[..., Platform]:
    """make_platform(clouds, **top) -> validated Platform."""
    return lambda clouds, **top: load_platform(platform_dict(clouds, **top))


@pytest.fixture
def plan() -> Callable[..., PlanResult]:
    """plan(program, stack="test", config=None) -> PlanResult of everything `program` registered."""

    def run(program: Callable[[], Any], stack: str = "test", config: dict[str, str] | None = None) -> PlanResult:
        return run_program(program, project="ai-infra", stack=stack, config=config)

    return run


@pytest.fixture
def aliases_sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list]]:
    """URN -> the aliases of its RegisterResourceRequest, as the engine would receive them."""
    sent: dict[str, list] = {}
    register = RecordingMonitor.RegisterResource

    def recording(self: RecordingMonitor, request):  # noqa: ANN001
        response = register(self, request)
        sent[response.urn] = list(request.aliases)
        return response

    monkeypatch.setattr(RecordingMonitor, "RegisterResource", recording)
    yield sent
