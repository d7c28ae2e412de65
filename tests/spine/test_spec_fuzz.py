"""Property: whatever a user writes, loading gives a Platform or a SpecError with config paths — never a crash."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers import full_platform_dict as valid

from components.spec import PLATFORM_CONFIG, Platform, SpecError, StackConfigError, load_platform, platform_config_value
from components.spec.stack import near_platform_keys

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 100000), st.text(max_size=12),
                    st.sampled_from(["10.0.0.0/16", "spot", "h100-80gb", "2x4", "v5e", "mig", "1g.10gb"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=6)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, child in node.items():
            found += _paths(child, (*prefix, key))
    return found


PATHS = _paths(valid())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=3))
def test_any_edit_loads_or_fails_with_paths(edits: list[tuple[tuple, Any]]) -> None:
    data = copy.deepcopy(valid())
    for path, value in edits:
        node = data
        for key in path[:-1]:
            if not isinstance(node, dict) or not isinstance(node.get(key), dict):
                break
            node = node[key]
        else:
            node[path[-1]] = value
    try:
        result = load_platform(data)
    except SpecError as err:
        assert err.issues, "a SpecError must name at least one problem"
        for where, message in err.issues:
            assert where.startswith("platform"), where
            assert message.strip()
    else:
        assert isinstance(result, Platform)


region_names = st.text(st.characters(exclude_categories=("Cc", "Cs")), max_size=20)  # no control characters


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["aws", "gcp", "azure"]), region_names, st.lists(region_names, max_size=3))
def test_any_region_name_loads_or_fails_with_its_path(cloud: str, region: str, residency: list[str]) -> None:
    data = copy.deepcopy(valid())
    data["clouds"].setdefault(cloud, {"project": "acme-ml-prod"} if cloud == "gcp" else {})["regions"] = {
        region: {"network": {"cidr": "10.30.0.0/16", "transit_encryption": "monitor"}}}
    data["compliance"] = {"allowed_regions": residency, "data_zones": {"z": residency}}
    try:
        load_platform(data)
    except SpecError as err:
        for where, message in err.issues:
            assert where.startswith("platform") and message.strip() and "\n" not in message


config_keys = st.lists(st.one_of(st.text(max_size=20), st.sampled_from(["aws:region", "ai-infra:platfrom", "gcp:project"]),
                                 st.builds(lambda flips: "".join(c.upper() if f else c for c, f in zip("ai-infra:platform", flips)),
                                           st.lists(st.booleans(), min_size=17, max_size=17))), max_size=4)


@settings(max_examples=150, deadline=None)
@given(config_keys)
def test_a_missing_platform_is_one_line_naming_every_near_miss_key(keys: list[str]) -> None:
    keys = [key for key in keys if key != PLATFORM_CONFIG]
    with pytest.raises(StackConfigError) as caught:
        platform_config_value(None, stack="dev", secret=False, config_keys=keys)
    message = str(caught.value)
    assert message.startswith(f"stack 'dev' has no {PLATFORM_CONFIG} config") and "\n" not in message
    for key in keys:
        if key.lower() == PLATFORM_CONFIG:  # the key in another case is always named
            assert repr(key) in message
    assert ("did you mean" in message) == bool(near_platform_keys(keys))
