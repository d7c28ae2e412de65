"""Typed Kubernetes objects the components share: child options, namespaces, ConfigMaps and custom resources."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

MANAGED_BY = {"app.kubernetes.io/managed-by": "ai-infra"}
PSA_MODES = ("enforce", "audit", "warn")
RESTRICTED_PSA = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in PSA_MODES}
"""Namespace labels: Pod Security Admission `restricted`, enforced, audited and warned."""


def child_opts(parent: pulumi.Resource, cluster: pulumi.Resource,
               depends_on: Sequence[pulumi.Resource] = ()) -> pulumi.ResourceOptions:
    """Children of a Kubernetes-layer component: the component's provider (inherited from the parent), and
    `deleted_with` the cluster, so destroying a cluster doesn't try to delete objects inside it one by one."""
    return pulumi.ResourceOptions(parent=parent, deleted_with=cluster, depends_on=list(depends_on))


def namespace(name: str, namespace_name: str, labels: dict[str, str], opts: pulumi.ResourceOptions) -> k8s.core.v1.Namespace:
    return k8s.core.v1.Namespace(
        name, metadata=k8s.meta.v1.ObjectMetaArgs(name=namespace_name, labels={**MANAGED_BY, **labels}), opts=opts)


def config_map(name: str, metadata_name: str, namespace_name: str, data: dict[str, str], opts: pulumi.ResourceOptions,
               labels: dict[str, str] | None = None) -> k8s.core.v1.ConfigMap:
    return k8s.core.v1.ConfigMap(
        name,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=metadata_name, namespace=namespace_name,
                                            labels={**MANAGED_BY, **(labels or {})}),
        data=data, opts=opts)


def custom_resource(name: str, body: dict[str, Any], opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    """A custom resource from a pure builder's dict ({apiVersion, kind, metadata, spec})."""
    metadata = body["metadata"]
    return k8s.apiextensions.CustomResource(
        name,
        api_version=body["apiVersion"],
        kind=body["kind"],
        metadata=k8s.meta.v1.ObjectMetaArgs(name=metadata["name"], namespace=metadata.get("namespace"),
                                            labels={**MANAGED_BY, **metadata.get("labels", {})}),
        spec=body["spec"],
        opts=opts)
