"""``to_json_bytes``: orjson written directly, yet byte for byte ``JSON.stringify``.

The reference is the exact writer walking the whole value
(:func:`~pitools.core.js.json.exact.exact_bytes`), whose every behaviour is pinned by fixtures
recorded from node (tests/unit/js/test_value.py). ``jsonable`` (plain data for callers that want
a copy) must keep exactly what ``JSON.stringify`` keeps.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.js.json.encode import (
    Serialized,
    fragment,
    indent_json,
    js_stringify,
    js_stringify_size,
    jsonable,
    serialize_each,
    size_probe,
    to_json_bytes,
)
from pitools.core.js.json.exact import exact_bytes
from pitools.core.js.json.stream import write_json_to
from pitools.core.js.value import UNDEFINED

GOLDEN = Path(__file__).resolve().parents[3] / "golden"


def js_bytes(value: Any) -> bytes:
    return exact_bytes(_plain(value))


def _plain(value: Any) -> Any:
    """``value`` with :class:`Serialized` replaced by its data (plain JSON data)."""
    if type(value) is Serialized:
        return _plain(value.data)
    if type(value) is dict:
        return {k: _plain(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return [_plain(v) for v in value]
    return value


# -- JS-ish values ------------------------------------------------------------------------------

INDEX_KEYS = st.sampled_from(["0", "1", "2", "10", "01", "007", "4294967294", "4294967295", "-1", "1.5"])
KEYS = st.one_of(st.text(max_size=6), INDEX_KEYS, st.sampled_from(["role", "content", "type", "text", "usage"]))
SPECIAL_FLOATS = st.sampled_from(
    [
        *(0.0, -0.0, 100.0, 1e16, 1.5e17, 1e20, 9.999999999999999e20, 1e21, 3e-6, 7.5e-6, 1e-6, 9.99e-7, 1e-5),
        *(2.0**53, 2.0**53 + 2, 1e-7, 5e-324, 1.7976931348623157e308, math.nan, math.inf, -math.inf),
    ]
)
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), SPECIAL_FLOATS)
INTS = st.one_of(st.integers(-(2**53), 2**53), st.integers(-(2**70), 2**70), st.sampled_from([2**53 + 1, 2**64]))
TEXT = st.one_of(
    st.text(max_size=20),
    st.text(st.characters(codec=None, categories=["Cs", "Lo", "So", "Cc"]), max_size=6),  # lone surrogates
    st.sampled_from(["version 1.0, ok", '{"0":1}', "\\", '"', "\u2028", "😀", "a\ud83d", "\ude00b"]),
)
SCALARS = st.one_of(st.none(), st.booleans(), INTS, FLOATS, TEXT, st.just(UNDEFINED))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(KEYS, inner, max_size=5),
    ),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(VALUES)
def test_to_json_bytes_is_json_stringify(value: Any) -> None:
    assert to_json_bytes(value) == js_bytes(value)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.integers(0, 4))
def test_js_stringify_size_is_the_utf8_length_of_the_whole_text(value: Any, depth: int) -> None:
    # measured member by member down to `depth`: index keys, undefined members and elements,
    # floats V8 prints its own way and lone surrogates must add up as in the whole text
    assert js_stringify_size(value, depth) == len((js_stringify(value) or "").encode("utf-8", "surrogatepass"))


def _has_key(value: Any, keys: frozenset[str]) -> bool:
    if type(value) is dict:
        return any(k in keys for k in value) or any(_has_key(v, keys) for v in value.values())
    if type(value) in (list, tuple):
        return any(_has_key(v, keys) for v in value)
    return False


@settings(max_examples=300, deadline=None)
@given(VALUES.filter(lambda v: type(v) in (dict, list, tuple)), st.sets(KEYS, max_size=3))
def test_size_probe_answers_both_questions_of_one_walk(value: Any, keys: set[str]) -> None:
    # the key search is the caller's (the request check's image search); the float answer is
    # the one js_stringify_size takes: measuring with it must give the length of the whole text
    has_key, odd_float = size_probe(value, frozenset(keys))
    assert has_key == _has_key(value, frozenset(keys))
    assert odd_float == size_probe(value, frozenset())[1]
    whole = len((js_stringify(value) or "").encode("utf-8", "surrogatepass"))
    assert js_stringify_size(value, 0, exact=lambda member: size_probe(member, frozenset())[1]) == whole
    assert js_stringify_size(value, 0, exact=lambda member: odd_float) == whole


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_jsonable_keeps_what_json_stringify_keeps(value: Any) -> None:
    assert exact_bytes(jsonable(value)) == js_bytes(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "1": 2, "0": 3, "01": 4}, b'{"0":3,"1":2,"b":1,"01":4}'),
        (
            [100.0, -0.0, 1e16, 1e20, 1e21, 3e-6, 7.5e-6, 1e-7],
            b"[100,0,10000000000000000,100000000000000000000,1e+21,0.000003,0.0000075,1e-7]",
        ),
        ([2**53 + 1, 2**64], b"[9007199254740992,18446744073709552000]"),
        ({"a": UNDEFINED, "b": [UNDEFINED, 1], "c": {"d": UNDEFINED}}, b'{"b":[null,1],"c":{}}'),
        ({"x": UNDEFINED, "y": 1}, b'{"y":1}'),
        # an undefined member whose key holds `,"` / `{"` as text (found by hypothesis)
        ({",": UNDEFINED}, b"{}"),
        ({"a": 1, ',"': UNDEFINED, "{": UNDEFINED, "b\\": UNDEFINED, "c": 2}, b'{"a":1,"c":2}'),
        (UNDEFINED, b"null"),
        ("a\ud800b", b'"a\\ud800b"'),
        (["\ud83d\ude00"], '["😀"]'.encode()),
        ({"s": "version 1.0, ok"}, b'{"s":"version 1.0, ok"}'),
        ({"n": [math.nan, math.inf]}, b'{"n":[null,null]}'),
    ],
)
def test_javascript_forms(value: Any, expected: bytes) -> None:
    assert to_json_bytes(value) == expected


def test_indent_json_is_json_stringify_with_indent_2() -> None:
    value = {"b": [1, {}, [], {"s": 'x,:{}[]"\\y', "n": [None, True]}], "10": 7.5e-6, "2": {"z": []}, "é": "ü"}
    expected = (
        '{\n  "2": {\n    "z": []\n  },\n  "10": 0.0000075,\n  "b": [\n    1,\n    {},\n    [],\n    {\n'
        '      "s": "x,:{}[]\\"\\\\y",\n      "n": [\n        null,\n        true\n      ]\n    }\n  ],\n'
        '  "é": "ü"\n}'
    )
    assert indent_json(to_json_bytes(value)).decode() == expected
    assert indent_json(b"[]") == b"[]" and indent_json(b'"a"') == b'"a"'


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_indent_json_only_adds_layout(value: Any) -> None:
    import json

    compact = to_json_bytes(value)
    laid_out = indent_json(compact)
    assert json.loads(laid_out) == json.loads(compact)
    # Where Python lays the same document out the same way (no floats, no index keys), it agrees.
    plain = json.loads(compact)
    if json.dumps(plain, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass") == compact:
        assert laid_out == json.dumps(plain, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")


def test_deeper_than_orjson_goes() -> None:
    value: Any = [1.0]
    for _ in range(400):
        value = {"a": value}
    assert to_json_bytes(value) == js_bytes(value)


def test_serialized_members_beside_a_value_deeper_than_orjson_goes() -> None:
    """Fuzz find (seed 71): a container holding pre-serialized messages and a value nested past
    orjson's limit went to the slow serializer, which met a Serialized and raised
    (``context --format json`` exited 3)."""
    deep: Any = 7
    for _ in range(400):
        deep = {"a": deep}
    msgs = [{"role": "user", "content": "hi", "u": UNDEFINED}, {"role": "assistant", "content": [], "n": 1e21}]
    for doc, plain in (
        ({"messages": serialize_each(msgs), "d": deep}, {"messages": msgs, "d": deep}),
        ({"x": [{"messages": serialize_each(msgs), "d": deep}]}, {"x": [{"messages": msgs, "d": deep}]}),
    ):
        assert to_json_bytes(doc) == js_bytes(plain)


class _WithToJson:
    def to_json(self) -> Any:
        return {"f": 100.0, "1": UNDEFINED, "2": "x"}


def test_objects_with_to_json_are_printed_exactly() -> None:
    assert to_json_bytes({"o": _WithToJson(), "l": [_WithToJson()]}) == (
        b'{"o":{"2":"x","f":100},"l":[{"2":"x","f":100}]}'
    )


def test_serialized_values_are_embedded_and_shared() -> None:
    msgs = [{"role": "user", "content": "hi", "n": 1.5e-6}, {"role": "assistant", "content": []}]
    shared = serialize_each(msgs + msgs[:1], keep_bytes=0)
    assert shared[0] is shared[2]
    doc = {"a": shared[:2], "b": shared, "c": fragment({"1": 1, "z": 0.0})}
    expected = js_bytes({"a": msgs, "b": msgs + msgs[:1], "c": {"1": 1, "z": 0.0}})
    assert to_json_bytes(doc) == expected
    out = io.BytesIO()
    write_json_to(out, doc)
    assert out.getvalue() == expected + b"\n"
    assert shared[0]._raw is None  # over the budget: made again when needed, never kept
    kept = serialize_each(msgs)
    to_json_bytes(kept)
    assert kept[0]._raw == js_bytes(msgs[0])


# -- golden corpus --------------------------------------------------------------------------------

CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))


@pytest.mark.usefixtures("cli_recursion_limit")
@pytest.mark.parametrize("case", CASES)
def test_golden_values_and_outputs(case: str) -> None:
    from pitools.core.compaction.plan import plan_compaction
    from pitools.core.compaction.prepare import CompactionSettings
    from pitools.core.context.build import replay_context
    from pitools.core.session.load import load
    from pitools.core.session.tree import SessionIndex
    from pitools.errors import PitoolsError
    from tests.oracles.context_document import context_json

    try:
        session = load(GOLDEN / case / "session.jsonl", strict=False).session
    except PitoolsError:
        return
    values = [session.header, *session.entries] if session.header is not None else []
    for value in values:
        assert to_json_bytes(value) == js_bytes(value)
    if not session.entries:
        return
    index = SessionIndex.build(session.entries)
    from pitools.core.session.load import LoadedSession

    loaded = LoadedSession(session, index)
    for leaf in [*index.leaves()[:5], UNDEFINED]:
        try:
            data = context_json(replay_context(index, leaf))
        except PitoolsError:
            continue
        assert to_json_bytes(data) == js_bytes(data)
        try:
            plan = plan_compaction(loaded, leaf, CompactionSettings(keep_recent_tokens=300), context_window=200000)
            plan_data = plan.to_json(fragments=True)
        except PitoolsError:
            continue
        assert to_json_bytes(plan_data) == js_bytes(plan_data)
