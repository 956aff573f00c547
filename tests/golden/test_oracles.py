"""The Pi mirrors written once on the loader's index interface give what the old list-of-entries
implementations (``tests/oracles/pi_mirrors.py``) give, on every golden session, at every entry
as the leaf (plus Pi's fallbacks: no leaf, a null leaf, an unknown id), under both keep
policies of the loader ("all" and "context"): ``getBranch``/``buildSessionPath``,
``buildContextEntries``, the projection, the settings, the token estimates and the compaction
regions. The oracles themselves are checked against Pi's recordings by ``test_conformance.py``
(the parity view, ``pitools/core/parity.py``, walks paths with them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pitools.core.compaction.plan import plan_compaction
from pitools.core.compaction.prepare import CompactionSettings, prepare_compaction
from pitools.core.context.build import replay_context
from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import LoadedSession, load
from pitools.errors import PitoolsError
from tests.oracles import pi_mirrors as oracle

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CASES = sorted(p.parent.name for p in GOLDEN.glob("*/session.jsonl"))
#: Entries tried as the leaf per session besides the real leaves (spread over the file).
SAMPLE_LEAVES = 12


pytestmark = pytest.mark.usefixtures("cli_recursion_limit")


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except PitoolsError as exc:  # Pi's own failures (a cycle, a crash on a missing message)
        return type(exc).__name__, str(exc)
    except (TypeError, ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def _replay_view(index: Any, leaf: Any) -> dict[str, Any]:
    r = replay_context(index, leaf)
    p = r.projection
    return {
        "path": list(r.path),
        "pathIds": r.path_ids,
        "contextEntries": r.context_entries,
        "projection": [(pe.source, pe.messages, pe.omitted, pe.edit) for pe in p.entries],
        "messages": p.messages,
        "thinkingLevel": p.thinking_level,
        "model": p.model,
        "tokenEstimates": r.token_estimates,
        "estimate": r.estimate.to_json(),
    }


def _loads(case: str) -> tuple[LoadedSession, Any] | None:
    path = GOLDEN / case / "session.jsonl"
    full = _outcome(lambda: load(path))
    lean = _outcome(lambda: load(path, keep="context"))
    if full[0] != "ok":
        assert lean[0] == full[0] and lean[1] == full[1], "the keep policies reject the file differently"
        return None
    assert lean[0] == "ok", lean
    return full[1], lean[1]


def _leaves(full: LoadedSession, lean: Any) -> list[tuple[Any, Any]]:
    """(leaf for the full load, the same leaf for the context load): every real leaf, entries
    spread over the file (an object id is a key by identity, so each load gets its own copy of
    it), and Pi's fallbacks."""
    held = sorted(set(full.index.pos_by_id.values()))
    step = max(1, len(held) // SAMPLE_LEAVES)
    leaves = {full.index.position_of(leaf) for leaf in full.index.leaves()}
    positions = sorted({*held[::step], *(p for p in leaves if p is not None)})
    pairs = [(full.index.ids[p], lean.index.ids[p]) for p in positions]
    return [*pairs, (UNDEFINED, UNDEFINED), (None, None), ("no-such-entry", "no-such-entry")]


@pytest.mark.parametrize("case", CASES)
def test_walks_and_context_match_the_oracles(case: str) -> None:
    loads = _loads(case)
    if loads is None:
        return
    full, lean = loads
    index = full.index
    compared = 0
    for leaf, lean_leaf in _leaves(full, lean):
        # getBranch / buildSessionPath on entry objects: the very objects the oracle walks to.
        got = _outcome(lambda leaf=leaf: [id(e) for e in index.get_branch(leaf)])
        assert got == _outcome(lambda leaf=leaf: [id(e) for e in oracle.get_branch(index, leaf)]), leaf
        got = _outcome(lambda leaf=leaf: [id(e) for e in index.session_path(leaf)])
        assert got == _outcome(lambda leaf=leaf: [id(e) for e in oracle.session_path(index, leaf)]), leaf
        spath = _outcome(lambda leaf=leaf: oracle.session_path(index, leaf))
        if spath[0] == "ok":
            from pitools.core.context.build import context_entries_from_path

            got_ctx = [id(e) for e in context_entries_from_path(spath[1])]
            assert got_ctx == [id(e) for e in oracle.context_entries_from_path(spath[1])], leaf
        want = _outcome(lambda leaf=leaf: oracle.replay(index, leaf))
        assert _outcome(lambda leaf=leaf: _replay_view(index, leaf)) == want, f"keep=all differs at {leaf!r}"
        got_lean = _outcome(lambda leaf=lean_leaf: _replay_view(lean.index, leaf))
        assert got_lean == want, f"keep=context differs at {leaf!r}"
        compared += 1
    assert compared >= 3
    if lean.kept == "context":
        lean.index.close()


@pytest.mark.parametrize("case", CASES)
def test_compaction_regions_match_the_oracle(case: str) -> None:
    loads = _loads(case)
    if loads is None:
        return
    full, lean = loads
    for keep in (300, 20000):
        settings = CompactionSettings(keep_recent_tokens=keep)
        for leaf, lean_leaf in _leaves(full, lean)[:20]:

            def want(leaf: Any = leaf, settings: CompactionSettings = settings) -> list[Any]:
                branch = oracle.get_branch(full.index, leaf)
                if not branch:
                    raise PitoolsError("no path")
                projection = oracle.build_projection(branch)
                prep = prepare_compaction(branch, settings, projection=projection)
                rows = oracle.region_rows(branch, prep, projection)
                return [(eid, region, tokens, cut, e) for e, eid, region, tokens, cut in rows]

            def got(loaded: Any, leaf: Any, settings: CompactionSettings = settings) -> list[Any]:
                plan = plan_compaction(loaded, leaf, settings, context_window=200000)
                return [(r.entry_id, r.region, r.tokens, r.is_cut, r.entry) for r in plan.regions]

            expected = _outcome(want)
            if expected[0] != "ok":
                assert _outcome(lambda leaf=leaf: got(full, leaf))[0] != "ok"
                assert _outcome(lambda leaf=lean_leaf: got(lean, leaf))[0] != "ok"
                continue
            assert _outcome(lambda leaf=leaf: got(full, leaf)) == expected, f"keep=all regions differ at {leaf!r}"
            assert _outcome(lambda leaf=lean_leaf: got(lean, leaf)) == expected, f"keep=context differs at {leaf!r}"
    if lean.kept == "context":
        lean.index.close()
