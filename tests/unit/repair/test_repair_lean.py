"""The lean repair plan (skeletons for the tree fixes, crash checks while reading) equals the full one.

``plan_repair`` keeps only each entry's ``id``/``parentId`` unless a fix needs the whole entry
(1 GB sessions then fit in about 1.3x the file); ``lean=False`` keeps every parsed value, as the
planner did before. Both must produce the same fixes, problems left, touched and removed lines,
origins and bytes: on every golden repair case, on every golden session, and on fuzzed inputs.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pitools.core.repair.invariant import InvariantReport, check_invariant, check_invariant_lean
from pitools.core.repair.repair import RepairOptions, RepairPlan, plan_repair
from tests.fuzz import support
from tests.fuzz.support import hypothesis_settings

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = sorted(p for p in (ROOT / "golden").glob("*/session.jsonl"))
SEEDS = support.seed_sessions(max_lines=25)


def _shape(plan: RepairPlan) -> tuple[object, ...]:
    return (
        [f.to_json() for f in plan.fixes],
        [r.to_json() for r in plan.remaining],
        sorted(plan.touched),
        sorted(plan.removed),
        plan.writable,
        plan.origins(),
        plan.output_bytes() if plan.writable else None,
        [line.edited for line in plan.lines],
    )


def _assert_same(data: bytes, **kw: object) -> RepairPlan:
    for reattach in (False, True):
        options = RepairOptions(
            file_name="2026-03-02T08-00-00-000Z_abc.jsonl",
            folder_name="--home-me-proj--",
            reattach=reattach,
            new_session_id="new-id",
            now_timestamp="2026-01-01T00:00:00.000Z",
        )
        lean = plan_repair(data, options)
        full = plan_repair(data, options, lean=False)
        assert _shape(lean) == _shape(full)
    return lean


@pytest.mark.parametrize("path", GOLDEN, ids=[p.parent.name for p in GOLDEN])
def test_lean_plan_equals_full_plan_on_golden_sessions(path: Path) -> None:
    _assert_same(path.read_bytes())


def test_lean_plan_keeps_skeletons_only_for_lines_without_fixes() -> None:
    data = (ROOT / "golden" / "repair-duplicate-id" / "session.jsonl").read_bytes()
    plan = plan_repair(data)
    assert plan.fixes, "the case has a fix"
    lean = [line for line in plan.lines if line.lean]
    assert lean, "untouched entries keep only skeletons"
    assert all(set(line.value) <= {"id", "parentId"} for line in lean)
    assert not any(line.lean for line in plan.lines if line.edited)


@hypothesis_settings(support.CLI_EXAMPLES)
@given(name=st.sampled_from([n for n, _ in SEEDS]), seed=st.integers(0, 2**32 - 1))
def test_lean_plan_equals_full_plan_on_mutated_sessions(name: str, seed: int) -> None:
    rng = random.Random(seed)
    _assert_same(support.mutate_lines(rng, dict(SEEDS)[name]))


@hypothesis_settings(support.CLI_EXAMPLES)
@given(data=st.binary(max_size=400))
def test_lean_plan_equals_full_plan_on_arbitrary_bytes(data: bytes) -> None:
    _assert_same(data)


# -- the lean invariant ------------------------------------------------------------------------


def _both_checks(before: bytes, after: bytes, plan: RepairPlan) -> tuple[InvariantReport, InvariantReport]:
    args = (before, after, plan.origins(), plan.touched, plan.removed)
    return check_invariant(*args), check_invariant_lean(*args)


def _assert_same_verdict(data: bytes) -> None:
    plan = plan_repair(data, RepairOptions(folder_name="--home-me-proj--", new_session_id="n", now_timestamp="t"))
    if not plan.writable:
        return
    full, lean = _both_checks(data, plan.output_bytes(), plan)
    assert lean.violations == full.violations
    assert (lean.entries_before, lean.entries_after) == (full.entries_before, full.entries_after)
    assert lean.leaves_compared + lean.leaves_restored == full.leaves_compared + full.leaves_restored
    assert lean.leaves_compared >= full.leaves_compared  # it may prove a crashing leaf unchanged


@pytest.mark.parametrize("path", GOLDEN, ids=[p.parent.name for p in GOLDEN])
def test_lean_invariant_gives_the_full_checks_verdict_on_golden_sessions(path: Path) -> None:
    _assert_same_verdict(path.read_bytes())


@hypothesis_settings(support.CLI_EXAMPLES)
@given(name=st.sampled_from([n for n, _ in SEEDS]), seed=st.integers(0, 2**32 - 1))
def test_lean_invariant_gives_the_full_checks_verdict_on_mutated_sessions(name: str, seed: int) -> None:
    _assert_same_verdict(support.mutate_lines(random.Random(seed), dict(SEEDS)[name]))


def _tampered(data: bytes) -> tuple[bytes, bytes, RepairPlan] | None:
    """A repaired file in which one entry no fix touched was changed behind the plan's back."""
    plan = plan_repair(data)
    if not plan.writable or not plan.changed:
        return None
    lines = plan.output_bytes().split(b"\n")
    for k in range(len(lines) - 2, 0, -1):
        origin = plan.lines[k].origin
        if origin is None or origin in plan.touched or plan.lines[k].edited or b'"text":"' not in lines[k]:
            continue
        lines[k] = lines[k].replace(b'"text":"', b'"text":"tampered ', 1)
        return data, b"\n".join(lines), plan
    return None


@pytest.mark.parametrize("case", ["repair-duplicate-id", "repair-fused", "repair-torn-tail", "repair-crlf"])
def test_lean_invariant_catches_a_silent_change_and_a_lost_entry(case: str) -> None:
    data = (ROOT / "golden" / case / "session.jsonl").read_bytes()
    got = _tampered(data)
    assert got is not None, "the case has an untouched text entry"
    before, after, plan = got
    full, lean = _both_checks(before, after, plan)
    assert not full.holds and not lean.holds
    # The lean check names the changed line; the leaves above it are proven only through that
    # line's bytes, so it does not report their contexts again.
    assert lean.violations and set(lean.violations) <= set(full.violations)
    # A lost entry: the repaired file without its last line.
    cut = plan.output_bytes().rstrip(b"\n").rsplit(b"\n", 1)[0] + b"\n"
    origins = plan.origins()[:-1]
    lean_cut = check_invariant_lean(before, cut, origins, plan.touched, plan.removed)
    assert not lean_cut.holds
    full_cut = check_invariant(before, cut, origins, plan.touched, plan.removed).violations
    assert set(lean_cut.violations) <= set(full_cut)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.parent.name for p in GOLDEN])
def test_lean_context_fingerprint_equals_the_full_one_at_every_leaf(path: Path) -> None:
    """Skeletons plus entries parsed again (v1 and v2 ones migrated) give Pi's context at every leaf."""
    from pitools.core.repair.invariant import _lean, _lean_fingerprint, _load, context_fingerprint

    data = path.read_bytes()
    # None: Pi's migration refuses the file or Pi rejects it (the check reports it as unloadable)
    skeletons = _load(data, str(path), "skeleton")
    full = _load(data, str(path))
    assert (skeletons is None) == (full is None)
    if skeletons is None or full is None:
        pytest.skip("Pi's migration refuses the file, or Pi reads nothing")
    lean = _lean(data, skeletons)
    lean_leaves, full_leaves = lean.index.leaf_positions(), full.index.leaf_positions()
    assert len(lean_leaves) == len(full_leaves)
    for a, b in zip(lean_leaves, full_leaves, strict=True):
        assert _lean_fingerprint(lean, a) == context_fingerprint(full.index, b)
