"""Stack rules, rule metadata, generated configs, and the pack evaluated over the real Analyzer gRPC protocol."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest
import yaml
from helpers import script_module
from policy_helpers import RULES, UNKNOWN, resource, run_stack

from aiinfra.policy_eval import evaluate_pack
from pulumi_policy.proxy import UnknownValueError
from aiinfra_policy.registry import FRAMEWORKS, PROFILES

ROOT = Path(__file__).resolve().parents[2]
PACK = ROOT / "policies"


def test_required_tags_accepts_provider_default_tags_and_flags_missing_ones() -> None:
    tags = json.dumps({"tags": {"environment": "prod", "team": "ml", "cost-center": "cc"}})
    tagged = resource("aws:ec2/vpc:Vpc", {"cidrBlock": "10.0.0.0/16"}, "vpc", provider={"defaultTags": tags})
    untagged = resource("aws:ec2/vpc:Vpc", {"cidrBlock": "10.1.0.0/16", "tags": {"team": "ml"}}, "bare")
    found = run_stack("required-tags", [tagged, untagged])
    assert [(urn.split("::")[-1], msg) for urn, msg in found] == [("bare", "missing tags: environment, cost-center")]


def test_data_residency_uses_resource_or_provider_region() -> None:
    inside = resource("aws:s3/bucket:Bucket", {"region": "eu-west-1"}, "eu")
    via_provider = resource("aws:s3/bucket:Bucket", {}, "default", provider={"region": "us-west-2"})
    outside = resource("gcp:storage/bucket:Bucket", {"location": "ASIA-EAST1"}, "asia")
    found = run_stack("data-residency", [inside, via_provider, outside], {"allowedRegions": ["eu-west-1", "us-west-2"]})
    assert sorted(urn.split("::")[-1] for urn, _ in found) == ["asia"]


def test_data_zone_keeps_eu_data_in_eu() -> None:
    eu = resource("gcp:storage/bucket:Bucket", {"location": "us-central1", "labels": {"data-zone": "eu"}}, "misplaced")
    found = run_stack("data-zone-residency", [eu], {"dataZones": {"eu": ["europe-west4"]}})
    assert found and "us-central1" in found[0][1]


def test_environment_gpu_cap_sums_all_pools() -> None:
    pool = {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"minSize": 0, "maxSize": 4}}
    pools = [resource("aws:eks/nodeGroup:NodeGroup", pool, f"p{i}") for i in range(3)]
    assert run_stack("gpu-cap-per-environment", pools, {"maxGpusPerEnvironment": 96}) == []
    found = run_stack("gpu-cap-per-environment", pools, {"maxGpusPerEnvironment": 64})
    assert "96 accelerators" in found[0][1]


def test_bucket_side_resources_are_joined_by_dependency() -> None:
    bucket = resource("aws:s3/bucket:Bucket", {}, "data")
    versioning = resource("aws:s3/bucketVersioning:BucketVersioning", {"versioningConfiguration": {"status": "Enabled"}}, "v", deps=[bucket])
    assert run_stack("aws-s3-bucket-versioning", [bucket, versioning]) == []
    assert run_stack("aws-s3-bucket-versioning", [bucket]) and run_stack("aws-s3-bucket-public-access-blocked", [bucket])


def test_a_bucket_without_any_encryption_configuration_is_flagged() -> None:
    sse = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
    kms = {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": "k"}}]}
    bare = resource("aws:s3/bucket:Bucket", {}, "bare")
    by_dependency = resource("aws:s3/bucket:Bucket", {}, "data")
    by_reference = resource("aws:s3/bucketV2:BucketV2", {"bucket": "models-1234"}, "models")
    inline = resource("aws:s3/bucket:Bucket", {"serverSideEncryptionConfiguration": {"rule": {
        "applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": "k"}}}}, "legacy")
    side = [resource(sse, kms, "data-sse", deps=[by_dependency]), resource(sse, {**kms, "bucket": "models-1234"}, "models-sse")]
    found = run_stack("aws-s3-bucket-default-encryption", [bare, by_dependency, by_reference, inline, *side])
    assert found == [(bare.urn, "bucket has no default encryption configuration: S3 encrypts its objects with "
                                "S3-managed keys (SSE-S3), not a customer-managed KMS key")]


def test_tls_rule_checks_every_known_bucket_policy_when_one_is_unknown_in_preview() -> None:
    bucket_policy = "aws:s3/bucketPolicy:BucketPolicy"
    tls = json.dumps({"Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "*",
                                     "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]})
    pending, bare, safe = (resource("aws:s3/bucket:Bucket", {}, name) for name in ("pending", "bare", "safe"))
    policies = [resource(bucket_policy, {"policy": UNKNOWN}, "pending-policy", deps=[pending]),
                resource(bucket_policy, {"policy": tls}, "safe-policy", deps=[safe])]
    with pytest.raises(UnknownValueError):  # the SDK turns this into its "can't run during preview" advisory
        run_stack("aws-s3-bucket-tls-only", [pending, bare, safe, *policies], found=(found := []))
    # ...after the bucket with no policy at all was reported, though it comes after the unknown one
    assert found == [(bare.urn, "no bucket policy denies non-TLS (aws:SecureTransport=false) requests")]
    assert run_stack("aws-s3-bucket-tls-only", [bare, safe, policies[1]]) == found


def test_vpc_without_flow_log_is_flagged() -> None:
    vpc = resource("aws:ec2/vpc:Vpc", {}, "vpc")
    flow = resource("aws:ec2/flowLog:FlowLog", {"trafficType": "ALL", "vpcId": "x"}, "fl", deps=[vpc])
    assert run_stack("aws-vpc-flow-logs", [vpc, flow]) == []
    assert run_stack("aws-vpc-flow-logs", [vpc])


def test_rule_metadata() -> None:
    assert len(RULES) >= 40
    used = set()
    for name, rule in RULES.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name), name
        assert rule.description.startswith("Checks whether"), name
        assert rule.severity in ("low", "medium", "high", "critical") and rule.remediation, name
        assert rule.frameworks and set(rule.frameworks) <= set(FRAMEWORKS), name
        assert rule.in_profiles and set(rule.in_profiles) <= set(PROFILES), name
        used |= set(rule.frameworks)
    assert used == set(FRAMEWORKS)
    covered = {p for r in RULES.values() for p in r.in_profiles}
    assert covered == set(PROFILES)


def test_generated_configs_are_fresh_and_match_the_stacks() -> None:
    module = script_module(PACK / "aiinfra_policy" / "gen_config.py")
    stale = [p.name for p, text in module.outputs().items() if p.read_text() != text]
    assert not stale, f"run `.venv/bin/python policies/aiinfra_policy/gen_config.py`: {stale}"
    stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    written = sorted(p.stem for p in module.outputs())
    assert written == sorted([*stacks, "baseline"]), "every stack has its policy config, and only they"
    for env in stacks:
        stack = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{env}.yaml").read_text())["config"]["ai-infra:platform"]
        config = json.loads((PACK / "config" / f"{env}.json").read_text())
        regions = sorted(r for cloud in stack["clouds"].values() for r in cloud["regions"])
        assert set(regions) <= set(config["data-residency"]["allowedRegions"]), env
        # the stack's compliance profiles are what the pack runs: a rule of no declared profile is disabled
        profiles = set(stack["compliance"]["profiles"])
        for name, rule in RULES.items():
            assert (config[name] == "disabled") == (not set(rule.in_profiles) & profiles), (env, name)


def test_a_stack_gets_its_profiles_and_regions_from_its_platform(tmp_path: Path) -> None:
    """The stack file is the one place an environment's compliance is declared: gen_config reads its profiles,
    allowed regions (else the regions it declares) and data zones, and refuses an environment it has no decisions
    for, naming where to add them."""
    module = script_module(PACK / "aiinfra_policy" / "gen_config.py")
    platform = {"environment": "prod", "compliance": {"profiles": ["baseline", "pci"], "data_zones": {"eu": ["eu-west-1"]}},
                "clouds": {"aws": {"regions": {"eu-west-1": {}, "us-east-1": {}}}}}
    (tmp_path / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    project = module.load_project(tmp_path)
    stack = tmp_path / "Pulumi.prod-eu.yaml"
    # A bare key is the project's own, as the CLI reads it.
    stack.write_text(yaml.safe_dump({"config": {"platform": platform}}))
    settings = module.stack_settings(project, "prod-eu")
    assert settings["profiles"] == ["baseline", "pci"] and settings["mandatory"] == module.ENVIRONMENTS["prod"]["mandatory"]
    assert settings["params"]["allowedRegions"] == ["eu-west-1", "us-east-1"]
    assert settings["params"]["dataZones"] == {"eu": ["eu-west-1"]} and settings["params"]["environment"] == "prod"
    stack.write_text(yaml.safe_dump({"config": {"ai-infra:platform": {**platform, "environment": "qa"}}}))
    with pytest.raises(SystemExit, match="environment 'qa' has no policy decisions; add it to ENVIRONMENTS in gen_config.py"):
        module.stack_settings(project, "prod-eu")


def test_pack_over_grpc_reports_violations_with_levels_and_urns() -> None:
    stack = "urn:pulumi:t::p::pulumi:pulumi:Stack::p-t"
    provider_urn = "urn:pulumi:t::p::pulumi:providers:aws::main"
    tags = json.dumps({"tags": {"environment": "t", "team": "a", "cost-center": "c"}})
    records = [
        {"urn": stack, "type": "pulumi:pulumi:Stack", "name": "p-t", "parent": "", "provider": "", "custom": False,
         "protect": False, "retainOnDelete": False, "ignoreChanges": [], "dependencies": [], "inputs": {}},
        {"urn": provider_urn, "type": "pulumi:providers:aws", "name": "main", "parent": stack, "provider": "", "custom": True,
         "protect": False, "retainOnDelete": False, "ignoreChanges": [], "dependencies": [], "inputs": {"defaultTags": tags, "region": "us-east-1"}},
        {"urn": "urn:pulumi:t::p::aws:kms/key:Key::good", "type": "aws:kms/key:Key", "name": "good", "parent": stack,
         "provider": f"{provider_urn}::id", "custom": True, "protect": True, "retainOnDelete": False, "ignoreChanges": [],
         "dependencies": [], "inputs": {"enableKeyRotation": True}},
        {"urn": "urn:pulumi:t::p::aws:kms/key:Key::bad", "type": "aws:kms/key:Key", "name": "bad", "parent": stack,
         "provider": f"{provider_urn}::id", "custom": True, "protect": False, "retainOnDelete": False, "ignoreChanges": [],
         "dependencies": [], "inputs": {"enableKeyRotation": False}},
        {"urn": "urn:pulumi:t::p::aws:eks/cluster:Cluster::eks", "type": "aws:eks/cluster:Cluster", "name": "eks", "parent": stack,
         "provider": "", "custom": True, "protect": False, "retainOnDelete": False, "ignoreChanges": [], "dependencies": [],
         "inputs": {"vpcConfig": {"endpointPublicAccess": UNKNOWN},
                    "encryptionConfig": {"resources": ["secrets"]}, "enabledClusterLogTypes": ["api", "audit", "authenticator"]}},
    ]
    config = {"all": "mandatory", "stateful-resources-protected": {"enforcementLevel": "advisory", "environment": "prod"}}
    report = evaluate_pack(PACK, records, config=config, project="p", stack="t")
    assert report.pack == "ai-infra-compliance@v0.1.0"
    found = {(v.policy, v.urn.split("::")[-1], v.enforcementLevel) for v in report.violations}
    assert ("aws-kms-key-rotation", "bad", "mandatory") in found
    assert ("stateful-resources-protected", "bad", "advisory") in found
    assert ("aws-kms-key-rotation", "good", "mandatory") not in found
    unknown = [v for v in report.violations if v.policy == "aws-eks-private-endpoint"]
    assert unknown and unknown[0].enforcementLevel == "advisory" and "can't be known during preview" in unknown[0].message
    assert not any(v.policy == "required-tags" and v.urn.endswith("::good") for v in report.violations)
    assert report.to_json()["violations"][0].keys() == {"policy", "enforcementLevel", "urn", "message"}


def test_data_residency_does_not_place_global_services_in_the_providers_region() -> None:
    provider = {"region": "us-east-2"}
    role = resource("aws:iam/role:Role", {"assumeRolePolicy": "{}"}, "role", provider=provider)
    attachment = resource("aws:iam/rolePolicyAttachment:RolePolicyAttachment", {"role": "r"}, "attach", provider=provider)
    cluster = resource("aws:eks/cluster:Cluster", {"name": "c"}, "cluster", provider=provider)
    found = run_stack("data-residency", [role, attachment, cluster], {"allowedRegions": ["eu-west-1"]})
    assert [urn.split("::")[-1] for urn, _ in found] == ["cluster"]


def test_a_pack_whose_requirements_are_missing_says_how_to_fix_it(tmp_path: Path) -> None:
    """An interpreter without pulumi_policy (here: ours without its site-packages) cannot start the pack."""
    import sys

    from aiinfra.policy_eval import PolicyError

    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    with pytest.raises(PolicyError) as caught:
        evaluate_pack(PACK, [], project="p", stack="t", python=str(python))
    message = str(caught.value)
    assert "ModuleNotFoundError: No module named 'pulumi" in message
    assert f"The pack runs on {python}, which lacks its requirements" in message and "--no-policy" in message


def test_policy_config_is_checked_against_each_policys_schema_as_the_engine_does() -> None:
    from aiinfra.policy_eval import PolicyError

    config = {"gpu-cap-per-pool": {"maxGpusPerPool": "lots"},
              "k8s-no-privileged-pods": {"privilegedWorkloads": ["kube-system/csi-node"]},
              "required-tags": {"requiredTags": ["team"], "extra": 1}}  # properties a schema does not name are allowed
    with pytest.raises(PolicyError) as caught:
        evaluate_pack(PACK, [], config=config, project="p", stack="t")
    lines = str(caught.value).splitlines()
    assert lines[0] == "policy config does not match the policies' schemas:"
    assert "  gpu-cap-per-pool: maxGpusPerPool: 'lots' is not of type 'integer'" in lines
    assert any(line.startswith("  k8s-no-privileged-pods: privilegedWorkloads.0: 'kube-system/csi-node' does not match")
               for line in lines)
    assert len(lines) == 3


def test_a_policy_entry_that_is_neither_a_level_nor_an_object_is_refused() -> None:
    from aiinfra.policy_eval import PolicyError

    with pytest.raises(PolicyError, match=r"policy 'required-tags': 3 is not a valid value; give an enforcement level or an object"):
        evaluate_pack(PACK, [], config={"required-tags": 3}, project="p", stack="t")


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="parent-death signal is Linux's")
def test_the_pack_process_does_not_outlive_a_killed_aiinfra(tmp_path: Path) -> None:
    """A SIGKILLed `aiinfra plan` runs no cleanup; the kernel still stops the pack server it started."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = ("import os, sys, time\nfrom pathlib import Path\nfrom aiinfra.policy_eval import _pack_process\n"
              f"with _pack_process(Path({str(PACK)!r}), sys.executable, dict(os.environ)) as address:\n"
              "    print(address, flush=True)\n    time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline().startswith("127.0.0.1:")
    children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == parent.pid]
    assert len(children) == 1, children
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    try:
        deadline = time.monotonic() + 10
        while _state(children[0]) not in ("Z", "gone") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(children[0]) in ("Z", "gone"), "the pack server outlived aiinfra"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(children[0], signal.SIGKILL)


def _ppid(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_without_jsonschema_the_config_check_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from aiinfra.policy_eval import PolicyError

    monkeypatch.setitem(sys.modules, "jsonschema", None)  # as where only pulumi-policy was installed
    with pytest.raises(PolicyError, match=r"needs jsonschema, part of the `policy` extra: install ai-infra\[policy\]"):
        evaluate_pack(PACK, [], config={}, project="p", stack="t")


BLOCKING = {"dev": set(), "staging": {"critical", "high"}, "baseline": {"critical", "high"},
            "prod": {"critical", "high", "medium", "low"}}
"""Which severities block in each committed config: written out here, not read from gen_config, so a change to the
generator's table (with the configs regenerated to match it) fails this test."""
NEVER_BLOCKING = {"azure-aks-kms-etcd", "azure-storage-no-shared-key", "azure-vnet-transit-encryption-enforced",
                  "global-endpoint-waf", "k8s-rbac-secrets-read"}
"""The documented exceptions, advisory in every environment."""


@pytest.mark.parametrize("env", sorted(BLOCKING))
def test_each_environment_blocks_the_severities_it_should(env: str) -> None:
    config = json.loads((PACK / "config" / f"{env}.json").read_text())
    assert set(config) == set(RULES)
    levels = {name: value if isinstance(value, str) else value["enforcementLevel"] for name, value in config.items()}
    enabled = {name: level for name, level in levels.items() if level != "disabled"}
    assert enabled
    wrong = {name: level for name, level in enabled.items()
             if level != ("mandatory" if RULES[name].severity in BLOCKING[env] and name not in NEVER_BLOCKING else "advisory")}
    assert wrong == {}
