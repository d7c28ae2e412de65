"""`k8s-rbac-secrets-read` (CIS Kubernetes 5.1.2): Roles and ClusterRoles that let their subjects read Secrets, and the
ones ai-infra makes itself only for `clouds.<cloud>.previewers`, an opt-in the pack reports but never blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from policy_helpers import UNKNOWN, run_resource, unknown_reported

ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
ROOT = Path(__file__).resolve().parents[2]


def role(*rules: dict) -> dict:
    return {"metadata": {"name": "r"}, "rules": list(rules)}


@pytest.mark.parametrize(("grant", "verbs"), [
    ({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}, "get, list"),
    ({"apiGroups": [""], "resources": ["secrets"], "verbs": ["watch", "create"]}, "watch"),
    ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, "get, list, watch"),
    ({"apiGroups": [""], "resources": ["pods", "*"], "verbs": ["list"]}, "list"),
])
def test_a_role_that_reads_secrets_is_reported_with_its_reads(grant: dict, verbs: str) -> None:
    assert run_resource("k8s-rbac-secrets-read", ROLE, role({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}, grant)) == [
        f"rules[1] grants {verbs} on secrets: whoever it is bound to reads every Secret of its namespace"]
    assert run_resource("k8s-rbac-secrets-read", CLUSTER_ROLE, role(grant)) == [
        f"rules[0] grants {verbs} on secrets: whoever it is bound to reads every Secret of the cluster"]


@pytest.mark.parametrize("grant", [
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "update", "delete"]},  # writes, no reads
    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["tls"], "verbs": ["get"]},  # one named Secret
    {"apiGroups": ["apps"], "resources": ["*"], "verbs": ["*"]},  # not the core group: no Secrets there
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]},
])
def test_roles_that_read_no_secret_or_only_named_ones_pass(grant: dict) -> None:
    assert run_resource("k8s-rbac-secrets-read", ROLE, role(grant)) == []


def test_unknown_rules_cannot_be_judged_in_a_preview() -> None:
    assert "resources" in unknown_reported("k8s-rbac-secrets-read", ROLE, role({"apiGroups": [""], "resources": UNKNOWN, "verbs": ["get"]}))


def test_the_previewers_opt_in_is_reported_but_never_blocks() -> None:
    for config in sorted((ROOT / "policies" / "config").glob("*.json")):
        assert json.loads(config.read_text())["k8s-rbac-secrets-read"] == "advisory", config.name
