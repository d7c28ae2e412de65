"""The pack's TypedAnalyzer must answer exactly as pulumi-policy's own servicer does, only faster, and run what the
SDK's does not: the stack parts of resource rules (a node group sized by a launch template), in AnalyzeStack under
the rule's name and level. The equivalence cases hold no such group."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pulumi_aws as aws
import pulumi_policy
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel
from pulumi_policy import policy as sdk

from aiinfra.policy_eval import _options, _policy_config, _provider, _provider_urn, _struct
from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import run_program
from aiinfra_policy import load_rules
from aiinfra_policy.pack import to_policy
from aiinfra_policy.server import TypedAnalyzer, TypedResourcePolicy
from policy_helpers import UNKNOWN

ROOT = Path(__file__).resolve().parents[2]
STACK = "urn:pulumi:t::p::pulumi:pulumi:Stack::p-t"
PROVIDER = "urn:pulumi:t::p::pulumi:providers:aws::east"

# Hand-made records: violations, compliant twins, preview unknowns, an explicit provider, a type no rule checks.
HAND_MADE: list[tuple[str, dict[str, Any], bool]] = [
    ("aws:kms/key:Key", {"enableKeyRotation": False}, False),
    ("aws:kms/key:Key", {"enableKeyRotation": True}, True),
    ("aws:eks/cluster:Cluster", {"vpcConfig": {"endpointPublicAccess": UNKNOWN}, "encryptionConfig": {"resources": ["secrets"]}}, False),
    ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", {"blockPublicAcls": False}, False),
    ("gcp:container/nodePool:NodePool", {"nodeConfig": {"machineType": "a3-highgpu-8g", "guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}]},
                                         "autoscaling": {"totalMinNodeCount": 1, "totalMaxNodeCount": 64}}, False),
    ("azure-native:storage:StorageAccount", {"location": "eastus2", "minimumTlsVersion": "TLS1_0", "allowSharedKeyAccess": UNKNOWN}, True),
    ("kubernetes:apps/v1:Deployment", {"spec": {"template": {"spec": {"hostNetwork": True, "containers": [{"name": "c"}]}}}}, False),
    ("random:index/randomPet:RandomPet", {"length": 2}, False),
]


def hand_made_records() -> list[dict[str, Any]]:
    provider = {"urn": PROVIDER, "type": "pulumi:providers:aws", "name": "east", "parent": STACK, "provider": "", "custom": True,
                "protect": False, "retainOnDelete": False, "ignoreChanges": [], "dependencies": [],
                "inputs": {"region": "ap-south-1", "defaultTags": json.dumps({"tags": {"team": "ml"}})}}
    records = [provider]
    for i, (type_, inputs, protect) in enumerate(HAND_MADE):
        records.append({"urn": f"urn:pulumi:t::p::{type_}::r{i}", "type": type_, "name": f"r{i}", "parent": STACK,
                        "provider": f"{PROVIDER}::id" if type_.startswith("aws:") else "", "custom": True, "protect": protect,
                        "retainOnDelete": False, "ignoreChanges": [], "dependencies": [PROVIDER], "inputs": inputs})
    return records


def servicers(config: dict[str, Any]) -> tuple[Any, Any]:
    """The SDK's servicer and ours over the same policies, configured alike (as the engine configures a pack)."""
    policies = [to_policy(rule) for rule in load_rules()]
    pair = []
    for cls in (sdk._PolicyAnalyzerServicer, TypedAnalyzer):  # noqa: SLF001
        servicer = cls("ai-infra-compliance", "0.0.1", policies, EnforcementLevel.ADVISORY, None)
        info = servicer.GetAnalyzerInfo(empty_pb2.Empty(), None)
        servicer.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(stack="t", project="p", organization="o", dry_run=True), None)
        servicer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=_policy_config(info, config)), None)
        pair.append(servicer)
    return pair[0], pair[1]


def answers(servicer: Any, records: list[dict[str, Any]]) -> list[tuple]:
    providers = {r["urn"]: _provider(r) for r in records if r["type"].startswith("pulumi:providers:")}
    custom = [r for r in records if r["custom"]]
    found = []
    for r in custom:
        request = analyzer_pb2.AnalyzeRequest(type=r["type"], properties=_struct(r["inputs"]), urn=r["urn"], name=r["name"],
                                              options=_options(r), provider=providers.get(_provider_urn(r)))
        response = servicer.Analyze(request, None)
        found += [("analyze", r["urn"], d.policyName, d.enforcementLevel, d.message, d.urn, d.severity) for d in response.diagnostics]
        found += [("n/a", r["urn"], n.policy_name, n.reason) for n in response.not_applicable]
    stack = analyzer_pb2.AnalyzeStackRequest(resources=[
        analyzer_pb2.AnalyzerResource(type=r["type"], properties=_struct(r["inputs"]), urn=r["urn"], name=r["name"],
                                      options=_options(r), provider=providers.get(_provider_urn(r)),
                                      parent=r["parent"], dependencies=r["dependencies"],
                                      propertyDependencies={k: analyzer_pb2.AnalyzerPropertyDependencies(urns=v)
                                                            for k, v in r.get("propertyDependencies", {}).items()})
        for r in custom])
    response = servicer.AnalyzeStack(stack, None)
    found += [("stack", d.policyName, d.enforcementLevel, d.message, d.urn, d.severity) for d in response.diagnostics]
    return found


@pytest.mark.parametrize("env", ["prod"])
def test_typed_analyzer_answers_exactly_as_the_sdk_on_the_reference_environments(env: str) -> None:
    records = [r.to_json() for r in plan_stack(load_project(ROOT), env).resources]
    config = json.loads((ROOT / "policies" / "config" / f"{env}.json").read_text())
    stock, typed = servicers(config)
    expected = answers(stock, records)
    assert expected, "the reference environment should give at least preview-time notes"
    assert answers(typed, records) == expected


@pytest.mark.parametrize("config", [{}, {"all": "mandatory"}, {"all": "mandatory", "aws-kms-key-rotation": "disabled",
                                                                "stateful-resources-protected": {"environment": "prod"}}])
def test_typed_analyzer_answers_exactly_as_the_sdk_on_violations_unknowns_and_providers(config: dict[str, Any]) -> None:
    stock, typed = servicers(config)
    expected = answers(stock, hand_made_records())
    policies = {entry[2] if entry[0] == "analyze" else entry[1] for entry in expected}
    # The cases do reach rules of every cloud and the stack rules, the unknown path included.
    required = {"k8s-no-privileged-pods", "required-tags"} | ({"aws-kms-key-rotation"} if "aws-kms-key-rotation" not in config else set())
    assert required <= policies
    assert any("can't be known during preview" in str(entry) for entry in expected)
    assert answers(typed, hand_made_records()) == expected


def test_every_resource_rule_declares_its_types_so_the_index_skips_nothing() -> None:
    for policy in (to_policy(rule) for rule in load_rules()):
        if isinstance(policy, pulumi_policy.ResourceValidationPolicy):
            assert isinstance(policy, TypedResourcePolicy) and policy.resource_types, policy.name


def test_policy_pack_builds_its_servicer_by_the_name_install_replaces() -> None:
    """`install()` swaps the class PolicyPack instantiates; if a new SDK stops doing so, this says it."""
    assert "_PolicyAnalyzerServicer(" in inspect.getsource(sdk.PolicyPack.__init__)


def templated_group() -> None:
    lt = aws.ec2.LaunchTemplate("gpu-lt", instance_type="p5.48xlarge", metadata_options={"http_tokens": "required"})
    aws.eks.NodeGroup("gpu-ng", cluster_name="c", node_role_arn="arn:aws:iam::123456789012:role/n", subnet_ids=["subnet-1"],
                      launch_template={"id": lt.id, "version": lt.latest_version.apply(str)},
                      scaling_config={"desired_size": 0, "max_size": 10, "min_size": 0})


def test_only_the_typed_analyzer_runs_the_stack_parts_under_the_rules_name_and_level() -> None:
    """Where the two differ, on purpose: the SDK's AnalyzeStack runs StackValidationPolicy objects only, so a node
    group whose instance type is in a launch template escapes the accelerator rules there (pack.build_pack refuses
    to load when TypedAnalyzer can't be installed)."""
    records = [r.to_json() for r in run_program(templated_group, project="p", stack="t").resources]
    stock, typed = servicers({"all": "advisory", "gpu-cap-per-pool": "mandatory"})
    expected, found = answers(stock, records), answers(typed, records)
    part = [e for e in found if e[0] == "stack" and e[1] == "gpu-cap-per-pool"]
    assert [(e[2], e[3], e[4].split("::")[-1]) for e in part] == [(
        analyzer_pb2.EnforcementLevel.MANDATORY,
        "Checks whether a node pool, Cloud TPU slice, VM, scale set or autoscaling group can grow to at most "
        "maxGpusPerPool accelerators.\nlaunch template gpu-lt: pool can scale to 80 accelerators (10 x 8); the cap is 64",
        "gpu-ng")]
    with_parts = {rule.name for rule in load_rules() if rule.stack_check}
    assert not any(e[0] == "stack" and e[1] in with_parts for e in expected)
    assert [e for e in found if not (e[0] == "stack" and e[1] in with_parts)] == expected  # the rest as the SDK's
