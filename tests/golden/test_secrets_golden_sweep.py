"""Every golden session: scan finds nothing (no false positives), redact leaves it byte-identical;
with a token planted in every third entry, redact removes all of them and keeps the tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pitools.core.secrets.detect import Detector
from pitools.core.secrets.redact import RedactOptions, Redactor
from pitools.core.secrets.scan import scan_lines

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl") if not p.parent.name.startswith("secrets-"))
TOKEN = "ghp_" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5"


def lines_of(case: str) -> list[bytes]:
    return (GOLDEN / case / "session.jsonl").read_bytes().splitlines(keepends=True)


def plant(value: Any) -> tuple[Any, bool]:
    """``value`` with TOKEN appended to its first non-id string (depth first)."""
    if isinstance(value, str):
        return value + " " + TOKEN, True
    if isinstance(value, dict):
        out = dict(value)
        for k, v in value.items():
            if k in ("id", "parentId", "type", "role", "timestamp", "data"):
                continue
            new, done = plant(v)
            if done:
                out[k] = new
                return out, True
        return value, False
    if isinstance(value, list):
        for i, v in enumerate(value):
            new, done = plant(v)
            if done:
                return [*value[:i], new, *value[i + 1 :]], True
    return value, False


def shape(lines: list[bytes]) -> list[Any]:
    out = []
    for line in lines:
        try:
            v = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(None)
            continue
        out.append((v.get("type"), v.get("id"), v.get("parentId")) if isinstance(v, dict) else type(v).__name__)
    return out


def test_sweep_covers_the_clean_corpus() -> None:
    assert len(CASES) >= 80


@pytest.mark.parametrize("case", CASES)
def test_clean_golden_session(case: str) -> None:
    lines = lines_of(case)
    assert list(scan_lines(lines, Detector(), file=case)) == []
    out = list(Redactor(Detector(), RedactOptions(key=b"k"), file=case).redact_lines(lines))
    assert b"".join(out) == b"".join(lines)


@pytest.mark.parametrize("case", CASES)
def test_planted_tokens_are_all_removed(case: str) -> None:
    lines = lines_of(case)
    planted = []
    n = 0
    for i, line in enumerate(lines):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            planted.append(line)
            continue
        if i % 3 == 1 and isinstance(value, dict):
            value, done = plant(value)
            if done:
                n += 1
                end = b"\r\n" if line.endswith(b"\r\n") else (b"\n" if line.endswith(b"\n") else b"")
                line = orjson.dumps(value) + end
        planted.append(line)
    found = list(scan_lines(planted, Detector(), file=case))
    assert len([f for f in found if f.secret.value == TOKEN]) == n
    out = list(Redactor(Detector(), RedactOptions(key=b"k"), file=case).redact_lines(planted))
    assert TOKEN.encode() not in b"".join(out)
    assert len(out) == len(planted)
    assert shape(out) == shape(planted)
    assert list(scan_lines(out, Detector(), file=case)) == []
