"""Kubernetes label syntax checks of the spec (components/spec/kube.py): what the API accepts passes, what it
rejects is named."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from components.spec.kube import label_value_problem, node_label_problem, qualified_name_problem

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
# A name: alphanumeric ends, alphanumerics, '-', '_' and '.' between, at most 63 characters.
names = st.builds(lambda first, middle, last: first + middle + last, st.sampled_from(ALNUM),
                  st.text(alphabet=ALNUM + "-_.", max_size=61), st.sampled_from(ALNUM)) | st.sampled_from(list(ALNUM))
dns_labels = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?", fullmatch=True)
prefixes = st.lists(dns_labels, min_size=1, max_size=4).map(".".join).filter(
    lambda p: not any(p == r or p.endswith("." + r) for r in ("kubernetes.io", "k8s.io")) and p != "ai-infra")


@given(prefix=st.none() | prefixes, name=names, value=st.just("") | names)
def test_valid_labels_pass(prefix: str | None, name: str, value: str) -> None:
    key = f"{prefix}/{name}" if prefix else name
    assert qualified_name_problem(key) is None
    assert label_value_problem(value) is None
    assert node_label_problem(key, value) is None


@given(name=names, bad=st.sampled_from([" ", "/x/", "*", "é", ":"]), where=st.integers(min_value=0))
def test_a_character_outside_the_syntax_is_named(name: str, bad: str, where: int) -> None:
    at = where % (len(name) + 1)
    broken = name[:at] + bad + name[at:]
    problem = label_value_problem(broken)
    assert problem is not None and repr(broken) in problem


@given(name=names, edge=st.sampled_from(["-", "_", "."]), front=st.booleans())
def test_names_must_start_and_end_alphanumeric(name: str, edge: str, front: bool) -> None:
    broken = edge + name if front else name + edge
    assert qualified_name_problem(broken) is not None and label_value_problem(broken) is not None


def test_lengths_and_reserved_prefixes() -> None:
    assert qualified_name_problem("a" * 63) is None and qualified_name_problem("a" * 64) is not None
    assert label_value_problem("a" * 64) is not None
    assert qualified_name_problem("Example.com/x") is not None  # prefixes are lower-case DNS subdomains
    for key in ("kubernetes.io/role", "node-role.kubernetes.io/gpu", "k8s.io/x", "ai-infra/pool"):
        assert node_label_problem(key, "") is not None, key
    assert node_label_problem("example.com/kubernetes.io", "") is None  # the name part is not a prefix
