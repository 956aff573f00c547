"""``validate_file(share=share_work)``: a file split between this process and a forked child reports the same.

The core cuts, scans and merges the parts (core/validate/parts.py); the child comes from
``pitools.ops.parallel.share_work``.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

import pitools.core.validate as validate_core
import pitools.core.validate.parts as parts
import pitools.ops.parallel as parallel
from pitools.core.validate import validate_file
from pitools.ops.parallel import share_work
from tests import support
from tests.fuzz.support import mutate_lines

ROOT = support.ROOT
GOLDEN = ROOT / "golden"
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))


@pytest.mark.parametrize("case", CASES)
def test_golden_sessions_report_the_same_split(case: str, every_file_is_big: list[bool]) -> None:
    path = GOLDEN / case / "session.jsonl"
    one = validate_file(path)
    assert every_file_is_big == []
    two = validate_file(path, share=share_work)
    assert two == one
    # A v3 header on line 1 and more than one line: split, and a child was started for the parts.
    assert every_file_is_big == ([True] if parts.split_points(str(path)) else [])


@pytest.mark.slow
def test_mutated_sessions_report_the_same_split(tmp_path: Path, every_file_is_big: list[bool]) -> None:
    rng = random.Random(1234)
    sources = [GOLDEN / case / "session.jsonl" for case in CASES]
    for i in range(150):
        lines = rng.choice(sources).read_bytes().split(b"\n")[:80]
        path = tmp_path / f"m{i}.jsonl"
        # The header stays (or the file is not split at all); everything after it is fair game.
        path.write_bytes(lines[0] + b"\n" + mutate_lines(rng, lines[1:], rounds=rng.randint(1, 3)))
        assert validate_file(path, share=share_work) == validate_file(path), path.read_bytes()[:2000]
    assert sum(every_file_is_big) > 50  # the v1/v2 and bad-header sources are not split


def test_the_second_part_reports_absolute_line_numbers(tmp_path: Path, every_file_is_big: list[bool]) -> None:
    lines = (GOLDEN / "seed-running-example" / "session.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    lines.append(b"{not json")
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    report = validate_file(path, share=share_work)
    assert every_file_is_big == [True]
    malformed = [f for f in report.findings if f.code == "malformed-json"]
    assert [f.line for f in malformed] == [len(lines)]


def test_without_fork_the_part_is_scanned_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parts, "SPLIT_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "fork_helper", lambda *args: None)
    path = GOLDEN / "broken-duplicate-ids" / "session.jsonl"
    assert validate_file(path, share=share_work) == validate_file(path)


def test_a_failing_child_is_replaced_by_a_local_scan(
    monkeypatch: pytest.MonkeyPatch, every_file_is_big: list[bool]
) -> None:
    parent = os.getpid()
    real_scan = parts.scan_part

    def fails_in_the_child(*args: Any) -> Any:
        if os.getpid() != parent:
            raise MemoryError("the child ran out of memory")
        return real_scan(*args)

    monkeypatch.setattr(parts, "scan_part", fails_in_the_child)
    monkeypatch.setattr(validate_core, "scan_part", fails_in_the_child)
    path = GOLDEN / "broken-cycle" / "session.jsonl"
    expected = validate_file(path)
    assert validate_file(path, share=share_work) == expected
    assert every_file_is_big == [True]


def test_a_garbled_reply_is_replaced_by_a_local_scan(
    monkeypatch: pytest.MonkeyPatch, every_file_is_big: list[bool]
) -> None:
    parent = os.getpid()
    real_to_wire = parts.PartResult.to_wire

    def garbled(self: parts.PartResult) -> bytes:
        data = real_to_wire(self)
        return data[: len(data) // 2] if os.getpid() != parent else data

    monkeypatch.setattr(parts.PartResult, "to_wire", garbled)
    path = GOLDEN / "broken-malformed-lines" / "session.jsonl"
    expected = validate_file(path)
    assert validate_file(path, share=share_work) == expected
    assert every_file_is_big == [True]


def test_part_results_survive_the_wire(tmp_path: Path) -> None:
    # Odd ids (undefined, objects, numbers, booleans), findings and diagnostics all round-trip.
    lines = [
        b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}',
        b'{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}',
        b'{"type":"label","parentId":"a"}',
        b'{"type":"label","id":{"x":[1]},"parentId":true}',
        b'{"type":"label","id":7,"parentId":7.0}',
        b"[1,2]",
        b"{broken",
        b'{"type":"session","id":"again"}',
        b'{"type":"context_edit","id":"e","parentId":"a","targetId":"zz","replacement":5}',
    ]
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    start = len(lines[0]) + 1
    part = parts.scan_part(str(path), start, path.stat().st_size)
    back = parts.PartResult.from_wire(part.to_wire())
    assert back == part
    assert part.records.odd_ids  # the undefined and object ids are in there


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_split_points(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
    body = b"".join(b'{"type":"label","id":"%d","parentId":null}\n' % i for i in range(200))
    good = _write(tmp_path / "good.jsonl", header + body)
    data = Path(good).read_bytes()
    bounds = parts.split_points(good, min_bytes=1, part_bytes=1000)
    assert bounds is not None
    assert bounds[0] == 0 and bounds[-1] == len(data) and bounds == sorted(set(bounds))
    assert all(data[b - 1 : b] == b"\n" for b in bounds[1:-1])  # every part starts a line
    assert 6 <= len(bounds) - 1 <= 9  # ~1000 bytes each
    assert len(parts.split_points(good, min_bytes=1) or []) == 3  # a small file: two parts at least
    assert parts.split_points(good) is None  # small: not worth a process
    v2 = _write(tmp_path / "v2.jsonl", header.replace(b'"version":3', b'"version":2') + body)
    assert parts.split_points(v2, min_bytes=1) is None  # migration needs the whole file
    late = _write(tmp_path / "late.jsonl", b"\n" + header + body)
    assert parts.split_points(late, min_bytes=1) is None  # header not on line 1
    bom = _write(tmp_path / "bom.jsonl", b"\xef\xbb\xbf" + header + body)
    assert parts.split_points(bom, min_bytes=1) is None
    one_line = _write(tmp_path / "one.jsonl", header + b'{"type":"label","text":"' + b"x" * 5000 + b'"}')
    assert parts.split_points(one_line, min_bytes=1) is None  # nothing after the middle line
    assert parts.split_points(str(tmp_path / "missing.jsonl"), min_bytes=1) is None


def test_an_error_here_stops_the_child(
    monkeypatch: pytest.MonkeyPatch, every_file_is_big: list[bool], forked_helpers: list[parallel.Helper]
) -> None:
    children = forked_helpers

    def interrupted(*args: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(validate_core._Run, "_scan", interrupted)
    with pytest.raises(KeyboardInterrupt):
        validate_file(GOLDEN / "broken-cycle" / "session.jsonl", share=share_work)
    assert len(children) == 1 and children[0] is not None
    support.assert_reaped(children[0])  # killed and reaped: no zombie left behind
