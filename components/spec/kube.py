"""Kubernetes name and label syntax (the API conventions), for spec values that become node labels and taints.

Checked at load time so a bad label stops the config, not a node pool half-way through creation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_PREFIX = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
RESERVED_PREFIXES = ("kubernetes.io", "k8s.io")
"""Kubernetes reserves these label prefixes (and their subdomains); kubelets refuse such node labels."""
TOOLKIT_PREFIX = "ai-infra"
"""The prefix of the labels the toolkit puts on every accelerator pool (pool, accelerator, count, capacity)."""


def is_dns_subdomain(value: str) -> bool:
    """A DNS subdomain name: at most 253 characters, dot-separated lower-case DNS labels (label prefixes, Secret names;
    kubernetes.io/docs/concepts/overview/working-with-objects/names)."""
    return len(value) <= 253 and _PREFIX.fullmatch(value) is not None


def qualified_name_problem(key: str, what: str = "label key") -> str | None:
    """Why `key` is not a Kubernetes qualified name (`[prefix/]name`), or None."""
    prefix, _, name = key.rpartition("/")
    if (prefix and not is_dns_subdomain(prefix)) or len(name) > 63 or not _NAME.fullmatch(name):
        return (f"{what} {key!r} is not a Kubernetes qualified name: an optional DNS-subdomain prefix (at most 253 "
                "characters) and '/', then a name of at most 63 letters, digits, '-', '_' or '.', starting and ending "
                "with a letter or digit")
    return None


def label_value_problem(value: str, what: str = "label value") -> str | None:
    """Why `value` is not a Kubernetes label value, or None."""
    if len(value) > 63 or not _VALUE.fullmatch(value):
        return (f"{what} {value!r} is not a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit (or empty)")
    return None


def node_label_problem(key: str, value: str) -> str | None:
    """Why `key: value` cannot be a node label of a pool, or None."""
    problem = qualified_name_problem(key) or label_value_problem(value, f"value of label {key!r}")
    if problem:
        return problem
    prefix = key.rpartition("/")[0]
    if any(prefix == reserved or prefix.endswith(f".{reserved}") for reserved in RESERVED_PREFIXES):
        return f"label key {key!r}: the prefix {prefix!r} is reserved by Kubernetes (kubelets refuse such node labels)"
    if prefix == TOOLKIT_PREFIX:
        return f"label key {key!r}: the prefix '{TOOLKIT_PREFIX}/' is the toolkit's own (pool, accelerator, count, capacity labels)"
    return None


def raising(check: Callable[[str], str | None]) -> Callable[[str], str]:
    """A validator (for pydantic's AfterValidator) that raises the problem `check` finds, else returns the value."""
    def validate(value: str) -> str:
        problem = check(value)
        if problem:
            raise ValueError(problem)
        return value

    return validate
