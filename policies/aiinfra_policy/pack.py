"""Turn the registry into pulumi-policy objects. `build_pack()` starts the Analyzer server and never returns."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyComplianceFramework,
    PolicyConfigSchema,
    PolicyPack,
    ReportViolation,
    ResourceValidationArgs,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from . import load_rules
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from .props import Unknown
from .registry import Context, Rule, type_matches
from .server import TESTED_SDK, TypedResourcePolicy, install

PACK_NAME = "ai-infra-compliance"
_SEVERITY = {"low": Severity.LOW, "medium": Severity.MEDIUM, "high": Severity.HIGH, "critical": Severity.CRITICAL}


def resource_validator(rule: Rule):  # noqa: ANN201
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if not type_matches(rule.types, args.resource_type):
            return
        ctx = Context(config=dict(args.get_config() or {}), type=args.resource_type, name=args.name, urn=args.urn,
                      protect=bool(getattr(args.opts, "protect", False)),
                      provider=getattr(args.provider, "props", None) if args.provider else None)
        try:
            for message in rule.check(args.props, ctx):
                report(message, None)
        except Unknown as unknown:
            # The SDK reports this as "can't run policy ... during preview: <property> can't be known": visible
            # in every preview, and the rule is enforced at its level on `pulumi up`, when the value is known.
            raise UnknownValueError(UNKNOWN_STRING_VALUE, unknown.path.split(".")) from None

    return validate


def stack_validator(rule: Rule, check: Any = None):  # noqa: ANN201
    """The validator of a stack rule, or with `check` of a resource rule's stack part (`rule.stack_check`)."""
    check = check or rule.check

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        ctx = Context(config=dict(args.get_config() or {}))
        try:
            for urn, message in check(args.resources, ctx):
                report(message, urn or None)
        except Unknown as unknown:
            raise UnknownValueError(UNKNOWN_STRING_VALUE, unknown.path.split(".")) from None

    return validate


def to_policy(rule: Rule) -> Any:
    common = dict(
        name=rule.name, description=rule.description, severity=_SEVERITY[rule.severity],
        remediation_steps=rule.remediation,
        framework=PolicyComplianceFramework(name=next(iter(rule.frameworks))),
        tags=[f"{fw}:{control}" for fw, controls in rule.frameworks.items() for control in controls]
        + [f"profile:{p}" for p in rule.in_profiles],
        config_schema=PolicyConfigSchema(properties=rule.config) if rule.config else None,
    )
    if rule.stack:
        return StackValidationPolicy(validate=stack_validator(rule), **common)
    return TypedResourcePolicy(validate=resource_validator(rule), resource_types=rule.types,
                               stack_validate=stack_validator(rule, rule.stack_check) if rule.stack_check else None, **common)


def sdk_version() -> str:
    try:
        return metadata.version("pulumi-policy")
    except metadata.PackageNotFoundError:
        return "(not installed as a distribution)"


def build_pack() -> None:
    # The type-indexed Analyzer (server.py): the SDK's diagnostics with far fewer decodes, and the only one that runs
    # resource rules' stack parts. Without it node groups sized by a launch template would escape the accelerator
    # rules, and instances whose template is outside the stack the IMDSv2 and public-IP rules, so the pack refuses to
    # load rather than run without them.
    if not install():
        raise RuntimeError(
            f"ai-infra-compliance: pulumi-policy {sdk_version()} does not build its Analyzer servicer the way pulumi-policy "
            f"{TESTED_SDK}, which this pack was tested with, does; the pack's TypedAnalyzer (policies/aiinfra_policy/"
            "server.py) could not be installed, and without it the stack parts of its rules (accelerator rules on node "
            "groups sized by a launch template, IMDSv2 and public-IP rules on instances whose template is outside the "
            "stack) would not run. Install pulumi-policy "
            f"{TESTED_SDK}.x (policies/requirements.txt) in the pack's virtualenv, or port server.py to this SDK.")
    PolicyPack(name=PACK_NAME, enforcement_level=EnforcementLevel.ADVISORY,
               policies=[to_policy(r) for r in load_rules()],
               description="ai-infra: encryption, exposure, logging, least privilege, residency, GPU hygiene and tagging.")
