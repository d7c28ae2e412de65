"""Test helpers importable from any test module (`from helpers import ...`; tests/ is on pythonpath)."""

from __future__ import annotations

import copy
from typing import Any

BASE_PLATFORM: dict[str, Any] = {
    "environment": "test",
    "labels": {"owner": "ml-platform", "team": "ml-platform", "cost_center": "cc-1234"},
    "clouds": {},
}


def platform_dict(clouds: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A valid platform config with the given clouds and top-level overrides (deep-copied)."""
    data = copy.deepcopy(BASE_PLATFORM)
    data["clouds"] = copy.deepcopy(clouds)
    data.update(copy.deepcopy(top))
    return data
