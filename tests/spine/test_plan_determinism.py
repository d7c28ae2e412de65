"""A second `pulumi up` with no config change must change nothing: the inputs a stack registers may not depend on
Python's per-process hash seed (set and dict-of-set iteration order), which differs between two `pulumi up` runs. Nor may the plan document depend on the order its registrations
reached the monitor in from the SDK's thread pool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from aiinfra.plan.diff import diff_plans

ROOT = Path(__file__).resolve().parents[2]


def _plan(stack: str, seed: int, out: Path) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    subprocess.run([sys.executable, "-c", "import sys; from aiinfra.cli import run; sys.exit(run())", "plan", "--stack",
                    stack, "-q", "--no-policy", "--json", str(out)], check=True, capture_output=True, cwd=ROOT, env=env)
    return json.loads(out.read_text())


def test_prod_plans_the_same_inputs_and_options_under_any_hash_seed(tmp_path: Path) -> None:
    first, second = (_plan("prod", seed, tmp_path / f"{seed}.json") for seed in (1, 2))
    diff = diff_plans(first, second)
    changed = [(e["urn"], e["changes"], e["options"]) for g in diff["components"].values()
               for kind in ("changed", "replaced") for e in g[kind]]
    assert diff["counts"] == {"added": 0, "changed": 0, "replaced": 0, "removed": 0}, changed[:5]
    assert len(first["resources"]) == len(second["resources"]) > 900
    # The whole document, resources in the same order too: two plans of one config are the same file.
    assert first == second
