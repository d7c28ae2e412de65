"""Write policies/config/<env>.json (the CLI's policy-config format) from the registry and per-env settings.

Run from the repository root: `uv run python policies/aiinfra_policy/gen_config.py`. A test fails when the
committed files differ from what this writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from aiinfra_policy import load_rules  # noqa: E402

CONFIG_DIR = HERE.parent / "config"
PROD_REGIONS = ["us-east-1", "eu-west-1", "us-central1", "europe-west4", "eastus2", "westeurope"]
AZURE_LUSTRE_CSI_NODE = ["kube-system/DaemonSet/csi-azurelustre-node-jammy", "kube-system/DaemonSet/csi-azurelustre-node-noble"]
"""`k8s-no-privileged-pods` exemptions: the Azure Lustre CSI driver's node plugins (components/k8s/azure_lustre.py,
NODE_DAEMONSETS; a test keeps the two equal). A CSI node plugin mounts file systems on the host: it loads the Lustre
kernel modules and mounts with bidirectional propagation into kubelet's directory, so it must be privileged, and it
runs on the host network as upstream's manifests do. AKS clusters of regions with Azure Managed Lustre run them; every
other privileged or host-network workload stays flagged."""
ENVIRONMENTS = {
    # profiles, which severities are mandatory, parameters. dev has no Azure: no privileged workload is named.
    "dev": {"profiles": ["baseline"], "mandatory": [], "params": {
        "environment": "dev", "allowedRegions": ["us-east-1", "us-central1"],
        "allowedAccelerators": ["l4", "t4", "a10g", "tpu-v5e"], "maxGpusPerPool": 16, "maxGpusPerEnvironment": 32}},
    "staging": {"profiles": ["baseline", "soc2", "hipaa"], "mandatory": ["critical", "high"], "params": {
        "environment": "staging", "allowedRegions": ["us-east-1", "us-central1", "eastus2"],
        "allowedAccelerators": ["h100-80gb", "l4", "a100-80gb", "tpu-v5e"], "maxGpusPerPool": 32, "maxGpusPerEnvironment": 128,
        "privilegedWorkloads": AZURE_LUSTRE_CSI_NODE}},
    "prod": {"profiles": ["baseline", "soc2", "hipaa", "gdpr"], "mandatory": ["critical", "high", "medium", "low"], "params": {
        "environment": "prod", "allowedRegions": PROD_REGIONS,
        "dataZones": {"eu": ["eu-west-1", "europe-west4", "westeurope"]},
        "allowedAccelerators": ["h100-80gb", "h200-141gb", "trainium2", "l4", "a100-80gb", "tpu-v5p", "tpu-v6e"],
        "maxGpusPerPool": 64, "maxGpusPerEnvironment": 512, "privilegedWorkloads": AZURE_LUSTRE_CSI_NODE}},
    # The default for `aiinfra plan --program` on any project: high-impact rules block, the rest advise.
    # `environment: unknown`: rules that relax dev read each resource's environment tag (a template's dev stack).
    "baseline": {"profiles": ["baseline"], "mandatory": ["critical", "high"], "params": {
        "environment": "unknown", "privilegedWorkloads": AZURE_LUSTRE_CSI_NODE}},
}
ALWAYS_ADVISORY = {"azure-storage-no-shared-key", "azure-vnet-transit-encryption-enforced"}
"""Documented exceptions: Azure Managed Lustre's blob integration needs shared-key access on its account; Azure VNet
encryption cannot drop unencrypted flows yet (every Azure network runs `transit_encryption: monitor`)."""


def config_for(env: str) -> dict:
    settings = ENVIRONMENTS[env]
    out: dict = {}
    for r in load_rules():
        if not set(r.in_profiles) & set(settings["profiles"]):
            out[r.name] = "disabled"
            continue
        level = "mandatory" if r.severity in settings["mandatory"] and r.name not in ALWAYS_ADVISORY else "advisory"
        params = {k: v for k, v in settings["params"].items() if k in r.config}
        out[r.name] = {"enforcementLevel": level, **params} if params else level
    return dict(sorted(out.items()))


def outputs() -> dict[Path, str]:
    return {CONFIG_DIR / f"{env}.json": json.dumps(config_for(env), indent=2) + "\n" for env in ENVIRONMENTS}


if __name__ == "__main__":
    CONFIG_DIR.mkdir(exist_ok=True)
    for path, text in outputs().items():
        path.write_text(text)
        print(f"wrote {path}")
