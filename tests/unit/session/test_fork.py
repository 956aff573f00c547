"""createBranchedSession, /fork, /clone and /export (JSONL) as Pi 1.6.0 writes them."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.date import iso_now
from pitools.core.session import fork
from pitools.core.session.ids import generate_id, uuid7
from pitools.core.session.load import LoadedSession, load
from pitools.core.session.tree import SessionIndex
from pitools.errors import PitoolsError
from pitools.ops.newsession import write_session
from tests import support
from tests.golden.fork_cases import LABELS_SOURCE

GOLDEN = support.GOLDEN
NOW = dt.datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=dt.UTC)


def write_jsonl(path: Path, values: list[Any]) -> Path:
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8")
    return path


@pytest.fixture
def labels_session(tmp_path: Path) -> LoadedSession:
    return load(write_jsonl(tmp_path / "labels.jsonl", LABELS_SOURCE))


def counter_ids() -> Any:
    n = [0]

    def new_id(taken: set[Any]) -> str:
        n[0] += 1
        return f"new{n[0]:05d}"

    return new_id


def test_timestamps_and_ids() -> None:
    assert iso_now(NOW) == "2026-05-06T07:08:09.123Z"
    assert fork.file_timestamp("2026-05-06T07:08:09.123Z") == "2026-05-06T07-08-09-123Z"
    sid = uuid7(NOW)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", sid)
    assert int(sid.replace("-", "")[:12], 16) == int(NOW.timestamp() * 1000)
    assert uuid7(NOW) != sid
    taken = {"aaaaaaaa"}
    assert re.fullmatch(r"[0-9a-f]{8}", generate_id(taken))


def test_resolved_labels_follow_map_semantics() -> None:
    entries = [
        {"type": "label", "targetId": "a", "label": "one", "timestamp": "t1"},
        {"type": "label", "targetId": "b", "label": "two", "timestamp": "t2"},
        {"type": "label", "targetId": "a", "label": "uno", "timestamp": "t3"},  # keeps a's place
        {"type": "label", "targetId": "c", "label": [], "timestamp": "t4"},  # [] is truthy in JS
        {"type": "label", "targetId": "b", "label": "", "timestamp": "t5"},  # clears
        {"type": "label", "targetId": "b", "label": "deux", "timestamp": "t6"},  # back, at the end
        {"type": "label", "targetId": "d", "label": 0},
    ]
    labels = fork.resolved_labels(entries)
    assert [(t, lab, ts) for t, lab, ts in labels.values()] == [
        ("a", "uno", "t3"),
        ("c", [], "t4"),
        ("b", "deux", "t6"),
    ]


def test_branched_entries_drop_rechain_and_recreate_labels(labels_session: LoadedSession) -> None:
    entries, count, remapped = fork.branched_entries(labels_session.index, "A4", new_id=counter_ids())
    kept = [e for e in entries if e["type"] != "label"]
    assert [e["id"] for e in kept] == ["U1", "A1", "U2", "A2", "U3", "A3", "C1", "U4", "A4"]
    assert [e["parentId"] for e in kept] == [None, "U1", "A1", "U2", "A2", "U3", "A3", "C1", "U4"]
    compaction = next(e for e in kept if e["type"] == "compaction")
    assert compaction["firstKeptEntryId"] == "U3"  # was the dropped label L4
    assert remapped == ["C1"]
    labels = entries[len(kept) :]
    assert count == 3
    # Map order over the whole file: A1 first labelled at L2 (renamed later in place), U3 from
    # the other branch, U1 cleared then set again (so last). L2's own label and U2b are off the path.
    assert [(e["targetId"], e["label"]) for e in labels] == [
        ("A1", "answer (renamed)"),
        ("U3", "set from the other branch"),
        ("U1", "first, again"),
    ]
    assert [e["id"] for e in labels] == ["new00001", "new00002", "new00003"]
    assert [e["parentId"] for e in labels] == ["A4", "new00001", "new00002"]
    assert [e["timestamp"] for e in labels] == [
        "2026-03-01T10:16:00.000Z",
        "2026-03-01T10:17:00.000Z",
        "2026-03-01T10:19:00.000Z",
    ]
    # The source entries are not touched.
    assert labels_session.index.get("C1")["firstKeptEntryId"] == "L4"
    assert labels_session.index.get("A1")["parentId"] == "L1"


def test_label_ids_avoid_path_ids() -> None:
    entries = [
        {"type": "message", "id": "x", "parentId": None, "message": {"role": "user", "content": "hi"}},
        {"type": "label", "id": "l", "parentId": "x", "targetId": "x", "label": "L"},
    ]
    offered = iter(["x", "x", "fresh"])
    seen: list[set[Any]] = []

    def new_id(taken: set[Any]) -> str:
        seen.append(set(taken))
        candidate = next(offered)
        return candidate if candidate not in taken else new_id(taken)

    out, _, _ = fork.branched_entries(SessionIndex.build(entries), "l", new_id=new_id)
    assert out[-1]["id"] == "fresh" and "x" in seen[0]


def test_a_leaf_whose_id_is_an_array_is_cloned_as_pi_clones_it() -> None:
    """A broken line's id can be an array (fuzzing found ``heal -o`` and ``clone`` failing with
    "unhashable type"): Pi's createBranchedSession copies it and chains the labels after it."""
    leaf_id = ["x"]
    entries = [
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "hi"}},
        {"type": "label", "id": "l", "parentId": "a", "targetId": "a", "label": "L"},
        {"type": "message", "id": leaf_id, "parentId": "l", "message": {"role": "user", "content": "again"}},
    ]
    out, _, _ = fork.branched_entries(SessionIndex.build(entries), leaf_id, new_id=counter_ids())
    assert [e["type"] for e in out] == ["message", "message", "label"]
    assert out[1]["id"] == leaf_id and out[2]["parentId"] == leaf_id and out[2]["targetId"] == "a"


def test_compaction_keeping_itself_and_unknown_entries() -> None:
    entries = [
        {"type": "message", "id": "u", "parentId": None, "message": {"role": "user", "content": "hi"}},
        {"type": "compaction", "id": "c", "parentId": "u", "firstKeptEntryId": "c", "summary": "s"},
        {"type": "compaction", "id": "d", "parentId": "c", "firstKeptEntryId": "elsewhere", "summary": "s"},
        {"type": "compaction", "id": "e", "parentId": "d", "summary": "no first kept"},
    ]
    out, _, remapped = fork.branched_entries(SessionIndex.build(entries), "e")
    assert [e.get("firstKeptEntryId") for e in out[1:]] == ["c", "elsewhere", fork.UNDEFINED]
    assert "firstKeptEntryId" not in json.loads(
        b"".join(fork.NewSession("clone", {}, out, "e").lines()).splitlines()[-1]
    )
    assert remapped == []


def test_unknown_leaf_is_refused() -> None:
    with pytest.raises(PitoolsError, match="Entry nope not found"):
        fork.branched_entries(SessionIndex.build([]), "nope")


def options(**changes: Any) -> fork.NewSessionOptions:
    base: dict[str, Any] = {"now": NOW, "session_id": "new-session", "new_label_id": counter_ids(), "env": {}}
    base.update(changes)
    return fork.NewSessionOptions(**base)


def test_clone_header_and_default_leaf(labels_session: LoadedSession) -> None:
    new = fork.clone_session(labels_session, labels_session.index.leaf_id, options())
    assert new.header == {
        "type": "session",
        "version": 3,
        "id": "new-session",
        "timestamp": "2026-05-06T07:08:09.123Z",
        "cwd": "/work/labels",
        "parentSession": os.path.abspath(labels_session.path),
    }
    # The default leaf is the last entry (label L10 on the other branch): its path is U1, A1, U2b.
    assert [e["id"] for e in new.entries if e["type"] != "label"] == ["U1", "A1", "U2b"]
    assert new.file_name == "2026-05-06T07-08-09-123Z_new-session.jsonl"
    assert not new.pi_would_defer
    first = json.loads(next(new.lines()))
    assert list(first) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]


def test_clone_needs_an_entry(tmp_path: Path) -> None:
    empty = load(GOLDEN / "gen-s0046_broken-headeronly" / "session.jsonl")
    with pytest.raises(PitoolsError, match="Nothing to clone yet"):
        fork.clone_session(empty, empty.index.leaf_id, options())


def test_fork_before_a_user_message(labels_session: LoadedSession) -> None:
    new = fork.fork_session(labels_session, "U4", options())
    assert new.source_leaf == "C1" and new.selected_text == "Fix the leak" and new.forked_entry == "U4"
    assert [e["id"] for e in new.entries][-1].startswith("new")
    assert new.to_json()["selectedText"] == "Fix the leak"


def test_fork_at_the_first_message_gives_an_empty_session(labels_session: LoadedSession) -> None:
    new = fork.fork_session(labels_session, "U1", options())
    assert new.entries == [] and new.source_leaf is None
    assert new.header["parentSession"] == os.path.abspath(labels_session.path)
    assert new.pi_would_defer  # Pi writes it only once a message is sent


def test_fork_refuses_other_entries(labels_session: LoadedSession) -> None:
    with pytest.raises(PitoolsError, match="not a user message"):
        fork.fork_session(labels_session, "A1", options())
    with pytest.raises(PitoolsError, match="Invalid entry ID for forking"):
        fork.fork_session(labels_session, "missing", options())


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        (
            [{"type": "text", "text": "a"}, {"type": "image", "data": "x"}, {"type": "text", "text": "b"}],
            "ab",
        ),
        ([{"type": "text", "text": 5}], ""),
        (None, ""),
    ],
)
def test_user_message_text(content: Any, text: str) -> None:
    assert fork.user_message_text(content) == text


def test_export_branch_is_pi_serialize_session_branch(labels_session: LoadedSession) -> None:
    new = fork.export_branch(labels_session, "A4", options())
    assert new.header == {
        "type": "session",
        "version": 3,
        "id": "labels-source",
        "timestamp": "2026-05-06T07:08:09.123Z",
        "cwd": "/work/labels",
    }
    # Labels stay where they were, re-chained like every other entry; nothing is remapped.
    ids = [e["id"] for e in new.entries]
    assert ids == ["U1", "L1", "A1", "L2", "L3", "U2", "A2", "L4", "L5", "U3", "A3", "C1", "U4", "A4"]
    assert [e["parentId"] for e in new.entries] == [None, *ids[:-1]]
    assert new.entries[11]["firstKeptEntryId"] == "L4"


def test_migrated_sources_get_v3_ids_and_json_stringify_lines(tmp_path: Path) -> None:
    loaded = load(GOLDEN / "gen-s0010_v1" / "session.jsonl")
    new = fork.clone_session(loaded, loaded.index.leaf_id, options())
    out = write_session(new, tmp_path / "deep" / "folder" / new.file_name)
    reopened = load(out, strict=False).session
    assert reopened.valid and reopened.header["version"] == 3 and not reopened.needs_migration
    assert reopened.entries[0]["id"] == "00000001" and reopened.entries[0]["parentId"] is None
    numbers = tmp_path / "numbers.jsonl"
    numbers.write_text(
        '{"type":"session","version":3,"id":"n","timestamp":"t","cwd":"/"}\n'
        '{"type":"message","id":"u","parentId":null,"message":{"role":"user","content":"x","n":200.0,"e":1e-7}}\n',
        encoding="utf-8",
    )
    lines = list(fork.clone_session(load(numbers), "u", options()).lines())
    expected = b'{"type":"message","id":"u","parentId":null,"message":{"role":"user","content":"x",'
    assert lines[1] == expected + b'"n":200,"e":1e-7}}\n'  # JSON.stringify number forms


def test_write_session_refuses_to_overwrite(tmp_path: Path, labels_session: LoadedSession) -> None:
    new = fork.clone_session(labels_session, "A4", options())
    target = tmp_path / "x.jsonl"
    target.write_text("keep me")
    with pytest.raises(PitoolsError, match="already exists"):
        write_session(new, target)
    assert target.read_text() == "keep me"


def test_new_session_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "somewhere" / "s.jsonl"
    env = {"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    assert fork.new_session_dir(source, env=env) == str(tmp_path / "somewhere")
    assert fork.new_session_dir(source, env=env, session_dir="custom") == str(tmp_path / "custom")
    env["PI_CODING_AGENT_SESSION_DIR"] = str(tmp_path / "from-env")
    assert fork.new_session_dir(source, env=env) == str(tmp_path / "from-env")
