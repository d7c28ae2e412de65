"""Composition: build a whole `Platform` from the per-cloud components.

Each cloud's composition lives in its own module and is imported only when the spec uses that cloud,
so an AWS-only environment never imports the GCP or Azure SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

import pulumi
from pulumi.runtime import is_config_secret

from components.spec import (PLATFORM_CONFIG, Platform, SpecError, StackConfigError, check_stack_environment, load_platform,
                             platform_config_value)

from .types import ClusterHandle, CloudResult, region_name

CONFIG_NAMESPACE, CONFIG_KEY = PLATFORM_CONFIG.split(":")

__all__ = ["ClusterHandle", "CloudResult", "build_platform", "deploy", "load_from_config", "region_name", "validate"]


def load_from_config() -> Platform:
    """Read and validate `ai-infra:platform` and check that its environment is this stack's. Bad config stops the
    program with the message only (no traceback), before anything is registered; `aiinfra validate` gives the same
    messages (components.spec.stack)."""
    stack = pulumi.get_stack()
    try:
        # Every config key of the stack, to name a near miss (ai-infra:platfrom) when the platform is missing.
        keys = [*dict.fromkeys([*pulumi.runtime.config.CONFIG.get(), *pulumi.runtime.get_config_env()])]
        raw = platform_config_value(pulumi.Config(CONFIG_NAMESPACE).get(CONFIG_KEY), stack=stack,
                                    secret=is_config_secret(PLATFORM_CONFIG), config_keys=keys)
        spec = validate(raw)
        check_stack_environment(spec.environment, stack)
    except StackConfigError as err:
        raise pulumi.RunError(str(err)) from None
    return spec


def validate(raw: Any, *, root: str = CONFIG_KEY) -> Platform:
    """Validate a platform value into the spec. Bad input stops the program before anything is registered, and
    `pulumi.RunError` makes the CLI print the message alone, without a traceback."""
    try:
        return load_platform(raw, root=root)
    except SpecError as err:
        raise pulumi.RunError(str(err)) from None


def deploy(spec: Platform) -> None:
    """Register every resource of the platform and export its outputs as the stack's outputs."""
    for key, value in build_platform(spec).items():
        pulumi.export(key, value)


def build_platform(spec: Platform) -> dict[str, Any]:
    """Register every resource of the platform; return the outputs to export."""
    outputs: dict[str, Any] = {"environment": spec.environment}
    clusters: list[ClusterHandle] = []
    results: dict[str, CloudResult] = {}
    for cloud, cloud_spec in spec.clouds.items():
        module = importlib.import_module(f"components.compose.{cloud.value}")
        results[cloud.value] = module.build(spec, cloud_spec)
        outputs[cloud.value] = results[cloud.value].outputs
        clusters += results[cloud.value].clusters
    services: dict[str, pulumi.Resource] = {}
    if spec.addons.enabled and clusters:
        kubernetes = importlib.import_module("components.compose.kubernetes")
        layer = kubernetes.build(spec, clusters)
        outputs["kubernetes"], services = layer.outputs, layer.inference_services
    for cloud_name, result in results.items():
        if result.after_kubernetes is not None:
            outputs[cloud_name].update(result.after_kubernetes(services))
    return outputs
