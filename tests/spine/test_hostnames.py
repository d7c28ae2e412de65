"""Host names (components/spec/hostnames.py), the pure rule behind global_endpoint.domain: every well-formed DNS name
passes, and a URL, port, path or trailing dot around one is refused with the host it holds suggested."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from components.spec.hostnames import bare_host, host_name_problem

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
tld = st.from_regex(r"[a-z]{2,6}", fullmatch=True)
host = st.builds(lambda labels, last: ".".join([*labels, last]), st.lists(label, min_size=1, max_size=4), tld)


@given(host)
def test_a_well_formed_host_name_passes(name: str) -> None:
    assert host_name_problem(name) is None


@given(host, st.sampled_from(["https://{}/", "http://{}", "{}:443", "{}/v1", "{}.", "HTTPS://{}/api?x=1"]))
def test_a_host_in_a_url_or_with_a_port_path_or_dot_is_refused_and_suggested(name: str, form: str) -> None:
    given_text = form.format(name)
    assert host_name_problem(given_text) is not None
    assert bare_host(given_text) == name


def test_what_is_never_a_host_name() -> None:
    assert host_name_problem("infer") == "it is a single label"
    assert host_name_problem("10.0.0.1") == "its last label is all digits"
    assert host_name_problem("*.example.com") == "it has a wildcard"
    assert host_name_problem("a" * 64 + ".com").startswith("label 'aaaa")
    assert host_name_problem(("a" * 60 + ".") * 5 + "com") == "it has 308 characters"
