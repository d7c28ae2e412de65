"""Every object the Kubernetes layer writes itself is valid: built-in kinds against the Kubernetes OpenAPI schema
(kubernetes-validate, strict), custom resources against their CRD's own schema. Checked on the wire-form inputs
a real `pulumi up` would send, for every cloud and both monitoring modes."""

from __future__ import annotations

import copy

import jsonschema
import kubernetes_validate
import pytest
from k8s.layer import make_spec, plan_layer
from k8s.validation import validate

from aiinfra.plan.runtime import PlanResult
from components.k8s.cluster import cluster_view
from components.k8s.queues import cluster_queue, flavors, local_queue, resource_flavor
from components.spec import Cloud, MigStrategy, TeamSpec

NOT_OBJECTS = {"kubernetes:helm.sh/v3:Release"}  # a Helm release is not an object in the cluster


def written_objects(plan: PlanResult) -> list[dict]:
    return [r.inputs for r in plan.resources
            if r.type.startswith("kubernetes:") and r.type not in NOT_OBJECTS]


@pytest.fixture(scope="module")
def managed_plan() -> PlanResult:
    return plan_layer(make_spec(addons={"monitoring": "managed"}))


def test_every_self_managed_object_is_valid(three_cloud_plan):
    objects = written_objects(three_cloud_plan)
    kinds = {o["kind"] for o in objects}
    assert kinds >= {"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PriorityClass", "ConfigMap",
                     "ResourceFlavor", "ClusterQueue", "LocalQueue", "PrometheusRule"}
    for obj in objects:
        validate(obj)


def test_every_managed_monitoring_object_is_valid(managed_plan):
    objects = written_objects(managed_plan)
    assert {o["kind"] for o in objects} >= {"ClusterPodMonitoring", "ClusterRules", "ClusterRole", "ClusterRoleBinding"}
    for obj in objects:
        validate(obj)


def test_kueue_builders_valid_for_every_strategy():
    spec = make_spec(("aws",))
    flavor_list = flavors(cluster_view(Cloud.AWS, spec.clouds.aws.regions["us-east-1"]), MigStrategy.MIXED)
    validate(resource_flavor(None))
    for flavor in flavor_list:
        validate(resource_flavor(flavor))
    for can_borrow in (True, False):
        validate(cluster_queue("team-a", TeamSpec(gpu_quota=3, can_borrow=can_borrow), flavor_list, "prod"))
    validate(local_queue("team-a"))


def test_validation_rejects_misspelled_fields(three_cloud_plan):
    """The checks are strict: a wrong property name fails (the API server would drop it silently)."""
    queue = copy.deepcopy(three_cloud_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
                                               "test-us-east-1-research-cluster-queue").inputs)
    queue["spec"]["cohort"] = queue["spec"].pop("cohortName")  # the v1beta1 spelling
    with pytest.raises(jsonschema.ValidationError):
        validate(queue)
    policy = copy.deepcopy(three_cloud_plan.one("kubernetes:networking.k8s.io/v1:NetworkPolicy",
                                                "test-us-east-1-research-network-policy").inputs)
    policy["spec"]["policyType"] = policy["spec"].pop("policyTypes")
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(policy)
