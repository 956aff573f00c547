"""The pure half of ``compact --apply``: Pi's prompts, the joined summary and the entry it appends.

Expected values are Pi's own: the real ``compact()`` run by the oracle with a fake model that
answers ``<<summary>>`` / ``<<turn-prefix-summary>>`` (``summaryRequests``, ``compactResult``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from pitools.core.compaction import prompts
from pitools.core.compaction.plan import build_compaction_entry, compaction_line, plan_compaction, summary_inputs
from pitools.core.compaction.prepare import CompactionSettings
from pitools.core.compaction.prompts import SYSTEM_PROMPT, join_summaries
from pitools.core.session.load import load
from tests.support import LAZY, golden_session, recorded_leaves

LEAVES = recorded_leaves(
    2000,
    where=lambda record, view: (
        isinstance(view.get("compaction"), dict) and "compactResult" in view["compaction"] and not record["migrated"]
    ),
)


def _before_instructions(prompt: str) -> str:
    if prompt.startswith("# Conversation\n"):  # the turn prefix
        return prompt.split("# Instructions\n")[0] + "# Instructions\n"
    marker = prompts.UPDATE_INSTRUCTIONS if "<previous-summary>" in prompt else prompts.HISTORY_INSTRUCTIONS
    head = prompt.split(marker)[0]
    assert head != prompt
    return head


@pytest.mark.parametrize(("case", "leaf", "record", "view"), LEAVES, indirect=LAZY)
def test_prompts_summary_and_entry(case: str, leaf: str, record: Any, view: dict[str, Any]) -> None:
    expected = view["compaction"]
    loaded = load(golden_session(case))
    plan = plan_compaction(loaded, leaf, CompactionSettings(keep_recent_tokens=2000), context_window=200000)
    prep = plan.preparation
    assert prep is not None
    if "error" in expected["compactResult"]:  # Pi's compact() throws here: so does pitools
        from pitools.errors import PiCrashError

        with pytest.raises(PiCrashError) as caught:
            summary_inputs(loaded, leaf, prep)
        assert caught.value.message == expected["compactResult"]["error"]
        return
    requests = summary_inputs(loaded, leaf, prep)
    # Same calls in the same order; everything before the instructions (the transcript, the previous
    # summary) is Pi's byte for byte. The instructions and system prompt are pitools' own words.
    assert [r.kind for r in requests] == [r["kind"] for r in expected["summaryRequests"]]
    for mine, theirs in zip(requests, expected["summaryRequests"], strict=True):
        assert theirs["prompt"].startswith(_before_instructions(mine.prompt))
    assert all(r.system_prompt == SYSTEM_PROMPT for r in requests)
    result = expected["compactResult"]
    texts = {r.kind: "<<summary>>" if r.kind == "history" else "<<turn-prefix-summary>>" for r in requests}
    summary = join_summaries(prep, texts.get("history"), texts.get("turnPrefix"))
    assert summary == result["summary"]
    now = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    entry = build_compaction_entry(loaded, leaf, prep, summary, None, now=now, entry_id_="abcdef01")
    assert entry["firstKeptEntryId"] == result["firstKeptEntryId"]
    assert entry["tokensBefore"] == result["tokensBefore"]
    assert entry["details"] == result["details"]
    assert (entry["type"], entry["id"], entry["parentId"], entry["timestamp"]) == (
        "compaction",
        "abcdef01",
        leaf,
        "2026-01-02T03:04:05.678Z",
    )
    line = compaction_line(entry)
    assert line.endswith(b"\n") and line.count(b"\n") == 1


def test_there_are_cases() -> None:
    assert len(LEAVES) > 20
