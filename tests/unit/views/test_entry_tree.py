"""Per-entry tree facts agree with the tree and context core on every golden session."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitools.core.context.build import replay_context
from pitools.core.session.load import load
from pitools.core.session.tree import SessionIndex
from pitools.core.views.entry_tree import skeleton, tree_facts
from pitools.errors import PitoolsError

GOLDEN = Path(__file__).resolve().parents[3] / "golden"
#: Damaged sessions (cycles, self-parents, duplicate ids) are left out: there the index gives no
#: branch to entries the tree cannot reach from a root, on purpose (see entry_tree's docstring).
CASES = sorted(
    p.name
    for p in GOLDEN.iterdir()
    if (p / "session.jsonl").is_file() and "broken" not in p.name and not p.name.startswith("repair-")
)


@pytest.mark.parametrize("case", CASES)
def test_facts_match_branches_and_context(case: str) -> None:
    from pitools.core.session.migrate import MigrationError

    try:
        session = load(GOLDEN / case / "session.jsonl", strict=False).session
    except MigrationError:
        pytest.skip("Pi cannot open this file")
    entries = session.entries
    facts = tree_facts(entries)
    index = SessionIndex.build(entries)
    assert sorted(facts.leaves) == sorted(index.leaves())
    # An entry's leaves are exactly the leaves whose getBranch holds it.
    holders: dict[int, set[str]] = {}
    for leaf in index.leaves():
        for e in index.get_branch(leaf):
            holders.setdefault(id(e), set()).add(leaf)
    for i, e in enumerate(entries):
        assert set(facts.leaves_of(i)) == holders.get(id(e), set()), (i, e.get("id"))
    # In context: what Pi's context at the default leaf is built from (minus edited-out entries).
    try:
        replay = replay_context(index, index.leaf_id)
    except PitoolsError:  # Pi throws building this context: no context to compare with
        return
    kept = {id(pe.source) for pe in replay.projection.entries if pe.omitted != "edited-out"}
    on_path = {id(e) for e in replay.path}
    for i, e in enumerate(entries):
        assert facts.in_context[i] == (id(e) in kept), (i, e.get("id"))
        assert facts.summarized[i] == (id(e) in on_path and id(e) not in {id(x) for x in replay.context_entries})
    # The facts depend on nothing but the skeleton the index stores.
    again = tree_facts([skeleton(e) for e in entries])
    assert (again.leaves, again.leaf_lo, again.leaf_hi, again.in_context, again.summarized) == (
        facts.leaves,
        facts.leaf_lo,
        facts.leaf_hi,
        facts.in_context,
        facts.summarized,
    )


def test_abandoned_branch_and_compaction() -> None:
    e = [
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "t", "message": {"role": "user"}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "t", "message": {"role": "assistant"}},
        {"type": "message", "id": "x1", "parentId": "u1", "timestamp": "t", "message": {"role": "user"}},
        {"type": "message", "id": "u2", "parentId": "a1", "timestamp": "t", "message": {"role": "user"}},
        {"type": "compaction", "id": "c1", "parentId": "u2", "timestamp": "t", "firstKeptEntryId": "u2"},
        {"type": "message", "id": "u3", "parentId": "c1", "timestamp": "t", "message": {"role": "user"}},
    ]
    f = tree_facts(e)
    assert f.leaves == ["u3", "x1"] or f.leaves == ["x1", "u3"]
    assert [f.leaves_of(i) for i in range(len(e))][2] == ["x1"]
    assert set(f.leaves_of(0)) == {"x1", "u3"}
    assert f.in_context == [False, False, False, True, True, True]
    assert f.summarized == [True, True, False, False, False, False]


@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir() if p.name.startswith(("repair-", "broken-"))))
def test_damaged_sessions_never_crash_the_facts(case: str) -> None:
    """Cycles, self-parents, entries Pi throws on: facts come out, in range, for every entry."""
    from pitools.core.session.migrate import MigrationError

    try:
        session = load(GOLDEN / case / "session.jsonl", strict=False).session
    except MigrationError:
        pytest.skip("Pi cannot open this file")
    facts = tree_facts(session.entries)
    n = len(session.entries)
    assert len(facts.leaf_lo) == len(facts.in_context) == n
    assert all(0 <= lo <= hi <= len(facts.leaves) for lo, hi in zip(facts.leaf_lo, facts.leaf_hi, strict=True))
