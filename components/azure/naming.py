"""Globally unique Azure names (pure).

Storage accounts and Key Vaults are DNS names shared by every Azure customer: 3-24 characters, lower-case
letters and digits (Key Vault also allows hyphens, which we don't use). Pulumi's auto-names don't fit
(hyphens, random suffixes), so names are built from the environment, region and purpose, shortened, plus
a hash of the subscription and the full parts: stable across runs, unique per subscription.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

_HASH_LENGTH = 8
_MIN_LENGTH = 3


def compact(text: str) -> str:
    """Lower-case letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def global_name(kind: str, parts: Sequence[str], unique: str, *, max_length: int = 24) -> str:
    """`<kind><parts, shortened><8 hex chars>`, at most `max_length` characters, starting with a letter.

    `kind` is a short letter prefix ("st", "kv"); the hash covers `unique` (the subscription ID), the kind and
    every part in full, so two names differ whenever any of them differ, even after shortening.
    """
    prefix = compact(kind)
    if not prefix or not prefix[0].isalpha():
        raise ValueError(f"name kind {kind!r} must start with a letter")
    if max_length < len(prefix) + _HASH_LENGTH or max_length < _MIN_LENGTH:
        raise ValueError(f"max_length {max_length} leaves no room for kind {kind!r} and the {_HASH_LENGTH}-character hash")
    digest = hashlib.sha256("\x1f".join([unique, prefix, *parts]).encode()).hexdigest()[:_HASH_LENGTH]
    body = compact("".join(parts))[: max_length - len(prefix) - _HASH_LENGTH]
    return f"{prefix}{body}{digest}"


def alphanumeric_name(*parts: str) -> str:
    """Letters and digits only, starting with a letter (Front Door WAF policy names)."""
    name = compact("".join(parts))
    return name if name[:1].isalpha() else f"n{name}"


AUTONAME_SUFFIX = 8
"""azure-native's "random" auto-name is the Pulumi name plus 8 random hex characters, no separator
(pulumi-azure-native provider/pkg/provider/provider.go getDefaultName; its autonaming_test.go: test -> test614742c2)."""


def fitted_name(logical: str, max_length: int) -> str | None:
    """None while azure-native's auto-name of `logical` (AUTONAME_SUFFIX more characters) fits in `max_length`: the
    resource keeps that auto-name, as it always had (azure-native keeps a name once given, and an explicit one would
    replace the resource). Else an explicit name of `max_length` characters at most: `logical` shortened, '-' and 8 hex
    characters of its hash, so distinct logical names stay distinct."""
    if len(logical) + AUTONAME_SUFFIX <= max_length:
        return None
    digest = hashlib.sha256(logical.encode()).hexdigest()[:_HASH_LENGTH]
    return f"{logical[: max_length - _HASH_LENGTH - 1]}-{digest}"
