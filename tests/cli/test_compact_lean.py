"""``compact --dry-run --format json`` loads lean (only the context after the last compaction in
full); its document must be byte for byte the plan made from a full load, on every golden session,
at several leaves and cut settings (the full plan is itself checked against Pi's recordings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitools.core.compaction.plan import plan_compaction
from pitools.core.compaction.settings import resolve_settings
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.session.load import load
from pitools.errors import PitoolsError

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))


def _full_plan_bytes(path: Path, leaf: str, keep: int) -> bytes | None:
    """What the full-load path prints (None where it fails: the lean path must fail too)."""
    try:
        loaded = load(path)
        leaf_id = loaded.leaf(leaf)
        resolved = resolve_settings(
            session_cwd=None,
            model=None,
            flags={"keep_recent_tokens": keep, "reserve_tokens": None, "context_window": 200000},
            use_config=False,
        )
        sourced = {k: v for k, v in resolved.to_json().items() if isinstance(v, dict) and "source" in v}
        plan = plan_compaction(
            loaded, leaf_id, resolved.compaction_settings(), context_window=200000, settings_json=sourced
        )
        plan.config = {k: v for k, v in resolved.to_json().items() if k not in sourced}
        return to_json_bytes(plan.to_json()) + b"\n"
    except PitoolsError:
        return None


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.usefixtures("cli_recursion_limit")
@pytest.mark.parametrize("case", CASES)
def test_lean_dry_run_json_is_the_full_plan(run, case: str) -> None:
    path = GOLDEN / case / "session.jsonl"
    try:
        full = load(path)
    except PitoolsError:
        return
    leaves = [str(x) for x in [*full.index.leaves()[:3], full.index.leaf_id] if isinstance(x, str)]
    for leaf in dict.fromkeys(leaves):
        for keep in (300, 20000):
            expected = _full_plan_bytes(path, leaf, keep)
            args = ["compact", path, "--dry-run", "--format", "json", "--no-config", "--leaf", leaf]
            r = run(*args, "--keep-recent-tokens", keep, "--context-window", 200000, exit_code=None)
            if expected is None:
                assert r.exit_code == 1 and r.stdout == ""
                continue
            assert r.exit_code == 0, r.stderr
            assert r.stdout_bytes == expected


def _lean_plan(path: Path, leaf: str) -> object:
    """The plan as the CLI's lean dry run makes it (the human view renders this object)."""
    from pitools.core.context.build import BranchKeys, replay_context
    from pitools.core.session.load import load

    loaded = load(path, keep="context")
    assert loaded.kept == "context"
    leaf_id = loaded.leaf(leaf)
    replay = replay_context(loaded.index, leaf_id)
    branch = replay.path
    types = loaded.index.types
    keys = BranchKeys(replay.path_ids or [], [types[p] for p in branch.positions])  # type: ignore[attr-defined]
    resolved = resolve_settings(
        session_cwd=None,
        model=None,
        flags={"keep_recent_tokens": 300, "reserve_tokens": None, "context_window": 200000},
        use_config=False,
    )
    plan = plan_compaction(
        loaded,  # type: ignore[arg-type]
        leaf_id,
        resolved.compaction_settings(),
        context_window=200000,
        branch=branch,
        projection=replay.projection,
        keys=keys,
        estimates=replay.token_estimates,
    )
    plan.entries_source = branch
    return plan


@pytest.mark.slow  # measured: among the slowest sweeps; make check and CI run it
@pytest.mark.usefixtures("cli_recursion_limit")
@pytest.mark.parametrize("case", CASES)
def test_lean_plan_regions_read_back_the_full_plans_entries(case: str) -> None:
    """The human dry run renders ``plan.regions``: after a lean load each region entry is read
    back from the file when shown, and must be the entry a full load holds, in every field."""
    from pitools.core.session.load import load

    path = GOLDEN / case / "session.jsonl"
    try:
        full = load(path)
        if load(path, keep="context").kept != "context":
            return  # v1/v2 and other files the lean load hands to the full path
    except PitoolsError:
        return
    leaves = [str(x) for x in [*full.index.leaves()[:3], full.index.leaf_id] if isinstance(x, str)]
    resolved = resolve_settings(
        session_cwd=None,
        model=None,
        flags={"keep_recent_tokens": 300, "reserve_tokens": None, "context_window": 200000},
        use_config=False,
    )
    for leaf in dict.fromkeys(leaves):
        try:
            leaf_id = full.leaf(leaf)
            expected = plan_compaction(full, leaf_id, resolved.compaction_settings(), context_window=200000)
        except PitoolsError:
            continue
        got = _lean_plan(path, leaf)
        rows = [(r.entry_id, r.region, r.tokens, r.is_cut, r.entry) for r in got.regions]  # type: ignore[attr-defined]
        assert rows == [(r.entry_id, r.region, r.tokens, r.is_cut, r.entry) for r in expected.regions]
