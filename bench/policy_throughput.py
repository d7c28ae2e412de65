"""Benchmark (not a test): policy pack throughput over the Analyzer gRPC protocol, in resources per second.

Run: `uv run python bench/policy_throughput.py [--plan PLAN.json] [--count 5000]`. Prints, asserts nothing.
Pack start-up (a fresh Python process and gRPC server) is measured with an empty plan and reported apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aiinfra.policy_eval import evaluate_pack  # noqa: E402

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


def timed(records: list[dict]) -> tuple[float, int]:
    start = time.perf_counter()
    report = evaluate_pack(PACK, records, config=CONFIG, project="ai-infra", stack="bench")
    return time.perf_counter() - start, len(report.violations)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", help="a plan JSON from `aiinfra plan --json`")
    parser.add_argument("--count", type=int, default=5000)
    args = parser.parse_args()
    startup, _ = timed(synthetic(0))
    print(f"pack start-up + handshake (empty plan): {startup:.2f} s")
    plans = {f"synthetic {args.count}": synthetic(args.count)}
    if args.plan:
        plans[args.plan] = json.loads(Path(args.plan).read_text())["resources"]
    for label, records in plans.items():
        custom = sum(1 for r in records if r["custom"])
        total, violations = timed(records)
        work = max(total - startup, 1e-9)
        print(f"{label}: {custom} custom resources, {violations} violations, {total:.2f} s total; "
              f"{custom / work:,.0f} resources/s excluding start-up, {custom / total:,.0f} resources/s including it")


if __name__ == "__main__":
    main()
