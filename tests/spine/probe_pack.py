"""A policy pack written for a test: its policies report what the engine (here, the offline evaluator) gave them."""

from __future__ import annotations

from pathlib import Path

STACK_PROBE = "StackValidationPolicy(name='probe', description='d', validate=check)"


def probe_pack(root: Path, body: str, policies: str = STACK_PROBE) -> Path:
    """A Python pack in `root/pack`: `body` defines the validate functions, `policies` lists the policies (advisory);
    with the empty baseline config `aiinfra plan` asks for."""
    pack = root / "pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "config").mkdir()
    (pack / "config" / "baseline.json").write_text("{}")
    (pack / "__main__.py").write_text(
        "import os, pulumi\n"
        "from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy\n"
        f"{body}"
        f"PolicyPack('probe', [{policies}], EnforcementLevel.ADVISORY)\n")
    return pack
