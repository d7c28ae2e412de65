"""Composition: build a whole `Platform` from the per-cloud components.

Each cloud's composition lives in its own module and is imported only when the spec uses that cloud,
so an AWS-only environment never imports the GCP or Azure SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

import pulumi

from components.spec import Platform, SpecError, load_platform

from .types import ClusterHandle, CloudResult, region_name

CONFIG_NAMESPACE = "ai-infra"
CONFIG_KEY = "platform"

__all__ = ["ClusterHandle", "CloudResult", "build_platform", "load_from_config", "region_name"]


def load_from_config() -> Platform:
    """Read and validate `ai-infra:platform`. Bad config stops the program with the message only (no traceback)."""
    raw = pulumi.Config(CONFIG_NAMESPACE).get_object(CONFIG_KEY)
    if raw is None:
        raise pulumi.RunError(f"stack config '{CONFIG_NAMESPACE}:{CONFIG_KEY}' is missing; see README 'Config reference'")
    try:
        return load_platform(raw, root=CONFIG_KEY)
    except SpecError as err:
        raise pulumi.RunError(str(err)) from None


def build_platform(spec: Platform) -> dict[str, Any]:
    """Register every resource of the platform; return the outputs to export."""
    outputs: dict[str, Any] = {"environment": spec.environment}
    clusters: list[ClusterHandle] = []
    for cloud, cloud_spec in spec.clouds.items():
        module = importlib.import_module(f"components.compose.{cloud.value}")
        result: CloudResult = module.build(spec, cloud_spec)
        outputs[cloud.value] = result.outputs
        clusters += result.clusters
    if spec.addons.enabled and clusters:
        kubernetes = importlib.import_module("components.compose.kubernetes")
        outputs["kubernetes"] = kubernetes.build(spec, clusters)
    return outputs
