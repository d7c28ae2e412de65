"""The autoneg controller behind the real GCP composition: installed only on the GKE clusters of the global
endpoint's serving regions, running as exactly the Kubernetes service account the load balancer's IAM binding
names, pinned, locked down, and valid against the Kubernetes OpenAPI schema."""

from __future__ import annotations

import copy
import json
from typing import Any

import kubernetes_validate
import pulumi
import pytest
from helpers import platform_dict, run_platform
from k8s.validation import validate

from aiinfra.plan.runtime import PlanResult, ResourceRecord
from components.gcp.load_balancer import AUTONEG_NAMESPACE, AUTONEG_SERVICE_ACCOUNT
from components.k8s import autoneg
from components.spec import load_platform

pytestmark = pytest.mark.slow

PROJECT = "acme-ml-test"
SERVING, OTHER = "test-us-central1", "test-europe-west4"
AUTONEG = "ai-infra:kubernetes:Autoneg"
GCP: dict[str, Any] = {
    "project": PROJECT,
    "regions": {
        "us-central1": {"network": {"cidr": "10.20.0.0/16"}, "cluster": {}, "inference": {"port": 8000}},
        "europe-west4": {"network": {"cidr": "10.21.0.0/16"}, "cluster": {}},  # a cluster that serves nothing
    },
    "global_endpoint": {"domain": "infer.example.com"},
}


def plan_gcp(gcp: dict[str, Any], **top: Any) -> PlanResult:
    return run_platform(load_platform(platform_dict({"gcp": gcp}, teams={"research": {"gpu_quota": 0}}, **top)))


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return plan_gcp(GCP)


def children(plan: PlanResult) -> list[ResourceRecord]:
    return [r for r in plan.resources if f"{AUTONEG}$" in r.urn]


def obj(plan: PlanResult, kind: str, suffix: str) -> ResourceRecord:
    return plan.one(kind, f"{SERVING}-autoneg-{suffix}")


def test_installed_only_on_the_gke_clusters_that_serve(plan, three_cloud_plan):
    assert [r.name for r in plan.of_type(AUTONEG)] == [f"{SERVING}-autoneg"]
    layer = plan.outputs["kubernetes"]
    assert layer[SERVING]["autoneg"]["image"] == autoneg.IMAGE and "autoneg" not in layer[OTHER]
    for record in children(plan):
        assert f"::{SERVING}-k8s::" in record.provider  # through the serving cluster's own provider
    # EKS, AKS and GKE clusters handed over without the global endpoint get none.
    assert not three_cloud_plan.of_type(AUTONEG)


def test_not_installed_without_a_global_endpoint():
    gcp = copy.deepcopy(GCP)
    del gcp["global_endpoint"]
    plan = plan_gcp(gcp)
    assert not plan.of_type(AUTONEG) and not plan.of_type("gcp:compute/backendService:BackendService")


def test_runs_as_the_service_account_the_load_balancer_binds(plan):
    member = plan.one("gcp:projects/iAMMember:IAMMember", "test-global-autoneg").inputs["member"]
    account = obj(plan, "kubernetes:core/v1:ServiceAccount", "service-account").inputs
    ns, name = account["metadata"]["namespace"], account["metadata"]["name"]
    assert (ns, name) == (AUTONEG_NAMESPACE, AUTONEG_SERVICE_ACCOUNT)
    assert member.startswith("principal://iam.googleapis.com/projects/")
    assert member.endswith(f"/workloadIdentityPools/{PROJECT}.svc.id.goog/subject/ns/{ns}/sa/{name}")
    # Federation straight to the Kubernetes principal: an iam.gke.io/gcp-service-account annotation would make the
    # metadata server impersonate a Google service account that does not exist.
    assert "iam.gke.io/gcp-service-account" not in account["metadata"].get("annotations", {})
    # Only the controller's pod mounts a token (it asks for one): no other pod the account is given gets it for free.
    assert account["automountServiceAccountToken"] is False
    assert obj(plan, "kubernetes:core/v1:Namespace", "namespace").inputs["metadata"]["name"] == ns
    deployment = obj(plan, "kubernetes:apps/v1:Deployment", "controller").inputs
    assert deployment["metadata"]["namespace"] == ns
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == name
    for kind, suffix in (("ClusterRoleBinding", "manager-binding"), ("ClusterRoleBinding", "metrics-auth-binding"),
                         ("RoleBinding", "leader-binding")):
        binding = obj(plan, f"kubernetes:rbac.authorization.k8s.io/v1:{kind}", suffix).inputs
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": ns}]


def test_controller_is_pinned_and_targets_the_backend_service(plan):
    container = obj(plan, "kubernetes:apps/v1:Deployment", "controller").inputs["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "ghcr.io/googlecloudplatform/gke-autoneg-controller/gke-autoneg-controller:v2.0.0"
    args = container["args"]
    assert f"--project-id={PROJECT}" in args and "--leader-elect=true" in args
    # The Service annotations name the backend service; autoneg honours the name only with custom names on.
    assert "--enable-custom-service-names=true" in args and "--default-backendservice-name={name}-{port}" in args
    annotation = plan.outputs["gcp"]["us-central1"]["inference"]["service_annotations"]["controller.autoneg.dev/neg"]
    backend = plan.one("gcp:compute/backendService:BackendService", "test-global-backend").inputs["name"]
    assert json.loads(annotation)["backend_services"]["8000"][0]["name"] == backend


def test_controller_starts_after_its_iam(plan):
    deps = obj(plan, "kubernetes:apps/v1:Deployment", "controller").dependencies
    assert any(d.endswith("IAMMember::test-global-autoneg") for d in deps)
    assert any(d.endswith("IAMCustomRole::test-global-autoneg-role") for d in deps)
    assert any(d.endswith(f"RoleBinding::{SERVING}-autoneg-leader-binding") for d in deps)


def test_pod_is_locked_down(plan):
    ns_labels = obj(plan, "kubernetes:core/v1:Namespace", "namespace").inputs["metadata"]["labels"]
    assert ns_labels["pod-security.kubernetes.io/enforce"] == "restricted"
    pod = obj(plan, "kubernetes:apps/v1:Deployment", "controller").inputs["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["nodeSelector"]["iam.gke.io/gke-metadata-server-enabled"] == "true"  # Workload Identity tokens
    context = pod["containers"][0]["securityContext"]
    assert (context["readOnlyRootFilesystem"], context["allowPrivilegeEscalation"], context["privileged"]) == (True, False, False)
    assert context["capabilities"] == {"drop": ["ALL"]} and context["seccompProfile"] == {"type": "RuntimeDefault"}
    resources = pod["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "100m", "memory": "64Mi"} and resources["limits"]["memory"] == "128Mi"
    manager = obj(plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "manager-role").inputs["rules"]
    assert {"apiGroups": ["networking.gke.io"], "resources": ["servicenetworkendpointgroups"],
            "verbs": ["get", "list", "watch"]} in manager
    assert not any("*" in rule["verbs"] or "secrets" in rule["resources"] for rule in manager)
    # deploy/autoneg.yaml's verbs on Services, and no more: it annotates and finalizes them, never deletes one.
    assert {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "patch", "update", "watch"]} in manager
    assert not any("delete" in rule["verbs"] or "create" in rule["verbs"] and rule["resources"] != ["events"]
                   for rule in manager)


def test_every_autoneg_object_is_valid(plan):
    objects = [r.inputs for r in children(plan)]
    assert {o["kind"] for o in objects} == {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                                            "RoleBinding", "Deployment", "PodDisruptionBudget"}
    for o in objects:
        validate(o)
    broken = copy.deepcopy(obj(plan, "kubernetes:apps/v1:Deployment", "controller").inputs)
    context = broken["spec"]["template"]["spec"]["containers"][0]["securityContext"]
    context["readOnlyRootFs"] = context.pop("readOnlyRootFilesystem")
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)


def test_warns_when_the_layer_that_installs_autoneg_is_off(monkeypatch):
    warnings: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **kw: warnings.append(message))
    plan = plan_gcp(GCP, addons={"enabled": False})
    assert not plan.of_type(AUTONEG)
    assert any("addons.enabled is false" in w and "no backends" in w for w in warnings)
