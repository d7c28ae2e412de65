"""The benchmark (bench/plan_speed.py) reaches into the planner: it swaps the recording monitor's registration and the
SDK's transfer_properties. Not timed here; these only check that its hooks still fit the code they patch, so the
benchmark the README's figures come from still runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("plan_speed", ROOT / "bench" / "plan_speed.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["plan_speed"] = module
    spec.loader.exec_module(module)
    return module


def test_the_benchmarks_hooks_fit_the_planner() -> None:
    bench = _bench()
    seconds, records = bench.plan_once("dev")
    assert seconds > 0 and len(records) > 100
    assert bench.plan_sdk_round_trip("dev") > 0  # the SDK's MockMonitor answering through the monitor's hook
    slots = bench.property_slots("dev")
    assert len(slots) == len(records) and all(n >= 0 for n in slots.values())  # one per registration
    assert bench.replay(records[:50], slots) > 0 and bench.floor(20) > 0
