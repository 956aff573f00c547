"""A dataset run that was killed leaves nothing a later run keeps counting (found by
``scripts/stress_crash.py --writer dataset`` and a read of how the manifest is written)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from pitools.ops.dataset import MANIFEST, build_dataset
from tests.support import golden_session


def _tables(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != MANIFEST)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_tables_of_a_killed_run_go_when_their_session_is_gone(tmp_path: Path) -> None:
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    shutil.copyfile(golden_session("empty-id-leaves"), inputs / "a.jsonl")
    shutil.copyfile(golden_session("gen-s0001_v3"), inputs / "b.jsonl")
    build_dataset([str(inputs)], str(out), format_="jsonl")
    # A first run killed before its manifest (written last): both sessions' tables, no manifest.
    (out / MANIFEST).unlink()
    stale_temp = out / "usage" / f".s-0123456789abcdef0123.jsonl.pid{_dead_pid()}.x1y2z3.pitools-tmp"
    stale_temp.write_bytes(b"half a table")
    (inputs / "b.jsonl").unlink()
    build_dataset([str(inputs)], str(out), format_="jsonl")
    clean = tmp_path / "clean"
    build_dataset([str(inputs)], str(clean), format_="jsonl")
    assert _tables(out) == _tables(clean)
    assert len(_tables(out)) == 6  # one session, six tables


def test_files_that_are_not_ours_stay(tmp_path: Path) -> None:
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    shutil.copyfile(golden_session("empty-id-leaves"), inputs / "a.jsonl")
    (out / "usage").mkdir(parents=True)
    (out / "usage" / "notes.txt").write_text("mine")
    (out / "usage" / "s-1.jsonl").write_text("mine too")
    build_dataset([str(inputs)], str(out), format_="jsonl")
    assert (out / "usage" / "notes.txt").exists() and (out / "usage" / "s-1.jsonl").exists()
