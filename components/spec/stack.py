"""The platform as a stack holds it: the `ai-infra:platform` config key, what its value must be, and the rule that
ties a platform to the stack that deploys it.

Pure (no Pulumi, no files): `aiinfra validate`, which reads the stack file itself, and the stack program, which reads
Pulumi's config (`pulumi up`, `aiinfra plan`), both call these, so the same mistake reads the same in each.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from rapidfuzz.distance import OSA

from .loader import ROOT, config_path

PLATFORM_CONFIG = "ai-infra:platform"
"""The stack config key whose value is the platform (namespace `ai-infra`, key `platform`)."""
SECURE_PLACEHOLDER = "[secret]"
"""What an offline read of the stack file (`aiinfra validate`, `aiinfra plan`) holds in place of a `secure:` value,
which it never decrypts (aiinfra.plan.project.SECRET_PLACEHOLDER, which a test keeps equal): inside the platform, it
marks where the secure value is."""


class StackConfigError(ValueError):
    """The stack's config holds no platform this stack can deploy; str() is the whole message."""


def platform_config_value(text: str | None, *, stack: str, secret: bool, esc_environments: Sequence[str] = (),
                          config_keys: Iterable[str] = ()) -> Any:
    """The value of `ai-infra:platform` in `stack`'s config, parsed for `load_platform`.

    `text` is the value as the engine passes config (JSON for a structured value, the string itself for a plain one;
    None when the key is not set), `secret` whether it is a secure value (or holds one), `esc_environments` the
    Pulumi ESC environments the stack file imports, when the caller cannot open them (an offline read), and
    `config_keys` the stack's config keys (`ns:key`), so that a missing platform names a misspelt key.
    """
    if text is None:
        near = near_platform_keys(config_keys)
        if near:
            keys, it = (repr(near[0]), "it") if len(near) == 1 else (" and ".join(map(repr, near)), "the one you meant")
            raise StackConfigError(f"stack '{stack}' has no {PLATFORM_CONFIG} config, but has {keys}: did you mean "
                                   f"{PLATFORM_CONFIG}? Config keys are exact and case-sensitive; rename {it} to {PLATFORM_CONFIG}")
        hint = (f" (it imports Pulumi ESC environments {', '.join(esc_environments)}, which aiinfra cannot open offline)"
                if esc_environments else "; see README 'Config reference'")
        raise StackConfigError(f"stack '{stack}' has no {PLATFORM_CONFIG} config{hint}")
    if secret:
        raise StackConfigError(_secure_message(text, stack))
    if text == "":  # `ai-infra:platform:` or `null`: the CLI passes a key without a value as the empty string
        raise StackConfigError(f"stack '{stack}': {PLATFORM_CONFIG} has no value; it must be a mapping of platform "
                               "settings")
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # a plain string: a mapping reaches a program as JSON
        raise StackConfigError(f"stack '{stack}': {PLATFORM_CONFIG} must be a mapping of platform settings; "
                               f"got {text!r}") from None


def near_platform_keys(keys: Iterable[str]) -> list[str]:
    """The config keys that look like a misspelt `ai-infra:platform`: the same key in another case
    (`ai-infra:Platform`), one at most two edits from it (`ai-infra:platfrom`, `ai_infra:platform`; a swap of neighbouring
    characters is one), or `platform` in another namespace (`aiinfra:platform`, or a bare `platform:` in the stack file
    of a project not named ai-infra); in the order given."""
    target = PLATFORM_CONFIG.lower()
    found = []
    for key in keys:
        low = key.lower()
        if key == PLATFORM_CONFIG:
            continue
        if low.rpartition(":")[2] == "platform" or OSA.distance(low, target) <= 2:
            found.append(key)
    return found


def _secure_message(text: str, stack: str) -> str:
    """Why a platform that is, or holds, a secure value is refused, naming where the secure values are when it can."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:  # offline, a wholly secure value is the placeholder itself
        value = None
    nested = _secure_paths((), value)
    fix = "keep the platform in plain config and put secrets in keys of their own"
    if nested:
        what = f"{nested[0]} is a secure value" if len(nested) == 1 else f"{', '.join(nested)} are secure values"
        return f"stack '{stack}': {what}; secure values are not allowed inside {PLATFORM_CONFIG} (aiinfra never decrypts them): {fix}"
    if isinstance(value, dict):  # decrypted by the engine (`pulumi up`), which says only that the key holds a secret
        return f"stack '{stack}': {PLATFORM_CONFIG} is a secure value or holds one; secure values are not allowed inside it: {fix}"
    return f"stack '{stack}': {PLATFORM_CONFIG} is a secure value, which aiinfra never decrypts; {fix}"


def _secure_paths(loc: tuple[Any, ...], value: Any) -> list[str]:
    """The config paths (`platform.labels.owner`) of the secure values inside a platform read offline, where each is
    the placeholder, in document order."""
    if isinstance(value, dict):
        return [path for key, child in value.items() for path in _secure_paths((*loc, key), child)]
    if isinstance(value, list):
        return [path for index, child in enumerate(value) for path in _secure_paths((*loc, index), child)]
    return [config_path(loc)] if loc and value == SECURE_PLACEHOLDER else []


def check_stack_environment(environment: str, stack: str) -> None:
    """A platform deploys only as the stack named after its environment: `<environment>` or `<environment>-<suffix>`
    (stack `prod-eu` may carry environment `prod`). `stack` is the bare stack name, as `pulumi.get_stack()` gives it.

    The environment names the stack's resources and decides their protection, so a stack file copied from another
    environment and left unchanged would deploy over that environment's names, and without protection if it was dev.
    """
    if stack == environment or stack.startswith(f"{environment}-"):
        return
    raise StackConfigError(
        f"{ROOT}.environment: {environment!r} does not match the stack {stack!r}: the environment names the stack's "
        "resources and sets their protection (dev leaves file systems, buckets and keys unprotected), so a stack file "
        f"copied from another environment would deploy as that one; set environment: {stack}, or deploy it as stack "
        f"{environment!r} or '{environment}-<suffix>'")
