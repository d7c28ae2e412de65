"""Pins behaviour of the policy runtime that the other tests left free to change: the offline evaluator `aiinfra plan`
runs the pack with (aiinfra/policy_eval.py, the engine's side of the Analyzer protocol), the pack's TypedAnalyzer
(policies/aiinfra_policy/server.py) and the glue that turns rules into pulumi-policy objects (pack.py). Each case came
from a mutation review: a small edit (a field left out of a request, a level not mapped, a line of an error cut
short) that no test caught. What is checked is what a user or a policy sees: the levels and messages of the
violations, the error text of a pack that cannot run, and what a policy reads from its arguments and its runtime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import empty_pb2, json_format
from helpers import plan_record
from policy_helpers import UNKNOWN
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel
from pulumi_policy import policy as sdk
from spine.probe_pack import probe_pack

from aiinfra import policy_eval
from aiinfra.policy_eval import PolicyError, evaluate_pack
from aiinfra_policy import load_rules
from aiinfra_policy.pack import to_policy
from aiinfra_policy.server import TypedAnalyzer

PACK = Path(__file__).resolve().parents[2] / "policies"
KEY = plan_record("aws:kms/key:Key", "bad", {"enableKeyRotation": False})
"""A key without rotation: a resource rule (aws-kms-key-rotation) and a stack rule (required-tags) report it."""

RESOURCE_PROBE = "ResourceValidationPolicy(name='seen', description='d', validate=seen)"


def last_lines(report: policy_eval.PolicyReport) -> dict[str, str]:
    """Each policy's message, without the description the SDK puts before it."""
    return {v.policy: v.message.splitlines()[-1].strip() for v in report.violations}


def broken_pack(root: Path, main: str) -> Path:
    pack = root / "broken"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text(main)
    return pack


# --- policy_eval.py: what the pack's process and its policies get ----------------------------------------------------

def test_a_policy_runs_in_a_preview_as_a_dry_run(tmp_path: Path) -> None:
    """constructEnv (analyzer_plugin.go) sets PULUMI_DRY_RUN; the SDK configures the runtime from it, so a policy that
    asks `pulumi.runtime.is_dry_run()` learns that `aiinfra plan`, a preview, applies nothing."""
    pack = probe_pack(tmp_path, "def seen(args, report):\n    report(f'dry_run={pulumi.runtime.is_dry_run()}')\n", RESOURCE_PROBE)
    assert last_lines(evaluate_pack(pack, [KEY], project="ai-infra", stack="prod")) == {"seen": "dry_run=True"}
    assert last_lines(evaluate_pack(pack, [KEY], project="ai-infra", stack="prod", dry_run=False)) == {"seen": "dry_run=False"}


def test_without_stack_tags_a_pack_gets_the_project_and_runtime_tags(tmp_path: Path) -> None:
    pack = probe_pack(tmp_path, "def seen(args, report):\n    report(' '.join(f'{k}={v}' for k, v in sorted(args.stack_tags.items())))\n",
                      RESOURCE_PROBE)
    assert last_lines(evaluate_pack(pack, [KEY], project="ai-infra", stack="prod")) == {
        "seen": "pulumi:project=ai-infra pulumi:runtime=python"}


def test_a_policy_gets_its_schema_defaults_and_its_settings_without_the_enforcement_level(tmp_path: Path) -> None:
    """As the engine configures a pack (config.go, ReconcilePolicyPackConfig): the defaults of the policy's config
    schema, then the entry's settings over them, with `enforcementLevel` taken out (extractEnforcementLevel)."""
    pack = probe_pack(tmp_path, "import json\nfrom pulumi_policy import PolicyConfigSchema\n"
                                "def seen(args, report):\n    report(json.dumps(args.get_config(), sort_keys=True))\n",
                      "ResourceValidationPolicy(name='seen', description='d', validate=seen, config_schema=PolicyConfigSchema("
                      "properties={'region': {'type': 'string', 'default': 'eu'}, 'tier': {'type': 'string', 'default': 'gold'}}))")
    report = evaluate_pack(pack, [KEY], project="ai-infra", stack="prod")
    assert last_lines(report) == {"seen": '{"region": "eu", "tier": "gold"}'}
    report = evaluate_pack(pack, [KEY], config={"seen": {"enforcementLevel": "mandatory", "tier": "silver"}}, project="ai-infra",
                           stack="prod")
    assert [(v.policy, v.enforcementLevel) for v in report.violations] == [("seen", "mandatory")]
    assert last_lines(report) == {"seen": '{"region": "eu", "tier": "silver"}'}


def test_a_policy_sees_the_options_it_is_registered_with(tmp_path: Path) -> None:
    pack = probe_pack(tmp_path, "def seen(args, report):\n"
                                "    o = args.opts\n"
                                "    report(f'protect={o.protect} ignore={list(o.ignore_changes)} parent={o.parent} aliases={list(o.aliases)}')\n",
                      RESOURCE_PROBE)
    key = {**KEY, "protect": True, "ignoreChanges": ["tags"], "aliases": ["urn:pulumi:prod::ai-infra::aws:kms/key:Key::old"]}
    assert last_lines(evaluate_pack(pack, [key], project="ai-infra", stack="prod")) == {
        "seen": f"protect=True ignore=['tags'] parent={KEY['parent']} aliases=['urn:pulumi:prod::ai-infra::aws:kms/key:Key::old']"}


def test_a_stack_policy_sees_each_resources_dependencies(tmp_path: Path) -> None:
    """AnalyzeStack carries each resource's dependencies (step_generator.go, AnalyzeResources): stack rules find a
    resource's owner by them while its ID is unknown in a preview."""
    pack = probe_pack(tmp_path, "def check(args, report):\n"
                                "    for r in args.resources:\n"
                                "        report(f'{r.name} <- {[d.name for d in r.dependencies]}', r.urn)\n")
    alias = plan_record("aws:kms/alias:Alias", "alias", {"name": "alias/data"}, dependencies=[KEY["urn"]])
    report = evaluate_pack(pack, [KEY, alias], project="ai-infra", stack="prod")
    assert sorted(v.message.splitlines()[-1].strip() for v in report.violations) == ["alias <- ['bad']", "bad <- []"]


def test_a_config_file_given_by_path_sets_the_levels(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"all": "mandatory"}))
    report = evaluate_pack(PACK, [KEY], config_path=path, project="ai-infra", stack="prod")
    assert {(v.policy, v.enforcementLevel) for v in report.violations} == {("aws-kms-key-rotation", "mandatory"),
                                                                          ("required-tags", "mandatory")}


def test_an_all_entry_without_a_level_is_accepted_and_changes_no_level() -> None:
    """The engine applies `all` only when it names a valid level (config.go, applyConfig)."""
    report = evaluate_pack(PACK, [KEY], config={"all": {}, "aws-kms-key-rotation": "mandatory"}, project="ai-infra", stack="prod")
    assert {(v.policy, v.enforcementLevel) for v in report.violations} == {("aws-kms-key-rotation", "mandatory"),
                                                                          ("required-tags", "advisory")}


def test_a_missing_required_setting_is_named_on_the_policys_config(tmp_path: Path) -> None:
    pack = probe_pack(tmp_path, "from pulumi_policy import PolicyConfigSchema\ndef seen(args, report):\n    report('x')\n",
                      "ResourceValidationPolicy(name='seen', description='d', validate=seen, config_schema="
                      "PolicyConfigSchema(properties={'region': {'type': 'string'}}, required=['region']))")
    with pytest.raises(PolicyError) as caught:
        evaluate_pack(pack, [KEY], project="ai-infra", stack="prod")
    assert str(caught.value) == "policy config does not match the policies' schemas:\n  seen: config: 'region' is a required property"


# --- policy_eval.py: a pack that does not start ----------------------------------------------------------------------

def test_a_pack_that_prints_something_else_than_its_port_is_reported_with_what_it_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy_eval, "_STARTUP_SECONDS", 2)  # a wrong address would otherwise wait a minute
    pack = broken_pack(tmp_path, "print('listening soon', flush=True)\n")
    with pytest.raises(PolicyError) as caught:
        evaluate_pack(pack, [KEY], project="ai-infra", stack="prod")
    assert str(caught.value).startswith(f"policy pack {pack} did not start (printed 'listening soon'):")


def test_a_pack_that_fails_after_much_output_shows_the_end_of_its_error(tmp_path: Path) -> None:
    """The last lines of a traceback say what went wrong; the error keeps the end of a long stderr."""
    pack = broken_pack(tmp_path, "import sys\nsys.stderr.write('warning: noisy\\n' * 400)\n"
                                 "raise SystemExit('the pack stopped: settings missing')\n")
    with pytest.raises(PolicyError) as caught:
        evaluate_pack(pack, [KEY], project="ai-infra", stack="prod")
    assert str(caught.value).rstrip().endswith("the pack stopped: settings missing")


# --- server.py and pack.py: levels and what the engine is told about the pack ----------------------------------------

def test_remediate_reports_resource_and_stack_violations_as_mandatory() -> None:
    """The SDK downgrades `remediate` to mandatory for a violation a remediation did not fix, and for stack policies,
    which cannot remediate (policy.py, Analyze and AnalyzeStack); the pack's TypedAnalyzer must too, or the plan
    would not block on them."""
    report = evaluate_pack(PACK, [KEY], config={"all": "remediate"}, project="ai-infra", stack="prod")
    assert {(v.policy, v.enforcementLevel) for v in report.violations} == {("aws-kms-key-rotation", "mandatory"),
                                                                          ("required-tags", "mandatory")}
    assert len(report.mandatory) == 2


def test_a_disabled_stack_rule_reports_nothing() -> None:
    """The SDK's AnalyzeStack skips a disabled policy; a violation at level `disabled` must not reach the plan."""
    report = evaluate_pack(PACK, [KEY], config={"all": "mandatory", "required-tags": "disabled"}, project="ai-infra",
                           stack="prod")
    assert {(v.policy, v.enforcementLevel) for v in report.violations} == {("aws-kms-key-rotation", "mandatory")}


def test_without_a_config_the_pack_is_advisory() -> None:
    """`pulumi preview --policy-pack policies` with no config: every rule at the pack's level, advisory."""
    report = evaluate_pack(PACK, [KEY], project="ai-infra", stack="prod")
    assert {(v.policy, v.enforcementLevel) for v in report.violations} == {("aws-kms-key-rotation", "advisory"),
                                                                          ("required-tags", "advisory")}


def test_a_policy_that_cannot_run_in_preview_is_described_as_the_sdk_describes_it() -> None:
    """The whole diagnostic the engine gets for a value unknown in a preview (pack name and version, description, level)
    is the SDK's."""
    request = analyzer_pb2.AnalyzeRequest(type="aws:eks/cluster:Cluster", urn="urn:pulumi:t::p::aws:eks/cluster:Cluster::c",
                                          name="c", properties=policy_eval._struct({"vpcConfig": {"endpointPublicAccess": UNKNOWN}}))
    found = []
    for cls in (sdk._PolicyAnalyzerServicer, TypedAnalyzer):  # noqa: SLF001
        servicer = cls("ai-infra-compliance", "0.1.0", [to_policy(rule) for rule in load_rules()], EnforcementLevel.ADVISORY, None)
        servicer.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(stack="t", project="p"), None)
        diagnostics = [json_format.MessageToDict(d) for d in servicer.Analyze(request, None).diagnostics]
        found.append([d for d in diagnostics if d["policyName"] == "aws-eks-private-endpoint"])
    assert found[1] == found[0] and len(found[0]) == 1
    assert found[0][0]["policyPackVersion"] == "0.1.0" and found[0][0]["description"].startswith("Checks whether")


def test_the_engine_is_told_each_rules_severity_framework_controls_profiles_and_remediation() -> None:
    """What `pulumi policy publish` and the console show of a rule (GetAnalyzerInfo)."""
    rules = {rule.name: rule for rule in load_rules()}
    servicer = TypedAnalyzer("ai-infra-compliance", "0.1.0", [to_policy(rule) for rule in rules.values()],
                             EnforcementLevel.ADVISORY, None)
    info = {p.name: p for p in servicer.GetAnalyzerInfo(empty_pb2.Empty(), None).policies}
    severities = {"low": analyzer_pb2.POLICY_SEVERITY_LOW, "medium": analyzer_pb2.POLICY_SEVERITY_MEDIUM,
                  "high": analyzer_pb2.POLICY_SEVERITY_HIGH, "critical": analyzer_pb2.POLICY_SEVERITY_CRITICAL}
    assert {rule.severity for rule in rules.values()} == set(severities)
    for name, rule in rules.items():
        policy = info[name]
        assert policy.severity == severities[rule.severity], name
        assert policy.framework.name == next(iter(rule.frameworks)), name
        assert policy.remediation_steps == rule.remediation, name
        assert set(policy.tags) == ({f"{fw}:{c}" for fw, controls in rule.frameworks.items() for c in controls}
                                    | {f"profile:{p}" for p in rule.in_profiles}), name


# --- registry.py ------------------------------------------------------------------------------------------------------

def test_a_low_severity_rule_of_no_regulatory_profile_is_a_baseline_rule() -> None:
    """No committed rule is such a rule yet; without the baseline it would be in no profile, so no environment's
    config would enable it."""
    from aiinfra_policy.registry import PROFILES, Rule

    hygiene = Rule("hygiene", "Checks whether.", "low", "Fix it.", {"NIST-800-53": ("CM-8",)}, PROFILES, lambda props, ctx: [],
                   ("aws:kms/key:Key",))
    assert hygiene.in_profiles == ("baseline",)


def test_a_rule_is_left_out_of_the_profiles_it_is_not_offered_to() -> None:
    from aiinfra_policy.registry import Rule

    rule = Rule("narrow", "Checks whether.", "low", "Fix it.", {"SOC2": ("CC6.1",), "HIPAA": ("164.312(e)(1)",)},
                ("soc2",), lambda props, ctx: [], ("aws:kms/key:Key",))
    assert rule.in_profiles == ("soc2",)
