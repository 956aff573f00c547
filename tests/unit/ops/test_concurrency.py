"""Another process writing the session while pitools works on it.

* Reading a file that grows (line by line, each line in several ``write`` calls, so the tail is
  often torn) gives a consistent prefix: every complete line, in order, and at most a torn last
  line reported as a diagnostic; commands keep exiting 0.
* A writer refuses when the file changed since pitools read it (``SessionChangedError``) and
  writes nothing: for ``append_line``, ``atomic_replace``, and a compaction whose model call
  overlaps another process's append.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pitools import store
from pitools.core.session.lines import read_session
from pitools.errors import SessionChangedError
from tests import support

HEADER = b'{"type":"session","version":3,"id":"S","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/r"}\n'
E0 = b'{"type":"message","id":"e0","parentId":null,"timestamp":"t","message":{"role":"user","content":"a"}}\n'
N_LINES = 400

# Appends N_LINES entries, each in three os.write calls with pauses, so readers see torn tails.
WRITER = r"""
import os, sys, time
path, n = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
prev = "null"
for i in range(n):
    line = ('{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z",'
            '"message":{"role":"user","content":"%s","timestamp":1}}\n' % (i, prev, "x" * (i % 97))).encode()
    third = len(line) // 3
    for part in (line[:third], line[third:2 * third], line[2 * third:]):
        os.write(fd, part)
        time.sleep(0.0003)
    prev = '"e%d"' % i
os.close(fd)
"""


def _start_writer(path: Path, n: int = N_LINES) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n)])


def _check_prefix(path: Path) -> int:
    """Read once; assert the entries are e0..ek in order and only the last line may be torn."""
    raw = read_session(path)
    assert raw.valid
    ids = [v["id"] for v in raw.values[1:]]
    assert ids == [f"e{i}" for i in range(len(ids))], ids[-5:]
    last_line = raw.line_count
    for d in raw.diagnostics:
        if d.code in ("malformed-json", "unterminated-last-line", "invalid-utf8", "blank-line"):
            assert d.line == last_line, (d, last_line)
    return len(ids)


def test_a_growing_file_reads_as_a_consistent_prefix(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER)
    writer = _start_writer(path)
    seen = []
    try:
        while writer.poll() is None:
            seen.append(_check_prefix(path))
    finally:
        writer.wait(timeout=60)
    assert seen == sorted(seen), "a later read saw fewer entries"
    assert _check_prefix(path) == N_LINES
    assert read_session(path).ends_with_newline


def test_a_torn_tail_that_completes_during_the_read_is_not_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic version of the race: the writer completes the line right after pitools saw it torn."""
    import pitools.core.session.lines as lines

    path = tmp_path / "s.jsonl"
    first = E0
    torn = b'{"type":"message","id":"e1","parentId":"e0","timestamp":"t","mess'
    rest = b'age":{"role":"user","content":"b"}}\n'
    path.write_bytes(HEADER + first + torn)
    real = lines.parse_json_line

    def racing(data: bytes) -> Any:
        if data == torn:  # pitools has just read the torn tail: the writer finishes the line now
            with open(path, "ab") as fh:
                fh.write(rest)
        return real(data)

    monkeypatch.setattr(lines, "parse_json_line", racing)
    raw = lines.read_session(path)
    # Either the torn tail only (a consistent prefix) or the completed line: never two halves.
    assert raw.line_count == 3
    assert [v["id"] for v in raw.values[1:]] == ["e0"]


def test_commands_on_a_growing_file_exit_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER)
    writer = _start_writer(path, 1500)
    env = {k: v for k, v in os.environ.items() if k != "PITOOLS_DEBUG"}
    deadline = time.monotonic() + 60
    while path.read_bytes().count(b"\n") < 3 and time.monotonic() < deadline:
        time.sleep(0.01)  # at least one complete entry, so there is a default leaf
    runs = 0
    try:
        while writer.poll() is None and runs < 6:
            proc = subprocess.run(
                [sys.executable, "-m", "pitools", "context", str(path), "--format", "json"],
                capture_output=True,
                timeout=120,
                env=env,
                check=False,
            )
            runs += 1
            assert proc.returncode == 0, proc.stderr.decode()[-1000:]
            data = json.loads(proc.stdout)
            leaf = data["leafId"]
            assert isinstance(leaf, str) and leaf.startswith("e"), leaf
            # The context is the whole chain up to a complete entry: nothing torn got in.
            assert data["path"] == [f"e{i}" for i in range(int(leaf[1:]) + 1)]
    finally:
        writer.kill()
        writer.wait()
    assert runs >= 1


def _append_other(path: Path) -> bytes:
    """What another process (Pi) appends; returns the file's bytes afterwards."""
    with open(path, "ab") as fh:
        fh.write(
            b'{"type":"message","id":"other","parentId":"e0","timestamp":"t","message":{"role":"user","content":"hi"}}\n'
        )
    return path.read_bytes()


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + E0)
    return path


def test_append_line_refuses_after_a_concurrent_append(session: Path) -> None:
    before = store.stamp(session)
    changed = _append_other(session)
    with pytest.raises(SessionChangedError):
        store.append_line(session, b'{"type":"compaction"}\n', expected=before, backup=False)
    assert session.read_bytes() == changed
    assert sorted(p.name for p in session.parent.iterdir()) == ["s.jsonl"]


def test_a_refused_append_leaves_no_backup(session: Path) -> None:
    before = store.stamp(session)
    _append_other(session)
    with pytest.raises(SessionChangedError):
        store.append_line(session, b'{"type":"compaction"}\n', expected=before)
    assert sorted(p.name for p in session.parent.iterdir()) == ["s.jsonl"]


def test_atomic_replace_refuses_after_a_concurrent_append(session: Path) -> None:
    before = store.stamp(session)
    changed = _append_other(session)
    with pytest.raises(SessionChangedError):
        store.atomic_replace(session, [b"rewritten\n"], expected=before)
    assert session.read_bytes() == changed
    assert sorted(p.name for p in session.parent.iterdir()) == ["s.jsonl"]


def test_atomic_replace_refuses_when_the_file_changes_while_writing(session: Path) -> None:
    """The change lands after the temp file is written, right before the rename."""
    before = store.stamp(session)
    state: dict[str, bytes] = {}

    def chunks() -> Any:
        yield b"rewritten\n"
        state["changed"] = _append_other(session)

    with pytest.raises(SessionChangedError):
        store.atomic_replace(session, chunks(), expected=before, backup=False)
    assert session.read_bytes() == state["changed"]
    assert sorted(p.name for p in session.parent.iterdir()) == ["s.jsonl"]


def test_compaction_refuses_when_pi_appends_during_the_model_call(tmp_path: Path) -> None:
    """apply_compaction: another process appends while the summarizer works -> nothing written."""
    gen_big = support.load_script("gen_big")

    from pitools.ops.compaction import apply_compaction, plan_compact
    from pitools.ops.summarizing import SummarizeRequest
    from pitools.summarize import SummaryResult

    path = tmp_path / "s.jsonl"
    path.write_bytes(gen_big.generate(0.04, 8))
    state: dict[str, bytes] = {}

    class Racing:
        def summarize(self, request: Any) -> Any:
            if "changed" not in state:
                time.sleep(0.01)
                with open(path, "ab") as fh:
                    fh.write(b'{"type":"label","id":"zz","parentId":null,"timestamp":"t","targetId":"x","label":"L"}\n')
                state["changed"] = path.read_bytes()
            return SummaryResult(text="summary", usage=support.free_usage(), provider="test", model="racing")

    with pytest.raises(SessionChangedError):
        planning = plan_compact(str(path), keep_recent_tokens=2000, use_config=False, for_apply=True)
        apply_compaction(planning, SummarizeRequest(summarizer=Racing(), backup=False))
    assert path.read_bytes() == state["changed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
