"""The lean load (core/session/lean.py): same diagnostics, same context as the full load, and as Pi.

Golden sessions are small, so the lean scan drops nearly every parsed value and the context is
built from entries read back from the file: these tests exercise that path on every case.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from pitools.core.context.build import replay_context
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.json.parse import parse_json_line
from pitools.core.js.value import UNDEFINED
from pitools.core.session import lean as lean_module
from pitools.core.session.lean import LeanIndex, open_lean
from pitools.core.session.lines import read_session
from pitools.core.session.load import LoadedSession, load
from pitools.core.session.loaded import session_from_raw
from pitools.core.session.migrate import effective_version
from pitools.core.session.tree import SessionIndex
from pitools.errors import CycleError, PitoolsError, SessionChangedError
from pitools.render.context import context_json_chunks
from tests import support
from tests.oracles.context_document import context_json

CASES = support.golden_cases()


pytestmark = pytest.mark.usefixtures("cli_recursion_limit")


@pytest.fixture(params=["drop", "keep"])
def keep_after(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both retention modes: drop at once (golden files are small), or keep after one entry."""
    if request.param == "keep":
        monkeypatch.setattr(lean_module, "KEEP_AFTER_BYTES", 0)
    return str(request.param)


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except PitoolsError as exc:
        return type(exc).__name__, str(exc)
    except Exception as exc:  # Pi's own crashes (TypeError-like): the same on both paths
        return type(exc).__name__, str(exc)


def _context_doc(loaded: Any, leaf: Any) -> Any:
    replay = replay_context(loaded.index, leaf)
    # The loader's parser: lone surrogates survive (orjson refuses them).
    return parse_json_line(b"".join(context_json_chunks(replay)))[0], replay


def _targets(loaded: LoadedSession) -> list[Any]:
    leaves: list[Any] = list(loaded.index.leaves())
    ids = [e.get("id") for e in loaded.session.entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    return [None, UNDEFINED, "no-such-entry", *leaves[:8], *ids[:: max(1, len(ids) // 3)]]


@pytest.mark.parametrize("case", CASES)
def test_lean_diagnostics_equal_full(case: str, keep_after: str) -> None:
    path = support.golden_session(case)
    raw = read_session(path)
    lean = open_lean(path)
    if lean is None:  # files Pi migrates take the full path
        assert raw.valid
        assert not effective_version(raw.values[0].get("version")) >= 3
        return
    full = session_from_raw(raw)
    try:
        assert lean.valid == full.valid
        assert lean.diagnostics == full.diagnostics
        assert lean.header == full.header
        if full.valid:
            index = lean.index
            assert len(index) == len(full.entries)
            assert index.lines == full.lines
            assert index.offsets == full.offsets
            want_leaf = SessionIndex.build(full.entries).leaf_id
            assert type(index.leaf_id) is type(want_leaf)
            assert index.leaf_id is want_leaf or index.leaf_id == want_leaf
            # Every entry read back (or kept) is the entry the full load holds.
            assert index.entries_at(range(len(index))) == full.entries  # type: ignore[arg-type]
    finally:
        lean.index.close()


@pytest.mark.parametrize("case", CASES)
def test_lean_context_equals_full(case: str, keep_after: str) -> None:
    path = support.golden_session(case)
    full_outcome = _outcome(lambda: load(path))
    lean_outcome = _outcome(lambda: load(path, keep="context"))
    assert lean_outcome[0] == full_outcome[0]
    if full_outcome[0] != "ok":
        assert lean_outcome == full_outcome
        return
    full: LoadedSession = full_outcome[1]
    lean = lean_outcome[1]
    if full.session.migration.needed:
        assert isinstance(lean, LoadedSession)
        return
    assert lean.kept == "context"
    for leaf in _targets(full):
        want = _outcome(lambda leaf=leaf: _context_doc(full, leaf))
        got = _outcome(lambda leaf=leaf: _context_doc(lean, leaf))
        assert got[0] == want[0], (leaf, got, want)
        if want[0] != "ok":
            assert got == want
            continue
        assert got[1][0] == want[1][0], leaf
        # The lazy path reads back the same entries the full path holds.
        assert list(got[1][1].path) == list(want[1][1].path)
        assert len(got[1][1].path) == len(want[1][1].path)


@pytest.mark.parametrize("case", CASES)
def test_lean_context_matches_pi(case: str) -> None:
    """Against the oracle's recording (Pi's own values), for every leaf it recorded."""
    path = support.golden_session(case)
    recording = support.golden_recording(case)
    if recording.get("invalid") or recording.get("migrated") or "byLeaf" not in recording:
        pytest.skip("Pi rejects or migrates this file (the full path is used)")
    loaded = load(path, keep="context")
    assert loaded.kept == "context"
    checked = 0
    for key, pi in recording["byLeaf"].items():
        if "error" in pi or not isinstance(pi.get("context"), dict) or "messages" not in pi["context"]:
            continue
        if any(isinstance(pi.get(k), dict) and "error" in pi[k] for k in ("tokenEstimates", "estimatedContextTokens")):
            continue  # Pi throws while estimating: both paths throw the same (test_lean_context_equals_full)
        leaf = None if key == "null" else key
        if leaf is not None and not loaded.index.has(leaf):
            continue
        doc, _ = _context_doc(loaded, leaf if leaf is not None else UNDEFINED)
        assert doc["path"] == pi["path"]
        assert doc["contextEntries"] == pi["contextEntries"]
        assert doc["messages"] == pi["context"]["messages"]
        assert doc["thinkingLevel"] == pi["context"]["thinkingLevel"]
        assert doc["model"] == pi["context"]["model"]
        assert doc["estimatedContextTokens"] == pi["estimatedContextTokens"]
        checked += 1
    if not checked:
        pytest.skip("Pi records no context for any leaf of this file (cycles, crashes)")


HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def _msg(i: int, parent: str | None, role: str = "user", text: str = "x") -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": i}
    if role == "assistant":
        message.update(provider="p", model=f"m{i}", usage={"input": 1, "output": 1}, stopReason="stop")
    return {
        "type": "message",
        "id": f"e{i}",
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": message,
    }


def _write(path: Path, values: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in values))
    return path


def _chain(n: int) -> list[Any]:
    out: list[Any] = [HEADER]
    parent = None
    for i in range(n):
        out.append(_msg(i, parent, "assistant" if i % 2 else "user", text=f"t{i}" * 50))
        parent = f"e{i}"
    return out


def test_file_rewritten_in_place_is_noticed(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _chain(6))
    loaded = load(path, keep="context")
    assert loaded.kept == "context"
    # Same inode, other content: an entry read back no longer matches what the scan saw.
    values = _chain(6)
    values[3]["id"] = "zz"
    with open(path, "r+b") as fh:
        fh.write(b"".join(orjson.dumps(v) + b"\n" for v in values))
    with pytest.raises(SessionChangedError, match="changed while it was being read"):
        replay_context(loaded.index, loaded.leaf(None))
    loaded.index.close()


def test_file_replaced_reads_the_loaded_version(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", _chain(6))
    want, _ = _context_doc(load(path), "e5")
    loaded = load(path, keep="context")
    # An atomic replace (a new inode): the open descriptor still reads what was scanned.
    other = _write(tmp_path / "other.jsonl", [HEADER, _msg(0, None, text="other")])
    os.replace(other, path)
    got, _ = _context_doc(loaded, "e5")
    assert got == want


def test_long_stretch_is_kept_and_not_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lean_module, "KEEP_AFTER_BYTES", 1000)
    path = _write(tmp_path / "s.jsonl", _chain(40))
    loaded = load(path, keep="context")
    assert loaded.kept == "context"
    index: LeanIndex = loaded.index
    dropped = [i for i, v in enumerate(index.values) if v is None]
    assert dropped and dropped == list(range(len(dropped)))  # only the first 1000 bytes' worth
    replay_context(index, loaded.leaf(None))
    assert index.rereads == len(dropped)


def test_only_the_context_is_read_back(tmp_path: Path) -> None:
    values = _chain(30)
    values.append(
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "e29",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "summary": "s",
            "firstKeptEntryId": "e27",
            "tokensBefore": 10,
        }
    )
    values.append(_msg(30, "c1"))
    path = _write(tmp_path / "s.jsonl", values)
    loaded = load(path, keep="context")
    assert loaded.kept == "context"
    replay = replay_context(loaded.index, loaded.leaf(None))
    assert [e["id"] for e in replay.context_entries] == ["c1", "e27", "e28", "e29", "e30"]
    # e27..e30 and the last assistant message (the model): e29; nothing else is parsed again.
    assert loaded.index.rereads == 4
    assert replay.projection.model == {"provider": "p", "modelId": "m29"}
    assert replay.path_ids == [f"e{i}" for i in range(30)] + ["c1", "e30"]


def test_cycle_is_reported_as_by_the_full_path(tmp_path: Path) -> None:
    values = _chain(4)
    values[1]["parentId"] = "e3"  # e0 -> e3 -> e2 -> e1 -> e0
    path = _write(tmp_path / "s.jsonl", values)
    loaded = load(path, keep="context")
    with pytest.raises(CycleError) as lean_exc:
        replay_context(loaded.index, "e3")
    with pytest.raises(CycleError) as full_exc:
        full = load(path)
        replay_context(full.index, "e3")
    assert str(lean_exc.value) == str(full_exc.value)


def test_forward_parent_and_duplicate_ids(tmp_path: Path) -> None:
    a = _msg(1, "e2")  # its parent comes later in the file
    b = _msg(2, None)
    c = _msg(3, "e1")
    dup = _msg(2, None, text="second e2")  # the last e2 wins
    path = _write(tmp_path / "s.jsonl", [HEADER, a, b, c, dup])
    full = load(path)
    lean = load(path, keep="context")
    assert lean.kept == "context"
    assert lean.index.known_parents is None  # duplicates: every parent is looked up
    for leaf in ("e3", "e1", "e2"):
        assert _context_doc(lean, leaf)[0] == _context_doc(full, leaf)[0]


def test_label_and_line_references(tmp_path: Path) -> None:
    values = _chain(5)
    values.append(
        {
            "type": "label",
            "id": "l1",
            "parentId": "e4",
            "timestamp": "2026-01-01T00:00:03Z",
            "targetId": "e2",
            "label": "here",
        }
    )
    path = _write(tmp_path / "s.jsonl", values)
    lean = load(path, keep="context")
    assert lean.leaf("here") == "e2"
    assert lean.leaf("L3") == "e1"
    assert lean.leaf(None) == "l1"


def test_migrated_and_nan_version_take_the_full_path(tmp_path: Path) -> None:
    v2 = _write(tmp_path / "v2.jsonl", [dict(HEADER, version=2), _msg(0, None)])
    nan = _write(tmp_path / "nan.jsonl", [dict(HEADER, version="abc"), _msg(0, None)])
    assert isinstance(load(v2, keep="context"), LoadedSession)
    assert isinstance(load(nan, keep="context"), LoadedSession)


def test_message_without_message_crashes_as_pi_does(tmp_path: Path) -> None:
    values = _chain(4)
    del values[2]["message"]
    path = _write(tmp_path / "s.jsonl", values)
    full = _outcome(lambda: _context_doc(load(path), "e3")[0])
    lean = _outcome(lambda: _context_doc(load(path, keep="context"), "e3")[0])
    assert full[0] != "ok"
    assert lean == full


@pytest.mark.parametrize("case", CASES)
def test_chunked_context_json_is_the_same_bytes(case: str) -> None:
    """``context --format json`` writes the document in pieces, each message serialized once and
    released as it goes: the bytes are exactly those of the one-dict oracle."""

    path = support.golden_session(case)
    outcome = _outcome(lambda: load(path, keep="context"))
    if outcome[0] != "ok":
        return
    loaded = outcome[1]
    full = load(path)
    for leaf in _targets(full):
        want = _outcome(lambda leaf=leaf: to_json_bytes(context_json(replay_context(full.index, leaf))) + b"\n")
        if want[0] != "ok":
            continue
        assert b"".join(context_json_chunks(replay_context(full.index, leaf))) == want[1]
        consumed = replay_context(loaded.index, leaf)
        assert b"".join(context_json_chunks(consumed, [7] * len(consumed.projection.messages), consume=True)) == (
            to_json_bytes(context_json(replay_context(loaded.index, leaf), [7] * len(consumed.shown_estimates))) + b"\n"
        )
