"""Plan public Pulumi example programs (a pulumi/examples checkout) with `aiinfra plan --program`.

For each program below this script copies the program into a scratch directory (the checkout stays
untouched and nothing lands in this repository), writes the stack config a user would write
(`Pulumi.<stack>.yaml`, secrets as `secure:` ciphertext the plan never decrypts), runs
`aiinfra plan --program DIR --stack NAME --json FILE` in a child process and prints one table row per
program: whether it planned, how many resources it registered and which rules fired.

    python scripts/plan_public_examples.py /tmp/examples                 # baseline policy config
    python scripts/plan_public_examples.py /tmp/examples --policy-config policies/config/prod.json
    python scripts/plan_public_examples.py /tmp/examples --python /tmp/exvenv/bin/python --only aws-py-eks

Programs that import SDKs outside this project's lock file (pulumi_random, pulumi_tls, pulumi_azuread)
need `--python` pointing at an interpreter that has them and this project installed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
STACK = "dev"
# What `pulumi config set --secret` writes: ciphertext only the stack's secrets provider can read.
SECRET = {"secure": "v1:c2VjcmV0LW5ldmVyLWRlY3J5cHRlZA==:placeholder"}


@dataclass(frozen=True)
class Example:
    path: str
    """Directory of the program inside the pulumi/examples checkout."""
    cloud: str
    config: dict[str, Any] = field(default_factory=dict)
    """The stack config a user would set, in `pulumi config set` form (keys without ':' are the project's)."""
    label: str = ""
    """Row name when one program is planned with two configs (defaults to `path`)."""

    @property
    def name(self) -> str:
        return self.label or self.path


EXAMPLES = [
    Example("aws-py-s3-folder", "aws", {"aws:region": "us-west-2"}),
    Example("aws-py-webserver", "aws", {"aws:region": "us-west-2"}),
    Example("aws-py-eks", "aws", {"aws:region": "us-east-2"}),
    Example("aws-py-hub-and-spoke-network", "aws", {"aws:region": "us-east-1", "create-firewall": "true"}),
    Example("aws-py-fargate", "aws", {"aws:region": "us-west-2"}),
    Example("aws-py-secrets-manager", "aws", {"aws:region": "us-west-2"}),
    Example("aws-py-stepfunctions", "aws", {"aws:region": "us-east-2"}),
    Example("aws-py-static-website", "aws", {"aws:region": "us-west-2", "targetDomain": "www.example.com",
                                             "pathToWebsiteContents": "./www"}),
    Example("gcp-py-webserver", "gcp", {"gcp:project": "acme-ml-dev", "gcp:zone": "us-central1-a"}),
    Example("gcp-py-instance-nginx", "gcp", {"gcp:project": "acme-ml-dev", "gcp:region": "us-central1",
                                             "gcp:zone": "us-central1-a"}),
    Example("gcp-py-gke", "gcp", {"gcp:project": "acme-ml-dev", "gcp:zone": "us-central1-a", "password": SECRET}),
    Example("gcp-py-functions", "gcp", {"gcp:project": "acme-ml-dev", "gcp:region": "us-central1"}),
    Example("gcp-py-network-component", "gcp", {"gcp:project": "acme-ml-dev", "gcp:zone": "us-central1-a",
                                                "project": "acme", "owner": "ml-platform",
                                                "subnet_cidr_blocks": ["172.1.0.0/16", "172.2.0.0/16"]}),
    Example("azure-py-webserver", "azure", {"azure-native:location": "westus", "username": "azureuser", "password": SECRET}),
    Example("azure-py-aks", "azure", {"azure-native:location": "eastus2"}),
    Example("azure-py-aks-managed-identity", "azure", {"azure-native:location": "eastus2"}),
    Example("azure-py-static-website", "azure", {"azure-native:location": "westus2"}),
    Example("azure-py-loadbalancer-vm", "azure", {"azure-native:location": "westus", "location": "westus",
                                                  "username": "azureuser", "password": SECRET}),
    Example("kubernetes-py-guestbook/simple", "kubernetes", {"isMinikube": "false"}),
    Example("kubernetes-py-nginx", "kubernetes", {}),
    Example("kubernetes-py-jenkins", "kubernetes", {"isMinikube": "false", "username": "admin", "password": SECRET}),
    Example("kubernetes-py-guestbook/components", "kubernetes", {"isMinikube": "false"}),
    Example("kubernetes-py-exposed-deployment", "kubernetes", {"is_minikube": "false"}),
    Example("kubernetes-py-helm-release-wordpress", "kubernetes", {}),
    Example("gcp-py-cloudrun-cloudsql", "gcp", {"gcp:project": "acme-ml-dev", "gcp:region": "us-central1",
                                               "gcp:zone": "us-central1-a", "db-name": "app", "db-password": SECRET}),
    Example("azure-py-virtual-data-center", "azure", {"azure-native:location": "australiaeast", "location": "australiaeast",
                                                      "firewall_address_space": "192.168.100.0/24",
                                                      "hub_address_space": "10.100.0.0/16", "azure_bastion": True,
                                                      "forced_tunnel": "10.0.100.1"}),
    # defaults in Pulumi.yaml's project-level config block; the second row runs the GPU (cluster) mode
    Example("kubernetes-py-self-host-gemma4-llm", "kubernetes", {}),
    Example("kubernetes-py-self-host-gemma4-llm", "kubernetes", {"runtimeMode": "cluster", "gpuCount": 1},
            label="kubernetes-py-self-host-gemma4-llm (runtimeMode: cluster)"),
    Example("azure-py-aks-multicluster", "azure", {"azure-native:location": "eastus", "password": SECRET,
                                                   "sshPublicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlaceholderKey user@host"}),
]


@dataclass
class Outcome:
    example: Example
    planned: bool
    resources: int = 0
    """Custom resources the program registered (what `pulumi preview` lists as creates, without providers)."""
    violations: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


def write_stack(program: Path, example: Example) -> None:
    (program / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump({"config": example.config}, sort_keys=False))


def plan(example: Example, checkout: Path, workdir: Path, python: str, policy_config: Path | None) -> Outcome:
    source = checkout / example.path
    if not (source / "Pulumi.yaml").is_file():
        return Outcome(example, False, error=f"no Pulumi.yaml at {source}")
    program = workdir / "".join(c if c.isalnum() or c in "-_" else "_" for c in example.name)
    shutil.rmtree(program, ignore_errors=True)
    shutil.copytree(source, program)
    write_stack(program, example)
    out = program / "plan.json"
    cmd = [python, "-m", "aiinfra.cli", "plan", "--program", str(program), "--stack", STACK, "--json", str(out), "--quiet"]
    if policy_config is not None:
        cmd += ["--policy-config", str(policy_config)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    if proc.returncode not in (0, 2) or not out.is_file():
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        return Outcome(example, False, error=lines[-1] if lines else f"exit code {proc.returncode}")
    document = json.loads(out.read_text())
    custom = [r for r in document["resources"] if r["custom"] and not r["type"].startswith("pulumi:providers:")]
    return Outcome(example, True, len(custom), document.get("policy", {}).get("violations", []))


def rule_counts(outcome: Outcome) -> str:
    counts = Counter((v["policy"], v["enforcementLevel"][0].upper()) for v in outcome.violations)
    return ", ".join(f"{policy} x{n} ({level})" for (policy, level), n in sorted(counts.items())) or "none"


def render(outcomes: list[Outcome]) -> str:
    rows = ["| program | planned | resources | violations by rule (M = mandatory, A = advisory) |", "| --- | --- | --- | --- |"]
    for o in outcomes:
        if o.planned:
            rows.append(f"| {o.example.name} | yes | {o.resources} | {rule_counts(o)} |")
        else:
            rows.append(f"| {o.example.name} | no | - | {o.error.replace('|', '/')} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a pulumi/examples checkout (only the listed program directories are needed)")
    parser.add_argument("--workdir", type=Path, help="scratch directory for the copies (default: a new temporary directory)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with this project and the programs' SDKs installed")
    parser.add_argument("--policy-config", type=Path, help="policy config JSON (default: aiinfra's default for --program, baseline)")
    parser.add_argument("--only", action="append", help="plan only this program (repeatable)")
    parser.add_argument("--details", action="store_true", help="also list every violation with its resource and message")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="aiinfra-examples-"))
    workdir.mkdir(parents=True, exist_ok=True)
    chosen = [e for e in EXAMPLES if not args.only or e.path in args.only or e.name in args.only]
    outcomes = []
    for example in chosen:
        outcome = plan(example, args.checkout.resolve(), workdir, args.python, args.policy_config.resolve() if args.policy_config else None)
        outcomes.append(outcome)
        print(f"{example.name}: {'planned, ' + str(outcome.resources) + ' resources' if outcome.planned else 'failed: ' + outcome.error}",
              file=sys.stderr)
    print(render(outcomes))
    if args.details:
        for o in outcomes:
            for v in sorted(o.violations, key=lambda v: (v["policy"], v["urn"])):
                name = v["urn"].split("::")[-1] if v["urn"] else "(stack)"
                message = v["message"].strip().splitlines()[-1] if v["message"].strip() else ""
                print(f"{o.example.name}\t{v['policy']}\t{v['enforcementLevel']}\t{name}\t{message}")
    print(f"\ncopies and plan JSON files: {workdir}", file=sys.stderr)
    return 0 if all(o.planned for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
