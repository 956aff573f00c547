"""``buildSessionProjection``/``buildSessionContext`` on Pi's own branch, against Pi's own results.

The branch is Pi's ``getBranch(leaf)`` as recorded (ids resolved through ``byId``), so this tests
core/context/build.py alone, not the loader or the tree.
"""

from __future__ import annotations

from typing import Any

import pytest

from pitools.core.context.build import build_projection, context_entries_from_path
from pitools.core.js.access import entry_id
from pitools.core.js.json.encode import jsonable
from pitools.core.parity import diff_values
from pitools.errors import PiCrashError
from tests.support import LAZY, recorded_leaves

LEAVES = recorded_leaves(where=lambda record, view: isinstance(view.get("path"), list) and view["path"])


def _branch(record: dict[str, Any], view: dict[str, Any]) -> list[Any]:
    by_id = {e["id"]: e for e in record["entries"] if isinstance(e, dict) and "id" in e}
    return [by_id[i] for i in view["path"]]


@pytest.mark.parametrize(("case", "leaf", "record", "view"), LEAVES, indirect=LAZY)
def test_projection_and_context(case: str, leaf: str, record: Any, view: dict[str, Any]) -> None:
    branch = _branch(record, view)
    if isinstance(view["contextEntries"], list):
        assert [entry_id(e) for e in context_entries_from_path(branch)] == view["contextEntries"]
    if isinstance(view["projection"], dict):  # Pi threw
        with pytest.raises(PiCrashError):
            build_projection(branch)
        return
    projection = build_projection(branch)
    ours = [
        {"sourceId": pe.source_id, "sourceType": pe.source_type, "messages": pe.messages} for pe in projection.entries
    ]
    assert diff_values(jsonable(ours), view["projection"], "projection") == []
    context = {"messages": projection.messages, "thinkingLevel": projection.thinking_level, "model": projection.model}
    assert diff_values(jsonable(context), view["context"], "context") == []
