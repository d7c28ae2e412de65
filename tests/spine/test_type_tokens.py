"""Every resource or function type the toolkit names as a string exists in the pinned provider SDK.

The policy pack, the planner's replace table and its invoke placeholders match resources and invokes by
type token. A misspelled or renamed token never matches, and nothing else would fail: a rule would pass
everything and a placeholder would never answer. Typed classes need no such check; strings do.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("policies/aiinfra_policy", "aiinfra", "components")
TOKEN = re.compile(r"^(aws|gcp|azure-native|kubernetes):([A-Za-z0-9/._-]+):([A-Za-z][A-Za-z0-9]*)$")
PACKAGES = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "azure-native": "pulumi_azure_native",
            "kubernetes": "pulumi_kubernetes"}
# Strings shaped like tokens that are values, not types.
NOT_TYPES = {"aws:kms:dsse": "an S3 server-side encryption algorithm"}


def _tokens() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and TOKEN.match(node.value):
                    found.setdefault(node.value, set()).add(str(path.relative_to(ROOT)))
    return found


@cache
def _package_dir(provider: str) -> Path:
    spec = importlib.util.find_spec(PACKAGES[provider])
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


@cache
def _resource_index(provider: str) -> frozenset[str]:
    # Each SDK's __init__ lists its resource modules with every resource type token they register.
    text = (_package_dir(provider) / "__init__.py").read_text()
    return frozenset(re.findall(r'"(%s:[^"]+)"' % re.escape(provider), text))


def _function_exists(token: str) -> bool:
    provider, module, _ = TOKEN.match(token).groups()
    folder = module.split("/")[0]
    base = _package_dir(provider) if folder == "index" else _package_dir(provider) / folder
    files = base.rglob("*.py") if provider == "kubernetes" else base.glob("*.py")
    return any(f"'{token}'" in f.read_text() for f in files)


TOKENS = _tokens()


def test_the_scan_finds_the_tokens_it_is_meant_to_check() -> None:
    # Guards the scan itself: if the pattern stopped matching, every check below would pass vacuously.
    assert "gcp:storage/bucket:Bucket" in TOKENS
    assert "aws:index/getAvailabilityZones:getAvailabilityZones" in TOKENS
    assert len(TOKENS) > 100


@pytest.mark.parametrize("token", sorted(t for t in TOKENS if t not in NOT_TYPES))
def test_type_token_exists_in_the_pinned_sdk(token: str) -> None:
    provider, module, name = TOKEN.match(token).groups()
    if provider == "kubernetes" and "." in module.split("/")[0]:
        # A custom resource (kubernetes:<group>/<version>:<Kind>), typed by its CRD rather than the SDK.
        assert re.fullmatch(r"[a-z0-9.-]+\.[a-z]+/v\d+((alpha|beta)\d+)?", module), token
        return
    where = ", ".join(sorted(TOKENS[token]))
    if name[0].isupper():
        assert token in _resource_index(provider), f"{token} (in {where}) is no resource type of {PACKAGES[provider]}"
    else:
        assert _function_exists(token), f"{token} (in {where}) is no function of {PACKAGES[provider]}"
