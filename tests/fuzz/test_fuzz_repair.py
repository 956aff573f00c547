"""Fuzzing ``pitools repair`` (and ``slim --dry-run``) on mutated sessions.

Two promises: never a traceback (exit 0 or 1, at most one ``pitools:`` error line), and never a
result that Pi loads worse than the input, judged by pitools' own faithful core: no fewer
object entries Pi reads, and every leaf whose context Pi builds today still there (same entry,
or same id) with a context Pi builds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import support
from tests.fuzz.support import CLI_EXAMPLES, check_cli, hypothesis_settings, outcome_problem, run_cli_inprocess

SEEDS = support.seed_sessions(max_lines=25)
SEED_NAMES = [name for name, _ in SEEDS]


def _pi_view(data: bytes) -> tuple[int, dict[str, Any], Any]:
    """(object entries Pi reads, {entry JSON: its position}, index) as pitools' core loads them."""
    from pitools.core.session.load import load
    from pitools.core.session.migrate import MigrationError

    try:
        loaded = load(data, strict=False, freeze=False)
    except MigrationError:
        return 0, {}, None
    session = loaded.session
    if not session.valid:
        return 0, {}, None
    by_json = {json.dumps(e, sort_keys=True, default=str): i for i, e in enumerate(session.entries) if type(e) is dict}
    return sum(type(e) is dict for e in session.entries), by_json, loaded.index


def assert_not_worse(before: bytes, after: bytes) -> None:
    from pitools.core.js.access import entry_id
    from pitools.core.repair.invariant import context_fingerprint

    n_before, _, idx_before = _pi_view(before)
    n_after, by_json, idx_after = _pi_view(after)
    assert idx_after is not None, "Pi does not load the repaired file"
    assert n_after >= n_before, f"Pi reads {n_after} entries after the repair, {n_before} before"
    if idx_before is None:
        return
    for at in idx_before.leaf_positions():
        leaf = idx_before.entries[at]
        if type(leaf) is not dict or context_fingerprint(idx_before, at).startswith(b"!"):
            continue
        same = by_json.get(json.dumps(leaf, sort_keys=True, default=str))
        if same is None:
            same = idx_after.position_of(entry_id(leaf))
        assert same is not None, f"leaf {entry_id(leaf)!r} is gone after the repair"
        assert not context_fingerprint(idx_after, same).startswith(b"!"), f"Pi cannot build leaf {entry_id(leaf)!r}"


def _check(data: bytes, scratch: Path, kind: str) -> None:
    s = str(scratch)
    check_cli(
        data,
        scratch,
        kind,
        invocations=[
            ["repair", s, "--dry-run", "--cwd", "/x"],
            ["repair", s, "--dry-run", "--format", "json", "--reattach"],
            ["slim", s, "--images", "--thinking", "--tool-output", "10", "--dry-run", "--format", "json"],
        ],
    )
    out = scratch.with_name("repaired.jsonl")
    out.unlink(missing_ok=True)
    for extra in ([], ["--reattach"]):
        rc, _out, err = run_cli_inprocess(["repair", s, "-o", str(out), "--cwd", "/x", *extra])
        problem = outcome_problem(rc, err)
        if problem is not None:
            path = support.save_crash(f"repair-{kind}", data, err)
            raise AssertionError(f"`pitools repair -o` on {path}: {problem}\n{err[-3000:]}")
        if out.exists():
            assert_not_worse(data, out.read_bytes())
            out.unlink()


@hypothesis_settings(CLI_EXAMPLES)
@given(name=st.sampled_from(SEED_NAMES), seed=st.integers(0, 2**32 - 1))
def test_repair_on_mutated_golden_sessions(name: str, seed: int, scratch: Path) -> None:
    rng = random.Random(seed)
    _check(support.mutate_lines(rng, dict(SEEDS)[name]), scratch, "mutated")


@hypothesis_settings(CLI_EXAMPLES)
@given(data=st.binary(max_size=400))
def test_repair_on_arbitrary_bytes(data: bytes, scratch: Path) -> None:
    _check(data, scratch, "bytes")


def test_repair_on_fused_and_torn_lines(scratch: Path) -> None:
    """Every golden seed with two lines fused, torn at several points."""
    for _name, lines in SEEDS[:6]:
        for cut in (0.3, 0.6, 1.0):
            out = list(lines)
            k = len(out) // 2
            if k + 1 >= len(out):
                continue
            out[k] = out[k].rstrip(b"\n")[: int(len(out[k]) * cut)] + out.pop(k + 1)
            _check(b"".join(out), scratch, "fused")
