"""Scalars are typed as JSON and YAML type them: a boolean is not an integer, a quoted number or word is a string, never
converted. Enum values and CIDRs are still written as strings. Every message names the config path, the value given
(in JSON's words) and what is allowed; the messages of the other mistakes are unchanged."""

from __future__ import annotations

import json
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from helpers import change as set_path
from helpers import full_platform_dict as valid
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from aiinfra.cli import main
from components.compose import validate
from components.spec import Platform, SpecError, load_platform
from components.spec.common import SpecModel
from components.spec.compute import CapacityType, SharingMode
from components.spec.loader import _describe, validate_strict
from components.spec.network import NatMode

ROOT = Path(__file__).resolve().parents[2]
A = "clouds/aws/regions/us-east-1"
AWS = "platform.clouds.aws.regions.us-east-1"
POOL = f"{AWS}.gpu_pools.train"


def _issues(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    return caught.value.issues


# (id, config path to change, value written, the one expected (path, message))
WRONG_SCALARS = [
    ("bool-for-int", f"{A}/gpu_pools/train/max_nodes", True,
     (f"{POOL}.max_nodes", "expected an integer from 1 to 1000, got the boolean true")),
    ("false-for-int", f"{A}/gpu_pools/train/min_nodes", False,
     (f"{POOL}.min_nodes", "expected an integer from 0 to 1000, got the boolean false")),
    ("quoted-number-for-int", "teams/research/gpu_quota", "4",
     ("platform.teams.research.gpu_quota", "expected an integer of 0 or more, got the string '4'; write the number without quotes: 4")),
    ("word-for-int", f"{A}/gpu_pools/train/max_nodes", "many",
     (f"{POOL}.max_nodes", "expected an integer from 1 to 1000, got the string 'many'")),
    ("fraction-for-int", f"{A}/gpu_pools/train/max_nodes", 2.5,
     (f"{POOL}.max_nodes", "expected an integer from 1 to 1000, got the number 2.5")),
    ("whole-float-for-int", f"{A}/gpu_pools/train/max_nodes", 2.0,
     (f"{POOL}.max_nodes", "expected an integer from 1 to 1000, got the number 2.0; write it without a decimal point: 2")),
    ("null-for-int", f"{A}/gpu_pools/train/max_nodes", None,
     (f"{POOL}.max_nodes", "expected an integer from 1 to 1000, got null (an empty value)")),
    ("list-for-int", f"{A}/gpu_pools/train/max_nodes", [4],
     (f"{POOL}.max_nodes", "expected an integer from 1 to 1000, got a list")),
    ("bool-for-optional-int", f"{A}/gpu_pools/train/accelerators_per_node", True,
     (f"{POOL}.accelerators_per_node", "expected an integer from 1 to 16, got the boolean true")),
    ("quoted-number-for-days", f"{A}/buckets/datasets/tiering", {"warm_after_days": "30"},
     (f"{AWS}.buckets.datasets.tiering.warm_after_days",
      "expected an integer from 1 to 36500, got the string '30'; write the number without quotes: 30")),
    ("yes-for-bool", f"{A}/gpu_pools/train/efa", "yes",
     (f"{POOL}.efa", "expected a boolean (true or false), got the string 'yes'; YAML 1.2, which Pulumi reads, takes only "
                     "true and false as booleans: write true")),
    ("quoted-true-for-bool", "addons/enabled", "true",
     ("platform.addons.enabled", "expected a boolean (true or false), got the string 'true'; write it without quotes: true")),
    ("number-for-bool", "teams/research/can_borrow", 1,
     ("platform.teams.research.can_borrow", "expected a boolean (true or false), got the number 1")),
    ("number-for-optional-bool", "protect_stateful", 0,
     ("platform.protect_stateful", "expected a boolean (true or false), got the number 0")),
]


@pytest.mark.parametrize(("change", "value", "expected"), [c[1:] for c in WRONG_SCALARS], ids=[c[0] for c in WRONG_SCALARS])
def test_a_scalar_of_the_wrong_json_type_is_refused_with_path_value_and_allowed(change: str, value: Any,
                                                                                expected: tuple[str, str]) -> None:
    assert _issues(set_path(valid(), change, value)) == [expected]


def test_lax_mode_would_have_taken_these_values() -> None:
    # The values refused above that pydantic's lax mode converts silently (the reason for strict validation).
    for change, value in [(f"{A}/gpu_pools/train/max_nodes", True), ("teams/research/gpu_quota", "4"),
                          (f"{A}/gpu_pools/train/efa", "yes"), (f"{A}/gpu_pools/train/max_nodes", 2.0)]:
        Platform.model_validate(set_path(valid(), change, value))


def test_the_right_types_load() -> None:
    data = set_path(valid(), f"{A}/gpu_pools/train/efa", True)
    data = set_path(data, "teams/research/gpu_quota", 4)
    data = set_path(data, "protect_stateful", False)
    spec = load_platform(data)
    assert spec.teams["research"].gpu_quota == 4 and spec.protect_stateful is False
    assert spec.clouds.aws.regions["us-east-1"].gpu_pools["train"].efa is True


def test_enum_values_are_written_as_strings() -> None:
    data = set_path(valid(), f"{A}/gpu_pools/train/capacity", "spot")
    data = set_path(data, f"{A}/gpu_pools/train/sharing", {"mode": "time_slicing", "replicas_per_gpu": 2})
    data = set_path(data, f"{A}/network/nat", "single")
    spec = load_platform(data)
    pool = spec.clouds.aws.regions["us-east-1"].gpu_pools["train"]
    assert pool.capacity is CapacityType.SPOT and pool.sharing.mode is SharingMode.TIME_SLICING
    assert spec.clouds.aws.regions["us-east-1"].network.nat is NatMode.SINGLE
    assert [p.value for p in spec.compliance.profiles] == ["baseline", "hipaa"]


def test_cidrs_are_written_as_strings() -> None:
    data = set_path(valid(), "clouds/gcp/regions/us-central1/network",
                    {"cidr": "10.20.0.0/16", "pod_cidr": "100.64.0.0/14", "service_cidr": "172.16.0.0/16"})
    data = set_path(data, f"{A}/cluster", {"api_access": "public_restricted", "authorized_cidrs": ["203.0.113.0/24"]})
    spec = load_platform(data)
    network = spec.clouds.gcp.regions["us-central1"].network
    assert (network.cidr, network.pod_cidr, network.service_cidr) == (
        IPv4Network("10.20.0.0/16"), IPv4Network("100.64.0.0/14"), IPv4Network("172.16.0.0/16"))
    assert spec.clouds.aws.regions["us-east-1"].cluster.authorized_cidrs == [IPv4Network("203.0.113.0/24")]


# Messages that lax mode gave and strict JSON validation words differently: kept as they were.
UNCHANGED = [
    ("cidr-not-a-cidr", f"{A}/network/cidr", "10.0.0.300/16",
     (f"{AWS}.network.cidr", "Input is not a valid IPv4 network (got '10.0.0.300/16')")),
    ("cidr-with-host-bits", f"{A}/network/cidr", "10.10.0.1/16",
     (f"{AWS}.network.cidr", "'10.10.0.1/16' has host bits set: a network is written with every bit after its /16 prefix "
                             "zero; did you mean '10.10.0.0/16'?")),
    ("cidr-as-a-number", f"{A}/network/cidr", 5, (f"{AWS}.network.cidr", "Input is not a valid IPv4 network (got 5)")),
    ("cidr-list-entry", f"{A}/cluster", {"api_access": "public_restricted", "authorized_cidrs": ["x"]},
     (f"{AWS}.cluster.authorized_cidrs[0]", "Input is not a valid IPv4 network (got 'x')")),
    ("cidr-too-large", f"{A}/network/cidr", "10.0.0.0/8",
     (f"{AWS}.network.cidr", "network cidr 10.0.0.0/8 has prefix /8; allowed: /16 to /22 (room for 3 zones of subnets)")),
    ("bad-enum", f"{A}/gpu_pools/train/capacity", "cheap",
     (f"{POOL}.capacity", "Input should be 'on_demand', 'spot', 'reserved', 'capacity_block', 'flex_start' or 'queued' (got 'cheap')")),
    ("bad-name-key", "teams", {"Research": {}},
     ("platform.teams.Research", "name 'Research' is invalid; names are lower-case letters, digits and '-', starting with a letter, "
                        "ending with a letter or digit, at most 24 characters")),
    ("bound", f"{A}/gpu_pools/train/disk_size_gib", 5, (f"{POOL}.disk_size_gib", "expected an integer from 50 to 16384, got 5")),
]


@pytest.mark.parametrize(("change", "value", "expected"), [c[1:] for c in UNCHANGED], ids=[c[0] for c in UNCHANGED])
def test_other_messages_are_worded_as_before(change: str, value: Any, expected: tuple[str, str]) -> None:
    assert _issues(set_path(valid(), change, value)) == [expected]


# A mapping, list or string expected and something else given: what the field takes and what was given, in JSON's
# words (fuzz review F11: pydantic said "Input should be a valid dictionary or instance of NetworkSpec", without the value).
WRONG_CONTAINERS = [
    ("model-not-a-mapping", "labels", 5,
     ("platform.labels", "expected a mapping of settings (owner, team, cost_center, extra), got the number 5")),
    ("model-null", f"{A}/network", None,
     (f"{AWS}.network", "expected a mapping of settings (cidr, zones, nat, transit_encryption, flow_log_retention_days, "
                        "pod_cidr, service_cidr), got null (an empty value)")),
    ("dict-not-a-mapping", f"{A}/gpu_pools", "train", (f"{AWS}.gpu_pools", "expected a mapping of gpu pool name to settings, got the string 'train'")),
    ("pools-as-a-list", f"{A}/gpu_pools", [{"accelerator": "l4"}], (f"{AWS}.gpu_pools", "expected a mapping of gpu pool name to settings, got a list")),
    ("teams-as-a-list", "teams", ["research"], ("platform.teams", "expected a mapping of team name to settings, got a list")),
    ("regions-as-a-list", "clouds/aws/regions", ["us-east-1"], ("platform.clouds.aws.regions", "expected a mapping of key to settings, got a list")),
    ("extra-as-a-list", "labels/extra", ["tier"], ("platform.labels.extra", "expected a mapping of label key to label value, got a list")),
    ("node-labels-as-a-list", f"{A}/gpu_pools/train/labels", ["a=b"], (f"{POOL}.labels", "expected a mapping of key to a string, got a list")),
    ("data-zones-as-a-list", "compliance/data_zones", ["eu"], ("platform.compliance.data_zones", "expected a mapping of data zone name to a list, got a list")),
    ("list-not-a-list", "compliance/profiles", "hipaa", ("platform.compliance.profiles", "expected a list, got the string 'hipaa'")),
    ("number-for-string", "environment", 12, ("platform.environment", "expected a string, got the number 12")),
    ("bool-for-string", f"{A}/gpu_pools/train/accelerator", True, (f"{POOL}.accelerator", "expected a string, got the boolean true")),
    ("null-for-string", "labels/extra", {"tier": None}, ("platform.labels.extra.tier", "expected a string, got null (an empty value)")),
    ("number-for-a-label-value", "labels/extra", {"tier": 1}, ("platform.labels.extra.tier", "expected a string, got the number 1; write it as a string in quotes: '1'")),
]


@pytest.mark.parametrize(("change", "value", "expected"), [c[1:] for c in WRONG_CONTAINERS], ids=[c[0] for c in WRONG_CONTAINERS])
def test_a_mapping_list_or_string_of_the_wrong_json_type_says_what_is_expected_and_given(
        change: str, value: Any, expected: tuple[str, str]) -> None:
    assert _issues(set_path(valid(), change, value)) == [expected]


@pytest.mark.parametrize(("value", "given"), [(None, "null (an empty value)"), ([1], "a list"), ("x", "the string 'x'"),
                                              (5, "the number 5")])
def test_a_platform_that_is_not_a_mapping_is_named_in_json_words(value: Any, given: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_platform(value)
    assert caught.value.issues == [("platform", f"expected a mapping of platform settings, got {given}")]


def test_a_python_object_that_json_cannot_hold_is_refused_at_the_root() -> None:
    [(path, message)] = _issues(set_path(valid(), f"{A}/network/cidr", IPv4Network("10.10.0.0/16")))
    assert path == "platform"
    assert message.startswith("expected plain JSON/YAML values (mappings, lists, strings, numbers, booleans, null): ")
    assert "IPv4Network" in message


class _Sized(SpecModel):
    """No spec field is a float today; a float field takes an integer, as JSON's number does."""

    ratio: float
    count: int = 1


def test_an_integer_is_a_valid_float_but_a_bool_or_string_is_not() -> None:
    assert validate_strict(_Sized, json.dumps({"ratio": 2})).ratio == 2.0
    assert validate_strict(_Sized, json.dumps({"ratio": 2.5})).ratio == 2.5
    for value, got in [(True, "the boolean true"), ("2.5", "the string '2.5'; write the number without quotes: 2.5")]:
        with pytest.raises(ValidationError) as caught:
            validate_strict(_Sized, json.dumps({"ratio": value}))
        [error] = caught.value.errors(include_url=False)
        assert error["type"] == "float_type"
        assert _describe("x", error) == ("x.ratio", f"expected a number, got {got}")


@given(st.one_of(st.booleans(), st.integers(1, 1000).map(str), st.floats(1.5, 999.5).filter(lambda f: not f.is_integer())))
def test_no_boolean_string_or_fraction_becomes_an_integer(value: Any) -> None:
    [(path, message)] = _issues(set_path(valid(), f"{A}/gpu_pools/train/max_nodes", value))
    assert path == f"{POOL}.max_nodes"
    assert message.startswith("expected an integer from 1 to 1000, got the ")
    assert json.dumps(value).strip('"') in message  # the value given, as written


def test_the_reference_stacks_still_validate() -> None:
    for env in ("dev", "staging", "prod"):
        data = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{env}.yaml").read_text())
        assert load_platform(json.loads(json.dumps(data["config"]["ai-infra:platform"]))).environment == env


def _project_with(tmp_path: Path, platform: dict[str, Any]) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: ai-infra\nruntime: python\n")
    (tmp_path / "__main__.py").write_text((ROOT / "stacks" / "__main__.py").read_text())
    (tmp_path / "Pulumi.lab.yaml").write_text(yaml.safe_dump({"config": {"ai-infra:platform": platform}}))
    return tmp_path


def test_validate_and_plan_give_the_loader_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = set_path(valid(), f"{A}/gpu_pools/train/max_nodes", True)
    with pytest.raises(SpecError) as caught:
        load_platform(data)
    expected = str(caught.value)
    assert expected == ("invalid platform config (1 problem):\n"
                        f"  {POOL}.max_nodes: expected an integer from 1 to 1000, got the boolean true")
    program = _project_with(tmp_path, data)
    assert main(["validate", "--program", str(program), "--stack", "lab"]) == 1
    assert capsys.readouterr().err == f"error: {expected}\n"
    assert main(["plan", "--program", str(program), "--stack", "lab", "--no-policy", "-q"]) == 1
    assert expected in capsys.readouterr().err
    with pytest.raises(pulumi.RunError) as stopped:  # the program's own path: components.compose.validate
        validate(data)
    assert str(stopped.value) == expected
