"""The pull-request preview identities (`clouds.<cloud>.previewers`): what each cloud grants them, and the Kubernetes
RBAC that lets `pulumi preview --refresh` read every object of the layer (components/k8s/previewers.py)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from helpers import run_platform, stack_platform

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanResult
from components.k8s.previewers import RELEASE_TYPE, plural, read_rules, resource_of
from components.spec import SpecError, load_platform

ROOT = Path(__file__).resolve().parents[2]
AWS_PREVIEWER = "arn:aws:iam::123456789012:role/ai-infra-ci-preview"
GCP_EMAIL = "ci-preview@acme-ml-prod.iam.gserviceaccount.com"
AZURE_PREVIEWER = "00000000-0000-0000-0000-0000000000aa"
HELM_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
HELM_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
CLUSTER_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    config = stack_platform("prod")
    config["clouds"]["aws"]["previewers"] = [AWS_PREVIEWER]
    config["clouds"]["gcp"]["previewers"] = [f"serviceAccount:{GCP_EMAIL}"]
    config["clouds"]["azure"]["previewers"] = [AZURE_PREVIEWER]
    return run_platform(load_platform(config), stack="prod")


def _cluster(record: Any) -> str:
    """The cluster of a Kubernetes object: its provider is `<cluster>-k8s`."""
    return record.provider.split("::")[-2].removesuffix("-k8s")


def _previewers(plan: PlanResult) -> dict[str, Any]:
    return {r.name: r for r in plan.of_type("ai-infra:kubernetes:Previewers")}


def test_every_cluster_gets_the_previewers_rbac(plan: PlanResult) -> None:
    clusters = {_cluster(r) for r in plan.of_type(RELEASE_TYPE)}
    assert set(_previewers(plan)) == clusters and len(clusters) == 7


def test_eks_access_entries_put_the_previewer_in_the_group_without_a_policy(plan: PlanResult) -> None:
    entries = [r for r in plan.of_type("aws:eks/accessEntry:AccessEntry") if r.inputs["principalArn"] == AWS_PREVIEWER]
    assert sorted(r.name.rsplit("-previewer-", 1)[0] for r in entries) == ["prod-eu-west-1", "prod-us-east-1", "prod-us-east-2"]
    for entry in entries:
        assert entry.inputs["type"] == "STANDARD"
        assert entry.inputs["kubernetesGroups"] == ["ai-infra-previewers"]
    associations = plan.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert associations and not [r for r in associations if "previewer" in r.name]
    assert all(r.inputs.get("principalArn") != AWS_PREVIEWER for r in associations)


def test_gcp_previewer_gets_the_cluster_viewer_role_only(plan: PlanResult) -> None:
    members = [r for r in plan.of_type("gcp:projects/iAMMember:IAMMember") if r.inputs["member"] == f"serviceAccount:{GCP_EMAIL}"]
    assert [(r.name.split("-previewer-")[0], r.inputs["role"]) for r in members] == [("prod-gcp-project", "roles/container.clusterViewer")]


def test_azure_previewer_gets_the_cluster_user_role_on_each_cluster(plan: PlanResult) -> None:
    grants = [r for r in plan.of_type("azure-native:authorization:RoleAssignment") if r.inputs["principalId"] == AZURE_PREVIEWER]
    assert sorted(r.name.split("-aks-previewer-")[0] for r in grants) == ["prod-eastus2", "prod-westeurope"]
    for grant in grants:
        assert grant.inputs["roleDefinitionId"].endswith("/roleDefinitions/4abbcc35-e782-43d8-92c5-2d3f1bd2253f")
        assert grant.inputs["principalType"] == "ServicePrincipal"


@pytest.mark.parametrize(("cluster", "subject"), [
    ("prod-us-east-1", {"kind": "Group", "name": "ai-infra-previewers"}),
    ("prod-us-central1", {"kind": "User", "name": GCP_EMAIL}),
    ("prod-westeurope", {"kind": "User", "name": AZURE_PREVIEWER}),
])
def test_bindings_name_the_clouds_subject(plan: PlanResult, cluster: str, subject: dict[str, str]) -> None:
    bindings = [r for t in (CLUSTER_BINDING, HELM_BINDING) for r in plan.of_type(t)
                if _cluster(r) == cluster and "previewer" in r.name]
    assert len(bindings) >= 3
    expected = [{**subject, "apiGroup": "rbac.authorization.k8s.io"}]
    assert all(b.inputs["subjects"] == expected for b in bindings)
    role = next(b for b in bindings if b.name == f"{cluster}-previewer")
    assert role.inputs["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ai-infra-previewer"}


def test_no_binding_to_a_built_in_role(plan: PlanResult) -> None:
    """Kubernetes `view` reads pods/log (pod logs: inference requests) and every ConfigMap: the previewers get only the
    toolkit's own roles."""
    refs = {b.inputs["roleRef"]["name"] for t in (CLUSTER_BINDING, HELM_BINDING) for b in plan.of_type(t) if "previewer" in b.name}
    assert refs == {"ai-infra-previewer", "ai-infra-previewer-helm"}
    assert not [b.name for b in plan.of_type(CLUSTER_BINDING) if b.name.endswith("-previewers-view")]


def test_one_secrets_role_per_helm_release_namespace(plan: PlanResult) -> None:
    namespaces: dict[str, set[str]] = defaultdict(set)
    for release in plan.of_type(RELEASE_TYPE):
        namespaces[_cluster(release)].add(release.inputs["namespace"])
    assert namespaces["prod-us-east-1"] == {"kube-system", "gpu-operator", "kueue-system", "monitoring"}
    for cluster, expected in namespaces.items():
        roles = [r for r in plan.of_type(HELM_ROLE) if _cluster(r) == cluster and "previewer" in r.name]
        assert sorted(r.inputs["metadata"]["namespace"] for r in roles) == sorted(expected), cluster
        for role in roles:
            assert role.inputs["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]
        bindings = [r for r in plan.of_type(HELM_BINDING) if _cluster(r) == cluster and "previewer" in r.name]
        assert sorted(b.inputs["metadata"]["namespace"] for b in bindings) == sorted(expected)
        assert all(b.inputs["roleRef"]["name"] == "ai-infra-previewer-helm" for b in bindings)


def test_helm_roles_wait_for_their_namespace(plan: PlanResult) -> None:
    by_urn = {r.urn: r for r in plan.resources}
    role = next(r for r in plan.of_type(HELM_ROLE) if r.name == "prod-us-east-1-previewer-helm-monitoring")
    assert any(by_urn[d].type == "kubernetes:core/v1:Namespace" and by_urn[d].inputs["metadata"]["name"] == "monitoring"
               for d in role.dependencies)
    kueue = next(r for r in plan.of_type(HELM_ROLE) if r.name == "prod-us-east-1-previewer-helm-kueue-system")
    assert any(by_urn[d].type == RELEASE_TYPE for d in kueue.dependencies)  # the chart creates kueue-system


def _cluster_roles(plan: PlanResult) -> dict[str, set[tuple[str, str]]]:
    """Per cluster, the (API group, resource) pairs the previewer ClusterRole lets read (get and list)."""
    granted: dict[str, set[tuple[str, str]]] = {}
    for role in plan.of_type(CLUSTER_ROLE):
        if role.name.endswith("-previewer"):
            granted[_cluster(role)] = {(g, res) for rule in role.inputs["rules"] for g in rule["apiGroups"]
                                       for res in rule["resources"] if set(rule["verbs"]) >= {"get", "list"}}
    return granted


def test_every_kind_of_the_prod_plan_is_readable_by_the_previewers(plan: PlanResult) -> None:
    """Fails when the layer registers a kind outside the recorder (or the recorder misses one): the ClusterRole alone
    must cover it (Secrets only through a Helm release namespace's Role), or the preview's refresh would be Forbidden."""
    granted = _cluster_roles(plan)
    helm = {(_cluster(r), r.inputs["metadata"]["namespace"]) for r in plan.of_type(HELM_ROLE) if "previewer" in r.name}
    uncovered = []
    for record in plan.resources:
        if not record.type.startswith("kubernetes:") or record.type == RELEASE_TYPE:
            continue
        if record.type == "kubernetes:core/v1:Secret":
            covered = (_cluster(record), record.inputs["metadata"].get("namespace")) in helm
        else:
            covered = resource_of(record.type) in granted[_cluster(record)]
        if not covered:
            uncovered.append(f"{record.type} ({record.name})")
    assert not uncovered


def test_the_read_awaiters_lists_are_granted(plan: PlanResult) -> None:
    """A refresh of a Deployment lists ReplicaSets, Pods and PersistentVolumeClaims, of a DaemonSet its Pods, of a
    Service its Endpoints (pulumi-kubernetes provider/pkg/await): the clusters with those kinds grant the lists, and
    only they (westeurope has a Service and neither a Deployment nor a DaemonSet: no pods)."""
    granted = _cluster_roles(plan)
    assert {("apps", "replicasets"), ("", "pods"), ("", "persistentvolumeclaims")} <= granted["prod-us-central1"]  # autoneg
    assert ("", "pods") in granted["prod-eastus2"]  # the Lustre CSI node DaemonSets
    assert ("", "endpoints") in granted["prod-westeurope"]  # the inference Service
    assert not {("", "pods"), ("apps", "replicasets")} & granted["prod-westeurope"]


def test_no_subresource_and_no_secret_in_the_cluster_role(plan: PlanResult) -> None:
    """pods/log would let pull-request code read every pod's logs (inference requests); Secrets are read only in the
    Helm release namespaces."""
    for role in plan.of_type(CLUSTER_ROLE):
        if role.name.endswith("-previewer"):
            resources = {res for rule in role.inputs["rules"] for res in rule["resources"]}
            assert not [r for r in resources if "/" in r or r == "*"], role.name
            assert not [rule for rule in role.inputs["rules"] if "secrets" in rule["resources"] and "" in rule["apiGroups"]]
            assert all(rule["verbs"] == ["get", "list", "watch"] for rule in role.inputs["rules"])


def test_kind_plurals_and_groups() -> None:
    assert resource_of("kubernetes:core/v1:PersistentVolume") == ("", "persistentvolumes")
    assert resource_of("kubernetes:storage.k8s.io/v1:StorageClass") == ("storage.k8s.io", "storageclasses")
    assert resource_of("kubernetes:scheduling.k8s.io/v1:PriorityClass") == ("scheduling.k8s.io", "priorityclasses")
    assert resource_of("kubernetes:networking.k8s.io/v1:NetworkPolicy") == ("networking.k8s.io", "networkpolicies")
    assert plural("ClusterRules") == "clusterrules" and plural("Ingress") == "ingresses"


def test_read_rules_are_the_kinds_and_their_awaiters_lists() -> None:
    assert read_rules(["kubernetes:apps/v1:Deployment", RELEASE_TYPE, "ai-infra:kubernetes:Monitoring"]) == [
        ("", ["persistentvolumeclaims", "pods"]), ("apps", ["deployments", "replicasets"])]
    assert read_rules(["kubernetes:core/v1:Service", "kubernetes:core/v1:ConfigMap"]) == [
        ("", ["configmaps", "endpoints", "services"])]
    assert read_rules(["kubernetes:core/v1:Secret", "kubernetes:batch/v1:Job"]) == [("", ["pods"]), ("batch", ["jobs"])]


@pytest.mark.parametrize("stack", ["dev", "staging"])
def test_no_previewers_no_urn_changes(stack: str) -> None:
    urns = {r.urn for r in plan_stack(load_project(ROOT), stack).resources}
    assert urns == set((ROOT / "tests" / "spine" / "snapshots" / f"{stack}_urns.txt").read_text().split())
    assert not [u for u in urns if "previewer" in u]


def test_prod_without_its_previewers_loses_exactly_their_resources() -> None:
    with_them = {r.urn for r in plan_stack(load_project(ROOT), "prod").resources}
    config = stack_platform("prod")
    for cloud in ("aws", "gcp", "azure"):
        del config["clouds"][cloud]["previewers"]
    without = {r.urn for r in run_platform(load_platform(config), stack="prod").resources}
    added = with_them - without
    assert without <= with_them and added and all("previewer" in u.rsplit("::", 1)[1] or "Previewers" in u for u in added)


def _issues(cloud: str, previewers: list[str], **changes: Any) -> dict[str, str]:
    config = stack_platform("prod")
    config["clouds"][cloud]["previewers"] = previewers
    config["clouds"][cloud].update(changes)
    try:
        load_platform(config)
    except SpecError as err:
        return {path: message for path, message in err.issues if "previewers" in path}
    return {}


def test_an_eks_admin_or_deployer_cannot_also_preview() -> None:
    admin = stack_platform("prod")["clouds"]["aws"]["regions"]["us-east-1"]["cluster"]["admins"][0]
    assert _issues("aws", [admin]) == {"platform.clouds.aws.previewers[0]": (
        f"'{admin}' is also in regions.us-east-1.cluster.admins; EKS allows one access entry per principal: keep it in one "
        "(a previewer reads, an admin or deployer gets cluster-admin)")}
    issues = _issues("aws", [AWS_PREVIEWER], deployers=[AWS_PREVIEWER])
    assert issues["platform.clouds.aws.previewers[0]"].startswith(f"'{AWS_PREVIEWER}' is also in deployers; EKS allows one")


def test_aws_previewers_are_iam_roles() -> None:
    issues = _issues("aws", ["arn:aws:sts::123456789012:assumed-role/ci/x"])
    assert "'arn:aws:sts::123456789012:assumed-role/ci/x' is not an IAM role or user ARN" in issues["platform.clouds.aws.previewers[0]"]


def test_gcp_previewers_are_users_or_service_accounts() -> None:
    assert _issues("gcp", ["group:ci@x"]) == {"platform.clouds.gcp.previewers[0]": (
        "`group:ci@x` is not allowed in previewers: GKE's Kubernetes RBAC sees a group only with Google Groups for RBAC; "
        "allowed: serviceAccount:<email>, user:<email>")}
    assert "allowed: serviceAccount:<email>, user:<email>" in _issues("gcp", ["ci@x"])["platform.clouds.gcp.previewers[0]"]
    assert _issues("gcp", ["user:dev@acme.com", f"serviceAccount:{GCP_EMAIL}"]) == {}


def test_azure_previewers_are_object_ids() -> None:
    assert _issues("azure", ["ci-preview"]) == {"platform.clouds.azure.previewers[0]": (
        "GUID 'ci-preview' is invalid; GUIDs are 32 hex digits in groups of 8, 4, 4, 4 and 12 joined by '-', like "
        "00000000-0000-0000-0000-000000000000")}
