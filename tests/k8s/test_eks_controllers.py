"""The EKS controllers in the Kubernetes layer: the Cluster Autoscaler (chart matching the cluster's minor, discovery by
the tags EKS puts on node group ASGs, IRSA), the AWS Load Balancer Controller (cluster, region, VPC, IRSA) and the
TargetGroupBinding that fills the inference target group, valid against the CRD of the pinned chart, and the order
that keeps the controller's webhooks from failing other objects on a new cluster. Only on EKS."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest
from helpers import platform_dict, run_platform
from k8s.layer import TEAMS, cloud_config, handles
from k8s.validation import validate

from aiinfra.plan.runtime import PlanResult, ResourceRecord, run_program
from components.aws.controllers import (
    AUTOSCALER_NAMESPACE,
    AUTOSCALER_SERVICE_ACCOUNT,
    LB_CONTROLLER_NAMESPACE,
    LB_CONTROLLER_SERVICE_ACCOUNT,
)
from components.compose.kubernetes import build
from components.compose.types import EksControllers, InferenceBackend, InferenceTarget, IrsaAccount
from components.k8s import charts, eks
from components.k8s.charts import CLUSTER_AUTOSCALER
from components.spec import InferenceSpec, load_platform
from components.spec.aws import EKS_AUTOSCALER_MINORS, EKS_KUBERNETES_VERSION

CLUSTER = "test-us-east-1"
AUTOSCALER_ROLE = "arn:aws:iam::123456789012:role/test-us-east-1-autoscaler-role-0a1b2c3"
LB_ROLE = "arn:aws:iam::123456789012:role/test-us-east-1-lb-controller-role-4d5e6f7"
TARGET_GROUP = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/infer-20261123/0123456789abcdef"
LB_SG = "sg-0a1b2c3d4e5f60718"
VPC = "vpc-0123456789abcdef0"


class StandIn(pulumi.ComponentResource):
    """A component with one child (depending on a component means depending on its children)."""

    def __init__(self, name: str) -> None:
        super().__init__("test:index:Stand", name, None, None)
        pulumi.CustomResource("test:index:Part", f"{name}-part", {}, pulumi.ResourceOptions(parent=self))
        self.register_outputs({})


def plan_eks(version: str = "1.33", namespace: str = "inference", serving: bool = True,
             teams: dict[str, Any] | None = None, environment: str = "test") -> PlanResult:
    """The layer on a stand-in EKS cluster whose controllers' inputs are known values."""
    spec = load_platform(platform_dict({"aws": cloud_config("aws")}, teams=TEAMS if teams is None else teams,
                                       environment=environment))

    def program() -> None:
        [handle] = handles(spec)
        iam, endpoint = StandIn(f"{handle.name}-iam"), StandIn(f"{handle.name}-endpoint")
        target = None
        if serving:
            target = InferenceTarget(pulumi.Output.from_input(TARGET_GROUP), pulumi.Output.from_input(LB_SG), endpoint)
            handle.inference = InferenceBackend(InferenceSpec(service_namespace=namespace), sources=("10.10.0.0/16",),
                                                target=target)
        handle.eks = EksControllers(
            region="us-east-1", cluster_name=pulumi.Output.from_input(handle.name), kubernetes_version=version,
            version_path="platform.clouds.aws.regions.us-east-1.cluster.kubernetes_version",
            vpc_id=pulumi.Output.from_input(VPC), iam=iam,
            autoscaler=IrsaAccount(AUTOSCALER_NAMESPACE, AUTOSCALER_SERVICE_ACCOUNT, pulumi.Output.from_input(AUTOSCALER_ROLE)),
            lb_controller=IrsaAccount(LB_CONTROLLER_NAMESPACE, LB_CONTROLLER_SERVICE_ACCOUNT, pulumi.Output.from_input(LB_ROLE)))
        pulumi.export("kubernetes", build(spec, [handle]).outputs)
    return run_program(program, project="ai-infra", stack=environment)


@pytest.fixture(scope="module")
def plan() -> PlanResult:
    return plan_eks()


def values(record: ResourceRecord) -> dict[str, Any]:
    return record.inputs["values"]


def test_autoscaler_chart_matches_the_cluster_minor(plan: PlanResult) -> None:
    release = plan.one("kubernetes:helm.sh/v3:Release", f"{CLUSTER}-cluster-autoscaler-release")
    assert (release.inputs["chart"], release.inputs["version"]) == ("cluster-autoscaler", "9.51.0")
    assert release.inputs["repositoryOpts"] == {"repo": "https://kubernetes.github.io/autoscaler"}
    assert release.inputs["namespace"] == "kube-system" and release.inputs["name"] == "cluster-autoscaler"
    assert release.parent.endswith(f"ai-infra:kubernetes:ClusterAutoscaler::{CLUSTER}-cluster-autoscaler")
    for minor, chart in charts.CLUSTER_AUTOSCALER.items():  # every pin names its minor as the app version
        assert f"appVersion {minor}." in chart.source
    assert any("test:index:Part::test-us-east-1-iam-part" in d for d in release.dependencies)  # after the IAM role


def test_autoscaler_values(plan: PlanResult) -> None:
    v = values(plan.one("kubernetes:helm.sh/v3:Release", f"{CLUSTER}-cluster-autoscaler-release"))
    assert v["cloudProvider"] == "aws" and v["awsRegion"] == "us-east-1"
    assert v["autoDiscovery"] == {"clusterName": CLUSTER, "tags": ["k8s.io/cluster-autoscaler/enabled",
                                                                   f"k8s.io/cluster-autoscaler/{CLUSTER}"]}
    account = v["rbac"]["serviceAccount"]
    assert account == {"create": True, "name": AUTOSCALER_SERVICE_ACCOUNT,
                       "annotations": {"eks.amazonaws.com/role-arn": AUTOSCALER_ROLE}}
    args = v["extraArgs"]
    assert args["balance-similar-node-groups"] is True and args["skip-nodes-with-local-storage"] is False
    assert args["expander"] == "least-waste" and args["scale-down-unneeded-time"] == "10m"
    assert v["nodeSelector"] == {"ai-infra/pool": "system"}
    assert v["securityContext"]["runAsNonRoot"] is True and v["securityContext"]["runAsUser"] != 0
    assert v["containerSecurityContext"]["allowPrivilegeEscalation"] is False
    assert v["containerSecurityContext"]["readOnlyRootFilesystem"] is True


def test_lb_controller_values(plan: PlanResult) -> None:
    release = plan.one("kubernetes:helm.sh/v3:Release", f"{CLUSTER}-lb-controller-release")
    assert (release.inputs["chart"], release.inputs["version"]) == ("aws-load-balancer-controller", "3.5.0")
    assert release.inputs["repositoryOpts"] == {"repo": "https://aws.github.io/eks-charts"}
    v = values(release)
    assert (v["clusterName"], v["region"], v["vpcId"]) == (CLUSTER, "us-east-1", VPC)
    assert v["serviceAccount"] == {"create": True, "name": LB_CONTROLLER_SERVICE_ACCOUNT,
                                   "annotations": {"eks.amazonaws.com/role-arn": LB_ROLE}}
    assert release.inputs["namespace"] == LB_CONTROLLER_NAMESPACE
    assert v["nodeSelector"] == {"ai-infra/pool": "system"} and v["securityContext"]["runAsNonRoot"] is True
    # A Service or Ingress that does not ask for a public load balancer gets an internal one, whatever the
    # controller's own default is.
    assert v["defaultLoadBalancerScheme"] == "internal"
    # The Service mutator (failurePolicy Fail) skips exactly the platform's namespaces; the rest of the chart's
    # webhook settings stay as the chart has them.
    assert v["serviceMutatorWebhookConfig"] == {"namespaceSelectors": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
         "values": ["kube-system", "kueue-system", "monitoring", "gpu-operator"]}]}


def test_platform_services_are_outside_the_service_mutator(plan: PlanResult) -> None:
    """Every namespace a chart of the layer installs into is one the mutator skips, so those charts' Services don't
    fail while the controller is not ready; the inference namespace stays covered (users create Services there)."""
    [selector] = values(plan.one("kubernetes:helm.sh/v3:Release", f"{CLUSTER}-lb-controller-release"))[
        "serviceMutatorWebhookConfig"]["namespaceSelectors"]
    releases = {r.name: r.inputs["namespace"] for r in plan.of_type("kubernetes:helm.sh/v3:Release")}
    assert len(releases) >= 5, releases  # kueue, monitoring, accelerators and the two controllers at least
    assert {ns for ns in releases.values() if ns not in selector["values"]} == set()
    assert "inference" not in selector["values"]


def test_target_group_binding(plan: PlanResult) -> None:
    binding = plan.one("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding", f"{CLUSTER}-inference-binding")
    assert binding.parent.endswith(f"ai-infra:kubernetes:InferenceService::{CLUSTER}-inference")
    spec = binding.inputs["spec"]
    assert spec["targetGroupARN"] == TARGET_GROUP and spec["targetType"] == "ip"
    # A new target group (the endpoint's port changed) replaces the binding: the webhook refuses to change the ARN.
    assert binding.replaceOnChanges == ["spec.targetGroupARN"]
    assert spec["serviceRef"] == {"name": "inference", "port": 8080}
    assert spec["networking"] == {"ingress": [{"from": [{"securityGroup": {"groupID": LB_SG}}],
                                               "ports": [{"protocol": "TCP", "port": 8080}]}]}
    assert binding.inputs["metadata"]["namespace"] == "inference"
    # The CRD comes with the controller's chart: the binding waits for the release, the Service (and its namespace)
    # and the endpoint.
    deps = binding.dependencies
    assert any(d.endswith(f"kubernetes:helm.sh/v3:Release::{CLUSTER}-lb-controller-release") for d in deps)
    assert any(d.endswith(f"kubernetes:core/v1:Namespace::{CLUSTER}-inference-namespace") for d in deps)
    assert any(d.endswith(f"kubernetes:core/v1:Service::{CLUSTER}-inference-service") for d in deps)
    assert any("test:index:Part::test-us-east-1-endpoint-part" in d for d in deps)
    assert plan.outputs["kubernetes"][CLUSTER]["inference"]["target_group_binding"] == "inference/inference"
    body = {k: binding.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}
    validate(body)  # the CRD's own schema (aws-load-balancer-controller chart 3.5.0), unknown fields refused


def test_the_schema_check_can_fail() -> None:
    import jsonschema
    body = eks.target_group_binding("inference", "inference", 8080, TARGET_GROUP, LB_SG)
    validate(copy.deepcopy(body))
    body["spec"]["targetType"] = "pod"
    with pytest.raises(jsonschema.ValidationError):
        validate(body)
    body = eks.target_group_binding("inference", "inference", 8080, TARGET_GROUP, None)
    assert "networking" not in body["spec"]
    body["spec"]["serviceRef"]["portName"] = "http"
    with pytest.raises(jsonschema.ValidationError):
        validate(body)


def test_the_inference_service_waits_for_the_controller() -> None:
    """The controller's Service mutator covers the inference namespace: the Service is created once the release is
    ready, not while the controller's pods start (then the API server refuses it: no endpoints for the webhook)."""
    for namespace in ("inference", "serving"):  # its own namespace, or a team's
        plan = plan_eks(namespace=namespace)
        release = plan.one("kubernetes:helm.sh/v3:Release", f"{CLUSTER}-lb-controller-release").urn
        assert release in plan.one("kubernetes:core/v1:Service", f"{CLUSTER}-inference-service").dependencies
        assert release in plan.one("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding").dependencies


def test_the_namespace_policy_and_binding_keep_their_state_from_the_lb_controller(aliases_sent: dict[str, list]) -> None:
    """They were `<cluster>-lb-controller-namespace`, `-from-load-balancer` and `-binding` under the controller's
    component: aliases move them into the inference Service's component instead of replacing them (a replaced
    namespace deletes everything deployed in it; a replaced binding deregisters the serving pods)."""
    plan = plan_eks()
    controller = plan.one("ai-infra:kubernetes:LoadBalancerController", f"{CLUSTER}-lb-controller").urn
    assert controller == f"urn:pulumi:test::ai-infra::ai-infra:kubernetes:LoadBalancerController::{CLUSTER}-lb-controller"
    for kind, suffix in (("kubernetes:core/v1:Namespace", "namespace"),
                         ("kubernetes:networking.k8s.io/v1:NetworkPolicy", "from-load-balancer"),
                         ("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding", "binding")):
        record = plan.one(kind, f"{CLUSTER}-inference-{suffix}")
        assert record.parent.endswith(f"ai-infra:kubernetes:InferenceService::{CLUSTER}-inference")
        # The SDK adds type-only aliases of its own; the namespace also has the team of its name's (test_namespace_moves).
        [alias] = [a for a in aliases_sent[record.urn] if a.spec.name.startswith(f"{CLUSTER}-lb-controller-")]
        assert (alias.spec.name, alias.spec.parentUrn) == (f"{CLUSTER}-lb-controller-{suffix}", controller)
    # The Service is new: nothing to alias.
    assert aliases_sent[plan.one("kubernetes:core/v1:Service", f"{CLUSTER}-inference-service").urn] == []


def test_a_team_namespace_is_reused_not_created() -> None:
    plan = plan_eks(namespace="serving")  # TEAMS has a team `serving`
    assert not [r for r in plan.of_type("kubernetes:core/v1:Namespace") if r.name == f"{CLUSTER}-inference-namespace"]
    binding = plan.one("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding")
    assert binding.inputs["metadata"]["namespace"] == "serving"
    service = plan.one("kubernetes:core/v1:Service", f"{CLUSTER}-inference-service")
    assert service.inputs["metadata"]["namespace"] == "serving"
    assert any(d.endswith(f"kubernetes:core/v1:Namespace::{CLUSTER}-serving-namespace") for d in service.dependencies)
    assert service.urn in binding.dependencies


def test_no_binding_where_nothing_serves() -> None:
    plan = plan_eks(serving=False)
    assert not plan.of_type("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding")
    assert plan.of_type("ai-infra:kubernetes:LoadBalancerController") and plan.of_type("ai-infra:kubernetes:ClusterAutoscaler")


def test_the_default_eks_version_has_a_pinned_autoscaler() -> None:
    assert EKS_KUBERNETES_VERSION in CLUSTER_AUTOSCALER
    plan = plan_eks(version=EKS_KUBERNETES_VERSION)
    release = plan.one("kubernetes:helm.sh/v3:Release", f"{CLUSTER}-cluster-autoscaler-release")
    assert release.inputs["version"] == CLUSTER_AUTOSCALER[EKS_KUBERNETES_VERSION].version


def test_the_spec_accepts_exactly_the_minors_with_a_pinned_autoscaler() -> None:
    """The spec refuses another minor before anything is registered; it must know the same minors as the pins."""
    assert tuple(CLUSTER_AUTOSCALER) == EKS_AUTOSCALER_MINORS
    assert EKS_KUBERNETES_VERSION in EKS_AUTOSCALER_MINORS


def test_an_unsupported_minor_is_a_clear_error() -> None:
    with pytest.raises(Exception) as err:
        plan_eks(version="1.29")
    message = str(err.value)
    assert "platform.clouds.aws.regions.us-east-1.cluster.kubernetes_version" in message and "'1.29'" in message
    assert "1.32, 1.33, 1.34, 1.35" in message


@pytest.mark.slow
def test_only_on_eks_clusters_built_by_the_aws_composition() -> None:
    plan = run_platform(load_platform(platform_dict({c: cloud_config(c) for c in ("aws", "gcp", "azure")}, teams=TEAMS)))
    for kind in ("ai-infra:kubernetes:ClusterAutoscaler", "ai-infra:kubernetes:LoadBalancerController",
                 "ai-infra:aws:ControllerRoles"):
        assert [r.name.removesuffix("-cluster-autoscaler").removesuffix("-lb-controller") for r in plan.of_type(kind)] == [CLUSTER]
    release = plan.one("kubernetes:helm.sh/v3:Release", f"{CLUSTER}-cluster-autoscaler-release")
    assert f"::{CLUSTER}-k8s::" in release.provider
    # The spec sets no version: EKS runs the pinned default and the autoscaler matches it, known while planning.
    assert plan.one("aws:eks/cluster:Cluster").inputs["version"] == EKS_KUBERNETES_VERSION
    assert release.inputs["version"] == CLUSTER_AUTOSCALER[EKS_KUBERNETES_VERSION].version
    layer = plan.outputs["kubernetes"]
    assert "cluster_autoscaler" in layer[CLUSTER]
    assert all("cluster_autoscaler" not in layer[c] and "lb_controller" not in layer[c] for c in layer if c != CLUSTER)
    # No inference in this spec: the controllers, but no binding.
    assert not plan.of_type("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding")
