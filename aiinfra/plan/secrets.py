"""Secure config values as secret unknowns while a plan runs.

A plan never decrypts `secure:` values (it holds no key for the stack's secrets provider). The Config getters that
return secrets (`require_secret`, `get_secret_int`, `get_secret_object`, ...) then give what the program would see of
a value it cannot know yet: a secret Output that is unknown. So its `apply` callbacks do not run and the engine (and
the policy pack) receive the unknown marker inside a secret, instead of a made-up value that could fail parsing as an
int or an object. A secure value read with a plain getter (`require`, which returns a str) is the placeholder string
the stack config holds (project.SECRET_PLACEHOLDER): a plain str cannot be unknown. The plain getters that parse
(`get_int`, `require_bool`, `get_object`, ...) cannot parse it either: they stop the plan with the secret getter to
use instead.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pulumi
from pulumi.runtime import get_config, is_config_secret

from .project import SECRET_PLACEHOLDER

SECRET_GETTERS = (
    "get_secret", "get_secret_bool", "get_secret_int", "get_secret_float", "get_secret_object",
    "require_secret", "require_secret_bool", "require_secret_int", "require_secret_float", "require_secret_object",
)


def unknown_secret() -> pulumi.Output[Any]:
    """An Output whose value is unknown and secret, depending on no resource."""
    loop = asyncio.get_event_loop()

    def resolved(value: Any) -> asyncio.Future:
        future = loop.create_future()
        future.set_result(value)
        return future

    return pulumi.Output(set(), resolved(None), resolved(False), resolved(True))


def _unknown_when_secure(getter: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(getter)
    def wrapper(self: pulumi.Config, key: str, *args: Any, **kwargs: Any) -> Any:
        full_key = self.full_key(key)
        if get_config(full_key) is not None and is_config_secret(full_key):
            return unknown_secret()
        return getter(self, key, *args, **kwargs)

    return wrapper


PARSING_GETTERS = {name: name.replace("_", "_secret_", 1) for name in (
    "get_bool", "get_int", "get_float", "get_object", "require_bool", "require_int", "require_float", "require_object")}
"""Plain getters that parse the value, and the secret getter each should be in a program that reads a secure value."""


def _refused_when_secure(getter: Callable[..., Any], instead: str) -> Callable[..., Any]:
    @functools.wraps(getter)
    def wrapper(self: pulumi.Config, key: str, *args: Any, **kwargs: Any) -> Any:
        full_key = self.full_key(key)
        if get_config(full_key) == SECRET_PLACEHOLDER and is_config_secret(full_key):
            raise pulumi.RunError(f"configuration '{full_key}' is a secure value, which an offline plan does not decrypt, "
                                  f"so {getter.__name__}() has nothing to parse; read it with {instead}('{key}'), which "
                                  "keeps it secret (and unknown in the plan)")
        return getter(self, key, *args, **kwargs)

    return wrapper


@contextmanager
def secure_config_as_unknowns() -> Iterator[None]:
    """Inside the block, the Config secret getters return secret unknowns for keys that hold secure values, and the
    plain parsing getters refuse them with the secret getter to use."""
    names = [*SECRET_GETTERS, *PARSING_GETTERS]
    originals = {name: getattr(pulumi.Config, name) for name in names if hasattr(pulumi.Config, name)}
    for name, getter in originals.items():
        wrapped = _refused_when_secure(getter, PARSING_GETTERS[name]) if name in PARSING_GETTERS else _unknown_when_secure(getter)
        setattr(pulumi.Config, name, wrapped)
    try:
        yield
    finally:
        for name, getter in originals.items():
            setattr(pulumi.Config, name, getter)
