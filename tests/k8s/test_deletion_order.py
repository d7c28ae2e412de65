"""Deletions that finalizers would block. A team (or a Lustre file system) leaving the config of a protected
environment: its namespace is retained, its workloads keep running, so Kueue's `resource-in-use` finalizer on the
ClusterQueue and `pvc-protection`/`pv-protection` on the claims and volumes would hold their deletion until the
provider's timeout: they are retained too (forgotten). The GKE inference Service depends on the autoneg controller
(and its IAM grant), whose finalizer only the running controller removes: it is deleted first."""

from __future__ import annotations

from pathlib import Path

import pytest
from k8s.layer import LUSTRE_CLOUDS, plan_clouds

from aiinfra.plan.program import plan_stack
from aiinfra.plan.project import load_project
from aiinfra.plan.runtime import PlanResult

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PV, PVC = "kubernetes:core/v1:PersistentVolume", "kubernetes:core/v1:PersistentVolumeClaim"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE = "kubernetes:core/v1:Service"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
TEAMS = {"research": {"gpu_quota": 0}, "vision": {"gpu_quota": 0}}


@pytest.fixture(scope="module")
def protected() -> PlanResult:
    return plan_clouds(LUSTRE_CLOUDS, TEAMS)  # environment `test`: protected


@pytest.fixture(scope="module")
def unprotected() -> PlanResult:
    from helpers import platform_dict, run_platform

    from components.spec import load_platform
    return run_platform(load_platform(platform_dict(LUSTRE_CLOUDS, teams=TEAMS, protect_stateful=False)))


@pytest.fixture(scope="module")
def prod() -> PlanResult:
    return plan_stack(load_project(ROOT), "prod")


def retained(plan: PlanResult, type_: str) -> dict[str, bool]:
    return {r.name: r.retainOnDelete for r in plan.of_type(type_)}


def test_a_protected_environment_forgets_team_queues_and_lustre_claims_with_the_namespace(protected, prod):
    for plan in (protected, prod):
        for type_ in (CLUSTER_QUEUE, LOCAL_QUEUE):  # every one is a team's
            records = retained(plan, type_)
            assert records and all(records.values()), (type_, records)
    for type_ in (PV, PVC):
        records = retained(protected, type_)
        assert len(records) == 6 and all(records.values()), records  # 3 clouds x 2 teams


def test_an_unprotected_environment_deletes_them(unprotected):
    for type_ in (CLUSTER_QUEUE, LOCAL_QUEUE, PV, PVC):
        records = retained(unprotected, type_)
        assert records and not any(records.values()), (type_, records)
    # The namespace goes last: the queues and claims depend on it.
    for record in unprotected.of_type(LOCAL_QUEUE) + unprotected.of_type(PVC):
        assert any(d.split("::")[-1].endswith("-namespace") for d in record.dependencies), record.name


def _gke_clusters(plan: PlanResult) -> list[str]:
    """Names of the clusters whose inference Service autoneg manages (the prod GKE regions)."""
    return [r.name.removesuffix("-autoneg-controller") for r in plan.of_type(DEPLOYMENT) if r.name.endswith("-autoneg-controller")]


def test_the_gke_inference_service_is_deleted_before_the_autoneg_controller_and_its_grant(prod):
    clusters = _gke_clusters(prod)
    assert clusters
    urns = [r.urn for r in prod.resources]
    for cluster in clusters:
        service = prod.one(SERVICE, f"{cluster}-inference-service")
        controller = prod.one(DEPLOYMENT, f"{cluster}-autoneg-controller")
        assert controller.urn in service.dependencies
        # And on what the controller's GCP calls need (the load balancer's IAM grant), which it depends on too.
        grants = [d for d in controller.dependencies if not d.split("::")[-2].startswith("kubernetes:")
                  and "ai-infra:kubernetes" not in d.split("::")[-2]]
        assert grants and set(grants) <= set(service.dependencies)
        # Built first: the Service's registration waits for the controller's.
        assert urns.index(controller.urn) < urns.index(service.urn)


def test_other_inference_services_do_not_depend_on_autoneg(prod):
    gke = set(_gke_clusters(prod))
    for service in prod.of_type(SERVICE):
        cluster = service.name.removesuffix("-inference-service")
        if service.name.endswith("-inference-service") and cluster not in gke:
            assert not any("autoneg" in d for d in service.dependencies), service.name
