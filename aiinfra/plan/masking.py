"""Secrets in plan documents: masked wherever a plan is written or shown, and scrubbed from text that may quote them.

A secret is an object marked with the engine's signature key, either a secret value or an output value whose "secret"
is true; masking keeps the mark (so tools still know the value is secret) and drops the text.
"""

from __future__ import annotations

import json
from typing import Any

from .echo import SECRET as _SECRET_VALUE
from .echo import SIG as SECRET_SIG

_OUTPUT_VALUE = "d0e6a833031e9bbcd3f4e8bde6ca49a4"  # an output value, secret when its "secret" is true
SECRET_SHOWN = "[secret]"
_MASKED = {SECRET_SIG: _SECRET_VALUE, "value": SECRET_SHOWN}


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and (value.get(SECRET_SIG) == _SECRET_VALUE
                                        or (value.get(SECRET_SIG) == _OUTPUT_VALUE and bool(value.get("secret"))))


def mask_secrets(value: Any, marked: bool = True) -> Any:
    """`value` with every secret replaced by a secret holding `[secret]`: it stays marked secret, its text is gone.
    With `marked` False, by the text `[secret]` alone (for text shown to people)."""
    if is_secret(value):
        return dict(_MASKED) if marked else SECRET_SHOWN
    if isinstance(value, dict):
        return {k: mask_secrets(v, marked) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v, marked) for v in value]
    return value


def secret_texts(value: Any) -> set[str]:
    """The text of every scalar inside a secret in `value` (a record's inputs), for scrubbing other text that may quote
    it (policy messages); values shorter than 4 characters are left, as they would match too much."""
    if is_secret(value):
        inner = value.get("value")
        scalars = [inner] if not isinstance(inner, (dict, list)) else [
            t for part in (inner.values() if isinstance(inner, dict) else inner) for t in secret_texts({**value, "value": part})]
        return {str(s) for s in scalars if s is not None and len(str(s)) >= 4}
    if isinstance(value, dict):
        return {t for v in value.values() for t in secret_texts(v)}
    if isinstance(value, list):
        return {t for v in value for t in secret_texts(v)}
    return set()


def scrub(text: str, secrets: set[str]) -> str:
    """`text` with each of `secrets` shown as `[secret]`, as written or JSON-escaped (a message may quote a value with
    json.dumps: a PEM's newlines as \\n), longest first (so a secret holding another goes whole)."""
    forms = {form for secret in secrets for form in (secret, json.dumps(secret)[1:-1]) if len(form) >= 4}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, SECRET_SHOWN)
    return text
