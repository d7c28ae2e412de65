"""Loads the JSON data files shipped inside the package (stdlib only, parsed once on first use)."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any


@functools.cache
def load(name: str) -> Any:
    """Parsed content of `data/<name>.json`; the `_comment` keys are documentation only."""
    text = resources.files(__package__).joinpath("data", f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)
