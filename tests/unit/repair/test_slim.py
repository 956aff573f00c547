"""The slim plan and its proof.

Only content no leaf's context holds is replaced, the placeholders say what it was, the one-walk
context union is Pi's per-leaf ``buildContextEntries`` on every golden session, and the
structural proof refuses every wrong slim the full replay refuses.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pitools.core.js.json.parse import parse_json_line
from pitools.core.repair.slim import (
    SlimOptions,
    SlimPlan,
    _context_union_per_leaf,
    candidate_line,
    candidates_of,
    compacted_away,
    context_union,
    placeholder,
    plan_slim,
    skeleton,
)
from pitools.core.repair.slim_check import (
    MessageHashes,
    check_slim,
    compare_fingerprints,
    slim_fingerprints,
)
from pitools.core.session.load import Session, load
from pitools.core.session.migrate import MigrationError
from pitools.core.session.tree import SessionIndex
from tests import support

GOLDEN = Path(__file__).resolve().parents[3] / "golden"
SESSIONS = sorted(p for p in GOLDEN.glob("*/*.jsonl") if p.stat().st_size < 5_000_000)
ALL = SlimOptions(images=True, thinking=True, tool_output=100)


def _load(data: bytes) -> tuple[Session, SessionIndex]:
    loaded = load(data, strict=False, freeze=False)
    return loaded.session, loaded.index


def _slim_case(name: str = "slim-images") -> tuple[Session, SessionIndex]:
    return _load((GOLDEN / name / "original.jsonl").read_bytes())


def test_placeholder_names_size_and_sha256() -> None:
    data = b"abc"
    assert placeholder("thinking", data) == (
        f"[pitools slim: thinking removed, 3 bytes, sha256 {hashlib.sha256(data).hexdigest()}]"
    )


def test_only_compacted_away_entries_change() -> None:
    session, index = _slim_case()
    away, leaves = compacted_away(index)
    assert leaves >= 1 and away
    plan = plan_slim(session.entries, ALL)
    assert plan.replacements
    for pos in plan.replacements:
        assert pos in away
    totals = plan.totals
    assert totals["images"].count > 0 and totals["images"].kept_in_context > 0


def test_nothing_selected_plans_nothing() -> None:
    session, _ = _slim_case()
    plan = plan_slim(session.entries, SlimOptions())
    assert not plan.replacements and not plan.totals


def test_skeleton_keeps_everything_but_replaceable_content() -> None:
    entry = {
        "type": "message",
        "id": "a",
        "parentId": None,
        "message": {
            "role": "assistant",
            "provider": "p",
            "model": "m",
            "usage": {"input": 1},
            "content": [
                {"type": "thinking", "thinking": "x" * 50},
                {"type": "toolCall", "id": "t", "name": "read", "arguments": {"path": "a"}},
                {"type": "text", "text": "hi"},
            ],
        },
    }
    sk = skeleton(entry)
    assert sk["message"]["content"] == [entry["message"]["content"][1]]
    assert {k: v for k, v in sk["message"].items() if k != "content"} == {
        k: v for k, v in entry["message"].items() if k != "content"
    }
    assert len(entry["message"]["content"]) == 3  # the entry itself is left alone
    assert skeleton(sk) == sk


@pytest.mark.parametrize("path", SESSIONS, ids=[f"{p.parent.name}/{p.name}" for p in SESSIONS])
def test_context_union_is_pi_per_leaf(path: Path) -> None:
    """The one-walk union equals Pi's buildContextEntries run at every leaf, on every golden file."""
    try:
        session, index = _load(path.read_bytes())
    except MigrationError:
        pytest.skip("Pi cannot migrate it")
    if not session.valid or not session.entries:
        pytest.skip("Pi reads nothing")
    fast = context_union(index)
    slow = _context_union_per_leaf(index)
    assert (fast.on_path, fast.in_context, fast.leaves) == (slow.on_path, slow.in_context, slow.leaves)
    # On skeletons too (what ops/slim keeps in memory).
    sk_union = context_union(SessionIndex.build([skeleton(e) for e in session.entries]))
    assert (sk_union.on_path, sk_union.in_context) == (fast.on_path, fast.in_context)


def _after(plan: SlimPlan) -> dict[int, Any]:
    return {pos: parse_json_line(line)[0] for pos, line in plan.replacements.items()}


def _full(session: Session, index: SessionIndex, plan: SlimPlan) -> list[str]:
    hashes = MessageHashes()
    before = slim_fingerprints(session, index, hashes)
    entries = list(session.entries)
    for pos, value in _after(plan).items():
        entries[pos] = value
    slimmed = dataclasses.replace(session, entries=entries)
    return compare_fingerprints(before, slim_fingerprints(slimmed, SessionIndex.build(entries), hashes))


@pytest.mark.parametrize("case", ["slim-images", "slim-compacted", "slim-compacted-images"])
def test_structural_proof_and_full_replay_agree(case: str) -> None:
    session, index = _slim_case(case)
    plan = plan_slim(session.entries, ALL)
    assert plan.replacements
    assert check_slim(session.entries, plan, _after(plan), session.lines) == []
    assert _full(session, index, plan) == []
    # The proof also runs on skeletons, as ops/slim does.
    sk = [skeleton(e) for e in session.entries]
    assert check_slim(sk, plan, _after(plan)) == []


def _wrong_plan(session: Session, index: SessionIndex) -> SlimPlan:
    """A plan that also slims an entry some leaf's context holds."""
    plan = plan_slim(session.entries, ALL)
    union = context_union(index)
    candidates = candidates_of(session.entries, ALL)
    pos = next(p for p, c in candidates.items() if c.new is not None and p in union.in_context)
    plan.replacements[pos] = candidate_line(candidates[pos])
    return plan


def test_touching_an_entry_in_a_context_is_refused() -> None:
    session, index = _slim_case()
    plan = _wrong_plan(session, index)
    problems = check_slim(session.entries, plan, _after(plan), session.lines)
    assert len(problems) == 1 and "in the context Pi builds" in problems[0]
    assert problems[0].startswith("line ")
    assert _full(session, index, plan), "the full replay sees it too"


def _edited(plan: SlimPlan, edit: Any) -> SlimPlan:
    pos = min(plan.replacements)
    value = json.loads(plan.replacements[pos])
    edit(value)
    replacements = dict(plan.replacements)
    replacements[pos] = json.dumps(value).encode() + b"\n"
    return SlimPlan(replacements, plan.totals, plan.leaves, plan.compacted_entries)


def test_changing_a_field_outside_the_content_is_refused() -> None:
    session, index = _slim_case()
    plan = plan_slim(session.entries, ALL)
    pos = min(plan.replacements)
    expected = [f"entry #{pos}: a field outside the replaced content would change"]
    wrong_role = _edited(plan, lambda v: v["message"].update(role="developer"))
    assert check_slim(session.entries, wrong_role, _after(wrong_role)) == expected
    assert _full(session, index, wrong_role), "the full replay sees it too (inspect's role counts)"
    # Stricter than the replay: a timestamp that changes nothing Pi builds today is still refused.
    new_time = _edited(plan, lambda v: v.update(timestamp="2000-01-01T00:00:00.000Z"))
    assert check_slim(session.entries, new_time, _after(new_time)) == expected


def test_a_new_line_that_does_not_parse_is_refused() -> None:
    session, _ = _slim_case()
    plan = plan_slim(session.entries, ALL)
    pos = min(plan.replacements)
    assert check_slim(session.entries, plan, {}) and "does not parse" in check_slim(session.entries, plan, {})[0]
    assert pos in plan.replacements


def test_fingerprints_catch_a_changed_context() -> None:
    session, index = _slim_case()
    before = slim_fingerprints(session, index)
    # Change the last entry (always in the default leaf's context).
    entries = session.entries
    last = json.loads(json.dumps(entries[-1]))
    last["message"]["timestamp"] = 1
    entries[-1] = parse_json_line(json.dumps(last).encode())[0]
    after = slim_fingerprints(session, SessionIndex.build(entries))
    assert compare_fingerprints(before, after)
    assert not compare_fingerprints(before, slim_fingerprints(*_slim_case()))


@pytest.mark.parametrize("shape", ["compacted", "never", "branches", "images", "tool-images"])
@pytest.mark.parametrize("seed", [1, 2])
def test_generated_sessions_union_and_proof(shape: str, seed: int) -> None:
    """Bench-shaped sessions (many leaves, compactions, branch summaries, images): the one-walk
    union is Pi's per-leaf one, and the structural proof and the full replay agree."""
    gen = support.load_script("gen_big")
    data = gen.generate_images(2.5, seed) if shape == "images" else gen.generate(2.5, seed, shape)
    session, index = _load(data)
    fast = context_union(index)
    slow = _context_union_per_leaf(index)
    assert (fast.on_path, fast.in_context, fast.leaves) == (slow.on_path, slow.in_context, slow.leaves)
    plan = plan_slim(session.entries, ALL)
    assert check_slim(session.entries, plan, _after(plan)) == []
    assert _full(session, index, plan) == []
    if shape == "compacted":
        assert plan.replacements, "a compacted session has something to slim"
