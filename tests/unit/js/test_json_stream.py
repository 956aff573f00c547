"""``compact --dry-run --format json`` written in pieces: the same bytes as the whole document.

The reference is ``to_json_bytes(plan.to_json())`` (itself checked against ``JSON.stringify`` in
tests/unit/js/test_json_encode.py) on every golden session, several leaves and cut settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pitools.core.compaction.plan import plan_compaction
from pitools.core.compaction.prepare import CompactionSettings
from pitools.core.js.json import stream as jsonstream
from pitools.core.js.json.encode import js_stringify, to_json_bytes
from pitools.core.js.json.stream import json_chunks, stream_array, stream_text
from pitools.core.js.value import UNDEFINED
from pitools.errors import PiCrashError, PitoolsError

GOLDEN = Path(__file__).resolve().parents[3] / "golden"
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Transcripts and arrays cut into many pieces, so the joins are exercised on small sessions."""
    monkeypatch.setattr(jsonstream, "TEXT_PIECE_BYTES", 7)
    monkeypatch.setattr(jsonstream, "ARRAY_BATCH", 2)


@pytest.mark.usefixtures("cli_recursion_limit", "small_pieces")
@pytest.mark.parametrize("case", CASES)
def test_streamed_plan_is_the_whole_document(case: str) -> None:
    from pitools.core.session.load import load

    try:
        loaded = load(GOLDEN / case / "session.jsonl")
    except PitoolsError:
        return
    index = loaded.index
    checked = 0
    for leaf in [*index.leaves()[:4], index.leaf_id]:
        for keep in (300, 2000, 20000):
            try:
                plan = plan_compaction(loaded, leaf, CompactionSettings(keep_recent_tokens=keep), context_window=200000)
            except PitoolsError:
                continue
            try:
                whole = to_json_bytes(plan.to_json())
            except PiCrashError:
                # Pi throws serializing this transcript: so does the streamed form, before any piece.
                with pytest.raises(PiCrashError):
                    plan.json_chunks()
                continue
            extra = {"summaryRequests": [{"kind": "history", "system": "s", "prompt": "p"}]}
            assert b"".join(plan.json_chunks()) == whole
            assert b"".join(plan.json_chunks(extra)) == to_json_bytes(plan.to_json() | extra)
            checked += 1
    if not checked:
        pytest.skip("no leaf of this session has a plan to write")


JSONISH = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**60), max_value=2**60),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(alphabet=st.characters(), max_size=12),
        st.just(UNDEFINED),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "0", "7", "role", "x y", "\ud800"]), inner, max_size=4),
    ),
    max_leaves=12,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(values=st.lists(JSONISH, max_size=6), parts=st.lists(st.text(max_size=9), max_size=8), piece=st.integers(1, 20))
def test_streams_match_json_stringify(values: list[Any], parts: list[str], piece: int) -> None:
    before = jsonstream.TEXT_PIECE_BYTES, jsonstream.ARRAY_BATCH
    jsonstream.TEXT_PIECE_BYTES = piece
    jsonstream.ARRAY_BATCH = 1 + piece % 4
    try:
        doc = {"a": stream_array(values), "b": {"t": stream_text(lambda: iter(parts)), "u": UNDEFINED}, "c": 1.5e-6}
        plain = {"a": values, "b": {"t": "\n\n".join(parts)}, "c": 1.5e-6}
        assert b"".join(json_chunks(doc)) == (js_stringify(plain) or "").encode("utf-8")
    finally:
        jsonstream.TEXT_PIECE_BYTES, jsonstream.ARRAY_BATCH = before


def test_text_with_lone_surrogates_and_pairs() -> None:
    parts = ["a\ud800", "\udc00b", "\U0001f600", 'é\x1f"\\']
    assert b"".join(stream_text(lambda: parts).chunks()) == (js_stringify("\n\n".join(parts)) or "").encode("utf-8")


MESSAGE_VALUES = st.one_of(
    st.none(), st.integers(-3, 3), st.text(max_size=5), st.just(UNDEFINED), st.lists(st.integers(), max_size=2)
)
BLOCKS = st.one_of(
    MESSAGE_VALUES,
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "toolCall", "thinking", "image", 7])},
        optional={
            "text": MESSAGE_VALUES,
            "name": MESSAGE_VALUES,
            "arguments": st.one_of(
                MESSAGE_VALUES, st.dictionaries(st.sampled_from(["path", "0", "n"]), MESSAGE_VALUES)
            ),
        },
    ),
)
MESSAGES = st.one_of(
    MESSAGE_VALUES,
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "toolResult", "system", "custom", None])},
        optional={"content": st.one_of(MESSAGE_VALUES, st.lists(BLOCKS, max_size=4))},
    ),
)


def _outcome(fn: Any) -> Any:
    try:
        return list(fn())
    except PiCrashError as exc:
        return ("throws", exc.message)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.lists(MESSAGES, max_size=5))
def test_checked_conversation_is_conversation_parts(messages: list[Any]) -> None:
    """Same parts; and where the serialization throws, it throws in the checking step."""
    from pitools.core.compaction import prepare

    expected = _outcome(lambda: prepare.conversation_parts(messages))
    try:
        later = prepare.checked_conversation(messages)
    except PiCrashError as exc:
        assert expected == ("throws", exc.message)
        return
    assert expected == list(later()) == list(later())
    for msg in messages:
        if type(msg) is dict and prepare._plain_message(msg):
            assert prepare._fast_part(msg) is not prepare._SLOW


def test_text_is_made_when_written() -> None:
    made: list[str] = []

    def parts() -> Iterator[str]:
        made.append("x")
        yield "é"

    stream = stream_text(parts)
    assert made == []
    assert b"".join(stream.chunks()) == '"é"'.encode()


@pytest.mark.slow
@settings(max_examples=800, deadline=None)
@given(MESSAGES)
def test_fast_parts_follow_the_general_rules(message: Any) -> None:
    """The direct reading of usual messages gives what the general (JavaScript-faithful) rules
    give, which the golden sessions pin to Pi's serializeConversation."""
    from pitools.core.compaction import prepare

    if type(message) is not dict:
        return
    fast = prepare._fast_part(message)
    if fast is prepare._SLOW:
        return
    assert list(fast or ()) == _outcome(lambda: prepare._general_parts(message))
