"""``prepareCompaction`` on Pi's own branch entries, against Pi's own preparation (krt 2000 and 300)."""

from __future__ import annotations

from typing import Any

import pytest

from pitools.core.compaction.prepare import CompactionSettings, compute_file_lists, prepare_compaction
from pitools.core.js.json.encode import jsonable
from pitools.core.parity import diff_values
from pitools.errors import PiCrashError
from tests.support import LAZY, recorded_leaves

FIELDS = ("firstKeptEntryId", "isSplitTurn", "tokensBefore", "previousSummary", "fileOps", "settings")


LEAVES = [
    param
    for krt in (2000, 300)
    for param in recorded_leaves(krt, lambda record, view: "compaction" in view, with_krt=True)
]


def branch_of(record: dict[str, Any], view: dict[str, Any]) -> list[Any]:
    """Pi's ``getBranch(leaf)`` as recorded: ids resolved through ``byId`` (the last duplicate wins)."""
    by_id = {e["id"]: e for e in record["entries"] if isinstance(e, dict) and "id" in e}
    return [by_id[i] for i in view["path"]]


def _pi_error_as_record(fn: Any) -> Any:
    """Where Pi throws in one field (e.g. serializeConversation), the oracle records the error there."""
    try:
        return fn()
    except PiCrashError as exc:
        return {"error": exc.message}


@pytest.mark.parametrize(("case", "leaf", "record", "view", "krt"), LEAVES, indirect=LAZY)
def test_prepare_compaction(case: str, leaf: str, record: Any, view: dict[str, Any], krt: int) -> None:
    expected = view["compaction"]
    settings = CompactionSettings(keep_recent_tokens=krt)
    if isinstance(expected, dict) and "error" in expected:
        with pytest.raises(PiCrashError):
            prep = prepare_compaction(branch_of(record, view), settings)
            if prep is not None:
                prep.to_json()
        return
    prep = prepare_compaction(branch_of(record, view), settings)
    if expected is None:
        assert prep is None
        return
    assert prep is not None
    ours = jsonable(prep.to_json(guard=_pi_error_as_record))
    for field in FIELDS:
        assert diff_values(ours[field], expected[field], field) == []
    for field in ("messagesToSummarize", "turnPrefixMessages"):
        assert diff_values(ours[field], expected[field], field) == []
    read_files, modified_files = compute_file_lists(prep.file_ops)
    assert {"readFiles": read_files, "modifiedFiles": modified_files} == expected["fileLists"]
