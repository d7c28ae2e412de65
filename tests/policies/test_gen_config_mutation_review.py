"""The policy config gen_config.py writes for a stack, in the case a mutation review found no other test pinning down:
a platform that names no compliance profiles runs the platform's default profile, baseline, as `aiinfra validate` and
the stack program read it (components/spec/platform.py ComplianceSpec), so the pack does not silently disable every
rule for it."""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers import script_module
from policy_helpers import RULES

PACK = Path(__file__).resolve().parents[2] / "policies"


def test_a_platform_without_profiles_gets_the_baseline_rules(tmp_path: Path) -> None:
    module = script_module(PACK / "aiinfra_policy" / "gen_config.py")
    (tmp_path / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    platform = {"environment": "staging", "clouds": {"aws": {"regions": {"us-east-1": {}}}}}
    (tmp_path / "Pulumi.staging.yaml").write_text(yaml.safe_dump({"config": {"ai-infra:platform": platform}}))
    settings = module.stack_settings(module.load_project(tmp_path), "staging")
    assert settings["profiles"] == ["baseline"]
    config = module.config_for(settings)
    enabled = {name for name, value in config.items() if value != "disabled"}
    assert enabled == {name for name, rule in RULES.items() if "baseline" in rule.in_profiles}
