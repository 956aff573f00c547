"""``pitools watch``'s follower: the meter kept from appended lines equals a replay of the file.

The replay (:func:`pitools.ops.watch.measure`) is the lean loader plus Pi's
``estimateProjectedContextTokens``, both checked against Pi 1.6.0 on the golden sessions; here
each golden session is written line by line, as Pi appends, and after every line the follower's
reading must be the replay's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pitools.core.views.meter import advance
from pitools.ops.watch import Followed, MeterConfig, measure, step

GOLDEN = Path(__file__).resolve().parents[3] / "golden"
# Compactions, branch summaries, context edits, model changes, labels, custom entries, session
# names and thinking levels among them.
CASES = ["gen-s0001_v3", "gen-s0003_v3", "gen-s0005_v3", "clone-s0022-compactions", "gen-s0026_v3", "gen-s0041_v3"]
CONFIG = MeterConfig(use_config=False)


@pytest.mark.parametrize("case", CASES)
def test_appending_line_by_line_matches_a_replay(case: str, tmp_path: Path) -> None:
    lines = (GOLDEN / case / "session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:2]))
    state = measure(str(path), CONFIG)
    appended = 0
    for line in lines[2:]:
        with open(path, "ab") as f:
            f.write(line)
        state, _ = step(state, CONFIG)
        appended += state.how == "append"
        replay = measure(str(path), CONFIG)
        assert state.reading == replay.reading, line[:80]
        assert state.offset == replay.offset == os.path.getsize(path)
    assert appended > len(lines) // 3  # most lines were taken without reading the file again


def test_a_partial_line_waits_for_its_end(tmp_path: Path) -> None:
    lines = (GOLDEN / "gen-s0003_v3" / "session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:-1]))
    state = measure(str(path), CONFIG)
    last = lines[-1]
    with open(path, "ab") as f:
        f.write(last[:10])
    same, changed = step(state, CONFIG)
    assert same is state and not changed
    with open(path, "ab") as f:
        f.write(last[10:])
    done, _ = step(state, CONFIG)
    assert done.reading == measure(str(path), CONFIG).reading


def test_a_rewritten_or_truncated_file_is_replayed(tmp_path: Path) -> None:
    lines = (GOLDEN / "gen-s0005_v3" / "session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines))
    state = measure(str(path), CONFIG)
    # Truncated (shorter than what was read).
    path.write_bytes(b"".join(lines[:40]))
    state, changed = step(state, CONFIG)
    assert changed and state.how == "replay" and state.reading == measure(str(path), CONFIG).reading
    # Replaced by a file of another session, as an atomic rename does (new inode).
    other = tmp_path / "other.jsonl"
    other.write_bytes((GOLDEN / "gen-s0001_v3" / "session.jsonl").read_bytes())
    os.replace(other, path)
    state, changed = step(state, CONFIG)
    assert changed and state.reading == measure(str(path), CONFIG).reading


def test_advance_leaves_structural_entries_to_a_replay() -> None:
    state = measure(str(GOLDEN / "gen-s0003_v3" / "session.jsonl"), CONFIG)
    leaf = state.reading.leaf_id
    assert advance(state.reading, [{"type": "compaction", "id": "x", "parentId": leaf}]) is None
    assert advance(state.reading, [{"type": "model_change", "id": "x", "parentId": leaf}]) is None
    other_branch = {"type": "message", "id": "x", "parentId": "elsewhere", "message": {"role": "user", "content": "hi"}}
    assert advance(state.reading, [other_branch]) is None
    assert isinstance(state, Followed)
