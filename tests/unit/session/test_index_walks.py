"""The walks and structure written once on positions (``PositionWalks`` in core/session/index.py):
the same answers under both keep policies, and the right ones on hostile shapes (parentId loops,
a self-parent, a duplicate id, a non-string id, a missing parent, a leaf an earlier duplicate
stands for)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pitools.core.js.value import UNDEFINED
from pitools.core.session.index import EntryIndex
from pitools.core.session.load import load
from pitools.errors import CycleError, PitoolsError
from tests import support

HEADER = {"type": "session", "version": 3, "id": "S", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}


def _entry(eid: Any, parent: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "custom", "customType": "t", "id": eid, "parentId": parent, **extra}


#: position: what the entry is
HOSTILE = [
    _entry("a", None),  # 0 the root
    _entry("b", "a"),  # 1
    _entry("c", "b"),  # 2 an earlier "c": byId holds position 9 instead
    _entry("d", "b"),  # 3
    _entry("s", "s"),  # 4 its own parent
    _entry("x", "y"),  # 5 x -> y -> x
    _entry("y", "x"),  # 6
    _entry(5, "c"),  # 7 a number id, under the later "c"
    _entry("m", "zzz"),  # 8 a parent that does not exist: a root for the walk
    _entry("c", "a"),  # 9 the "c" byId holds
    _entry("e", "d"),  # 10
    {"type": "label", "id": "l1", "parentId": "e", "targetId": "a", "label": "start", "timestamp": "t"},  # 11
]


@pytest.fixture(params=["all", "context"])
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> EntryIndex:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in [HEADER, *HOSTILE]))
    loaded = load(path, keep=request.param)
    assert type(loaded.index).__name__ == ("SessionIndex" if request.param == "all" else "LeanIndex")
    return loaded.index


def test_leaves_are_string_ids_no_held_entry_points_to(hostile: EntryIndex) -> None:
    # "c" (position 2, not held) is pointed to by 5; "s" points to itself; "e" has the label.
    assert hostile.leaves() == ["m", "l1"]
    # Then Pi's default leaf (the last entry, already a leaf here), each once.
    assert hostile.leaf_positions() == [8, 11]


def test_children_are_over_the_entries_byid_holds(hostile: EntryIndex) -> None:
    children = hostile.children_positions()
    assert children == {
        None: [0],
        "a": [1, 9],
        "b": [3],
        "s": [4],
        "y": [5],
        "x": [6],
        "c": [7],
        "zzz": [8],
        "d": [10],
        "e": [11],
    }


def test_depths_and_loops(hostile: EntryIndex) -> None:
    depths = hostile.depths()
    assert depths == {0: 0, 1: 1, 9: 1, 3: 2, 4: None, 5: None, 6: None, 7: 2, 8: 0, 10: 3, 11: 4}
    assert hostile.find_cycles() == [["s"], ["x", "y"]]


def test_walks(hostile: EntryIndex) -> None:
    assert hostile.walk_positions(2) == [2, 1, 0]  # an earlier duplicate walks up from its own parent
    assert hostile.walk_positions(7) == [7, 9, 0]  # "c" means the last entry with that id
    assert hostile.walk_positions(8) == [8]
    with pytest.raises(CycleError, match="x -> y -> x"):
        hostile.walk_positions(5)
    with pytest.raises(CycleError, match="s -> s"):
        hostile.walk_positions(4)
    assert hostile.branch_positions("l1") == [0, 1, 3, 10, 11]
    assert hostile.branch_positions("nope") == []
    assert hostile.branch_positions(5) == [0, 9, 7]
    assert hostile.session_path_positions("nope") == [0, 1, 3, 10, 11]  # unknown: the last entry
    assert hostile.session_path_positions(UNDEFINED) == [0, 1, 3, 10, 11]
    assert hostile.session_path_positions(None) == []


def test_fold_positions_memoises_and_reports_loops(hostile: EntryIndex) -> None:
    steps: list[int] = []

    def step(path: tuple[Any, ...], pos: int) -> tuple[Any, ...]:
        steps.append(pos)
        return (*path, hostile.ids[pos])

    of = hostile.fold_positions(step, ())
    assert of(11) == ("a", "b", "d", "e", "l1")
    assert of(7) == ("a", "c", 5)
    assert of(6) is None and of(5) is None and of(4) is None
    assert of(2) == ("a", "b", "c")
    assert sorted(steps) == sorted(set(steps))  # each position folded once


def test_label_entries(hostile: EntryIndex) -> None:
    assert [e["id"] for e in hostile.label_entries()] == ["l1"]


def _structure(index: EntryIndex) -> dict[str, Any]:
    return {
        "leaves": index.leaves(),
        "leaf_positions": index.leaf_positions(),
        "children": index.children_positions(),
        "depths": index.depths(),
        "cycles": index.find_cycles(),
        "labels": [orjson.dumps(e) for e in index.label_entries()],
    }


@pytest.mark.usefixtures("cli_recursion_limit")
@pytest.mark.parametrize("case", support.golden_cases())
def test_both_keep_policies_give_the_same_structure(case: str) -> None:
    path = support.GOLDEN / case / "session.jsonl"
    try:
        full = load(path)
    except PitoolsError:
        pytest.skip("Pi reads nothing from this file")
    lean = load(path, keep="context")
    if type(lean.index).__name__ != "LeanIndex":
        pytest.skip("migrated: the context policy loads it whole")
    assert _structure(lean.index) == _structure(full.index)
