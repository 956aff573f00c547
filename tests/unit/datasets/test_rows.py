"""``pitools dataset``'s rows of one session (:mod:`pitools.core.datasets.rows`) against Pi 1.6.0.

Each golden session Pi loads is turned into rows the way ``ops/dataset.py`` does it, and the
columns that restate a Pi result are compared with Pi's recording: the default branch
(``getBranch`` at the default leaf), the context (``buildSessionContext``'s entries), tree depths
(``getTree``), leaves, and the session totals (``getSessionStats``: tokens, cost, tool calls).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import pytest

from pitools.core.datasets.rows import SessionMeta, session_rows
from pitools.core.session.load import load
from pitools.core.session.tree import SessionIndex
from pitools.errors import PitoolsError
from tests import support


def _default_view_recorded(case: str) -> bool:
    """Pi loaded the file and answered for its default leaf (read from the outline cache, so
    collecting this module parses no recording)."""
    record = support.recording_outline(case)
    by_leaf = record.get("byLeaf")
    view = by_leaf.get(record.get("leafId")) if isinstance(by_leaf, dict) else None
    return isinstance(view, dict) and "error" not in view and bool(view.get("leafExists"))


CASES = [case for case in support.golden_cases() if _default_view_recorded(case)]
#: The cases whose session stats Pi computed (``getSessionStats`` throws on some damaged files).
STATS_CASES = [case for case in CASES if "tokens" in (support.recording_outline(case).get("stats") or {})]


@cache
def _rows(case: str) -> dict[str, list[dict[str, Any]]]:
    """The rows of one case, made once per test process (the tests only read them)."""
    path = str(support.golden_session(case))
    try:
        session = load(path).session
    except PitoolsError as exc:  # pragma: no cover - a comparable case always loads
        pytest.fail(f"{case}: {exc}")
    index = SessionIndex.build(session.entries)
    meta = SessionMeta(key=path, path=path, file_bytes=support.golden_session(case).stat().st_size)
    tables: dict[str, list[dict[str, Any]]] = {}
    for table, row in session_rows(session, index, meta):
        tables.setdefault(table, []).append(row)
    return tables


def _id_text(value: Any) -> str | None:
    """A recorded id as the rows write it: strings as they are, anything else as null."""
    return value if type(value) is str else None


def _ids(rows: list[dict[str, Any]], flag: str) -> Counter[str | None]:
    return Counter(r["entry_id"] for r in rows if r[flag])


@pytest.mark.parametrize("case", CASES)
def test_entry_flags_are_pis_default_branch_and_context(case: str) -> None:
    record = support.golden_recording(case)
    view = record["byLeaf"][record["leafId"]]
    rows = _rows(case)["entries"]
    path = Counter(_id_text(i) for i in view["path"])
    context = Counter(_id_text(i) for i in view["contextEntries"])
    assert _ids(rows, "on_default_branch") == path
    assert _ids(rows, "in_context") == context
    assert _ids(rows, "compacted") == path - context


@pytest.mark.parametrize("case", CASES)
def test_depth_is_the_position_on_pis_branch(case: str) -> None:
    """``depth`` is where the entry stands on the branch Pi walks to it (``getBranch``: 0 at the
    root; a falsy parentId ends the walk), checked on every recorded leaf's path; entries no
    recorded walk reaches (a parentId loop) have no depth."""
    record = support.golden_recording(case)
    rows = _rows(case)["entries"]
    counts = Counter(r["entry_id"] for r in rows)
    depth = {r["entry_id"]: r["depth"] for r in rows if r["entry_id"] is not None and counts[r["entry_id"]] == 1}
    seen = 0
    for view in record["byLeaf"].values():
        if not isinstance(view, dict) or "error" in view or not view.get("leafExists"):
            continue
        for i, eid in enumerate(view["path"]):
            if type(eid) is str and eid in depth:
                assert depth[eid] == i, (eid, view["path"][: i + 1])
                seen += 1
    assert seen > 0
    for cycle in record.get("cycles") or []:  # pragma: no cover - recorded by the guard
        for eid in cycle:
            assert depth.get(eid) is None


@pytest.mark.parametrize("case", STATS_CASES)
def test_session_row_totals_are_pis_stats(case: str) -> None:
    record = support.golden_recording(case)
    tables = _rows(case)
    (session,) = tables["sessions"]
    stats = record["stats"]
    tokens = stats["tokens"]
    assert session["default_leaf"] == _id_text(record["leafId"])
    assert session["leaves"] == len(record["leaves"])
    assert session["entries"] == len(record["entries"])  # getEntries(): every entry line, the header not
    assert (
        session["input_tokens"],
        session["output_tokens"],
        session["cache_read_tokens"],
        session["cache_write_tokens"],
        session["total_tokens"],
    ) == (tokens["input"], tokens["output"], tokens["cacheRead"], tokens["cacheWrite"], tokens["total"])
    assert session["cost"] == pytest.approx(stats["cost"], rel=1e-12, abs=1e-12)
    assert len(tables.get("tool_calls", [])) == stats["toolCalls"]


def test_the_sweep_covers_the_shapes_that_matter() -> None:
    """The comparison is not vacuous: it runs on compacted, branched and tool-heavy sessions."""
    shapes: Counter[str] = Counter()
    for case in CASES:
        record = support.golden_recording(case)
        types = {node.get("type") for node in record["tree"] if isinstance(node, dict)}
        shapes["compaction"] += "compaction" in types
        shapes["branch_summary"] += "branch_summary" in types
        shapes["branched"] += len(record["leaves"]) > 1
        shapes["tools"] += record["stats"].get("toolCalls", 0) > 0
    assert len(CASES) >= 40 and min(shapes.values()) >= 5, shapes
