"""The slim plan: only content no leaf's context holds is replaced, and the placeholders say what it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pitools.core.repair.slim import (
    SlimOptions,
    compacted_away,
    compare_fingerprints,
    placeholder,
    plan_slim,
    slim_fingerprints,
)
from pitools.core.session.load import parse_json_line, read_session_bytes
from pitools.core.session.loaded import session_from_raw
from pitools.core.session.tree import SessionIndex

GOLDEN = Path(__file__).resolve().parents[3] / "golden"


def _load(data: bytes) -> tuple[object, SessionIndex]:
    session = session_from_raw(read_session_bytes(data))
    return session, SessionIndex.build(session.entries)


def test_placeholder_names_size_and_sha256() -> None:
    data = b"abc"
    assert placeholder("thinking", data) == (
        f"[pitools slim: thinking removed, 3 bytes, sha256 {hashlib.sha256(data).hexdigest()}]"
    )


def test_only_compacted_away_entries_change() -> None:
    data = (GOLDEN / "slim-images" / "original.jsonl").read_bytes()
    session, index = _load(data)
    away, leaves = compacted_away(index)
    assert leaves >= 1 and away
    plan = plan_slim(session.entries, index, SlimOptions(images=True, thinking=True, tool_output=100))  # type: ignore[attr-defined]
    assert plan.replacements
    for pos in plan.replacements:
        assert id(session.entries[pos]) in away  # type: ignore[attr-defined]
    totals = plan.totals
    assert totals["images"].count > 0 and totals["images"].kept_in_context > 0


def test_fingerprints_catch_a_changed_context() -> None:
    data = (GOLDEN / "slim-images" / "original.jsonl").read_bytes()
    session, index = _load(data)
    before = slim_fingerprints(session, index)
    # Change the last entry (always in the default leaf's context).
    entries = session.entries  # type: ignore[attr-defined]
    last = json.loads(json.dumps(entries[-1]))
    last["message"]["timestamp"] = 1
    entries[-1] = parse_json_line(json.dumps(last).encode())[0]
    after = slim_fingerprints(session, SessionIndex.build(entries))
    assert compare_fingerprints(before, after)
    assert not compare_fingerprints(before, slim_fingerprints(*_load(data)))


def test_nothing_selected_plans_nothing() -> None:
    session, index = _load((GOLDEN / "slim-images" / "original.jsonl").read_bytes())
    plan = plan_slim(session.entries, index, SlimOptions())  # type: ignore[attr-defined]
    assert not plan.replacements and not plan.totals
