"""The viewer's context facts (``compactions`` and the per-entry ``ctxTokens``) against Pi.

The page does not apply Pi's context rules: it slices the selected entry's path with these
facts. So the facts alone, sliced the way the page slices them, must give Pi's
``buildContextEntries`` at every recorded leaf of every golden session, and ``ctxTokens`` Pi's
``estimateProjectedContextTokens`` at every entry Pi was asked about (the fixture the browser
test samples: here every entry, no browser).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pitools.core.views.viewer import FLAG_ESTIMATED, FLAG_MESSAGE, ViewerModel, build_viewer_model
from tests import support
from tests.viewer.test_viewer_page import _cases, id_text

TOTALS = Path(__file__).parents[2] / "viewer" / "fixtures" / "pi_entry_totals.json.gz"


def _model(case: str) -> ViewerModel | None:
    from pitools.core.session.load import load
    from pitools.errors import PitoolsError

    try:
        loaded = load(support.golden_session(case))
        return build_viewer_model(loaded, None, None)
    except PitoolsError:
        return None  # a tree pitools refuses (a parentId loop): no page either


def _path(model: ViewerModel, pos: int) -> list[int]:
    out: list[int] = []
    while pos >= 0 and pos not in out:
        out.append(pos)
        pos = model.parent[pos]
    return out[::-1]


def _sliced(model: ViewerModel, pos: int) -> list[int]:
    """The page's ``contextAt``: its path cut where the facts say."""
    path = _path(model, pos)
    c = next((p for p in reversed(path) if p in model.compactions), -1)
    assert c == model.ctx_comp[pos]
    if c < 0:
        return path
    cut, start = (path.index(p) for p in model.compactions[c])
    kept = [p for p in path[start:cut] if not (model.flags[p] & FLAG_MESSAGE and model.kinds[p] == "system")]
    return [path[cut], *kept, *path[cut + 1 :]]


def _ids(model: ViewerModel, positions: list[int]) -> list[str]:
    return [model.ids[p] for p in positions]


def test_sliced_context_is_pis_at_every_leaf() -> None:
    compared = 0
    failures: list[str] = []
    for case in _cases():
        model = _model(case)
        if model is None:
            continue
        rec = support.golden_recording(case)
        pos_of = {eid: p for p, eid in enumerate(model.ids)}  # the last wins, as Pi's byId
        for leaf, want in rec["byLeaf"].items():
            if not isinstance(want, dict) or "error" in want or not want.get("leafExists") or leaf not in pos_of:
                continue
            if not isinstance(want.get("contextEntries"), list):
                continue
            got = _ids(model, _sliced(model, pos_of[leaf]))
            if got != [id_text(x) for x in want["contextEntries"]]:
                failures.append(f"{case} at {leaf}: {got[:4]}…")
            compared += 1
    assert not failures, "\n".join(failures[:20])
    assert compared >= 100, compared


def test_totals_are_pis_at_every_recorded_entry() -> None:
    recorded: dict[str, dict[str, Any]] = json.loads(gzip.decompress(TOTALS.read_bytes()))
    compared = 0
    failures: list[str] = []
    for case in _cases():
        pi = recorded.get(case)
        model = _model(case) if pi else None
        if model is None or pi is None:
            continue
        pos_of = {eid: p for p, eid in enumerate(model.ids)}
        for eid, tokens in pi.items():
            if not isinstance(tokens, int) or not eid or eid not in pos_of:
                continue
            p = pos_of[eid]
            if model.flags[p] & FLAG_ESTIMATED:
                failures.append(f"{case} at {eid}: estimated ({model.ctx_tokens[p]})")
            elif model.ctx_tokens[p] != tokens:
                failures.append(f"{case} at {eid}: {model.ctx_tokens[p]} != Pi's {tokens}")
            compared += 1
    assert not failures, f"{len(failures)} differences:\n" + "\n".join(failures[:20])
    assert compared >= 3000, compared


def test_past_the_budget_totals_are_flagged_estimates(tmp_path: Path) -> None:
    """With no replay budget, entries with no usage since their last compaction get the sum of
    their context's estimates, flagged; those with usage keep Pi's usage-based figure."""
    from pitools.core.session.load import load

    case = next(c for c in _cases() if "compact" in c and _model(c) is not None)
    loaded = load(support.golden_session(case))
    full = build_viewer_model(loaded, None, None)
    none = build_viewer_model(loaded, None, None, budget=0)
    flagged = [p for p in range(len(none.ids)) if none.flags[p] & FLAG_ESTIMATED]
    assert flagged
    for p in range(len(none.ids)):
        if not none.flags[p] & FLAG_ESTIMATED:
            assert none.ctx_tokens[p] == full.ctx_tokens[p]
        else:  # the page's old fallback: the context's estimates, a compaction after the first as 0
            order = _sliced(none, p)
            want = sum(
                0 if i and none.kinds[q] == "compaction" and not none.flags[q] & FLAG_MESSAGE else none.tokens[q] or 0
                for i, q in enumerate(order)
            )
            assert none.ctx_tokens[p] == want


@pytest.mark.parametrize("budget", [0, 10**9])
def test_facts_cover_every_entry(budget: int) -> None:
    from pitools.core.session.load import load

    case = _cases()[0]
    model = build_viewer_model(load(support.golden_session(case)), None, None, budget=budget)
    n = len(model.ids)
    assert len(model.ctx_comp) == len(model.ctx_tokens) == n
    assert "ctxTokens" in model.meta_json() and "exact" not in model.meta_json()


def test_an_edit_of_a_later_entry_is_no_usage_based_total() -> None:
    """golden/branches-usage-tails: a context edit names an entry written after it and after a
    reply with usage; Pi's total there counts the edited text, so the usage plus the unedited
    estimate is not Pi's: replayed within the budget, flagged as an estimate beyond it."""
    from pitools.core.session.load import load

    loaded = load(support.golden_session("branches-usage-tails"))
    pi = json.loads(gzip.decompress(TOTALS.read_bytes()))["branches-usage-tails"]["pc3"]
    full = build_viewer_model(loaded, None, None)
    p = full.ids.index("pc3")
    assert full.ctx_tokens[p] == pi and not full.flags[p] & FLAG_ESTIMATED
    none = build_viewer_model(loaded, None, None, budget=0)
    assert none.flags[p] & FLAG_ESTIMATED


@pytest.mark.parametrize("case", support.golden_cases())
def test_facts_gathered_while_loading_make_the_same_model(case: str) -> None:
    # export --format html gathers the entries' facts as the loader parses them (load_for_page);
    # the model must be the one built by reading the entries back afterwards.
    from pitools.core.session.load import load
    from pitools.errors import PitoolsError
    from pitools.ops.viewer import load_for_page

    path = str(support.golden_session(case))
    try:
        gathered, facts = load_for_page(path)
        plain = load(path, keep="context")
        with_facts = build_viewer_model(gathered, None, None, facts=facts)
        without = build_viewer_model(plain, None, None)
    except PitoolsError:
        return  # a file pitools refuses: no page either
    assert with_facts.meta_json() == without.meta_json()


def test_a_failure_while_loading_leaves_the_facts_to_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # Raised inside the loader, the error would change what fails first; the facts are marked
    # incomplete instead, and the model gathers them again (raising there, where it always did).
    from pitools.core.views import viewer
    from pitools.ops.viewer import load_for_page

    real = viewer.EntryFacts.add
    calls = [0]

    def flaky(self: viewer.EntryFacts, e: Any) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("boom")
        real(self, e)

    monkeypatch.setattr(viewer.EntryFacts, "add", flaky)
    loaded, facts = load_for_page(str(support.GOLDEN / "seed-running-example" / "session.jsonl"))
    assert facts.failed and len(facts) == 2
    monkeypatch.setattr(viewer.EntryFacts, "add", real)
    model = build_viewer_model(loaded, None, None, facts=facts)
    assert len(model.flags) == len(loaded.index)


@pytest.mark.parametrize("case", [c for c in support.golden_cases() if _model(c) is not None])
def test_estimates_reused_from_the_facts_are_the_replays_own(case: str) -> None:
    # The page's replays take each unedited message's estimate from the facts gathered while
    # loading instead of estimating it again: at every entry of every golden session, the
    # figures must be those of a replay that estimates everything itself.
    from pitools.core.context.build import replay_context
    from pitools.core.session.load import load

    loaded = load(support.golden_session(case))
    model = build_viewer_model(loaded, None, None)
    calls: list[int] = []

    def known(p: int) -> int | None:
        calls.append(p)
        return model.known_tokens(p)

    for eid in loaded.index.ids:
        alone = replay_context(loaded.index, eid)
        shared = replay_context(loaded.index, eid, known)
        assert shared.shown_estimates == alone.shown_estimates
        assert [type(x) for x in shared.shown_estimates] == [type(x) for x in alone.shown_estimates]
        assert (shared.estimates_error is None) == (alone.estimates_error is None)
        assert (shared.estimate_error is None) == (alone.estimate_error is None)
        if alone.estimate_error is None:
            assert shared.estimate == alone.estimate
        assert [pe.tokens() for pe in shared.projection.entries] == [pe.tokens() for pe in alone.projection.entries]
    assert calls or len(loaded.index) < 3
