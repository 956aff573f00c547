"""``convertToLlm`` and ``getCurrentSystemMessage`` on Pi's own messages, against Pi's own results."""

from __future__ import annotations

from typing import Any

import pytest

from pitools.core.context.messages import convert_to_llm, get_current_system_message
from pitools.core.js.json.encode import jsonable
from pitools.core.parity import diff_values
from tests.support import LAZY, recorded_leaves

LEAVES = recorded_leaves(where=lambda record, view: isinstance(view.get("llmMessages"), list))
WITH_COMPACTION = recorded_leaves(
    2000, where=lambda record, view: isinstance(view.get("compaction"), dict) and "error" not in view["compaction"]
)


@pytest.mark.parametrize(("case", "leaf", "record", "view"), LEAVES, indirect=LAZY)
def test_convert_to_llm(case: str, leaf: str, record: Any, view: dict[str, Any]) -> None:
    ours = jsonable(convert_to_llm(view["context"]["messages"]))
    assert diff_values(ours, view["llmMessages"]) == []


@pytest.mark.parametrize(("case", "leaf", "record", "view"), WITH_COMPACTION, indirect=LAZY)
def test_current_system_message_is_the_compaction_checkpoint(
    case: str, leaf: str, record: Any, view: dict[str, Any]
) -> None:
    expected = view["compaction"]["systemCheckpoint"]
    if not isinstance(view["projection"], list) or (isinstance(expected, dict) and "error" in expected):
        pytest.skip("Pi threw before it got here")
    projected = [m for pe in view["projection"] for m in pe["messages"]]
    ours = jsonable(get_current_system_message(projected))
    assert diff_values(ours, expected) == []
