"""Lines nested deeper than orjson and ``json`` allow: Node's ``JSON.parse`` has no depth limit.

Measured on Node 20 with the reference: ``JSON.parse`` accepts 5,000,000 levels of ``[`` or
``{"a":``, so Pi reads such a line and sends its message to the model. pitools must read it too
(golden/hostile-deep-nesting records Pi's context for a 1,500-deep line through the oracle).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.js.json import parse as jsonparse
from pitools.core.js.json.parse import DeepJSONError, parse_deep
from pitools.core.session import lines
from pitools.core.session.load import load

HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
DEPTH = 100_000  # far beyond orjson (1,024) and the CLI's recursion limit (20,000)


def hidden_message(depth: int) -> str:
    deep = '{"a":[' * (depth // 2) + "1" + "]}" * (depth // 2)
    return (
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","x":'
        + deep
        + ',"message":{"role":"user","content":"hidden from pitools?","timestamp":1}}'
    )


def test_a_line_deeper_than_any_recursion_limit_is_read(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + hidden_message(DEPTH) + "\n")
    raw = load(p, strict=False).session.raw
    assert raw.valid
    assert [d.code for d in raw.diagnostics] == []
    assert len(raw.values) == 2
    assert raw.values[1]["message"]["content"] == "hidden from pitools?"
    level, n = raw.values[1]["x"], 0
    while type(level) is dict:
        level, n = level["a"][0], n + 2
    assert (level, n) == (1, DEPTH)


def test_invalid_deep_json_is_still_malformed(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + hidden_message(DEPTH)[:-1] + "\n")
    assert [d.code for d in load(p, strict=False).session.raw.diagnostics] == ["malformed-json"]


def test_what_pitools_cannot_parse_is_reported_not_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_memory(text: str) -> object:
        raise MemoryError

    monkeypatch.setattr(jsonparse, "parse_deep", out_of_memory)
    p = tmp_path / "s.jsonl"
    p.write_text(HEADER + "\n" + hidden_message(DEPTH) + "\n")
    diags = load(p, strict=False).session.raw.diagnostics
    assert [(d.code, d.severity, d.line) for d in diags] == [("unparsed-line", "error", 2)]
    assert "Pi reads this line, pitools could not" in diags[0].message
    assert lines  # parse_json_line looks parse_deep up when it needs it, so the patch above reaches it


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([None, 0, 2]))
def test_parse_deep_agrees_with_json(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert repr(parse_deep(text)) == repr(json.loads(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}":,0123456789.eE+- \tabtrufnl\\', max_size=30))
def test_parse_deep_rejects_what_json_rejects(text: str) -> None:
    try:
        expected = repr(json.loads(text))
    except ValueError:
        with pytest.raises(DeepJSONError):
            parse_deep(text)
    else:
        assert repr(parse_deep(text)) == expected


def test_duplicate_keys_keep_the_first_position_and_the_last_value() -> None:
    assert list(parse_deep('{"a":1,"b":2,"a":3}').items()) == [("a", 3), ("b", 2)]
