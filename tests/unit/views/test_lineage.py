"""Fork/clone lineage: parentSession resolution and which entries are copied history."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pitools.core.session.load import load
from pitools.core.views.lineage import (
    SessionRef,
    ancestors,
    copied_entry_ids,
    default_canonical,
    descendants,
    resolve_parents,
)
from pitools.core.views.usage import sum_records, usage_records
from tests.golden.fork_cases import CASES, PARENT_ROOT, source_path

GOLDEN = Path(__file__).resolve().parents[3] / "golden"


def _e(eid: str, parent: str | None, ts: str, **extra: Any) -> dict[str, Any]:
    return {"type": "custom", "id": eid, "parentId": parent, "timestamp": ts, **extra}


def _refs(*items: tuple[str, Any, Any]) -> list[SessionRef]:
    return [SessionRef(key=k, session_id=sid, parent_session=p, folder=os.path.dirname(k)) for k, sid, p in items]


def _same(path: str) -> str:
    return os.path.normpath(path)


def test_resolve_parents_by_path_name_and_id() -> None:
    refs = _refs(
        ("/a/s/2026_p.jsonl", "P", None),
        ("/a/s/2026_c.jsonl", "C", "/a/s/2026_p.jsonl"),  # Pi's absolute path
        ("/a/s/2026_m.jsonl", "M", "/old/home/s/2026_c.jsonl"),  # archive moved: the file name
        ("/a/s/2026_i.jsonl", "I", "P"),  # a bare id
        ("/a/s/2026_r.jsonl", "R", "2026_p.jsonl"),  # relative to the child's folder
        ("/a/s/2026_x.jsonl", "X", "/nowhere/else.jsonl"),  # a parent not in the archive
        ("/a/s/2026_n.jsonl", "N", 42),  # not a string
        ("/a/s/2026_self.jsonl", "S", "/a/s/2026_self.jsonl"),  # itself
    )
    parents = resolve_parents(refs, _same)
    assert parents == {
        "/a/s/2026_p.jsonl": None,
        "/a/s/2026_c.jsonl": "/a/s/2026_p.jsonl",
        "/a/s/2026_m.jsonl": "/a/s/2026_c.jsonl",
        "/a/s/2026_i.jsonl": "/a/s/2026_p.jsonl",
        "/a/s/2026_r.jsonl": "/a/s/2026_p.jsonl",
        "/a/s/2026_x.jsonl": None,
        "/a/s/2026_n.jsonl": None,
        "/a/s/2026_self.jsonl": None,
    }


def test_ambiguous_fallbacks_resolve_to_nothing() -> None:
    refs = _refs(
        ("/a/one/f.jsonl", "dup", None),
        ("/a/two/f.jsonl", "dup", None),
        ("/a/c1.jsonl", "c1", "/elsewhere/f.jsonl"),
        ("/a/c2.jsonl", "c2", "dup"),
    )
    parents = resolve_parents(refs, _same)
    assert parents["/a/c1.jsonl"] is None and parents["/a/c2.jsonl"] is None


def test_symlinked_parent_path_matches_with_realpath(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "p.jsonl").write_text("")
    (tmp_path / "link").symlink_to(real)
    parent_key = default_canonical(str(real / "p.jsonl"))
    refs = [
        SessionRef(parent_key, "P", None, str(real)),
        SessionRef(default_canonical(str(real / "c.jsonl")), "C", str(tmp_path / "link" / "p.jsonl"), str(real)),
    ]
    assert resolve_parents(refs)[refs[1].key] == parent_key


def test_ancestors_and_descendants_cut_loops() -> None:
    parents: dict[str, str | None] = {"a": "d", "b": "a", "c": "b", "d": "c", "e": None, "f": "e"}
    assert ancestors("c", parents) == ["b", "a", "d"]
    assert ancestors("e", parents) == []
    assert descendants(["e"], parents) == {"e", "f"}
    assert descendants(["a"], parents) == {"a", "b", "c", "d"}


def test_copied_entries_follow_the_lineage_only() -> None:
    t0, t1, t2 = "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", "2026-01-03T00:00:00.000Z"
    parent = [_e("aaaa0001", None, t0), _e("aaaa0002", "aaaa0001", t0), _e("aaaa0003", "aaaa0002", t0)]
    # A clone of parent's path to aaaa0002, then its own entries; one new id collides with the
    # parent's aaaa0003 (a random 8-hex collision) but was written at another time.
    child = [_e("aaaa0001", None, t0), _e("aaaa0002", "aaaa0001", t0), _e("aaaa0003", "aaaa0002", t1)]
    # A clone of the child: everything it holds is copied, including the child's own entries.
    grandchild = [*child, _e("bbbb0001", "aaaa0003", t2)]
    # Unrelated, with the very same ids and times: never merged.
    stranger = [dict(e) for e in parent]
    entries = {"P": parent, "C": child, "G": grandchild, "U": stranger}
    parents: dict[str, str | None] = {"P": None, "C": "P", "G": "C", "U": None}
    assert copied_entry_ids("P", entries, parents) == set()
    assert copied_entry_ids("C", entries, parents) == {"aaaa0001", "aaaa0002"}
    assert copied_entry_ids("G", entries, parents) == {"aaaa0001", "aaaa0002", "aaaa0003"}
    assert copied_entry_ids("U", entries, parents) == set()
    # A deleted ancestor copies nothing: its history then counts in the child.
    assert copied_entry_ids("C", {"C": child}, parents) == set()


def _golden_canonical(path: str) -> str:
    if path.startswith(PARENT_ROOT + "/"):
        path = str(GOLDEN) + path[len(PARENT_ROOT) :]
    return os.path.normpath(path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_fork_and_clone_outputs(case: Any) -> None:
    """Every entry of a fork/clone is copied history except the labels it recreates.

    So the new session adds no usage of its own until it is continued.
    """
    child_path = str(GOLDEN / case.name / "session.jsonl")
    src_path = str(source_path(case))
    child = load(child_path, strict=False).session
    source = load(src_path, strict=False).session
    refs = [
        SessionRef(os.path.normpath(src_path), source.header["id"], source.header.get("parentSession"), ""),
        SessionRef(
            os.path.normpath(child_path), child.header["id"], child.header["parentSession"], str(GOLDEN / case.name)
        ),
    ]
    parents = resolve_parents(refs, _golden_canonical)
    assert parents[refs[1].key] == refs[0].key
    entries = {refs[0].key: source.entries, refs[1].key: child.entries}
    copied = copied_entry_ids(refs[1].key, entries, parents)
    own = [e for e in child.entries if e["id"] not in copied]
    assert all(e["type"] == "label" for e in own), own
    assert len(copied) == len({e["id"] for e in child.entries if e["type"] != "label"})
    fresh = [r for r in usage_records(child.entries) if r.entry_id not in copied]
    assert sum_records(fresh).records == 0
    COPIED_USAGE.append(sum_records(usage_records(child.entries)).records)


COPIED_USAGE: list[int] = []


def test_golden_forks_copy_usage() -> None:
    """The fork cases above are not vacuous: several copy usage-bearing entries."""
    if len(COPIED_USAGE) < len(CASES):
        pytest.skip("run with the parametrized cases")
    assert sum(1 for n in COPIED_USAGE if n) >= 5
