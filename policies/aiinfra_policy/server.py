"""A faster Analyzer for the pack: only the policies for the resource's type, properties decoded once.

pulumi-policy 1.21's servicer runs every resource policy on every resource, and decodes the resource's
properties (protobuf Struct -> dict -> unknown-checking proxy) and its provider's properties once per
policy, before the policy can even look at the type. With ~50 rules that is ~50 decodes per resource, and
it is where nearly all of the pack's time went (bench/policy_throughput.py). Every rule here declares the
types it checks, so `TypedAnalyzer` runs only those and decodes once per resource.

Everything else (config, stack policies, diagnostics, unknown handling, remediation levels) is the SDK's
own code: the subclass overrides `Analyze` and `AnalyzeStack` (which decoded the whole stack once per stack
policy) only, and `install()` makes `PolicyPack` build it.

`TypedAnalyzer` is also the only place a resource rule's stack part runs (`TypedResourcePolicy.stack_validate`:
the accelerator rules on node groups sized by a launch template, the IMDSv2 and public-IP rules on instances whose
template is outside the stack): the SDK's own AnalyzeStack runs only
StackValidationPolicy objects. So the pack does not run without it: if a future SDK builds its servicer
differently, `install()` returns False and `pack.build_pack()` refuses to load, naming the pulumi-policy version it
found and TESTED_SDK (policies/requirements.txt pins that minor). tests/policies/test_server.py checks that the
diagnostics are identical to the SDK's on the reference environments and on hand-made cases without stack parts,
and that a stack part reports under its rule's name and level through AnalyzeStack.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from inspect import isawaitable

from google.protobuf import json_format
from pulumi.runtime import proto
from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy import policy as sdk
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from .registry import type_matches

TESTED_SDK = "1.21"
"""The pulumi-policy minor version `TypedAnalyzer` was written against and tested with (policies/requirements.txt)."""
SERVICER_METHODS = ("_configure_runtime_settings", "_get_enforcement_level", "_create_report_violation",
                    "_get_policy_config", "_get_resource_options", "_get_provider_resource", "_map_enforcement_level")
"""The SDK servicer's methods `TypedAnalyzer` calls."""


class TypedResourcePolicy(ResourceValidationPolicy):
    """A resource policy that declares the resource types it checks (`None`: every type; entries may be glob
    patterns, see `registry.type_matches`)."""

    def __init__(self, *args, resource_types: Sequence[str] | None = None, stack_validate=None, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.resource_types = frozenset(resource_types) if resource_types is not None else None
        self.stack_validate = stack_validate
        """What the policy checks that only the whole stack shows, `(StackValidationArgs, report)`: `TypedAnalyzer`
        runs it in AnalyzeStack under this policy's name and enforcement level (None: nothing)."""


class TypedAnalyzer(sdk._PolicyAnalyzerServicer):  # noqa: SLF001 (the SDK's servicer; see the module doc)
    """The SDK's servicer with a type-indexed, decode-once `Analyze`."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self._by_type: dict[str, list[ResourceValidationPolicy]] = {}
        self._runtime_configured = False

    def _policies_for(self, type_: str) -> list[ResourceValidationPolicy]:
        policies = self._by_type.get(type_)
        if policies is None:
            # Two threads may both compute a type's list; they compute the same one, so no lock is needed.
            policies = [p for p in self._PolicyAnalyzerServicer__policies  # type: ignore[attr-defined]
                        if isinstance(p, ResourceValidationPolicy) and _applies(p, type_)]
            self._by_type[type_] = policies
        return policies

    def Analyze(self, request, _context):  # noqa: ANN001, ANN201, N802 (gRPC method)
        if not self._runtime_configured:
            # The SDK re-reads the same process environment on every call; once is enough.
            self._configure_runtime_settings()
            self._runtime_configured = True
        response = proto.AnalyzeResponse()
        decoded = None
        for policy in self._policies_for(request.type):
            level = self._get_enforcement_level(policy)
            if level == EnforcementLevel.DISABLED:
                continue
            if not policy.has_validation():
                response.not_applicable.append(proto.PolicyNotApplicable(
                    policy_name=policy.name, reason="Policy does not implement validate"))
                continue
            if level == EnforcementLevel.REMEDIATE:
                level = EnforcementLevel.MANDATORY  # a remediated resource that still violates is mandatory
            report = self._create_report_violation(response, policy.name, policy.description, level, policy.severity)
            if decoded is None:
                props = unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(request.properties)))
                decoded = props, self._get_resource_options(request), self._get_provider_resource(request)
            props, opts, provider = decoded
            args = ResourceValidationArgs(request.type, props, request.urn, request.name, opts, provider,
                                          self._get_policy_config(policy.name),
                                          self._PolicyAnalyzerServicer__stack_tags)  # type: ignore[attr-defined]
            self._run(policy, args, report, response)
        return response

    def AnalyzeStack(self, request, _context):  # noqa: ANN001, ANN201, N802 (gRPC method)
        """The SDK's AnalyzeStack, with the stack's resources decoded once instead of once per stack policy."""
        self._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        resources = None
        for policy in self._PolicyAnalyzerServicer__policies:  # type: ignore[attr-defined]
            level = self._get_enforcement_level(policy)
            validate = policy.validate if isinstance(policy, StackValidationPolicy) else getattr(policy, "stack_validate", None)
            if level == EnforcementLevel.DISABLED or validate is None:
                continue
            if level == EnforcementLevel.REMEDIATE:
                level = EnforcementLevel.MANDATORY  # stack policies cannot remediate
            report = self._create_report_violation(response, policy.name, policy.description, level, policy.severity)
            if resources is None:
                resources = self._stack_resources(request)
            args = StackValidationArgs(resources, self._get_policy_config(policy.name),
                                       self._PolicyAnalyzerServicer__stack_tags)  # type: ignore[attr-defined]
            self._run(policy, args, report, response, validate)
        return response

    def _stack_resources(self, request) -> list[PolicyResource]:  # noqa: ANN001
        """PolicyResources with parents, dependencies and property dependencies linked, as the SDK builds them."""
        resources, links = [], []
        for r in request.resources:
            props = unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(r.properties)))
            resource = PolicyResource(r.type, props, r.urn, r.name, self._get_resource_options(r),
                                      self._get_provider_resource(r), None, [], {})
            resources.append(resource)
            links.append((r.parent, list(r.dependencies), {k: list(v.urns) for k, v in r.propertyDependencies.items()}))
        by_urn = {resource.urn: resource for resource in resources}
        for resource, (parent, dependencies, property_dependencies) in zip(resources, links):
            if parent in by_urn:
                resource.parent = by_urn[parent]
            resource.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
            for key, urns in property_dependencies.items():
                resource.property_dependencies[key] = [by_urn[u] for u in urns if u in by_urn]
        return resources

    def _run(self, policy, args, report, response, validate=None) -> None:  # noqa: ANN001
        """Call the validator (`validate`, else the policy's) as the SDK does: awaitables run to completion, unknowns
        and not-applicable reported."""
        try:
            result = (validate or policy.validate)(args, report)
            if isawaitable(result):
                loop = asyncio.new_event_loop()
                loop.run_until_complete(result)
                loop.close()
        except UnknownValueError as err:
            response.diagnostics.append(self._cannot_run_in_preview(policy, err))
        except sdk._NotApplicableError as err:  # noqa: SLF001
            response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name, reason=err.reason or ""))

    def _cannot_run_in_preview(self, policy: ResourceValidationPolicy, err: UnknownValueError) -> proto.AnalyzeDiagnostic:
        """The SDK's own advisory diagnostic for a policy that met a value unknown during preview."""
        name = self._PolicyAnalyzerServicer__policy_pack_name  # type: ignore[attr-defined]
        version = self._PolicyAnalyzerServicer__policy_pack_version  # type: ignore[attr-defined]
        return proto.AnalyzeDiagnostic(
            policyName=policy.name, policyPackName=name, policyPackVersion=version,
            message=f"can't run policy '{policy.name}' from policy pack '{name}@v{version}' during preview: {err.message}",
            urn="", description=policy.description, enforcementLevel=self._map_enforcement_level(EnforcementLevel.ADVISORY))


def _applies(policy: ResourceValidationPolicy, type_: str) -> bool:
    types = getattr(policy, "resource_types", None)
    return types is None or type_matches(types, type_)  # once per type: `_policies_for` keeps the answer


def install() -> bool:
    """Make `PolicyPack` build a `TypedAnalyzer`. Returns whether this SDK builds its servicer by that name (when its
    source can be read) and has the methods `TypedAnalyzer` calls."""
    servicer = getattr(sdk, "_PolicyAnalyzerServicer", None)
    if servicer is None or not all(callable(getattr(servicer, m, None)) for m in SERVICER_METHODS):
        return False
    try:
        if "_PolicyAnalyzerServicer(" not in inspect.getsource(sdk.PolicyPack.__init__):
            return False
    except (OSError, TypeError):
        pass  # no source (a zipped or compiled install): the name and the methods are what can be checked
    sdk._PolicyAnalyzerServicer = TypedAnalyzer  # noqa: SLF001
    return True
