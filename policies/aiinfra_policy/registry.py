"""The rule registry: every rule's metadata (severity, frameworks, profiles) next to its check.

A resource rule's check is `check(props, ctx) -> iterable of messages`; a stack rule's check is
`check(resources, ctx) -> iterable of (urn, message)`. Checks read props through `props.get/need`:
a value they need that is unknown during preview raises `Unknown`, which the pack reports as a
violation naming the property, so a mandatory rule never passes silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

FRAMEWORKS = ("HIPAA", "SOC2", "PCI-DSS-v4", "GDPR", "NIST-800-53", "CIS")
PROFILES = ("baseline", "soc2", "hipaa", "pci", "gdpr")


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    severity: str
    remediation: str
    frameworks: dict[str, tuple[str, ...]]
    """Framework -> control IDs, e.g. {"HIPAA": ("164.312(a)(2)(iv)",), "CIS": ("AWS 2.1.1",)}."""
    profiles: tuple[str, ...]
    check: Callable[..., Iterable[Any]]
    types: tuple[str, ...] = ()
    """Resource types a resource rule applies to (type tokens, or glob patterns: see `type_matches`); empty for stack
    rules."""
    config: dict[str, dict[str, Any]] = field(default_factory=dict)
    """JSON-schema properties (with defaults) of the rule's config."""

    @property
    def stack(self) -> bool:
        return not self.types

    @property
    def stack_check(self) -> Callable[..., Iterable[Any]] | None:
        """A resource rule's part that needs the whole stack, `check(resources, ctx) -> (urn, message)`, set on its
        check by `accelerators.stack_part` (a node group whose instance type is in a launch template) or
        `aws_ec2.outside_template_part` (an instance launched from a template outside the stack): server.TypedAnalyzer
        runs it in AnalyzeStack, under the rule's name and enforcement level (pack.to_policy hands it over)."""
        return getattr(self.check, "stack_check", None)

    @property
    def in_profiles(self) -> tuple[str, ...]:
        """Profiles follow the framework mapping; `baseline` holds the high-impact rules and the hygiene rules
        that map to none of the four regulatory profiles."""
        by_framework = {"soc2": "SOC2", "hipaa": "HIPAA", "pci": "PCI-DSS-v4", "gdpr": "GDPR"}
        chosen = [p for p, fw in by_framework.items() if fw in self.frameworks and p in self.profiles]
        if self.severity in ("critical", "high") or not chosen or "CIS" in self.frameworks:
            chosen.insert(0, "baseline")
        return tuple(chosen)


def type_matches(types: Iterable[str], type_: str) -> bool:
    """Whether a rule declared for `types` checks resources of `type_`: an entry is a type token, or a glob pattern
    (with `*`) matched against the whole token, so a rule can cover a family the provider keeps growing
    (`gcp:*IamMember`: every pulumi-gcp IAM member resource) without listing hundreds of tokens."""
    return type_ in types or any("*" in pattern and fnmatchcase(type_, pattern) for pattern in types)


RULES: list[Rule] = []


def rule(name: str, description: str, *, severity: str, remediation: str, frameworks: dict[str, tuple[str, ...]],
         profiles: tuple[str, ...] = PROFILES, types: tuple[str, ...] = (),
         config: dict[str, dict[str, Any]] | None = None) -> Callable[[Callable[..., Iterable[Any]]], Callable[..., Iterable[Any]]]:
    """Register a rule; `profiles` defaults to every profile (a baseline rule)."""

    def register(check: Callable[..., Iterable[Any]]) -> Callable[..., Iterable[Any]]:
        RULES.append(Rule(name, description, severity, remediation, frameworks, profiles, check, types, config or {}))
        return check

    return register


@dataclass
class Context:
    """What a check may know besides the props: the config, the resource and its provider."""

    config: dict[str, Any]
    type: str = ""
    name: str = ""
    urn: str = ""
    protect: bool = False
    provider: Any = None
    """The resource's provider props (explicit provider), if any."""
