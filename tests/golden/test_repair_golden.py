"""``pitools repair`` and ``pitools slim`` judged by Pi 1.6.0 itself (recordings of the oracle).

Repair: Pi loads the repaired file and, at every leaf of the undamaged original whose path the
damage did not destroy, builds the same context as on the original. Slim: Pi's context,
compaction plan and tree are identical before and after at every leaf. Expected values come
only from the recordings (``python -m tests.golden.repair_cases`` writes and records them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.golden.repair_cases import GOLDEN, REPAIR_CASES, SLIM_CASES, load_extra, repaired_bytes, slimmed_bytes

REPAIR_IDS = [c.name for c in REPAIR_CASES]
SLIM_IDS = [c.name for c in SLIM_CASES]


def _context(leaf: dict[str, Any]) -> Any:
    return leaf.get("context"), leaf.get("llmMessages"), leaf.get("tokenEstimates")


def _intact_leaves(original: dict[str, Any], repaired: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Original leaves whose whole path is in the repaired file unchanged, and the others."""
    after = {json.dumps(e, sort_keys=True) for e in repaired["entries"]}
    by_id = {e.get("id"): e for e in original["entries"] if isinstance(e, dict)}
    intact, destroyed = [], []
    for leaf, view in original["byLeaf"].items():
        path = view.get("path") or []
        if path and all(json.dumps(by_id[i], sort_keys=True) in after for i in path):
            intact.append(leaf)
        else:
            destroyed.append(leaf)
    return intact, destroyed


@pytest.mark.parametrize("case", REPAIR_CASES, ids=REPAIR_IDS)
def test_repair_restores_what_pi_builds(case: Any) -> None:
    folder = GOLDEN / f"repair-{case.name}"
    damaged = (folder / "session.jsonl").read_bytes()
    original_bytes = (folder / "original.jsonl").read_bytes()
    # The recorded repaired file is what pitools makes of the damaged one today.
    assert repaired_bytes(case, damaged, original_bytes) == (folder / "repaired.jsonl").read_bytes()
    original = load_extra(folder, "original")
    repaired = load_extra(folder, "repaired")
    assert not original.get("invalid") and "error" not in original
    assert not repaired.get("invalid"), "Pi rejects the repaired file"
    assert "error" not in repaired, repaired.get("error")
    for leaf, view in repaired["byLeaf"].items():
        assert view.get("error") != "cycle", f"Pi loops at {leaf} in the repaired file"
    intact, destroyed = _intact_leaves(original, repaired)
    if case.all_leaves:
        assert not destroyed, f"leaves the repair should have restored: {destroyed}"
    # (Damage near the root, e.g. a self-parent, destroys every path: then only "Pi builds every
    # leaf of the repaired file" above is checked.)
    for leaf in intact:
        assert (
            leaf in repaired["byLeaf"]
            or leaf in repaired["leaves"]
            or any(e.get("id") == leaf for e in repaired["entries"])
        ), leaf
        if leaf not in repaired["byLeaf"]:
            continue  # no longer a leaf (an orphan re-attached under it): compared through its child
        assert _context(repaired["byLeaf"][leaf]) == _context(original["byLeaf"][leaf]), leaf
    compared = [leaf for leaf in intact if leaf in repaired["byLeaf"]]
    assert compared or not case.all_leaves


@pytest.mark.parametrize("case", REPAIR_CASES, ids=REPAIR_IDS)
def test_damage_is_real(case: Any) -> None:
    """Pi's own result on the damaged file differs from the original's (the case tests something)."""

    folder = GOLDEN / f"repair-{case.name}"
    damaged = json.loads(support.recording_text(folder / "pi.krt20000.json.xz"))
    original = load_extra(folder, "original")
    same = (
        not damaged.get("invalid")
        and damaged.get("entries") == original["entries"]
        and damaged.get("byLeaf", {}).keys() == original["byLeaf"].keys()
        and damaged.get("loaderAppendedNewline") == original.get("loaderAppendedNewline")
        and damaged.get("fileBytes") == original.get("fileBytes")
    )
    assert not same


def _slim_view(leaf: dict[str, Any]) -> Any:
    comp = leaf.get("compaction")
    if isinstance(comp, dict):
        comp = {k: v for k, v in comp.items() if k not in ("summaryRequests", "compactResult")} | {
            "compactResult": comp.get("compactResult")
        }
    return leaf.get("error"), _context(leaf), leaf.get("contextEntries"), leaf.get("estimatedContextTokens"), comp


@pytest.mark.parametrize("case", SLIM_CASES, ids=SLIM_IDS)
def test_slim_keeps_what_pi_builds(case: Any) -> None:

    folder = GOLDEN / f"slim-{case.name}"
    original_bytes = (folder / "original.jsonl").read_bytes()
    slimmed = (folder / "session.jsonl").read_bytes()
    assert slimmed_bytes(original_bytes, case.args) == slimmed
    assert len(slimmed) < len(original_bytes), "the case slims nothing"
    before = load_extra(folder, "original")
    after = json.loads(support.recording_text(folder / "pi.krt20000.json.xz"))
    assert before["byLeaf"].keys() == after["byLeaf"].keys()
    for leaf in before["byLeaf"]:
        assert _slim_view(after["byLeaf"][leaf]) == _slim_view(before["byLeaf"][leaf]), leaf
    for key in ("tree", "roots", "leaves", "leafId", "labels", "entryCount", "stats", "usageBreakdown", "sessionName"):
        assert after[key] == before[key], key
    # Same ids, parents and order; lines differ only where slim put placeholders.
    b_lines, a_lines = original_bytes.splitlines(), slimmed.splitlines()
    assert len(a_lines) == len(b_lines)
    for x, y in zip(b_lines, a_lines, strict=True):
        if x != y:
            ex, ey = json.loads(x), json.loads(y)
            assert (ex["id"], ex["parentId"], ex["type"]) == (ey["id"], ey["parentId"], ey["type"])
            assert b"[pitools slim: " in y


def test_cases_are_recorded() -> None:
    missing = [
        str(p)
        for c in REPAIR_CASES
        for p in (GOLDEN / f"repair-{c.name}" / n for n in ("original.pi.json.xz", "repaired.pi.json.xz"))
        if not Path(p).exists()
    ]
    missing += [str(GOLDEN / f"slim-{c.name}" / "original.pi.json.xz") for c in SLIM_CASES]
    missing = [m for m in missing if not Path(m).exists()]
    assert not missing
