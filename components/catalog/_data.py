"""Loads the JSON data files shipped inside the package (stdlib only, parsed once on first use)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

# A plain path, not importlib.resources: that import alone costs ~20 ms, and the wheel installs
# the package unzipped, so the data files sit next to this module.
_DATA = Path(__file__).parent / "data"


@functools.cache
def load(name: str) -> Any:
    """Parsed content of `data/<name>.json`; the `_comment` keys are documentation only."""
    return json.loads((_DATA / f"{name}.json").read_text(encoding="utf-8"))
