"""Session summaries for ``pitools ls`` (Pi's buildSessionInfo rules plus pitools' totals)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.parse import parse_json_line
from pitools.core.session import locate
from pitools.core.views import listing
from pitools.ops import listing as ops_listing
from tests import support

GOLDEN = support.GOLDEN
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))


def recording(case: str) -> dict[str, Any]:
    # The loader's parser: golden/hostile-deep-nesting nests deeper than json allows.
    return parse_json_line(support.recording_text(GOLDEN / case / "pi.krt20000.json.xz"))[0]


@pytest.mark.parametrize("case", CASES)
def test_summary_agrees_with_pi(case: str) -> None:
    """Counts, leaves, name and usage totals against Pi's recorded view of every golden session."""
    summary = listing.summarize_file(str(GOLDEN / case / "session.jsonl"))
    pi = recording(case)
    if "error" in pi and "entries" not in pi:  # Pi's v1 migration throws on this file
        assert summary["status"] == "error"
        return
    if pi["invalid"]:
        assert summary["status"] == "invalid" and not summary["piListed"]
        return
    assert summary["status"] == ("needs-migration" if pi["migrated"] else "ok")
    assert summary["id"] == pi["sessionId"]
    assert summary["entryCount"] == len(pi["entries"])
    assert summary["leafCount"] == len(pi["leaves"])
    assert summary["messageCount"] == sum(
        1 for e in pi["entries"] if isinstance(e, dict) and e.get("type") == "message"
    )
    if isinstance(pi["sessionName"], (str, type(None))):
        # Pi's name; the listing masks the secrets scan detects in it (a preview: golden
        # secrets-planted names its session after a key), and nothing else.
        from pitools.core.secrets.scan import mask_secrets

        expected = pi["sessionName"] if pi["sessionName"] is None else mask_secrets(pi["sessionName"])
        assert summary["name"] == expected
        if case == "secrets-planted":
            assert summary["name"] != pi["sessionName"] and summary["name"].startswith("deploy [")
    stats = pi["stats"]
    if "error" not in stats:
        assert summary["tokens"] == stats["tokens"]
        assert summary["cost"] == pytest.approx(stats["cost"], rel=1e-12, abs=1e-12)


def test_fast_path_gives_the_same_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(GOLDEN / "gen-s0000_v3" / "session.jsonl")
    monkeypatch.setattr(listing, "_FAST_PATH_BYTES", 1)
    fast = listing.summarize_file(path)
    monkeypatch.setattr(listing, "_FAST_PATH_BYTES", 10**12)
    slow = listing.summarize_file(path)
    assert fast == slow


@pytest.mark.parametrize("case", CASES)
def test_summary_from_loaded_values_equals_reading_the_file(case: str) -> None:
    """The archive index summarises from the loader's values: the same summary, byte for byte."""
    from pitools.core.session.load import load

    path = str(GOLDEN / case / "session.jsonl")
    st = os.stat(path)
    try:
        session = load(path, strict=False).session
    except Exception:  # files the loader refuses are summarised by reading them
        return
    if not session.valid or session.needs_migration:
        return  # the index reads these with summarize_file
    from_values = listing.summarize_values(path, st, session.raw.values)
    assert from_values is not None
    assert from_values == listing.summarize_file(path, st)


def _session(path: Path, entries: list[Any], header: dict[str, Any] | None = None) -> Path:
    head = header or {
        "type": "session",
        "version": 3,
        "id": "s",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    path.write_text("".join(json.dumps(v) + "\n" for v in [head, *entries]), encoding="utf-8")
    return path


def _msg(eid: str, parent: str | None, message: Any, ts: str = "2026-01-02T00:00:00.000Z") -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}


def test_pi_activity_name_and_first_message_rules(tmp_path: Path) -> None:
    entries = [
        _msg("a", None, {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "timestamp": 5}),
        _msg(
            "u",
            "a",
            {"role": "user", "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "ask"}]},
        ),
        {"type": "session_info", "id": "n1", "parentId": "u", "name": "  Named  "},
        _msg("t", "n1", {"role": "toolResult", "content": [{"type": "text", "text": "x"}], "timestamp": 9e15}),
        {"type": "session_info", "id": "n2", "parentId": "t", "name": "later"},
        {"type": "session_info", "id": "n3", "parentId": "n2", "name": "   "},
    ]
    s = listing.summarize_file(str(_session(tmp_path / "a.jsonl", entries)))
    assert s["name"] is None  # the latest session_info clears it
    assert s["firstMessage"] == "first ask"
    # Activity: numeric message timestamps win, else the entry time; tool results do not count.
    assert s["modified"] == "2026-01-02T00:00:00.000Z"
    assert s["created"] == "2026-01-01T00:00:00.000Z"
    assert s["messageCount"] == 3 and s["entryCount"] == 6 and s["leafCount"] == 1


def test_modified_falls_back_to_header_then_mtime(tmp_path: Path) -> None:
    s = listing.summarize_file(str(_session(tmp_path / "a.jsonl", [])))
    assert s["modified"] == "2026-01-01T00:00:00.000Z" and s["firstMessage"] == "(no messages)"
    path = _session(tmp_path / "b.jsonl", [], {"type": "session", "version": 3, "id": "b", "timestamp": "bad"})
    os.utime(path, (1_700_000_000, 1_700_000_000))
    assert listing.summarize_file(str(path))["modified"] == "2023-11-14T22:13:20.000Z"


def test_files_pi_cannot_list(tmp_path: Path) -> None:
    hidden = listing.summarize_file(
        str(_session(tmp_path / "h.jsonl", [{"type": "message", "id": "m", "parentId": None}]))
    )
    assert hidden["status"] == "ok" and not hidden["piListed"] and "session list skips it" in hidden["problem"]
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    assert listing.summarize_file(str(empty))["status"] == "invalid"
    v1 = _session(
        tmp_path / "v1.jsonl",
        [{"type": "message", "message": {"role": "user", "content": "x"}}, 42],
        {"type": "session", "id": "old"},
    )
    assert listing.summarize_file(str(v1))["status"] == "error"
    assert listing.summarize_file(str(tmp_path / "missing.jsonl"))["status"] == "error"


def test_models_in_first_seen_order(tmp_path: Path) -> None:
    entries = [
        {"type": "model_change", "id": "m", "parentId": None, "provider": "openai", "modelId": "gpt-5"},
        _msg("a", "m", {"role": "assistant", "content": [], "provider": "anthropic", "model": "claude"}),
        _msg("b", "a", {"role": "assistant", "content": [], "provider": "openai", "model": "gpt-5"}),
        _msg("c", "b", {"role": "assistant", "content": []}),
    ]
    assert listing.summarize_file(str(_session(tmp_path / "m.jsonl", entries)))["models"] == [
        "openai/gpt-5",
        "anthropic/claude",
    ]


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return {
        "HOME": str(tmp_path / "home"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "PITOOLS_CACHE_DIR": str(tmp_path / "cache"),
    }


def _place(folder: str, case: str, name: str) -> Path:
    os.makedirs(folder, exist_ok=True)
    target = Path(folder) / name
    target.write_bytes((GOLDEN / case / "session.jsonl").read_bytes())
    # Dated 10 s back, as a file Pi wrote a moment ago: one written in the clock tick an index
    # update starts is read again by the next update (git's racy rule, pitools.ops.index.racy).
    then = time.time_ns() - 10_000_000_000
    os.utime(target, ns=(then, then))
    return target


def test_list_sorts_by_activity_and_caches(agent: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``ls`` through the archive index: the same summaries, only changed files read again."""
    from pitools.ops.index import SCHEMA_VERSION

    here = locate.default_session_dir(os.getcwd(), agent)
    _place(here, "gen-s0000_v3", "a.jsonl")  # activity 2025-10-10
    _place(here, "seed-running-example", "b.jsonl")  # activity 2026-07-29
    _place(here, "gen-s0011_broken-noheader", "c.jsonl")
    result = ops_listing.list_sessions(env=agent)
    assert [Path(s["path"]).name for s in result.sessions[:2]] == ["b.jsonl", "a.jsonl"]
    assert [s["status"] for s in result.sessions] == ["ok", "ok", "invalid"]  # unopenable files last
    assert result.cache_hits == 0
    assert result.sessions == listing.list_sessions(env=agent).sessions  # the index changes nothing
    calls: list[str] = []
    real = listing.summarize_file
    monkeypatch.setattr(listing, "summarize_file", lambda p, st=None: calls.append(p) or real(p, st))
    again = ops_listing.list_sessions(env=agent)
    assert again.cache_hits == 3 and calls == [] and again.sessions == result.sessions
    b = Path(here) / "b.jsonl"
    b.write_bytes(b.read_bytes() + b"\n")
    third = ops_listing.list_sessions(env=agent)
    # An append: only the new bytes are read (the stored summary resumes), with the same result.
    assert calls == [] and third.cache_hits == 2
    assert third.sessions == listing.list_sessions(env=agent).sessions
    (Path(agent["PITOOLS_CACHE_DIR"]) / f"index-v{SCHEMA_VERSION}.sqlite").write_bytes(b"garbage" * 1000)
    assert ops_listing.list_sessions(env=agent).sessions == third.sessions  # a broken index is rebuilt


def test_list_all_and_shared_dirs(agent: dict[str, str], tmp_path: Path) -> None:
    here = locate.default_session_dir(os.getcwd(), agent)
    _place(here, "seed-running-example", "mine.jsonl")
    _place(
        os.path.join(agent["PI_CODING_AGENT_DIR"], "sessions", "--elsewhere--"),
        "gen-s0003_v3",
        "theirs.jsonl",
    )
    assert len(ops_listing.list_sessions(env=agent).sessions) == 1
    everything = ops_listing.list_sessions(env=agent, all_=True)
    assert sorted(Path(s["path"]).name for s in everything.sessions) == ["mine.jsonl", "theirs.jsonl"]
    # A configured folder shared by projects: only sessions whose header cwd is ours.
    shared = tmp_path / "shared"
    _place(str(shared), "seed-running-example", "repo.jsonl")  # header cwd /repo
    _place(str(shared), "gen-s0003_v3", "other.jsonl")
    mine = ops_listing.list_sessions(env=agent, session_dir=str(shared), cwd="/repo")
    assert [Path(s["path"]).name for s in mine.sessions] == ["repo.jsonl"]
    assert mine.choice.source == "--session-dir"
    assert len(ops_listing.list_sessions(env=agent, session_dir=str(shared), all_=True).sessions) == 2


def test_no_cache_writes_nothing(agent: dict[str, str]) -> None:
    _place(locate.default_session_dir(os.getcwd(), agent), "seed-running-example", "s.jsonl")
    ops_listing.list_sessions(env=agent, use_cache=False)
    assert not Path(agent["PITOOLS_CACHE_DIR"]).exists()
    assert ops_listing.cache_dir({"XDG_CACHE_HOME": "/x"}) == "/x/pitools"
    assert ops_listing.cache_dir({"HOME": "/h"}, "linux") == "/h/.cache/pitools"
    assert ops_listing.cache_dir({"HOME": "/h"}, "darwin") == "/h/Library/Caches/pitools"
    assert ops_listing.cache_dir({"PITOOLS_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}) == "/c"
