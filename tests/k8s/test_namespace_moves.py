"""The inference namespace changing hands. A team named like `inference.service_namespace` owns the namespace; without
such a team the InferenceService creates it. Adding or removing that team moves the existing namespace object to its
new owner (aliases) instead of creating a second one, which pulumi-kubernetes refuses ("already exists"), most
visibly in a protected environment where the old owner's namespace is retained."""

from __future__ import annotations

from typing import Any

import pulumi
from helpers import platform_dict
from k8s.layer import TEAMS, cloud_config, handles

from aiinfra.plan.runtime import PlanResult, run_program
from components.compose.kubernetes import build
from components.compose.types import InferenceBackend
from components.spec import InferenceSpec, load_platform

NAMESPACE = "kubernetes:core/v1:Namespace"
CLUSTER = "test-us-central1"


def plan_with(teams: dict[str, Any], namespace: str = "inference", **top: Any) -> PlanResult:
    spec = load_platform(platform_dict({"gcp": cloud_config("gcp")}, teams=teams, **top))

    def program() -> None:
        [handle] = handles(spec)
        handle.inference = InferenceBackend(InferenceSpec(service_namespace=namespace), sources=("35.191.0.0/16",))
        pulumi.export("kubernetes", build(spec, [handle]).outputs)
    return run_program(program, project="ai-infra", stack="test")


def namespace_of(plan: PlanResult, name: str = "inference") -> Any:
    [record] = [r for r in plan.of_type(NAMESPACE) if r.inputs["metadata"]["name"] == name]
    return record


def named(aliases: list) -> list[tuple[str, str]]:
    return [(a.spec.name, a.spec.parentUrn) for a in aliases if a.spec.name]  # the SDK adds type-only ones too


def test_a_team_joining_takes_over_the_services_namespace(aliases_sent: dict[str, list]) -> None:
    before = plan_with(TEAMS)  # research, serving: the InferenceService creates `inference`
    after = plan_with({**TEAMS, "inference": {"gpu_quota": 0}})
    old, new = namespace_of(before), namespace_of(after)
    assert old.parent.endswith(f"ai-infra:kubernetes:InferenceService::{CLUSTER}-inference")
    assert new.parent.endswith(f"ai-infra:kubernetes:Team::{CLUSTER}-inference")
    assert old.urn != new.urn
    # The team's namespace names the URN the namespace had: the engine moves it instead of creating `inference` again.
    assert old.urn in new.aliases
    service = f"urn:pulumi:test::ai-infra::ai-infra:kubernetes:InferenceService::{CLUSTER}-inference"
    assert named(aliases_sent[new.urn]) == [(f"{CLUSTER}-inference-namespace", service)]
    # Other teams' namespaces keep no alias.
    assert not named(aliases_sent[namespace_of(after, "research").urn])


def test_a_team_leaving_hands_its_namespace_to_the_service() -> None:
    before = plan_with({**TEAMS, "inference": {"gpu_quota": 0}})
    after = plan_with(TEAMS)
    old, new = namespace_of(before), namespace_of(after)
    assert old.parent.endswith(f"ai-infra:kubernetes:Team::{CLUSTER}-inference")
    assert new.parent.endswith(f"ai-infra:kubernetes:InferenceService::{CLUSTER}-inference")
    assert old.urn in new.aliases


def test_only_the_team_named_like_the_service_namespace_gets_the_alias() -> None:
    plan = plan_with(TEAMS, namespace="serving")
    serving, research = namespace_of(plan, "serving"), namespace_of(plan, "research")
    assert serving.parent.endswith(f"ai-infra:kubernetes:Team::{CLUSTER}-serving")
    service_namespace = ("urn:pulumi:test::ai-infra::ai-infra:kubernetes:InferenceService$kubernetes:core/v1:Namespace::"
                         f"{CLUSTER}-inference-namespace")
    assert serving.aliases == [service_namespace] and research.aliases == []
    assert not [r for r in plan.of_type(NAMESPACE) if r.parent.endswith(f"InferenceService::{CLUSTER}-inference")]


def test_a_protected_environment_keeps_the_services_namespace_when_inference_is_removed() -> None:
    # Removing `inference` from a region (or renaming its namespace) would otherwise delete the namespace, and with it
    # the serving Deployments, Secrets and claims users put there.
    assert namespace_of(plan_with(TEAMS)).retainOnDelete is True  # environment `test`: protected
    assert namespace_of(plan_with(TEAMS, protect_stateful=False)).retainOnDelete is False
