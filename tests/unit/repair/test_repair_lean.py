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
