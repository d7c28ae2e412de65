"""The rules error messages state in words (names, label keys, label values) agree with the patterns that enforce them."""

from __future__ import annotations

import re
import string
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.spec.common import (
    LABEL_KEY_PATTERN,
    LABEL_KEY_RULE,
    LABEL_VALUE_PATTERN,
    LABEL_VALUE_RULE,
    NAME_PATTERN,
    NAME_RULE,
    PATTERN_RULES,
)

LOWER, DIGITS = set(string.ascii_lowercase), set(string.digits)


def _label_key(text: str) -> bool:
    # "1 to 63 lower-case letters, digits, '_' and '-', starting with a lower-case letter"
    return 1 <= len(text) <= 63 and set(text) <= LOWER | DIGITS | {"_", "-"} and text[0] in LOWER


def _label_value(text: str) -> bool:
    # "1 to 63 lower-case letters, digits, '_' and '-', starting with a letter or digit"
    return 1 <= len(text) <= 63 and set(text) <= LOWER | DIGITS | {"_", "-"} and text[0] in LOWER | DIGITS


def _name(text: str) -> bool:
    # "lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters"
    return 1 <= len(text) <= 24 and set(text) <= LOWER | DIGITS | {"-"} and text[0] in LOWER and text[-1] in LOWER | DIGITS


# What each rule's words say, as a predicate; the text is pinned so a change to it revisits the predicate.
WORDS: dict[str, tuple[str, Callable[[str], bool]]] = {
    LABEL_KEY_PATTERN: ("1 to 63 lower-case letters, digits, '_' and '-', starting with a lower-case letter", _label_key),
    LABEL_VALUE_PATTERN: ("1 to 63 lower-case letters, digits, '_' and '-', starting with a letter or digit", _label_value),
    NAME_PATTERN: ("lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, at most 24 characters",
                   _name),
}
texts = st.one_of(st.text(alphabet=string.ascii_letters + string.digits + "_-. /:@", max_size=70),
                  st.text(alphabet=string.ascii_lowercase + string.digits + "_-", max_size=70))
edge_cases = st.sampled_from(["", "a", "A", "0", "_", "-", "a" * 24, "a" * 25, "a" * 63, "a" * 64, "a-", "a_", "a.b", "0a",
                              "cost-center", "cost_center", "Team", "team 1"])


def test_every_rule_is_described() -> None:
    assert set(PATTERN_RULES) == set(WORDS)
    assert {rule for _, rule in PATTERN_RULES.values()} == {LABEL_KEY_RULE, LABEL_VALUE_RULE, NAME_RULE}


@pytest.mark.parametrize("pattern", list(WORDS), ids=lambda p: PATTERN_RULES[p][0])
def test_rule_text_is_the_described_text(pattern: str) -> None:
    assert PATTERN_RULES[pattern][1] == WORDS[pattern][0]


@pytest.mark.parametrize("pattern", list(WORDS), ids=lambda p: PATTERN_RULES[p][0])
@given(text=st.one_of(texts, edge_cases))
def test_pattern_accepts_exactly_what_the_words_say(pattern: str, text: str) -> None:
    assert bool(re.fullmatch(pattern, text)) == WORDS[pattern][1](text), text
