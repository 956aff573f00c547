"""Memory of the streaming ``validate`` and of one huge entry, measured with tracemalloc (counts, not time).

README promises: ``validate`` keeps a small record per entry, so its memory grows with the number of
entries, not with their size; and a single huge entry costs what parsing it costs, no more.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from pitools.core.session.load import load
from pitools.core.validate import validate_file
from tests.support import free_usage

HEADER = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def _peak(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated while ``fn`` runs (its result is dropped first)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
        del result
    finally:
        tracemalloc.stop()
    return peak


def _chain(path: Path, n: int) -> Path:
    with path.open("w") as out:
        out.write(json.dumps(HEADER) + "\n")
        parent = None
        for i in range(n):
            eid = f"{i:08x}"
            if i % 2 == 0:
                message: dict[str, Any] = {"role": "user", "content": f"please fix bug {i}", "timestamp": 1}
            else:
                message = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"done {i}"}],
                    "api": "x",
                    "provider": "p",
                    "model": "m",
                    "usage": free_usage(),
                    "stopReason": "stop",
                    "timestamp": 1,
                }
            entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"}
            out.write(json.dumps(entry | {"message": message}) + "\n")
            parent = eid
    return path


@pytest.mark.slow
def test_validate_keeps_a_small_record_per_entry(tmp_path: Path) -> None:
    small = _chain(tmp_path / "small.jsonl", 10_000)
    big = _chain(tmp_path / "big.jsonl", 60_000)
    assert validate_file(big).findings == ()
    per_entry = (_peak(lambda: validate_file(big)) - _peak(lambda: validate_file(small))) / 50_000
    # About 270 bytes now (ids and timestamps, one index entry, machine-integer columns);
    # 515 before types, roles and parent ids shared their strings and line numbers were arrays.
    assert per_entry < 320, per_entry


def test_one_entry_with_many_blocks_costs_what_parsing_it_costs(tmp_path: Path) -> None:
    blocks = [{"type": "text", "text": "x"}] * 200_000
    entry = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z"}
    line = json.dumps(entry | {"message": {"role": "user", "content": blocks, "timestamp": 1}}).encode()
    path = tmp_path / "blocks.jsonl"
    path.write_bytes(json.dumps(HEADER).encode() + b"\n" + line + b"\n")
    bare = _peak(lambda: orjson.loads(line))
    for fn in (lambda: validate_file(path), lambda: load(path)):
        assert _peak(fn) < 1.3 * bare
