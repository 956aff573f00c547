"""The bounded JSON pretty-printer used by exports."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.js.json.encode import indent_json, to_json_bytes
from pitools.core.js.json.parse import parse_deep
from pitools.render.pretty import pretty_json

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


#: Values whose keys are never array indexes (JavaScript writes those first; pretty_json keeps Python's order).
named_key_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5).filter(lambda k: not k.isdecimal()), inner, max_size=4)
    ),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(named_key_values)
def test_shallow_values_print_as_json_stringify_indent_2(value: object) -> None:
    # JSON.stringify(value, null, 2): numbers and strings in JavaScript's text, as Pi writes them
    assert pretty_json(value) == indent_json(to_json_bytes(value)).decode()


@settings(max_examples=200, deadline=None)
@given(json_values, st.integers(0, 4))
def test_folded_indentation_is_still_the_same_json(value: object, max_depth: int) -> None:
    as_js = {"parse_int": float}  # JavaScript reads every number as a double
    assert json.loads(pretty_json(value, max_depth=max_depth), **as_js) == json.loads(to_json_bytes(value), **as_js)


@pytest.mark.slow
def test_deep_nesting_prints_in_linear_size() -> None:
    for depth in (1_000, 10_000, 100_000):
        text = '{"a":[' * depth + "1" + "]}" * depth
        out = pretty_json(parse_deep(text))
        assert len(out) < 3 * len(text) + 1_000, (depth, len(out))
        level, n = parse_deep(out), 0  # still the same JSON value
        while type(level) is dict:
            level, n = level["a"][0], n + 1
        assert (level, n) == (1, depth)


def test_size_is_capped_with_a_marker() -> None:
    out = pretty_json(["x" * 100] * 100, max_chars=1_000)
    assert len(out) < 1_100
    assert out.endswith("(folded: the value goes on past 1,000 characters)")
