"""``branches`` human output: bounded work per leaf and per id, whatever the session holds.

Costs are counted (Python function calls, output characters), never timed. Before: a rich Table
measured and wrapped every cell (about 4,500 calls and 1.3 ms per leaf; 50,000 leaves took 69 s),
and two 10 MB ids took 22 s and 1.1 GB because the whole ids were measured.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
from pathlib import Path

from rich.console import Console

from pitools.core.session.load import load
from pitools.core.views.branches import list_branches
from pitools.render.branches import render_branches

HEADER = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}


def _message(entry_id: str, parent: str | None, text: str) -> dict[str, object]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }


def _session(tmp_path: Path, leaf_ids: list[str]) -> Path:
    values = [HEADER, _message("r", None, "root")] + [_message(i, "r", f"leaf {n}") for n, i in enumerate(leaf_ids)]
    p = tmp_path / f"s{len(leaf_ids)}.jsonl"
    p.write_text("".join(json.dumps(v) + "\n" for v in values))
    return p


def _render(path: Path) -> tuple[int, str]:
    """(function calls made by render_branches, output) at a fixed width."""
    result = list_branches(load(path).index)
    console = Console(file=io.StringIO(), width=120, color_system=None)
    profiler = cProfile.Profile()
    profiler.enable()
    render_branches(console, result, None)
    profiler.disable()
    calls = pstats.Stats(profiler).total_calls  # type: ignore[attr-defined]
    return calls, console.file.getvalue()  # type: ignore[attr-defined]


def test_cost_per_leaf_is_bounded_and_linear(tmp_path: Path) -> None:
    small_calls, _ = _render(_session(tmp_path, [f"l{i}" for i in range(200)]))
    big_calls, big_out = _render(_session(tmp_path, [f"l{i}" for i in range(2_000)]))
    assert big_out.count("\n") == 2 + 2 * 2_000
    per_leaf = (big_calls - small_calls) / 1_800
    assert per_leaf < 1_000, per_leaf  # about 530 now; a rich Table made about 4,000


def test_huge_ids_are_cut_before_measuring(tmp_path: Path) -> None:
    calls, out = _render(_session(tmp_path, ["a" * 10_000_000, "b" * 10_000_000]))
    assert len(out) < 5_000
    assert "a" * 39 + "…" in out
    assert calls < 5_000
