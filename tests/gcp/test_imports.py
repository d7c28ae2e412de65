"""A GCP-only platform never imports the AWS or Azure SDK (per-cloud extras stay optional)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import json, sys
sys.path.insert(0, "tests")
from helpers import platform_dict
from aiinfra.plan.runtime import run_program
from components.compose import build_platform
from components.spec import load_platform

spec = load_platform(platform_dict({"gcp": {"project": "acme-ml-test", "regions": {"us-central1": {
    "network": {"cidr": "10.70.0.0/16"},
    "cluster": {},
    "gpu_pools": {"gpu": {"accelerator": "l4", "capacity": "spot"}},
    "tpu_slices": {"tpu": {"generation": "v5e", "topology": "2x4"}},
}}}}))
result = run_program(lambda: build_platform(spec), project="ai-infra", stack="test")
print(json.dumps({
    "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("pulumi_aws", "pulumi_gcp", "pulumi_azure_native")),
    "types": sorted({r.type.split(":")[0] for r in result.resources}),
}))
"""


def test_gcp_only_platform_imports_no_aws_or_azure_sdk() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    roots = {m.split(".")[0] for m in report["modules"]}
    assert roots == {"pulumi_gcp"}
    # the Kubernetes layer is on (the default): its objects are kubernetes:, the rest gcp: and ai-infra:
    assert {"pulumi", "ai-infra", "gcp"} <= set(report["types"]) <= {"pulumi", "ai-infra", "gcp", "kubernetes"}
