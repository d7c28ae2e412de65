"""Write policies/config/<stack>.json (the CLI's and `pulumi preview --policy-pack-config`'s format), one per stack file.

Run from the repository root: `.venv/bin/python policies/aiinfra_policy/gen_config.py`. A test fails when the
committed files differ from what this writes.

Two sources, so the pack and the platform cannot disagree: each stack file's `ai-infra:platform` gives its environment,
its compliance profiles (which rules run), its allowed regions (`compliance.allowed_regions`, else the regions it
declares) and its data zones; `ENVIRONMENTS` below gives, per environment, the decisions a platform spec does not
hold: which severities block, which accelerators and how many GPUs are allowed, and the named privileged workloads.
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE.parent), str(ROOT)]

from aiinfra.plan.project import Project, load_project, stack_values  # noqa: E402
from aiinfra_policy import load_rules  # noqa: E402

CONFIG_DIR = HERE.parent / "config"
AZURE_LUSTRE_CSI_NODE = ["kube-system/DaemonSet/csi-azurelustre-node-jammy", "kube-system/DaemonSet/csi-azurelustre-node-noble"]
"""`k8s-no-privileged-pods` exemptions: the Azure Lustre CSI driver's node plugins (components/k8s/azure_lustre.py,
NODE_DAEMONSETS; a test keeps the two equal). A CSI node plugin mounts file systems on the host: it loads the Lustre
kernel modules and mounts with bidirectional propagation into kubelet's directory, so it must be privileged, and it
runs on the host network as upstream's manifests do. AKS clusters of regions with Azure Managed Lustre run them; every
other privileged or host-network workload stays flagged."""
EBS_DEFAULT_ENCRYPTION = "off"
"""`aws-ebs-default-encryption`'s ebsDefaultEncryption in every config: what the AWS accounts the stacks deploy to do
for EBS volumes that leave encryption or its key unset, where the stack declares no aws.ebs.EncryptionByDefault or
aws.ebs.DefaultKmsKey of its own. "off" claims nothing (the pack's default). When the landing zone turns on EBS
encryption by default with a customer-managed default key in those accounts (ec2:ModifyEbsDefaultKmsKeyId), set
"customer_key"; with the AWS-managed aws/ebs, "aws_managed_key"; then run this script."""
ENVIRONMENTS = {
    # Which severities are mandatory, and parameters. dev has no Azure: no privileged workload is named.
    "dev": {"mandatory": [], "params": {
        "allowedAccelerators": ["l4", "t4", "a10g", "tpu-v5e"], "maxGpusPerPool": 16, "maxGpusPerEnvironment": 32,
        "ebsDefaultEncryption": EBS_DEFAULT_ENCRYPTION}},
    "staging": {"mandatory": ["critical", "high"], "params": {
        "allowedAccelerators": ["h100-80gb", "l4", "a100-80gb", "tpu-v5e"], "maxGpusPerPool": 32, "maxGpusPerEnvironment": 128,
        "privilegedWorkloads": AZURE_LUSTRE_CSI_NODE, "ebsDefaultEncryption": EBS_DEFAULT_ENCRYPTION}},
    "prod": {"mandatory": ["critical", "high", "medium", "low"], "params": {
        "allowedAccelerators": ["h100-80gb", "h200-141gb", "trainium2", "l4", "a10g", "a100-80gb", "tpu-v5p", "tpu-v6e"],
        "maxGpusPerPool": 64, "maxGpusPerEnvironment": 512, "privilegedWorkloads": AZURE_LUSTRE_CSI_NODE,
        "ebsDefaultEncryption": EBS_DEFAULT_ENCRYPTION}},
}
BASELINE = {"profiles": ["baseline"], "mandatory": ["critical", "high"], "params": {
    "environment": "unknown", "privilegedWorkloads": AZURE_LUSTRE_CSI_NODE, "ebsDefaultEncryption": EBS_DEFAULT_ENCRYPTION}}
"""`baseline.json`, the default for `aiinfra plan --program` on any project: high-impact rules block, the rest advise.
`environment: unknown`: rules that relax dev read each resource's environment tag (a template's dev stack). A team's
project whose account encrypts EBS by default with a customer key sets ebsDefaultEncryption customer_key in its copy."""
ALWAYS_ADVISORY = {"azure-aks-kms-etcd", "azure-storage-no-shared-key", "azure-vnet-transit-encryption-enforced",
                   "global-endpoint-waf", "k8s-rbac-secrets-read"}
"""Documented exceptions: Azure Managed Lustre's blob integration needs shared-key access on its account; Azure VNet
encryption cannot drop unencrypted flows yet (every Azure network runs `transit_encryption: monitor`); AKS clusters
don't turn on the Key Vault KMS plugin yet (a private vault needs API Server VNet Integration and a delegated subnet
the Azure network layout has no room for: README, Known limits). `global_endpoint.waf: false` is an explicit, named
opt-in: the pack reports the endpoint it leaves without a web application firewall, and does not block it. So are
`clouds.<cloud>.previewers`: the pull-request preview's refresh reads the Helm release Secrets, and the pack reports
each Role that lets it."""


def stack_settings(project: Project, stack: str) -> dict:
    """A stack's policy settings: its environment's decisions (ENVIRONMENTS) with the profiles, environment, allowed
    regions and data zones of its platform, read as `aiinfra plan` reads the stack file."""
    stack_file, values = stack_values(project, stack)
    platform = values.get(f"{project.name}:platform") or {}
    environment = platform.get("environment")
    if environment not in ENVIRONMENTS:
        raise SystemExit(f"{stack_file}: environment {environment!r} has no policy decisions; add it to ENVIRONMENTS in "
                         f"{Path(__file__).name} (allowed now: {', '.join(ENVIRONMENTS)})")
    compliance = platform.get("compliance") or {}
    declared = sorted({region for cloud in (platform.get("clouds") or {}).values() for region in cloud.get("regions") or {}})
    params = {"environment": environment, "allowedRegions": compliance.get("allowed_regions") or declared,
              **({"dataZones": compliance["data_zones"]} if compliance.get("data_zones") else {}),
              **ENVIRONMENTS[environment]["params"]}
    # The spec's default profiles (components/spec/platform.py ComplianceSpec): baseline only.
    return {"profiles": compliance.get("profiles") or ["baseline"], "mandatory": ENVIRONMENTS[environment]["mandatory"],
            "params": params}


def config_for(settings: dict) -> dict:
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
    """baseline.json, and <stack>.json for every stacks/Pulumi.<stack>.yaml."""
    project = load_project(ROOT)
    settings = {"baseline": BASELINE, **{stack: stack_settings(project, stack) for stack in project.stacks()}}
    return {CONFIG_DIR / f"{name}.json": json.dumps(config_for(each), indent=2) + "\n" for name, each in settings.items()}


if __name__ == "__main__":
    CONFIG_DIR.mkdir(exist_ok=True)
    for path, text in outputs().items():
        path.write_text(text)
        print(f"wrote {path}")
