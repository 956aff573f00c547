"""pitools.core.js.value against Node 20's own answers.

Expected values come only from ``tests/unit/fixtures/jsvalue/cases.json``, recorded by
``TZ=UTC node scripts/record_jsvalue_fixtures.mjs``; node is not needed at test time.  Set
``PITOOLS_JSVALUE_FIXTURE`` to check another recording (e.g. a large one-off fuzz run).
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import json
import math
import os
import pickle
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.js import date as jsdate
from pitools.core.js.date import js_date_ms
from pitools.core.js.json.encode import js_stringify, js_stringify_len, to_json_bytes, utf8_as_utf16_len
from pitools.core.js.json.exact import exact_bytes
from pitools.core.js.value import (
    UNDEFINED,
    JSTypeError,
    is_undefined,
    js_keys,
    js_number_to_string,
    js_to_string,
    js_truthy,
    slice_head_utf16,
    slice_tail_utf16,
    utf16_len,
)

FIXTURE = Path(__file__).parent / "fixtures" / "jsvalue" / "cases.json"
UNDEF_MARKER = "@@undefined@@"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON constant {name}")


def parse(text: str) -> Any:
    """Parse JSON text the way pitools does: orjson, else the stdlib (lone surrogates, 1e400)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text, parse_constant=_reject_constant)


def replace_undefined(v: Any) -> Any:
    if v == UNDEF_MARKER:
        return UNDEFINED
    if isinstance(v, list):
        return [replace_undefined(x) for x in v]
    if isinstance(v, dict):
        return {k: replace_undefined(x) for k, x in v.items()}
    return v


@cache
def load_cases() -> list[dict[str, Any]]:
    path = Path(os.environ.get("PITOOLS_JSVALUE_FIXTURE") or FIXTURE)
    # The stdlib, not orjson: recorded strings may hold lone surrogates (as \\udxxx escapes).
    data = json.loads(path.read_text(encoding="utf-8"))
    cases: list[dict[str, Any]] = data["cases"]
    return cases


def u16(s: str) -> bytes:
    """A string as JS sees it (UTF-16 code units); Python may hold a surrogate pair as 1 or 2 code points."""
    return s.encode("utf-16-le", "surrogatepass")


def _case_id(i: int) -> str:
    c = load_cases()[i]
    return f"{i}-{c['kind']}"


CASE_INDICES = list(range(len(load_cases())))


# ---------------------------------------------------------------------------------------------------------
# Node's recorded answers


def test_fixture_meta() -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert data["meta"]["tz"] == "UTC"
    assert data["meta"]["node"].startswith("v20.")
    assert data["meta"]["count"] == len(data["cases"]) > 1000


@pytest.mark.parametrize("index", CASE_INDICES, ids=_case_id)
def test_matches_node(index: int) -> None:
    case = load_cases()[index]
    text = case["text"]
    value = parse(text)
    if case.get("undef"):
        value = replace_undefined(value)

    assert js_stringify(value) == case["stringify"], text
    assert exact_bytes(value) == (b"null" if case["stringify"] is None else case["stringify"].encode()), text
    if case["length"] is not None:
        assert js_stringify_len(value) == case["length"], text
        assert utf16_len(case["stringify"]) == case["length"], text
    else:
        assert js_stringify_len(value) == 0
    if case["keys"] is not None:
        assert isinstance(value, dict)
        assert js_keys(value) == case["keys"], text
    assert js_truthy(value) is case["truthy"], text

    if case.get("string_throws"):
        with pytest.raises(JSTypeError):
            js_to_string(value)
    else:
        assert u16(js_to_string(value)) == u16(case["string"]), text
        if isinstance(value, int | float) and not isinstance(value, bool):
            assert js_number_to_string(value) == case["string"], text

    if case.get("date_throws"):
        with pytest.raises(JSTypeError):
            js_date_ms(value)
    else:
        got = js_date_ms(value)
        if case["date"] is None:
            assert isinstance(got, float) and math.isnan(got), (text, got)
        else:
            assert type(got) is int and got == case["date"], (text, got)

    if "strlen" in case:
        assert isinstance(value, str)
        assert utf16_len(value) == case["strlen"], text
        for n, head, tail in case["slices"]:
            assert u16(slice_head_utf16(value, n)) == u16(head), (text, n)
            assert u16(slice_tail_utf16(value, n)) == u16(tail), (text, n)


def test_fixture_covers_the_interesting_ground() -> None:
    cases = load_cases()
    kinds = {c["kind"] for c in cases}
    assert kinds == {"json", "date", "number"}
    dates = [c for c in cases if c["kind"] == "date"]
    assert sum(c["date"] is None for c in dates) > 100
    assert sum(c["date"] is not None for c in dates) > 300
    assert any("\\ud8" in c["text"] for c in cases)  # lone surrogate escapes
    assert any(c.get("undef") for c in cases)
    assert any(c.get("string_throws") for c in cases)


# ---------------------------------------------------------------------------------------------------------
# undefined


def test_undefined_sentinel() -> None:
    assert not UNDEFINED
    assert repr(UNDEFINED) == "undefined"
    assert is_undefined(UNDEFINED)
    assert not is_undefined(None)
    assert type(UNDEFINED)() is UNDEFINED
    assert copy.copy(UNDEFINED) is UNDEFINED
    assert copy.deepcopy({"a": UNDEFINED})["a"] is UNDEFINED
    assert pickle.loads(pickle.dumps(UNDEFINED)) is UNDEFINED
    assert js_stringify(UNDEFINED) is None
    assert js_stringify({"a": UNDEFINED}) == "{}"
    assert js_stringify([UNDEFINED]) == "[null]"
    assert js_to_string(UNDEFINED) == "undefined"
    assert js_to_string([UNDEFINED, None, 1]) == ",,1"


def test_new_date_undefined_is_nan() -> None:
    # new Date(undefined) -> ToNumber(undefined) -> NaN (checked with node: it prints NaN)
    assert math.isnan(js_date_ms(UNDEFINED))


# ---------------------------------------------------------------------------------------------------------
# properties

json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
)
json_keys = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())) | (
    st.integers(min_value=0, max_value=2**33).map(str)
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(json_keys, children, max_size=5),
    max_leaves=30,
)


def _plain(v: Any) -> bool:
    """No floats, no digit-initial keys, no surrogates: json.dumps then prints exactly like JS."""
    if isinstance(v, float):
        return False
    if isinstance(v, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in v)
    if isinstance(v, list):
        return all(_plain(x) for x in v)
    if isinstance(v, dict):
        return all(_plain(k) and not k[:1].isdigit() and _plain(x) for k, x in v.items())
    return True


def _as_doubles(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, list):
        return [_as_doubles(x) for x in v]
    return {k: _as_doubles(x) for k, x in v.items()}


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values)
def test_stringify_round_trips(value: Any) -> None:
    out = js_stringify(value)
    assert out is not None
    # Every JSON number is a double in JS: compare numbers as floats.
    assert json.loads(out, parse_int=float) == _as_doubles(value)
    assert js_stringify_len(value) == len(u16(out)) // 2
    if _plain(value):
        assert out == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


tricky_text = st.lists(
    st.sampled_from(['"', "\\", "1.0", ".0,", "e+16", "e-6}", '"1":', ":", ",", "{", "]", "é", "😀", "\n", "\x00"]),
    max_size=6,
).map("".join)
tricky_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats()
    | st.sampled_from([100.0, -0.0, 1e16, 1.5e17, 1e20, 1e21, 1e-6, 4.5e-6, 1e-7, 0.5])
    | tricky_text,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(tricky_text | st.sampled_from(["0", "1", "10", "01", "4294967295"]), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(tricky_values)
def test_orjson_fast_path_agrees_with_the_slow_path(value: Any) -> None:
    slow = exact_bytes(value).decode()
    assert js_stringify(value) == slow
    assert js_stringify_len(value) == utf16_len(slow)
    assert utf8_as_utf16_len(to_json_bytes(value)) == utf16_len(slow)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())))
def test_utf16_len(s: str) -> None:
    assert utf16_len(s) == len(s.encode("utf-16-le", "surrogatepass")) // 2


@pytest.mark.parametrize("width", ["\u00e9", "\u0100", "\U0001f600"])
@pytest.mark.parametrize("n", [1, 2, 5, 300, 5000])
def test_utf16_len_by_size_with_and_without_a_utf8_copy(width: str, n: int) -> None:
    """utf16_len reads the string's storage width from its size; a cached UTF-8 copy (orjson
    makes one) must never make a string with emoji look narrow."""
    import orjson

    for text in (width * n, "a" * n + width, width + "\u00e9" * n, "\u00e9" * n + "\ud83d\ude00"):
        expected = len(text.encode("utf-16-le", "surrogatepass")) // 2
        assert utf16_len(text) == expected
        with contextlib.suppress(TypeError):
            orjson.dumps(text)  # caches the UTF-8 form inside the string
        assert utf16_len(text) == expected
        assert _units(slice_head_utf16(text, n)) == _units(text)[: n - 1 if _cuts_pair(text, n) else n]


def _cuts_pair(text: str, n: int) -> bool:
    units = _units(text)
    return 0 < n < len(units) and 0xD800 <= units[n - 1] <= 0xDBFF and 0xDC00 <= units[n] <= 0xDFFF


def _units(s: str) -> list[int]:
    b = u16(s)
    return [b[i] | b[i + 1] << 8 for i in range(0, len(b), 2)]


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(["a", "é", "😀", "\ud83d", "\ude00", "\ud800", "日", "\x00"]), max_size=12),
    st.integers(min_value=-2, max_value=30),
)
def test_slices_against_a_unit_level_model(text: str, n: int) -> None:
    units = _units(text)

    def hi(i: int) -> bool:
        return 0 <= i < len(units) and 0xD800 <= units[i] <= 0xDBFF

    def lo(i: int) -> bool:
        return 0 <= i < len(units) and 0xDC00 <= units[i] <= 0xDFFF

    end = max(0, n)
    head = units[: end - 1] if hi(end - 1) and lo(end) else units[:end]
    assert _units(slice_head_utf16(text, n)) == head
    if n <= 0:
        tail: list[int] = []
    else:
        start = max(0, len(units) - n)
        tail = units[start + 1 :] if lo(start) and hi(start - 1) else units[start:]
    assert _units(slice_tail_utf16(text, n)) == tail


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_to_string_round_trips(x: float) -> None:
    s = js_number_to_string(x)
    assert float(s) == x
    if x.is_integer() and abs(x) < 1e21:
        assert "e" not in s and "." not in s
    exp = int(f"{abs(x):e}".split("e")[1]) if x else 0
    assert ("e" in s) == (exp >= 21 or exp <= -7)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(json_keys, st.none(), max_size=8))
def test_keys_are_a_permutation_with_indices_first(d: dict[str, None]) -> None:
    keys = js_keys(d)
    assert sorted(keys) == sorted(d)
    n_idx = sum(1 for k in d if k.isascii() and k.isdigit() and str(int(k)) == k and int(k) < 2**32 - 1)
    assert [int(k) for k in keys[:n_idx]] == sorted(int(k) for k in keys[:n_idx])
    assert keys[n_idx:] == [k for k in d if k not in keys[:n_idx]]


@settings(max_examples=500, deadline=None)
@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)))
def test_iso_dates_against_datetime(when: dt.datetime) -> None:
    when = when.replace(microsecond=when.microsecond // 1000 * 1000)
    epoch = dt.datetime(1970, 1, 1)
    expected = (when - epoch) // dt.timedelta(milliseconds=1)
    iso = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    iso = f"{when.year:04d}" + iso[iso.index("-") :]
    assert js_date_ms(iso) == expected
    # The general V8 parser port agrees with the fast path.
    assert jsdate._DateParser(iso).parse() == (
        when.year,
        when.month - 1,
        when.day,
        when.hour,
        when.minute,
        when.second,
        when.microsecond // 1000,
        0,
    )
    assert js_date_ms(iso[:-1]) == expected  # no offset: local time, which is UTC
    assert js_date_ms(iso[:10]) == expected - expected % 86_400_000


def test_truthiness_basics() -> None:
    for falsy in (None, UNDEFINED, False, 0, 0.0, -0.0, math.nan, ""):
        assert js_truthy(falsy) is False
    for truthy in ({}, [], "0", " ", "false", 1, -1, 0.5, math.inf, True, [0], {"a": None}):
        assert js_truthy(truthy) is True


def test_big_ints_and_nonfinite() -> None:
    assert js_number_to_string(2**53 + 1) == "9007199254740992"
    assert js_number_to_string(10**21) == "1e+21"
    assert js_number_to_string(10**400) == "Infinity"
    assert js_number_to_string(-(10**400)) == "-Infinity"
    assert js_number_to_string(math.nan) == "NaN"
    assert js_stringify([math.nan, math.inf, -math.inf, 10**400]) == "[null,null,null,null]"
    with pytest.raises(TypeError):
        js_number_to_string(True)


def test_unsupported_types_raise() -> None:
    with pytest.raises(TypeError):
        js_stringify({"a": object()})
    with pytest.raises(TypeError):
        js_date_ms(object())


def test_surrogates_held_as_two_code_points() -> None:
    # A pair held as two code points is one valid character to JS: printed raw, and valid Unicode here.
    assert js_stringify("\ud83d\ude00") == '"😀"'
    assert js_stringify(["a\ud83d\ude00\ud800"]) == '["a😀\\ud800"]'
    assert js_stringify_len("\ud83d\ude00") == 4
    assert slice_head_utf16("\ud83d\ude00x", 1) == ""
    assert slice_tail_utf16("x\ud83d\ude00", 1) == ""
    assert u16(slice_head_utf16("\ud83d\ude00x", 2)) == u16("😀")
