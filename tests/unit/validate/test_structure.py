"""The two ways ``validate`` walks the tree (file-order loops, depth-first) agree."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pitools.core.session.load import load
from pitools.core.validate.scan import Scanner, scan_entries
from pitools.core.validate.structure import Structure
from tests import support
from tests.fuzz.support import mutate_lines

ROOT = support.ROOT
GOLDEN = ROOT / "golden"


def _structure(path: Path) -> Structure | None:
    _raw, values = load(path, keep="none")
    first = next(values, None)
    if first is None or not isinstance(first[0], dict) or first[0].get("version") != 3:
        return None
    scanner = Scanner()
    scan_entries(values, scanner, [])
    return Structure(scanner.records)


def _sessions(tmp_path: Path) -> list[Path]:
    paths = sorted(GOLDEN.glob("*/session.jsonl"))
    rng = random.Random(99)
    for i in range(200):
        lines = rng.choice(paths[:80]).read_bytes().split(b"\n")[:120]
        mutated = tmp_path / f"m{i}.jsonl"
        mutated.write_bytes(lines[0] + b"\n" + mutate_lines(rng, lines[1:], rounds=rng.randint(1, 4)))
        paths.append(mutated)
    return paths


def test_file_order_walk_matches_the_depth_first_walk(tmp_path: Path) -> None:
    rng = random.Random(7)
    compared = 0
    for path in _sessions(tmp_path):
        loops = _structure(path)
        dfs = _structure(path)
        if loops is None or dfs is None or not loops.parents_first or loops.rec.self_parents:
            continue
        fast = loops._walk_in_file_order()
        if fast is None:
            continue
        slow = dfs._walk_depth_first()
        assert sorted(fast, key=repr) == sorted(slow, key=repr), path
        n = len(loops.rec)
        for _ in range(min(200, n * n)):
            a, d = rng.randrange(n), rng.randrange(n)
            assert loops.is_ancestor(a, d) == dfs.is_ancestor(a, d), (path, a, d)
        compared += 1
    assert compared > 100


def test_far_results_fall_back_to_the_depth_first_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A tool result whose call is far up the chain costs a long climb: over budget, the
    # depth-first walk takes over, with the same findings.
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
    call = (
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":'
        b'{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],'
        b'"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,'
        b'"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},'
        b'"stopReason":"toolUse","timestamp":1}}\n'
    )
    chain = b"".join(
        b'{"type":"label","id":"l%d","parentId":"%s","targetId":"a","label":"x"}\n'
        % (i, b"a" if i == 0 else b"l%d" % (i - 1))
        for i in range(120)
    )
    result = (
        b'{"type":"message","id":"r","parentId":"l119","timestamp":"2026-01-01T00:00:02.000Z","message":'
        b'{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[],"isError":false,"timestamp":2}}\n'
    )
    path = tmp_path / "far.jsonl"
    path.write_bytes(header + call + chain + result)
    structure = _structure(path)
    assert structure is not None and structure.parents_first
    assert structure._walk_in_file_order(budget_per_entry=0) is None
    assert structure._walk_in_file_order() == []  # within the default budget: answered, nothing to report
    assert _structure(path)._walk_depth_first() == []  # type: ignore[union-attr]
