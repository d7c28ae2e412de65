"""Offline schema validation of the objects the Kubernetes layer writes.

Built-in kinds: `kubernetes-validate`'s strict schemas (unknown fields are errors) for `K8S_VERSION`.
Custom resources: the CRD's own openAPIV3Schema (tests/k8s/data/crds), made strict the same way. CEL rules
(`x-kubernetes-validations`) are not evaluated; tests check the ones that matter (Kueue's) directly.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate

K8S_VERSION = "1.33"
"""Oldest minor the three clouds still support in the catalog's era; the objects use only long-GA APIs."""
CRD_DIR = Path(__file__).parent / "data" / "crds"
_BUILTIN_GROUPS = ("", "apps", "networking.k8s.io", "scheduling.k8s.io", "rbac.authorization.k8s.io", "policy", "storage.k8s.io")


def is_builtin(obj: dict[str, Any]) -> bool:
    api_version = obj["apiVersion"]
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return group in _BUILTIN_GROUPS


def _strict(schema: Any) -> Any:
    """No unknown fields in objects that list their properties (as the API server's pruning would silently drop)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if ("properties" in out and "additionalProperties" not in out
                and not out.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@functools.cache
def _crd_validator(group: str, version: str, kind: str) -> jsonschema.Validator:
    path = CRD_DIR / f"{group}_{kind.lower()}_{version}.json"
    if not path.exists():
        raise LookupError(f"no stored CRD schema for {group}/{version} {kind} (looked for {path.name})")
    schema = _strict(copy.deepcopy(json.loads(path.read_text())["schema"]))
    schema["properties"]["metadata"] = {
        "type": "object", "required": ["name"],
        "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                       "labels": {"type": "object", "additionalProperties": {"type": "string"}}},
        "additionalProperties": False}
    schema["required"] = sorted({*schema.get("required", []), "apiVersion", "kind", "metadata", "spec"})
    return jsonschema.Draft202012Validator(schema)


def validate(obj: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError (or LookupError for an unknown kind) unless `obj` is valid."""
    if is_builtin(obj):
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        return
    group, version = obj["apiVersion"].split("/")
    _crd_validator(group, version, obj["kind"]).validate(obj)
