"""An append to a session folds only the new lines into its stored ``ls`` summary.

The contract is equality: after the index has taken in a prefix of a file and then the rest as
an append, the summary it stores is byte for byte the one :func:`summarize_file` gives for the
whole file (counts, name, first message, activity time, models in order, leaves, float totals
added in file order), and the whole file is not read again.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from pitools.core.views import listing
from pitools.ops.index import ArchiveIndex
from pitools.ops.index_rows import read_file
from tests import support
from tests.archive_gen import Archive, Writer

GOLDEN = support.GOLDEN
#: Files with at most this many lines are split at every line boundary; longer ones at this many
#: random boundaries (and the first and last).
EVERY_LINE = 40
SAMPLES = 12


def _regular_cases() -> list[str]:
    """Golden sessions whose later appends the index takes in alone (``index_rows.is_regular``,
    and stored as written: a v1/v2 file is migrated in memory, and its appends reindex it)."""
    out = []
    for path in sorted(GOLDEN.glob("*/session.jsonl")):
        rows = read_file(str(path), 1, path.stat())
        if rows.regular and rows.scan is not None:
            out.append(path.parent.name)
    return out


REGULAR = _regular_cases()


def _boundaries(data: bytes, rng: random.Random) -> list[int]:
    """Byte offsets just after each line (never 0: the index must first see the header)."""
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    ends = [e for e in ends if e < len(data)]
    if len(ends) <= EVERY_LINE:
        return ends
    picked = set(rng.sample(ends, SAMPLES))
    picked.update((ends[0], ends[-1]))
    return sorted(picked)


class _NoWholeRead(Exception):
    pass


def _stored(index: ArchiveIndex, path: Path) -> tuple[bytes, bytes | None]:
    row = index.conn.execute("SELECT summary, scan FROM sessions WHERE path=?", (str(path),)).fetchone()
    assert row is not None
    return row[0], row[1]


def _split_and_append(
    folder: Path, data: bytes, at: int, monkeypatch: pytest.MonkeyPatch, *, expect_append: bool
) -> tuple[bytes, Any]:
    """Index ``data[:at]``, append the rest, update: the stored summary and the update's stats."""
    path = folder / "2026-01-01T00-00-00-000Z_s.jsonl"
    path.write_bytes(data[:at])
    index = ArchiveIndex(None, shards=1)
    try:
        index.update([str(folder)], jobs=1)
        _summary, state = _stored(index, path)
        with open(path, "ab") as fh:
            fh.write(data[at:])
        with monkeypatch.context() as m:
            if expect_append:
                assert state is not None  # a regular prefix stores its scan state

                def refuse(*_a: Any, **_k: Any) -> Any:
                    raise _NoWholeRead

                m.setattr(listing, "summarize_file_scan", refuse)
            stats = index.update([str(folder)], jobs=1)
        return _stored(index, path)[0], stats
    finally:
        index.close()


def _whole(path: Path) -> bytes:
    return orjson.dumps(listing.summarize_file(str(path)))


@pytest.mark.parametrize("case", support.fast_sample(REGULAR, 6))
def test_appended_summary_equals_the_whole_files(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = (GOLDEN / case / "session.jsonl").read_bytes()
    folder = tmp_path / "s"
    folder.mkdir()
    path = folder / "2026-01-01T00-00-00-000Z_s.jsonl"
    appended = 0
    for at in _boundaries(data, random.Random(case)):
        stored, stats = _split_and_append(folder, data, at, monkeypatch, expect_append=True)
        assert stored == _whole(path), f"{case}: split at byte {at}"
        appended += stats.appended
        if stats.appended:
            assert stats.bytes_read == len(data) - at  # not the whole file
    # The whole file is regular, so every split is taken in as an append.
    assert appended == len(_boundaries(data, random.Random(case)))


def _generated(agent: Path, seed: int) -> Writer:
    """A session with every summary input: names set and cleared, model changes, every usage
    source, branches, compactions, messages whose text comes late, odd float costs."""
    ar = Archive(agent, seed=seed)
    w = ar.new("/work/gen")
    rng = random.Random(seed)
    for _ in range(30):
        pick = rng.random()
        if pick < 0.3:
            w.conversation(1)
        elif pick < 0.4:
            w.add("session_info", name=rng.choice(["  first name ", "", "second", None, "\u2003spaced\u2003"]))
        elif pick < 0.5:
            w.add("model_change", provider=rng.choice(["anthropic", "openai", None]), modelId=f"m{rng.randint(0, 3)}")
        elif pick < 0.6:
            w.tool_result("out " * rng.randint(1, 200), with_usage=rng.random() < 0.5)
        elif pick < 0.65:
            w.usage_entry()
        elif pick < 0.7 and len(w.entries) > 3:
            w.branch_from(w.entries[rng.randrange(len(w.entries))]["id"])
        elif pick < 0.75 and len(w.entries) > 3:
            w.compaction(first_kept=w.entries[rng.randrange(len(w.entries))]["id"])
        elif pick < 0.8 and len(w.entries) > 3:
            w.branch_summary(from_id=w.entries[rng.randrange(len(w.entries))]["id"])
        elif pick < 0.85:
            # A user message with no text first: the first message is a later one.
            w.add("message", message={"role": "user", "content": [{"type": "image", "data": "AA"}], "timestamp": 5})
        else:
            w.add(
                "message",
                message={
                    "role": "assistant",
                    "content": [{"type": "text", "text": "x"}],
                    "provider": "p",
                    "model": f"odd{rng.randint(0, 2)}",
                    "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.1 + 0.2}},
                },
            )
    w.write()
    return w


@pytest.mark.parametrize("seed", support.fast_sample([1, 2, 3, 4], 1))
def test_generated_sessions_split_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    w = _generated(tmp_path / "agent", seed)
    data = w.path.read_bytes()
    folder = tmp_path / "s"
    folder.mkdir()
    path = folder / "2026-01-01T00-00-00-000Z_s.jsonl"
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A][:-1]
    for at in ends:
        stored, stats = _split_and_append(folder, data, at, monkeypatch, expect_append=True)
        assert stats.appended == 1
        assert stored == _whole(path), f"split at byte {at}"


def test_many_appends_in_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state carried from append to append (not just one resume) stays exact."""
    w = _generated(tmp_path / "agent", 9)
    data = w.path.read_bytes()
    folder = tmp_path / "s"
    folder.mkdir()
    path = folder / "2026-01-01T00-00-00-000Z_s.jsonl"
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    path.write_bytes(data[: ends[0]])
    index = ArchiveIndex(None, shards=1)
    try:
        index.update([str(folder)], jobs=1)

        def refuse(*_a: Any, **_k: Any) -> Any:
            raise _NoWholeRead

        monkeypatch.setattr(listing, "summarize_file_scan", refuse)
        for a, b in itertools.pairwise(ends):
            with open(path, "ab") as fh:
                fh.write(data[a:b])
            stats = index.update([str(folder)], jobs=1)
            assert stats.appended == 1
            monkeypatch.undo()
            assert _stored(index, path)[0] == _whole(path)
            monkeypatch.setattr(listing, "summarize_file_scan", refuse)
    finally:
        index.close()


def test_a_missing_or_foreign_state_falls_back_to_a_whole_read(tmp_path: Path) -> None:
    """A row without a usable state (another version's form) still gets the right summary,
    and the state it then stores lets the next append read only the new bytes."""
    w = _generated(tmp_path / "agent", 5)
    data = w.path.read_bytes()
    folder = tmp_path / "s"
    folder.mkdir()
    path = folder / "2026-01-01T00-00-00-000Z_s.jsonl"
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    cut1, cut2 = ends[len(ends) // 3], ends[2 * len(ends) // 3]
    path.write_bytes(data[:cut1])
    index = ArchiveIndex(None, shards=1)
    try:
        index.update([str(folder)], jobs=1)
        index.conn.execute("UPDATE sessions SET scan=?", (b'{"v":0}',))
        with open(path, "ab") as fh:
            fh.write(data[cut1:cut2])
        stats = index.update([str(folder)], jobs=1)
        assert stats.appended == 1 and stats.bytes_read == cut2  # the whole file, read once
        assert _stored(index, path)[0] == _whole(path)
        assert listing.resume_scan(_stored(index, path)[1] or b"", []) is not None
        with open(path, "ab") as fh:
            fh.write(data[cut2:])
        stats = index.update([str(folder)], jobs=1)
        assert stats.appended == 1 and stats.bytes_read == len(data) - cut2
        assert _stored(index, path)[0] == _whole(path)
    finally:
        index.close()


def test_state_keeps_numbers_and_text_exactly() -> None:
    """Big integers, -0.0, Infinity and lone surrogates come back as they were parsed."""
    scan = listing.scan_values(
        [
            {"type": "session", "id": "h", "version": 3, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/\ud800"},
            {
                "type": "usage",
                "id": "a",
                "parentId": None,
                "usage": {
                    "input": 10**30,
                    "output": -0.0,
                    "cacheRead": 1e308,
                    "cacheWrite": 0.1,
                    "cost": {"total": 1e308},
                },
            },
            {"type": "session_info", "id": "b", "parentId": "a", "name": "n\udc00"},
        ]
    )
    assert scan is not None
    state = listing.save_scan(scan)
    assert state is not None
    back = listing.resume_scan(state, [("a", None), ("b", "a")])
    assert back is not None
    more = [{"type": "usage", "id": "c", "parentId": "b", "usage": {"cacheRead": 1e308, "cost": {"total": -1e308}}}]
    listing.fold_values(scan, more)
    listing.fold_values(back, more)
    assert repr(back.totals) == repr(scan.totals)
    assert [type(x) for x in back.totals] == [type(x) for x in scan.totals]
    assert (back.name, back.header, back.entries) == (scan.name, {k: scan.header[k] for k in back.header}, 3)
    assert back.ids_in_order == scan.ids_in_order
