"""Benchmark (not a test): policy pack throughput over the Analyzer gRPC protocol, in resources per second.

Run: `.venv/bin/python bench/policy_throughput.py [--plan PLAN.json] [--count 5000] [--runs 3]`. Prints, asserts nothing.
One pack process serves every run (as the CLI starts one per preview). Per plan it times, over gRPC:
  - Analyze: every custom resource, as `aiinfra plan` sends them (a few calls in flight);
  - AnalyzeStack: the whole stack once (the stack rules);
and prints resources/s for Analyze alone and for both together. Pack start-up is reported apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from google.protobuf import empty_pb2  # noqa: E402
from pulumi.runtime.proto import analyzer_pb2  # noqa: E402

from aiinfra import policy_eval  # noqa: E402

PACK = ROOT / "policies"
CONFIG = json.loads((PACK / "config" / "prod.json").read_text())
STACK = "urn:pulumi:bench::ai-infra::pulumi:pulumi:Stack::ai-infra-bench"
SAMPLES = [
    ("aws:s3/bucket:Bucket", {"bucket": "b", "tags": {"team": "ml"}}),
    ("aws:kms/key:Key", {"enableKeyRotation": True}),
    ("aws:eks/nodeGroup:NodeGroup", {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"minSize": 0, "maxSize": 2},
                                     "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]}),
    ("aws:ec2/securityGroup:SecurityGroup", {"ingress": [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["10.0.0.0/16"]}]}),
    ("gcp:storage/bucket:Bucket", {"uniformBucketLevelAccess": True, "publicAccessPrevention": "enforced", "location": "US-CENTRAL1"}),
    ("gcp:container/nodePool:NodePool", {"nodeConfig": {"machineType": "a3-highgpu-8g", "guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}]},
                                         "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2}}),
    ("azure-native:storage:StorageAccount", {"location": "eastus2", "minimumTlsVersion": "TLS1_2", "tags": {"team": "ml"}}),
    ("kubernetes:apps/v1:Deployment", {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}),
]


def synthetic(count: int) -> list[dict]:
    records = [{"urn": STACK, "type": "pulumi:pulumi:Stack", "name": "s", "parent": "", "provider": "", "custom": False,
                "protect": False, "retainOnDelete": False, "ignoreChanges": [], "dependencies": [], "inputs": {}}]
    for i in range(count):
        type_, inputs = SAMPLES[i % len(SAMPLES)]
        records.append({"urn": f"urn:pulumi:bench::ai-infra::{type_}::r{i}", "type": type_, "name": f"r{i}", "parent": STACK,
                        "provider": "", "custom": True, "protect": i % 2 == 0, "retainOnDelete": False, "ignoreChanges": [],
                        "dependencies": [], "inputs": inputs})
    return records


async def timed(stub, records: list[dict]) -> tuple[float, float, int]:  # noqa: ANN001
    """(Analyze seconds, AnalyzeStack seconds, diagnostics) for one pass over `records`."""
    start = time.perf_counter()
    requests = policy_eval._requests(records)  # encoding the plan's JSON is part of the client's work
    diagnostics = await policy_eval._analyze_resources(stub, requests)
    middle = time.perf_counter()
    diagnostics += await policy_eval._analyze_stack(stub, requests, [r for r in records if r["custom"]])
    return middle - start, time.perf_counter() - middle, len(diagnostics)


async def session(address: str, plans: dict[str, list[dict]], runs: int, started: float) -> None:
    async with policy_eval._stub(address) as stub:
        info = await stub.GetAnalyzerInfo(empty_pb2.Empty())
        await stub.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(stack="bench", project="ai-infra", dry_run=True))
        await stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=policy_eval._policy_config(info, CONFIG)))
        print(f"pack start-up + handshake: {time.perf_counter() - started:.2f} s ({len(info.policies)} policies)")
        for label, records in plans.items():
            custom = sum(1 for r in records if r["custom"])
            results = [await timed(stub, records) for _ in range(runs)]
            analyze = statistics.median(r[0] for r in results)
            both = statistics.median(r[0] + r[1] for r in results)
            print(f"{label}: {custom} custom resources, {results[0][2]} diagnostics; median of {runs}: "
                  f"Analyze {custom / analyze:,.0f} resources/s, Analyze + AnalyzeStack {custom / both:,.0f} resources/s "
                  f"(AnalyzeStack {statistics.median(r[1] for r in results):.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", help="a plan JSON from `aiinfra plan --json`")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    plans = {f"synthetic {args.count}": synthetic(args.count)}
    if args.plan:
        plans[args.plan] = json.loads(Path(args.plan).read_text())["resources"]
    env = {**os.environ, "PULUMI_PROJECT": "ai-infra", "PULUMI_STACK": "bench", "PULUMI_DRY_RUN": "true"}
    started = time.perf_counter()
    with policy_eval._pack_process(PACK, sys.executable, env) as address:
        asyncio.run(session(address, plans, args.runs, started))


if __name__ == "__main__":
    main()
