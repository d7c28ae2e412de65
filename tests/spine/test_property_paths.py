"""aiinfra/plan/property_paths.py against the engine's property paths (pulumi/pulumi
sdk/go/common/resource/properties_path.go): what ParsePropertyPath accepts, what PropertyPath.String prints, what
Contains matches and what Reset leaves in the new inputs, case by case, and the diff notes that follow from them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import base_and_head, only_entry, plan_record
from hypothesis import given
from hypothesis import strategies as st

from aiinfra.plan.diff import diff_plans
from aiinfra.plan.echo import SECRET, SIG
from aiinfra.plan.masking import mask_secrets
from aiinfra.plan.property_paths import covers, format_path, parse_path, reset


def secret(value: Any) -> dict[str, Any]:
    return {SIG: SECRET, "value": value}


@pytest.mark.parametrize(("path", "segments"), [
    ("root", ["root"]),
    ("root.nested.array[0].double[1]", ["root", "nested", "array", 0, "double", 1]),
    ('root["key with \\"escaped\\" quotes"]', ["root", 'key with "escaped" quotes']),
    ('["root key with a ."][100]', ["root key with a .", 100]),
    ("root.array[*].field", ["root", "array", "*", "field"]),
    ('root.array["*"].field', ["root", "array", "*", "field"]),
    ("a.*", ["a", "*"]),
    ("a.[0]", ["a", 0]),                      # tolerated: older providers write it
    ("a..b", ["a", "b"]),
    ("a[+1]", ["a", 1]),                      # strconv.ParseInt takes a sign
    ("a[-1]", ["a", -1]),                     # parses; Reset then reports it not found
    ('a["C:\\data"]', ["a", "C:\\data"]),     # only \" is an escape
    ("tags.cost-center", ["tags", "cost-center"]),
    ("a]b.c", ["a]b", "c"]),
    ("", []),
])
def test_a_path_parses_to_the_engines_segments(path: str, segments: list[str | int]) -> None:
    assert parse_path(path) == segments


@pytest.mark.parametrize("path", [".a", "a.", "a[", "a[0", 'a["k', 'a["k"', 'a["k"x', "a[x]", "a[1.5]", "a[]",
                                  "a[9223372036854775808]"])
def test_a_path_the_engine_refuses_does_not_parse(path: str) -> None:
    assert parse_path(path) is None


@pytest.mark.parametrize(("segments", "text"), [
    (["root", "nested", 0], "root.nested[0]"),
    (["tags", "cost-center"], 'tags["cost-center"]'),
    (["metadata", "annotations", 'say "hi"'], 'metadata.annotations["say \\"hi\\""]'),
    (["tags", "Équipe"], 'tags["Équipe"]'),
    (["a", "C:\\data"], 'a["C:\\data"]'),
    (["a", "*"], 'a["*"]'),
    (["a$b"], '["a$b"]'),
    ([0, "x"], "[0].x"),
    (["a", ""], 'a[""]'),                   # Go prints `a.`, which does not read back
    ([], "(value)"),
])
def test_a_path_prints_as_the_engine_prints_it(segments: list[str | int], text: str) -> None:
    assert format_path(segments) == text


_KEYS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8).filter(
    lambda key: not key.endswith("\\"))  # Go's String() has the same gap: `["a\"]` reads as an escaped quote
_SEGMENTS = st.lists(st.one_of(_KEYS, st.integers(min_value=0, max_value=10**6)), min_size=1, max_size=5)


@given(_SEGMENTS)
def test_a_printed_path_reads_back_as_the_same_segments(segments: list[str | int]) -> None:
    assert parse_path(format_path(segments)) == segments


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("a.b", "a.b.c", True), ("a.*.c", "a.x.c.d", True), ("a[*]", "a[3]", True), ("a[1]", 'a["1"]', False),
    ("a.b.c", "a.b", False), ("", "anything.at[0].all", True), ("*", "x", True)])
def test_a_pattern_contains_the_paths_the_engine_matches(pattern: str, path: str, expected: bool) -> None:
    assert covers(parse_path(pattern), parse_path(path)) is expected


# (path, old, new, what Reset leaves in new, or None where it reports the path not found and changes nothing)
_RESETS = [
    ("missing", {"root": 1}, {"root": 2}, {"root": 2}),
    ("root.missing", {"root": 1}, {"root": 2}, {"root": 2}),
    ("root.nested", {"root": {"nested": 1}}, {"root": 2}, None),
    ("root.nested", {"root": 1}, {"root": {"nested": 2}}, {"root": {}}),
    ("root.missing.path", {"root": 1}, {"root": 2}, {"root": 2}),
    ("array[1]", {"array": [1]}, {"array": [1]}, {"array": [1]}),
    ("root[0]", {"root": 1}, {"root": 2}, {"root": 2}),
    ("root[0]", {"root": [1]}, {"root": 2}, None),
    ("root[0]", {"root": 1}, {"root": [2]}, None),
    ("array[-1]", {"array": [1]}, {"array": [1]}, None),
    ("root[1]", {"root": [2]}, {"root": [3, 4]}, None),
    ("root[1]", {"root": [1, 2]}, {"root": [3]}, None),
    ("root[0].other", {"root": {"nested": 1}}, {"root": {"nested": 2}}, {"root": {"nested": 2}}),
    ("root[1].nested", {"root": [{"nested": 1}]}, {"root": [{"nested": 3}, {"nested": 4}]}, None),
    ("root", {"root": 1}, {"root": 2}, {"root": 1}),
    ("root.nested", {"root": {"nested": 1}}, {"root": {"nested": 2}}, {"root": {"nested": 1}}),
    ("root.nested", {"root": {}}, {"root": {"nested": 2}}, {"root": {}}),
    ("root.nested", {"root": {"nested": 1}}, {"root": {}}, {"root": {"nested": 1}}),
    ("root.nested", {"root": {"nested": 1}}, {}, None),
    ("root.nested", {}, {"root": {"nested": 2}}, {"root": {}}),
    ("array[0].item", {"array": [{"item": 1}]}, {"array": [{"item": 2}]}, {"array": [{"item": 1}]}),
    ("array[0]", {"array": []}, {"array": [2]}, None),
    ("*", {"root": 1}, {"root": 2, "added": 3}, {"root": 1}),
    ("*.nested", {"root": {"nested": 1}}, {"root": {"nested": 2}}, {"root": {"nested": 1}}),
    ("root[*].nested", {"root": [{"nested": 1}, {"nested": 2}]}, {"root": [{"nested": 3}, {"nested": 4}]},
     {"root": [{"nested": 1}, {"nested": 2}]}),
    ("root.*", {"root": [1, 2]}, {"root": [3, 4]}, {"root": [1, 2]}),
    ("root.*", {"root": {"nested": 2}}, {"root": {}}, {"root": {"nested": 2}}),
    ("root.*", {"root": [1]}, {"root": {"nested": 2}}, {"root": {"nested": 2}}),
    ("root.*", {"root": {"nested": 2}}, {"root": [1]}, {"root": [1]}),
    ("root.*", {"root": {"nested": 2}}, {"root": 1}, None),
    ("root.*", {}, {"root": {"added": 1}}, {"root": {"added": 1}}),  # no base object: nothing to take
    ("root.*.nested", {"root": 1}, {"root": {"nested": 2}}, None),
    ("root.*.nested", {"root": {"a": {"nested": 1}}}, {"root": {}}, None),
    ("root.*.nested", {"root": {"a": {"nested": 1}}}, {"root": {"a": {"nested": 2}, "b": {"nested": 3}}},
     {"root": {"a": {"nested": 1}, "b": {"nested": 3}}}),  # the key only new has is followed by no reset
    ("root.*[0]", {"root": {"passes": 1, "fails": [1]}}, {"root": {"passes": 2, "fails": []}}, None),
    ("root.array.*", {"root": {"array": [1]}}, {"root": {"array": []}}, None),
    ("root[*][0]", {"root": [1, 2]}, {"root": secret([3])}, None),
    ("root.secret", {"root": secret({"secret": 1})}, {"root": {"secret": 2}}, {"root": {"secret": secret(1)}}),
    ("root.secret", {"root": {"secret": 1}}, {"root": secret({"secret": 2})}, {"root": secret({"secret": 1})}),
    ("root.secret", {"root": secret({"secret": 1})}, {"root": secret({"secret": 2})}, {"root": secret({"secret": 1})}),
    ("root[0]", {"root": secret([1, 2])}, {"root": [3, 4]}, {"root": [secret(1), 4]}),
    ("root[0]", {"root": [1, 2]}, {"root": secret([3, 4])}, {"root": secret([1, 4])}),
    ("tags.*", {"tags": secret({"team": "ml"})}, {"tags": {"team": "ml", "x": "y"}}, {"tags": {"team": secret("ml")}}),
]


@pytest.mark.parametrize(("path", "old", "new", "expected"), _RESETS, ids=[f"{i}:{c[0]}" for i, c in enumerate(_RESETS)])
def test_an_ignored_path_resets_the_new_inputs_as_the_engine_does(path: str, old: dict, new: dict,
                                                                  expected: dict | None) -> None:
    before = copy.deepcopy(new)
    value, found = reset(old, new, parse_path(path))
    assert (value, found) == ((before, False) if expected is None else (expected, True))
    assert new == before  # the plan's record is not changed in place


def test_a_path_the_engine_stops_on_keeps_what_it_reset_before() -> None:
    """Go resets in place and returns at the first element it cannot follow: the indexes before it stay reset."""
    assert reset({"pools": [{"count": 2}]}, {"pools": [{"count": 3}, {"count": 1}]}, ["pools", "*", "count"]) == \
        ({"pools": [{"count": 2}, {"count": 1}]}, False)
    assert reset({"a": [1, 2]}, {"a": [3]}, ["a", "*"]) == ({"a": [1]}, False)


def test_an_empty_path_resets_nothing_and_is_not_found() -> None:
    assert reset({"a": 1}, {"a": 2}, []) == ({"a": 2}, False)


def test_a_path_into_a_masked_base_secret_keeps_the_base_secret_whole() -> None:
    """A plan holds `[secret]` for a secret's value, so the base's keys under it are unknown: the head takes the whole
    secret there, which is what a leaf wildcard does and the nearest the plan can see for a deeper path."""
    masked = mask_secrets({"tags": secret({"team": "ml"})})
    assert reset(masked, {"tags": {"team": "ml", "x": "y"}}, ["tags", "*"]) == (masked, True)
    assert reset(masked, {"tags": {"team": "ai"}}, ["tags", "team"]) == (masked, True)


_VALUES = st.recursive(st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b"])),
                       lambda inner: st.one_of(st.lists(inner, max_size=3),
                                               st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3)),
                       max_leaves=12)
_PATHS = st.lists(st.one_of(st.sampled_from(["x", "y", "z", "*"]), st.integers(0, 2)), min_size=1, max_size=4)


@given(st.dictionaries(st.sampled_from(["x", "y", "z"]), _VALUES), _PATHS)
def test_resetting_to_the_same_inputs_changes_nothing(inputs: dict, path: list[str | int]) -> None:
    assert reset(inputs, copy.deepcopy(inputs), path)[0] == inputs


@given(st.dictionaries(st.sampled_from(["x", "y", "z"]), _VALUES), st.dictionaries(st.sampled_from(["x", "y", "z"]), _VALUES),
       _PATHS)
def test_a_reset_changes_nothing_outside_its_path(old: dict, new: dict, path: list[str | int]) -> None:
    value, _ = reset(old, new, path)
    for key in set(new) | set(value):
        if not covers(path[:1], [key]):
            assert value.get(key) == new.get(key)


# --- the diff's notes ------------------------------------------------------------------------------------------------


def _entry(record: dict, change: Any) -> dict:
    base, head = base_and_head(record)
    change(head["resources"][1]["inputs"])
    return only_entry(diff_plans(base, head))


def test_an_ignored_path_the_engine_cannot_follow_is_noted_with_the_engines_message() -> None:
    aks = plan_record("azure-native:containerservice:ManagedCluster", "aks",
                      {"agentPoolProfiles": [{"name": "sys", "count": 2}]}, ignoreChanges=["agentPoolProfiles[*].count"])
    entry = _entry(aks, lambda inputs: inputs["agentPoolProfiles"].append({"name": "gpu", "count": 1}))
    assert entry["notes"] == ['cannot ignore changes in added or removed elements of the path: "agentPoolProfiles[*].count"']


def test_a_replace_on_changes_path_that_does_not_parse_is_noted() -> None:
    bucket = plan_record("aws:s3/bucket:Bucket", "data", {"bucket": "b", "tags": {"team": "ml"}},
                         replaceOnChanges=["tags[team"])
    entry = _entry(bucket, lambda inputs: inputs["tags"].update(team="ai"))
    assert entry["action"] == "update"
    assert entry["notes"] == ['replaceOnChanges path "tags[team" does not parse: `pulumi up` will fail']


def test_an_empty_replace_on_changes_path_replaces_on_any_change() -> None:
    """The engine parses "" to the empty path, which contains every path (applyReplaceOnChanges)."""
    bucket = plan_record("aws:s3/bucket:Bucket", "data", {"bucket": "b", "tags": {"team": "ml"}}, replaceOnChanges=[""])
    entry = _entry(bucket, lambda inputs: inputs["tags"].update(team="ai"))
    assert entry["action"] == "replace" and entry["replaceBecause"] == ["tags.team"]
