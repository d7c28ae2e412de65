"""Kubernetes name checks match the whole value: Python's `$` also matches before a final newline, which a YAML block
scalar (`key: |`) leaves on a value, and Kubernetes refuses such a name."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from components.spec.kube import is_dns_subdomain, label_value_problem, qualified_name_problem

LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)


@given(LABEL)
def test_a_trailing_newline_is_never_a_valid_name(name: str) -> None:
    assert is_dns_subdomain(name) and not is_dns_subdomain(name + "\n")
    assert qualified_name_problem(name) is None and qualified_name_problem(name + "\n") is not None
    assert label_value_problem(name) is None and label_value_problem(name + "\n") is not None
