"""Behaviour of the platform spec's loader and stack-level rules (components/spec/loader.py, stack.py, hostnames.py,
kube.py) that no other test pinned, found by a mutation review of those modules: each test here fails with a small edit
of the source that the rest of the suite let pass (a hint given for the wrong kind of value, a fix that repeats the
mistake, a path that forgets its root, ...). Every case asserts what a user sees: the config path, the value given and
what is allowed, or that a valid config loads."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import change as set_path
from helpers import full_platform_dict as valid
from helpers import platform_dict, spec_issues
from spine.test_spec_mutation_review import one_region
from spine.test_spec_mutation_review_2 import H100, aws_pool

from components.spec import SpecError, StackConfigError, load_platform, platform_config_value
from components.spec.hostnames import HOST_NAME_RULE, host_name_problem
from components.spec.kube import is_dns_subdomain, node_label_problem, qualified_name_problem

A = "clouds/aws/regions/us-east-1"
POOL = "platform.clouds.aws.regions.us-east-1.gpu_pools.train"


# --- values that are not JSON (loader.load_platform) ---------------------------------------------------------------

@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_a_number_json_cannot_hold_is_refused_as_config_not_raised_as_a_crash(number: float) -> None:
    # YAML has .nan and .inf, JSON has neither: a Python caller passing one gets the config refused, not a ValueError.
    assert spec_issues(set_path(valid(), f"{A}/gpu_pools/train/max_nodes", number)) == [(
        "platform", "expected plain JSON/YAML values (mappings, lists, strings, numbers, booleans, null): Out of range "
                    "float values are not JSON compliant")]


# --- the root a caller names the platform by (loader.load_platform, compose.validate) ---------------------------------

def test_every_problem_is_named_under_the_root_the_caller_gives() -> None:
    # A cross-field check's problem (found after the models load) is named under the root, as a type error is.
    taints = [{"key": "dedicated", "value": value, "effect": "NoSchedule"} for value in ("a", "b")]
    with pytest.raises(SpecError) as caught:
        load_platform(platform_dict(aws_pool({**H100, "taints": taints})), root="config")
    assert [path for path, _ in caught.value.issues] == ["config.clouds.aws.regions.us-east-1.gpu_pools.train.taints[1]"]
    with pytest.raises(SpecError) as caught:
        load_platform(set_path(valid(), f"{A}/gpu_pools/train/max_nodes", 0), root="config")
    assert [path for path, _ in caught.value.issues] == ["config.clouds.aws.regions.us-east-1.gpu_pools.train.max_nodes"]


# --- the fix a wrongly written scalar gets (loader._wrong_scalar, _quote_hint) ---------------------------------------

@pytest.mark.parametrize("field", [f"{A}/gpu_pools/train/efa", "protect_stateful"])
def test_a_quoted_number_for_a_boolean_gets_no_advice_to_write_a_number(field: str) -> None:
    # '1' is not a spelling of a boolean: advising "write the number without quotes: 1" would give a number, refused too.
    [(_, message)] = spec_issues(set_path(valid(), field, "1"))
    assert message == "expected a boolean (true or false), got the string '1'"


@pytest.mark.parametrize("written", ["+4", "04", " 4 "])
def test_the_number_to_write_for_a_quoted_integer_is_the_integer_itself(written: str) -> None:
    # Unquoted, YAML reads +4 and 04 as the integer 4: the fix names 4, not the text that was quoted.
    assert spec_issues(set_path(valid(), "teams/research/gpu_quota", written)) == [(
        "platform.teams.research.gpu_quota",
        f"expected an integer of 0 or more, got the string {written!r}; write the number without quotes: 4")]


@pytest.mark.parametrize(("value", "text"), [(5, "5"), (1.5, "1.5")])
def test_a_number_for_free_text_gets_the_quoted_form_to_write(value: Any, text: str) -> None:
    # instance_type has no pattern: any quoted form is valid text, so the hint is always given.
    assert spec_issues(set_path(valid(), f"{A}/gpu_pools/train/instance_type", value)) == [(
        f"{POOL}.instance_type",
        f"expected a string, got the number {value!r}; write it as a string in quotes: '{text}'")]


# --- a missing or secure platform (stack.platform_config_value) -----------------------------------------------------

def _stack_error(text: str | None, **options: Any) -> str:
    with pytest.raises(StackConfigError) as caught:
        platform_config_value(text, stack="dev", **{"secret": False, **options})
    return str(caught.value)


@pytest.mark.parametrize("key", ["ml-stack:platform", "platform"])
def test_platform_in_another_namespace_is_named_however_far_the_namespace_is(key: str) -> None:
    # A project not named ai-infra reads a bare `platform:` as <project>:platform, many edits from ai-infra:platform.
    assert _stack_error(None, config_keys=["aws:region", key]) == (
        f"stack 'dev' has no ai-infra:platform config, but has {key!r}: did you mean ai-infra:platform? Config keys are "
        "exact and case-sensitive; rename it to ai-infra:platform")


@pytest.mark.parametrize("key", ["ai-infra:platform_v2", "ai-infra:platf", "aiinfra:plaform2"])
def test_a_key_three_edits_from_the_platform_is_not_offered_as_it(key: str) -> None:
    assert _stack_error(None, config_keys=[key]) == "stack 'dev' has no ai-infra:platform config; see README 'Config reference'"


def test_every_esc_environment_the_stack_imports_is_named() -> None:
    assert _stack_error(None, esc_environments=["acme/aws-creds", "acme/db"]) == (
        "stack 'dev' has no ai-infra:platform config (it imports Pulumi ESC environments acme/aws-creds, acme/db, which "
        "aiinfra cannot open offline)")


@pytest.mark.parametrize("text", ["42", '"infra"', '["a", "b"]', "true"])
def test_a_secure_platform_that_is_not_a_mapping_is_called_a_secure_value(text: str) -> None:
    # Only a mapping can hold secure values; any other secure value is the platform itself, encrypted.
    assert _stack_error(text, secret=True) == (
        "stack 'dev': ai-infra:platform is a secure value, which aiinfra never decrypts; keep the platform in plain "
        "config and put secrets in keys of their own")


# --- host names (hostnames.host_name_problem) and node labels (kube) -------------------------------------------------

@pytest.mark.parametrize(("domain", "problem"), [
    ("", "it is empty"),
    ("ops@infer.example.com", "it has user information"),
])
def test_what_keeps_a_domain_from_being_a_host_name_is_named(domain: str, problem: str) -> None:
    # Not "a single label" or "label 'ops@infer' is not ...": the message names what to remove.
    assert host_name_problem(domain) == problem


def test_a_domain_no_url_parser_can_read_is_refused_without_a_suggestion() -> None:
    # An unclosed '[' makes the URL unparseable: the domain is still refused with its rule, not a crash.
    clouds = one_region("aws", {"cluster": {}, "inference": {}})
    clouds["aws"]["global_endpoint"] = {"domain": "https://[infer.example.com/", "hosted_zone_id": "Z0123456789ABCDEFGHIJ"}
    assert dict(spec_issues(platform_dict(clouds)))["platform.clouds.aws.global_endpoint.domain"] == (
        "'https://[infer.example.com/' is not a host name (it is a URL); domain is the global endpoint's public host "
        f"name; allowed: {HOST_NAME_RULE}")


def test_a_bad_label_value_says_an_empty_value_is_allowed() -> None:
    taints = [{"key": "dedicated", "value": "a b", "effect": "NoSchedule"}]
    assert spec_issues(platform_dict(aws_pool({**H100, "taints": taints}))) == [(
        "platform.clouds.aws.regions.us-east-1.gpu_pools.train.taints[0].value",
        "taint value 'a b' is not a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', starting and "
        "ending with a letter or digit (or empty)")]


def test_a_label_prefix_that_only_ends_like_a_reserved_one_is_the_users() -> None:
    # x-k8s.io (the domain of SIG projects such as Cluster API) is a domain of its own, not a subdomain of k8s.io.
    for key in ("x-k8s.io/role", "cluster.x-k8s.io/pool", "notkubernetes.io/tier"):
        assert node_label_problem(key, "gpu") is None, key
    assert node_label_problem("sub.k8s.io/role", "gpu") == (
        "label key 'sub.k8s.io/role': the prefix 'sub.k8s.io' is reserved by Kubernetes (kubelets refuse such node labels)")


def test_a_label_prefix_is_a_dns_subdomain_of_up_to_253_characters() -> None:
    prefix = ".".join(["a" * 63] * 3 + ["b" * 61])
    assert qualified_name_problem(f"{prefix}/pool") is None
    assert is_dns_subdomain(prefix) and not is_dns_subdomain(prefix + "c")
    for bad in ("example-.com", "-example.com", "example.-com"):
        assert qualified_name_problem(f"{bad}/pool") == (
            f"label key '{bad}/pool' is not a Kubernetes qualified name: an optional DNS-subdomain prefix (at most 253 "
            "characters) and '/', then a name of at most 63 letters, digits, '-', '_' or '.', starting and ending with a "
            "letter or digit"), bad
