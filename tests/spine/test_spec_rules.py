"""The rules error messages state in words (names, label keys, label values, ...) agree with the patterns that enforce
them, and every pattern of the spec has its rule in words (or lists its values), so no message shows a regex."""

from __future__ import annotations

import re
import string
import typing
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pydantic import BaseModel

from components.spec import Platform
from components.spec.common import (
    BUCKET_PREFIX_PATTERN,
    ENVIRONMENT_PATTERN,
    GCP_PROJECT_PATTERN,
    GCP_ZONE_PATTERN,
    GUID_PATTERN,
    HEALTH_CHECK_PATH_PATTERN,
    KUBERNETES_VERSION_PATTERN,
    LABEL_KEY_PATTERN,
    LABEL_KEY_RULE,
    LABEL_VALUE_PATTERN,
    LABEL_VALUE_RULE,
    NAME_PATTERN,
    NAME_RULE,
    NAMESPACE_PATTERN,
    PATTERN_RULES,
    SERVICE_NAME_PATTERN,
)

LOWER, DIGITS = set(string.ascii_lowercase), set(string.digits)
LETTERS, HEX = set(string.ascii_letters), set(string.hexdigits)


def _label_key(text: str) -> bool:
    # "1 to 63 lower-case letters, digits, '_' and '-', starting with a lower-case letter"
    return 1 <= len(text) <= 63 and set(text) <= LOWER | DIGITS | {"_", "-"} and text[0] in LOWER


def _label_value(text: str) -> bool:
    # "1 to 63 lower-case letters, digits, '_' and '-', starting with a letter or digit"
    return 1 <= len(text) <= 63 and set(text) <= LOWER | DIGITS | {"_", "-"} and text[0] in LOWER | DIGITS


def _name(text: str) -> bool:
    # "lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters"
    return 1 <= len(text) <= 24 and set(text) <= LOWER | DIGITS | {"-"} and text[0] in LOWER and text[-1] in LOWER | DIGITS


def _environment(text: str) -> bool:
    # "2 to 16 lower-case letters, digits and '-', starting with a letter"
    return 2 <= len(text) <= 16 and set(text) <= LOWER | DIGITS | {"-"} and text[0] in LOWER


def _gcp_project(text: str) -> bool:
    # "6 to 30 lower-case letters, digits and '-', starting with a letter, ending with a letter or digit"
    return 6 <= len(text) <= 30 and set(text) <= LOWER | DIGITS | {"-"} and text[0] in LOWER and text[-1] in LOWER | DIGITS


def _guid(text: str) -> bool:
    # "32 hex digits in groups of 8, 4, 4, 4 and 12 joined by '-'"
    groups = text.split("-")
    return [len(g) for g in groups] == [8, 4, 4, 4, 12] and all(set(g) <= HEX for g in groups)


def _gcp_zone(text: str) -> bool:
    # "a GCP region name, '-' and a zone letter, like us-central1-a, or an AI zone, like us-central1-ai1a" (region names:
    # letters, '-', letters and digits; an AI zone: "ai", digits and its parent zone's letter)
    region, _, zone = text.rpartition("-")
    area, _, place = region.partition("-")
    name = place.rstrip(string.digits)
    ai_number = zone[2:-1]
    letter_ok = (len(zone) == 1 and zone in LOWER) or (
        zone.startswith("ai") and len(zone) >= 4 and zone[-1] in LOWER and ai_number.isascii() and ai_number.isdigit())
    return (letter_ok and bool(area) and set(area) <= LOWER and bool(name) and set(name) <= LOWER
            and len(place) > len(name))


def _kubernetes_version(text: str) -> bool:
    # "1. and a two-digit minor version"
    return len(text) == 4 and text.startswith("1.") and set(text[2:]) <= DIGITS


def _namespace(text: str) -> bool:
    # "lower-case letters, digits and '-', starting and ending with a letter or digit"
    return bool(text) and set(text) <= LOWER | DIGITS | {"-"} and text[0] != "-" and text[-1] != "-"


def _service_name(text: str) -> bool:
    # "lower-case letters, digits and '-', starting with a letter and ending with a letter or digit"
    return _namespace(text) and text[0] in LOWER


def _health_check_path(text: str) -> bool:
    # "'/' followed by letters, digits, '.', '_', '~', '/' and '-'"
    return text.startswith("/") and set(text) <= LETTERS | DIGITS | set("._~/-")


def _bucket_prefix(text: str) -> bool:
    # "letters, digits, '.', '_', '/' and '-', or empty"
    return set(text) <= LETTERS | DIGITS | set("._/-")


# What each rule's words say, as a predicate; the text is pinned so a change to it revisits the predicate.
WORDS: dict[str, tuple[str, Callable[[str], bool]]] = {
    LABEL_KEY_PATTERN: ("1 to 63 lower-case letters, digits, '_' and '-', starting with a lower-case letter", _label_key),
    LABEL_VALUE_PATTERN: ("1 to 63 lower-case letters, digits, '_' and '-', starting with a letter or digit", _label_value),
    NAME_PATTERN: ("lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters",
                   _name),
    ENVIRONMENT_PATTERN: ("2 to 16 lower-case letters, digits and '-', starting with a letter", _environment),
    GCP_PROJECT_PATTERN: ("6 to 30 lower-case letters, digits and '-', starting with a letter, ending with a letter or digit",
                          _gcp_project),
    GUID_PATTERN: ("32 hex digits in groups of 8, 4, 4, 4 and 12 joined by '-', like 00000000-0000-0000-0000-000000000000", _guid),
    GCP_ZONE_PATTERN: ("a GCP region name, '-' and a zone letter, like us-central1-a, or an AI zone, like us-central1-ai1a",
                       _gcp_zone),
    KUBERNETES_VERSION_PATTERN: ("1. and a two-digit minor version, like 1.33", _kubernetes_version),
    NAMESPACE_PATTERN: ("lower-case letters, digits and '-', starting and ending with a letter or digit", _namespace),
    SERVICE_NAME_PATTERN: ("lower-case letters, digits and '-', starting with a letter and ending with a letter or digit",
                           _service_name),
    HEALTH_CHECK_PATH_PATTERN: ("'/' followed by letters, digits, '.', '_', '~', '/' and '-'", _health_check_path),
    BUCKET_PREFIX_PATTERN: ("letters, digits, '.', '_', '/' and '-', or empty", _bucket_prefix),
}
texts = st.one_of(st.text(alphabet=string.ascii_letters + string.digits + "_-. /:@~", max_size=70),
                  st.text(alphabet=string.ascii_lowercase + string.digits + "_-", max_size=70),
                  st.text(alphabet="0123456789abcdefABCDEFg-", max_size=40),
                  st.text(alphabet="1.234-", max_size=6))
edge_cases = st.sampled_from(["", "a", "A", "0", "_", "-", "a" * 24, "a" * 25, "a" * 63, "a" * 64, "a-", "a_", "a.b", "0a",
                              "cost-center", "cost_center", "Team", "team 1", "dev", "d", "a" * 16, "a" * 17, "acme-ml-prod",
                              "a" * 30, "a" * 31, "abcde", "abcde-", "00000000-0000-0000-0000-000000000000",
                              "0000000-00000-0000-0000-000000000000", "us-central1-a", "us-central1", "europe-west4-b",
                              "us-central-a", "1.33", "1.3", "1.333", "2.33", "/healthz", "healthz", "/", "/a~b", "data/raw/"])


def test_every_rule_is_described() -> None:
    assert set(PATTERN_RULES) == set(WORDS)
    assert {LABEL_KEY_RULE, LABEL_VALUE_RULE, NAME_RULE} <= {rule for _, rule in PATTERN_RULES.values()}


def _patterns(annotation: typing.Any, seen: set[type]) -> Iterator[str]:
    """Every string pattern constraining `annotation`, through models, containers, unions and Annotated metadata."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        for item in metadata:
            for constraint in (item, *getattr(item, "metadata", ())):
                if isinstance(getattr(constraint, "pattern", None), str):
                    yield constraint.pattern
        yield from _patterns(base, seen)
    elif origin is not None:
        for arg in typing.get_args(annotation):
            yield from _patterns(arg, seen)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in seen:
        seen.add(annotation)
        for field in annotation.model_fields.values():
            for item in field.metadata:
                for constraint in (item, *getattr(item, "metadata", ())):
                    if isinstance(getattr(constraint, "pattern", None), str):
                        yield constraint.pattern
            yield from _patterns(field.annotation, seen)


def test_every_pattern_of_the_spec_is_stated_in_words() -> None:
    # A pattern that only lists values is worded as an enum (the loader names the values); any other needs a rule in
    # common.PATTERN_RULES, or its error shows the regex (fuzz review F12).
    patterns = set(_patterns(Platform, set()))
    listing = {p for p in patterns if re.fullmatch(r"\^\(([\w-]+(?:\|[\w-]+)+)\)\$", p)}
    assert listing == {r"^(NoSchedule|PreferNoSchedule|NoExecute)$"}
    assert patterns - listing - set(PATTERN_RULES) == set()
    assert {ENVIRONMENT_PATTERN, GCP_PROJECT_PATTERN, GUID_PATTERN} <= patterns


@pytest.mark.parametrize("pattern", list(WORDS), ids=lambda p: PATTERN_RULES[p][0])
def test_rule_text_is_the_described_text(pattern: str) -> None:
    assert PATTERN_RULES[pattern][1] == WORDS[pattern][0]


@pytest.mark.parametrize("pattern", list(WORDS), ids=lambda p: PATTERN_RULES[p][0])
@given(text=st.one_of(texts, edge_cases))
def test_pattern_accepts_exactly_what_the_words_say(pattern: str, text: str) -> None:
    assert bool(re.fullmatch(pattern, text)) == WORDS[pattern][1](text), text
