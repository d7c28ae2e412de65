"""Benchmark (not a test): offline plan speed against the bare-SDK floor, CLI cold start, SDK imports.

Prints figures measured in this run; asserts nothing. Run: `.venv/bin/python bench/plan_speed.py [--stack prod]`.
  1. plan time of the stack vs the floor: the same number of plain resources registered on the same
     mock runtime, in the same process (warm: SDK modules already imported; cold: first plan incl. imports);
     and, to show where the gap lies, the plan's own registrations replayed as plain resources with the
     same inputs (the cost of the inputs' volume alone), then again with as many properties as the typed provider
     classes give each resource (their output properties too, each of which the SDK turns into an Output);
  2. `aiinfra --help` cold start and the whole `aiinfra plan` command (fresh interpreter each run), with its peak
     resident memory;
  3. which provider SDKs an AWS-only plan imports (fresh interpreter).
The warm plan is also timed with the SDK's own MockMonitor answering each registration, to show what the recording
monitor's wire-form echo saves. Every timed run starts after a full collection (`fresh_heap`). `--profile` adds where
one warm plan's time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

AWS_ONLY_SNIPPET = """
import json, sys
from aiinfra.plan.project import load_project
from aiinfra.plan.program import plan_stack
result = plan_stack(load_project(__import__('pathlib').Path(sys.argv[1])), sys.argv[2])
mods = sorted({m.split('.')[0] for m in sys.modules if m.startswith('pulumi_')})
print(json.dumps({'resources': len(result.resources), 'provider_sdks': mods}))
"""


def fresh_heap() -> None:
    """Collect what earlier runs left, so each timed run starts from the heap a fresh `aiinfra plan` process has.
    Without it, a run pays for collecting the previous plan's cyclic garbage (about 1 s: a full collection over the
    ~10^6 objects of the imported SDKs)."""
    gc.collect()


def floor(count: int) -> float:
    import pulumi

    from aiinfra.plan.runtime import run_program

    def program() -> None:
        for i in range(count):
            pulumi.CustomResource("bench:index:Plain", f"r{i}", {"value": i, "tags": {"team": "bench"}})

    fresh_heap()
    start = time.perf_counter()
    run_program(program, project="bench", stack="floor")
    return time.perf_counter() - start


def replay(records: list, slots: dict[tuple[str, str], int] | None = None) -> float:
    """The plan's own registrations replayed as plain resources with the same wire inputs: what the input volume
    alone costs the SDK and the mock engine, without typed provider classes or any toolkit code. With `slots`
    (property count per (type, name), from `property_slots`), each resource is padded with None properties up to
    the count its typed class gave it: a typed class declares every output property, and the SDK builds an
    Output for each one whether or not it is set."""
    import pulumi

    from aiinfra.plan.runtime import run_program

    def program() -> None:
        for r in records:
            if r.type == "pulumi:pulumi:Stack":
                continue
            props = dict(r.inputs)
            for i in range(len(props), (slots or {}).get((r.type, r.name), 0)):
                props[f"slot{i}"] = None
            if r.custom:
                pulumi.CustomResource(r.type, r.name, props)
            else:
                pulumi.ComponentResource(r.type, r.name, props or None)

    fresh_heap()
    start = time.perf_counter()
    run_program(program, project="bench", stack="replay")
    return time.perf_counter() - start


def property_slots(stack: str) -> dict[tuple[str, str], int]:
    """How many properties the SDK turned into Outputs for each resource of one (untimed) plan."""
    from pulumi.runtime import rpc

    from aiinfra.plan.program import plan_stack
    from aiinfra.plan.project import load_project

    slots: dict[tuple[str, str], int] = {}
    transfer = rpc.transfer_properties

    def counting(res, props, custom):  # type: ignore[no-untyped-def]
        slots[(res._type, res._name)] = len(props)
        return transfer(res, props, custom)

    rpc.transfer_properties = counting
    try:
        plan_stack(load_project(ROOT), stack)
    finally:
        rpc.transfer_properties = transfer
    return slots


def plan_once(stack: str) -> tuple[float, list]:
    from aiinfra.plan.program import plan_stack
    from aiinfra.plan.project import load_project

    fresh_heap()
    start = time.perf_counter()
    result = plan_stack(load_project(ROOT), stack)
    return time.perf_counter() - start, result.resources


def plan_sdk_round_trip(stack: str) -> float:
    """One warm plan with the SDK's own MockMonitor answering each registration (deserialize, mocks, serialize on an
    event loop per call): what the recording monitor's wire-form echo (aiinfra/plan/echo.py) replaces."""
    from pulumi.runtime import mocks

    from aiinfra.plan.runtime import RecordingMonitor

    original = RecordingMonitor._register
    RecordingMonitor._register = lambda self, request, inputs, urn: mocks.MockMonitor.RegisterResource(self, request)  # type: ignore[method-assign]
    try:
        return plan_once(stack)[0]
    finally:
        RecordingMonitor._register = original  # type: ignore[method-assign]


def _area(filename: str) -> str:
    if "site-packages/" in filename:
        package = filename.split("site-packages/")[1].split("/")[0]
        return "Pulumi SDK (pulumi)" if package == "pulumi" else \
            "provider SDKs (pulumi_*)" if package.startswith("pulumi_") else "other libraries (protobuf, grpc, yaml, ...)"
    if filename.startswith(str(ROOT)) and not filename.endswith("aiinfra/plan/stacktrace.py"):
        return "the toolkit (aiinfra, components, stacks)"
    if any(f"/{m}" in filename for m in ("traceback.py", "linecache.py", "pathlib.py", "urllib/", "stacktrace.py")):
        return "stack traces the SDK records per resource (aiinfra/plan/stacktrace.py; traceback, pathlib)"
    if "/asyncio/" in filename:
        return "asyncio event loop"
    return "builtins and other stdlib"


def profile_split(stack: str) -> list[tuple[str, float]]:
    """Self time of one warm plan (under cProfile, which inflates it) by where the code lives, as shares. A builtin's
    time counts for the code that called it."""
    from aiinfra.plan.program import plan_stack
    from aiinfra.plan.project import load_project

    project = load_project(ROOT)
    plan_stack(project, stack)
    profile = cProfile.Profile()
    fresh_heap()
    profile.enable()
    plan_stack(project, stack)
    profile.disable()
    areas: dict[str, float] = {}
    for (filename, _, _), (_, _, self_time, _, callers) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if filename != "~":
            areas[_area(filename)] = areas.get(_area(filename), 0.0) + self_time
            continue
        # A builtin (isinstance, Context.run, ...): its time goes to the areas of the code that called it.
        for (caller_file, _, _), (_, _, time_from_caller, _) in callers.items():
            area = _area(caller_file) if caller_file != "~" else "builtins and other stdlib"
            areas[area] = areas.get(area, 0.0) + time_from_caller
    total = sum(areas.values())
    return sorted(((area, t / total) for area, t in areas.items()), key=lambda x: -x[1])


def cli_times(args: list[str], runs: int) -> list[float]:
    """Wall time of the `aiinfra` console script with `args`, each run in a fresh process (imports, exit and all)."""
    exe = Path(sys.executable).with_name("aiinfra")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([str(exe), *args], check=True, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stack", default="prod")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--aws-only-program", default=str(ROOT / "bench" / "aws_only"))
    parser.add_argument("--profile", action="store_true", help="also print where a warm plan's time goes")
    args = parser.parse_args()

    cold, records = plan_once(args.stack)
    count = len(records)
    warm = [plan_once(args.stack)[0] for _ in range(args.runs)]
    round_trips = [plan_sdk_round_trip(args.stack) for _ in range(args.runs)]
    floors = [floor(count) for _ in range(args.runs)]
    replays = [replay(records) for _ in range(args.runs)]
    slots = property_slots(args.stack)
    padded = [replay(records, slots) for _ in range(args.runs)]
    warm_med, floor_med, replay_med = statistics.median(warm), statistics.median(floors), statistics.median(replays)
    padded_med = statistics.median(padded)
    print(f"plan of stack '{args.stack}': {count} registrations")
    print(f"  first plan (includes SDK imports): {cold:.2f} s")
    print(f"  warm plan, median of {args.runs}: {warm_med:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in warm)})")
    round_trip_med = statistics.median(round_trips)
    print(f"  warm plan answered by the SDK's MockMonitor round trip instead of the wire-form echo, median: "
          f"{round_trip_med:.2f} s (echo / round trip: {warm_med / round_trip_med:.2f}x)")
    print(f"  floor ({count} plain resources, same runtime), median: {floor_med:.2f} s")
    print(f"  ratio warm plan / floor: {warm_med / floor_med:.2f}x   (target <= 1.3x)")
    print(f"  ratio first plan / floor: {cold / floor_med:.2f}x")
    print(f"  same registrations replayed as plain resources with the same inputs, median: {replay_med:.2f} s "
          f"(warm plan / replay: {warm_med / replay_med:.2f}x; replay / floor: {replay_med / floor_med:.2f}x)")
    print(f"  the same, padded to the typed classes' {sum(slots.values())} properties, median: {padded_med:.2f} s "
          f"(warm plan / padded replay: {warm_med / padded_med:.2f}x; padded replay / floor: {padded_med / floor_med:.2f}x)")

    if args.profile:
        print("where a warm plan's time goes (cProfile self time):")
        for area, share in profile_split(args.stack):
            print(f"  {share:6.1%}  {area}")

    times = cli_times(["--help"], 5)
    print(f"aiinfra --help cold start: median {statistics.median(times):.3f} s, max {max(times):.3f} s (target <= 0.5 s)")
    times = cli_times(["plan", "--stack", args.stack, "-q"], args.runs)
    # ru_maxrss of the children: the largest resident set any finished child reached (KiB on Linux); the plan's
    # process is the largest of the commands run so far (the pack's server is smaller).
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"aiinfra plan --stack {args.stack} -q, whole command with the policy pack: median {statistics.median(times):.2f} s "
          f"(runs: {', '.join(f'{t:.2f}' for t in times)}); peak resident memory {peak_mib:.0f} MiB")

    out = subprocess.run([sys.executable, "-c", AWS_ONLY_SNIPPET, args.aws_only_program, "bench"],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    print(f"AWS-only plan ({args.aws_only_program}): {out.stdout.strip()}")


if __name__ == "__main__":
    main()
