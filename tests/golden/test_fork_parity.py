"""Forks and clones written by pitools: Pi 1.6.0 loads them and builds the context it built at the source.

Both sides are Pi's own recordings (reference oracle), never pitools' output:

* ``golden/<case>/pi.krt<N>.json.xz``: Pi on the new session (``make golden``), at its default leaf;
* ``golden/<case>/source.pi.krt<N>.json.xz``: Pi on the source at the fork point (``--leaf``).

What must be equal, message by message: the context (messages, thinking level, model), the
LLM messages, every token estimate, the projected-token estimate and the context usage.

What legitimately differs, and only that:

* the header (new id, timestamp, ``parentSession``) and the entries' ``parentId`` (re-chained);
* label entries: Pi's createBranchedSession drops them from the path and re-creates the resolved
  labels, with new ids, at the end; so ``path``, ``contextEntries`` and ``projection`` differ by
  label entries only (compared below with labels left out), and a compaction's
  ``firstKeptEntryId`` that named a dropped label names the next kept entry;
* the *next* compaction plan (``prepareCompaction``) when label entries were moved: Pi's
  ``findCutPoint`` walks raw entry positions and pulls metadata entries in front of the cut into
  the kept range, so a moved label can shift the cut and the split-turn decision. Its
  ``tokensBefore``, ``previousSummary`` and system checkpoint still match;
* session-wide totals (``stats``, ``usageBreakdown``, ``tree``, ``leaves``): the new file holds
  one branch, not the whole tree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.golden.fork_cases import (
    CASES,
    GOLDEN,
    KEEP_RECENT,
    Case,
    build,
    fork_point,
    labels_source_bytes,
    parent_session_text,
)

RECORDINGS = [(case, krt) for case in CASES for krt in KEEP_RECENT]
_ids = [f"{c.name}-krt{k}" for c, k in RECORDINGS]


def _read(path: Path) -> dict[str, Any]:
    return json.loads(support.recording_text(path))


def _key(leaf: Any) -> str:
    return "null" if leaf is None else str(leaf)


def _views(case: Case, krt: int) -> tuple[dict[str, Any], dict[str, Any]]:
    new = _read(GOLDEN / case.name / f"pi.krt{krt}.json.xz")
    source = _read(GOLDEN / case.name / f"source.pi.krt{krt}.json.xz")
    return new, source


@pytest.fixture(scope="module")
def points() -> dict[str, Any]:
    return {case.name: fork_point(case) for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rebuild_is_byte_identical(case: Case, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    build(case, out)
    assert out.read_bytes() == (GOLDEN / case.name / "session.jsonl").read_bytes()
    if case.source is None:
        assert (GOLDEN / case.name / "source.jsonl").read_bytes() == labels_source_bytes()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cases_are_recorded(case: Case) -> None:
    for krt in KEEP_RECENT:
        for name in (f"pi.krt{krt}.json.xz", f"source.pi.krt{krt}.json.xz"):
            assert (GOLDEN / case.name / name).exists(), f"run make golden for {case.name}"


def _labels_of(entries: list[Any]) -> set[str]:
    return {e["id"] for e in entries if isinstance(e, dict) and e.get("type") == "label"}


@pytest.mark.parametrize(("case", "krt"), RECORDINGS, ids=_ids)
def test_pi_context_equals_source_context(case: Case, krt: int, points: dict[str, Any]) -> None:
    new, source = _views(case, krt)
    assert "error" not in new and "error" not in source
    assert not new["invalid"] and not new["migrated"] and new["version_before"] == 3
    theirs = source["byLeaf"][_key(points[case.name])]
    if new["leafId"] is None:
        # /fork on the first user message: an empty session, like the source before its root.
        assert new["entries"] == [] and points[case.name] is None
        assert theirs["context"] == {"messages": [], "model": None, "thinkingLevel": "off"}
        return
    ours = new["byLeaf"][_key(new["leafId"])]
    for field in ("context", "llmMessages", "tokenEstimates", "estimatedContextTokens", "contextUsage"):
        assert ours[field] == theirs[field], field
    assert ours["leafExists"] and theirs["leafExists"]
    new_labels = _labels_of(new["entries"])
    old_labels = _labels_of(source["entries"])
    assert [i for i in ours["path"] if i not in new_labels] == [i for i in theirs["path"] if i not in old_labels]
    assert [i for i in ours["contextEntries"] if i not in new_labels] == [
        i for i in theirs["contextEntries"] if i not in old_labels
    ]

    def projected(view: dict[str, Any], labels: set[str]) -> list[Any]:
        return [(p["sourceId"], p["messages"]) for p in view["projection"] if p["sourceId"] not in labels]

    assert projected(ours, new_labels) == projected(theirs, old_labels)
    moved_labels = any(i in old_labels for i in theirs["path"])
    if not moved_labels:
        assert ours["compaction"] == theirs["compaction"]
    elif theirs["compaction"] is not None:
        for field in ("tokensBefore", "previousSummary", "systemCheckpoint", "settings"):
            assert ours["compaction"][field] == theirs["compaction"][field], field


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_entries_follow_create_branched_session(case: Case, points: dict[str, Any]) -> None:
    """Pi's view of the new file vs Pi's view of the source path, entry by entry."""
    new, source = _views(case, KEEP_RECENT[0])
    header = new["header"]
    assert header["version"] == 3 and header["type"] == "session"
    assert header["parentSession"] == parent_session_text(case)
    assert header["cwd"] == source["header"]["cwd"] or not str(source["header"].get("cwd", "")).startswith("/")
    point = points[case.name]
    if point is None:
        assert new["entries"] == []
        return
    by_id = {e["id"]: e for e in source["entries"] if isinstance(e, dict)}  # Pi's byId: the last one wins
    path = source["byLeaf"][_key(point)]["path"]
    expected: list[dict[str, Any]] = []
    next_kept: dict[str, str] = {}
    pending: list[str] = []
    parent = None
    for eid in path:
        entry = by_id[eid]
        if entry["type"] == "label":
            pending.append(eid)
            continue
        next_kept.update(dict.fromkeys(pending, eid))
        pending = []
        copy = dict(entry, parentId=parent)
        if entry["type"] == "compaction" and entry.get("firstKeptEntryId") in next_kept:
            copy["firstKeptEntryId"] = next_kept[entry["firstKeptEntryId"]]
        expected.append(copy)
        parent = eid
    assert new["entries"][: len(expected)] == expected
    labels = new["entries"][len(expected) :]
    assert all(e["type"] == "label" for e in labels)
    assert [e["parentId"] for e in labels] == ([parent] + [e["id"] for e in labels])[: len(labels)]
    kept_ids = {e["id"] for e in expected}
    assert new["labels"] == {k: v for k, v in source["labels"].items() if k in kept_ids}
    assert len(labels) == len(new["labels"])
