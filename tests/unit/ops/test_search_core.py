"""The warm search's shortcuts (pitools.ops.search_core) equal the general code they stand for."""

from __future__ import annotations

import json
import random
import re
import shlex
import sys
from pathlib import Path

import orjson
import pytest

from pitools.core.js.json.encode import to_json_bytes
from pitools.core.views.isotime import iso_utc as general_iso
from pitools.ops import search_core
from pitools.ops.search_core import NotPlain, Term, dumps, find, iso_utc, loads, shell_quote, split_terms, tokens

# Characters that stress each rule: case pairs outside ASCII, the letters re folds onto ASCII,
# whitespace of every kind, word joiners, surrogates' neighbours, non-BMP letters and digits.
HOSTILE = (
    "aAbBiIkKsSzZ09_-'\" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u3000"
    "İıſKÅµßẞǅΣσςﬀﬁ\u0345\u0307ΐ\u1e9e\U0001d400\U0001d7ce\u00b2\u0660٣\u2460Ⅻ"
    "é\u0301日本語😀\x00\x7f\ufeff\ufffd"
)


def _random_text(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))


def test_split_terms_equals_the_regular_expression() -> None:
    rng = random.Random(1)
    pattern = re.compile(r'"([^"]*)"|(\S+)')
    for _ in range(20000):
        text = _random_text(rng, 'ab "  \t\n\u3000\x1c"x', 14)
        want = []
        for m in pattern.finditer(text):
            term = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
            if term:
                want.append(term)
        assert split_terms(text) == want, repr(text)


def test_tokens_equal_the_regular_expression() -> None:
    rng = random.Random(2)
    token = re.compile(r"[^\W_]+", re.UNICODE)
    for _ in range(20000):
        text = _random_text(rng, HOSTILE, 12)
        assert tokens(text) == [t.lower() for t in token.findall(text)], repr(text)


def _pattern(term: str) -> re.Pattern[str]:
    """The general path's pattern for a term (pitools.ops.search before the lean path)."""
    words = term.split()
    body = r"\s+".join(re.escape(w) for w in words)
    lead = r"(?<![^\W_])" if re.match(r"[^\W_]+", words[0]) else ""
    return re.compile(lead + body, re.IGNORECASE)


def _span(term: Term, body: str) -> tuple[int, int] | None:
    return term.search(body, [None])


@pytest.mark.slow
def test_every_character_follows_re_rules_the_ascii_matcher_relies_on() -> None:
    """Over every code point, the three rules the ASCII matcher implements, each read from
    ``re`` itself: which characters match an ASCII letter case-insensitively (_FOLD), which count
    as a letter or digit before a term (the lookbehind) and which as whitespace between words."""
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    everything = "".join(chars)
    folded = everything.translate(search_core._FOLD)
    for p in map(chr, range(0x20, 0x7F)):
        by_re = {m.start() for m in re.finditer(re.escape(p), everything, re.IGNORECASE)}
        ours = {i for i, c in enumerate(folded) if c == p.lower()}
        assert by_re == ours, p
    pairs = "".join(c + "x" for c in chars)
    after_word = {m.start() // 2 for m in re.finditer(r"(?<![^\W_])x", pairs, re.IGNORECASE)}
    assert after_word == {i for i, c in enumerate(chars) if not search_core._word_char(c)}
    triples = "".join("a" + c + "b" for c in chars)
    spaced = {m.start() // 3 for m in re.finditer(r"a\s+b", triples, re.IGNORECASE)}
    assert spaced == {i for i, c in enumerate(chars) if c.isspace()}


@pytest.mark.slow
def test_terms_match_as_the_regular_expressions_on_random_text() -> None:
    rng = random.Random(3)
    for _ in range(30000):
        words = [_random_text(rng, "aIsK1-_.", 3) or "a" for _ in range(rng.randint(1, 3))]
        term_text = " ".join(words)
        body = _random_text(rng, "aAiIsSkK1-_. \t\n" + "İıſKé日\u3000", 30)
        m = _pattern(term_text).search(body)
        assert _span(Term(term_text), body) == (None if m is None else (m.start(), m.end())), (term_text, body)
    for _ in range(3000):  # non-ASCII terms take the regular expression itself
        term_text = _random_text(rng, HOSTILE.replace(" ", "").replace('"', ""), 3).strip() or "é"
        if not term_text.split():
            continue
        body = _random_text(rng, HOSTILE, 30)
        m = _pattern(term_text).search(body)
        assert _span(Term(term_text), body) == (None if m is None else (m.start(), m.end()))


def test_find_needs_every_term() -> None:
    terms = [Term("narwhal"), Term("tea pot")]
    assert find(terms, "the narwhal drinks from the TEA \n POT") == [(4, 11), (28, 37)]
    assert find(terms, "the narwhal alone") is None
    assert find(terms, "") is None


HOSTILE_LINES = [
    b'{"a":1}',
    b'  {"a": [1, 2.5, -0, -0.0, 1e-400, 1E2, true, false, null, "x"]}  \r\n',
    b'{"big": 18446744073709551615, "neg": -9223372036854775808}',
    b'{"bigger": 18446744073709551616}',
    b'{"smaller": -9223372036854775809}',
    b'{"inf": 1e400}',
    b'{"nan": NaN}',
    b'{"inf": -Infinity}',
    b'{"s": "\\ud800"}',
    b'{"s": "\\ud83d\\ude00 \\u00e9 \\u2028 \\/ \\" \\\\ \\n"}',
    b'{"s": "\xed\xa0\x80"}',  # an encoded surrogate: invalid UTF-8
    b'{"s": "\xff"}',
    b'\xef\xbb\xbf{"bom": 1}',
    b'{"a": 1} x',
    b'{"a": 1,}',
    b'{"dup": 1, "dup": 2, "b": 3}',
    b'{"ctl": "a\tb"}',
    b"",
    b"[" * 1100 + b"]" * 1100,
    b'"just a string"',
    b"123",
    b'{"a": 1}\x00',
    b'{"k\\u0000": "\\u001f"}',
]


@pytest.mark.parametrize("line", HOSTILE_LINES)
def test_loads_equals_orjson_then_the_loader(line: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitools.cli import RECURSION_LIMIT
    from pitools.core.js.json.parse import parse_json_line

    monkeypatch.setattr(sys, "getrecursionlimit", sys.getrecursionlimit)  # restored after the test
    sys.setrecursionlimit(RECURSION_LIMIT)  # as the CLI runs (the deep case's repr needs it)

    try:
        want: object = ("value", orjson.loads(line))
    except orjson.JSONDecodeError:
        try:
            want = ("value", parse_json_line(line)[0])
        except ValueError:
            want = ("error",)
    try:
        got: object = ("value", loads(line))
    except ValueError:
        got = ("error",)
    assert repr(got) == repr(want)


def test_loads_equals_orjson_on_random_documents() -> None:
    rng = random.Random(4)

    def value(depth: int) -> object:
        kind = rng.randint(0, 7 if depth < 4 else 4)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.randint(-(1 << 70), 1 << 70) if rng.random() < 0.2 else rng.randint(-1000, 1000)
        if kind == 2:
            return rng.uniform(-1e300, 1e300) if rng.random() < 0.5 else rng.random()
        if kind in (3, 4):
            return _random_text(rng, HOSTILE, 8)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {_random_text(rng, HOSTILE, 4): value(depth + 1) for _ in range(rng.randint(0, 4))}

    for _ in range(3000):
        v = value(0)
        try:
            raw = orjson.dumps(v)
        except TypeError:
            continue  # a lone surrogate or a huge int: not something a session line holds
        assert repr(loads(raw)) == repr(orjson.loads(raw))


def test_dumps_equals_to_json_bytes_on_hostile_strings() -> None:
    rng = random.Random(5)
    every_small = "".join(chr(c) for c in range(0x100))
    assert dumps({every_small: [every_small]}) == to_json_bytes({every_small: [every_small]})
    for _ in range(5000):
        s = _random_text(rng, HOSTILE, 20)
        doc = {"s": s, s: [1, -(1 << 53), 1 << 53, True, False, None, [], {}, [s]]}
        if s[:1] in "0123456789" and s:
            with pytest.raises(NotPlain):  # the caller writes these with to_json_bytes
                dumps(doc)
            continue
        assert dumps(doc) == to_json_bytes(doc), repr(s)
    for odd in ({"x": 1.5}, {"x": 1 << 60}, {"x": "\ud800"}, {"x": {1: 2}}, {"7": 1}):
        with pytest.raises(NotPlain):
            dumps(odd)


def test_iso_utc_is_javascripts_to_iso_string() -> None:
    # node's own answers (tests/unit/js/fixtures/js_ops.json): years below 1000 keep four digits,
    # years past 9999 and before 0 take a sign and six, fractions truncate toward zero; the
    # search hits and the usage view (general_iso) print the same.
    fixture = json.loads((Path(__file__).resolve().parents[1] / "js" / "fixtures" / "js_ops.json").read_text("utf-8"))
    assert any(rec["iso"] and rec["iso"][0] in "+-" for rec in fixture["dates"])
    for rec in fixture["dates"]:
        assert iso_utc(rec["ms"]) == rec["iso"], rec
        assert general_iso(rec["ms"]) == rec["iso"], rec
    assert any(rec["iso"] and rec["iso"][:2] == "09" for rec in fixture["dates"])  # year 999
    for odd in (float("nan"), None, "x", True):
        assert iso_utc(odd) is None


def test_shell_quote_equals_shlex() -> None:
    rng = random.Random(7)
    for _ in range(20000):
        s = _random_text(rng, "aZ09_@%+=:,./-' \"$`\\\n!*é", 10)
        assert shell_quote(s) == shlex.quote(s), repr(s)


def test_constants_agree_with_their_owners() -> None:
    from pitools.cli.commands.search import command
    from pitools.ops import index_limits

    assert search_core.ROWID_SHIFT == index_limits.ROWID_SHIFT
    role = next(p for p in command.params if p.name == "roles")
    assert tuple(role.type.choices) == search_core.ROLE_CHOICES  # type: ignore[attr-defined]


def test_tool_arguments_are_written_as_orjson_writes_them() -> None:
    """Without orjson loaded, search_text writes plain tool-call arguments itself: the same text."""
    from pitools.core.views.search_text import _plain_json

    rng = random.Random(8)

    def value(depth: int) -> object:
        kind = rng.randint(0, 6 if depth < 5 else 3)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.choice([rng.randint(-1000, 1000), -(1 << 63), (1 << 64) - 1, 1 << 64, -(1 << 63) - 1])
        if kind == 2:
            return _random_text(rng, HOSTILE, 8)
        if kind == 3:
            return rng.choice([1.5, 1e16, 1e-7, -0.0, 0.1])
        if kind == 4:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {_random_text(rng, HOSTILE, 4): value(depth + 1) for _ in range(rng.randint(0, 4))}

    written = 0
    for _ in range(5000):
        v = value(0)
        try:
            want: str | None = orjson.dumps(v).decode()
        except TypeError:
            want = None
        got = _plain_json(v)
        if got is not None:  # None: left to orjson itself
            assert got == want, repr(v)
            written += 1
    assert written > 1000
    deep: object = "x"
    for _ in range(201):
        deep = [deep]
    assert _plain_json(deep) is None and _plain_json({"\ud800": 1}) is None and _plain_json({1: 2}) is None
