"""``pitools navigate`` against Pi 1.6.0's own ``navigateTree`` (recorded by ``make golden``).

Every expected value comes from ``golden/navigate/pi-navigate.json.xz`` (Pi run on each case by
``scripts/pi_navigate.mjs``) or from Pi reading back the sessions pitools navigated
(``golden/navigated-*/pi.contexts.json``); see :mod:`tests.golden.navigate_cases`. The parity of
the dry run over every non-default leaf of every golden session is in ``test_conformance.py``
(the oracle's ``navigateToDefault``, compared through ``pitools.core.parity``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pitools import store
from pitools.core.compaction.branch import BRANCH_INSTRUCTIONS, plan_navigation, token_budget
from pitools.core.compaction.summarizer import SummaryRequest, SummaryResult
from pitools.core.js.json.encode import jsonable
from pitools.core.parity import diff_values
from pitools.core.session.load import load
from pitools.ops.navigate import NavigateSetup, navigate_apply
from pitools.ops.summarizing import SummarizeRequest
from tests.golden import navigate_cases
from tests.golden.navigate_cases import APPLIED, GOLDEN, load_recording
from tests.support import free_usage

RECORDS = load_recording()
PI_ZERO_USAGE = free_usage(0, 0)


class _PiFake:
    """Answers like the reference's fake model: ``<<summary>>`` with zero usage."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.requests.append(request)
        return SummaryResult(text="<<summary>>", usage=PI_ZERO_USAGE, provider="ref", model="ref-model")


def _conversation(prompt: str) -> str:
    """Everything before the instructions: Pi's transcript, byte for byte."""
    return prompt.split(BRANCH_INSTRUCTIONS)[0]


def test_recording_covers_every_shape() -> None:
    names = {r["case"]["name"] for r in RECORDS}
    assert {c.name for c in navigate_cases.EDGE_CASES} <= names
    shapes = {(len(r["pi"].get("appended", [])), len(r["pi"]["requests"])) for r in RECORDS}
    assert {(0, 0), (1, 0), (1, 1), (2, 1)} <= shapes
    assert len(RECORDS) >= 100


@pytest.mark.parametrize("rec", RECORDS, ids=[r["case"]["name"] for r in RECORDS])
def test_navigate_equals_pi(rec: dict[str, Any], tmp_path: Path) -> None:
    case, pi = rec["case"], rec["pi"]
    src = GOLDEN / case["source"] / "session.jsonl"
    work = tmp_path / "s.jsonl"
    shutil.copy(src, work)
    loaded = load(str(work))
    from_id, to = rec["fromId"], rec["toId"]
    assert pi["fromId"] == from_id
    budget = token_budget(case["context_window"], 16384)
    plan = plan_navigation(loaded.index, from_id, to, budget)

    # The plan: Pi's collectEntriesForBranchSummary + prepareBranchEntries, field by field.
    if "plan" in pi and from_id != to:
        ours = jsonable(
            {
                "commonAncestorId": plan.common_ancestor_id,
                "entries": plan.entry_ids,
                "tokenBudget": plan.token_budget,
                "prepared": plan.prepared.to_json(),
            }
        )
        assert not diff_values(ours, pi["plan"]), "\n".join(diff_values(ours, pi["plan"]))

    # Where the leaf lands and what goes back to the editor.
    result = pi["result"]
    assert "error" not in result
    if plan.noop:
        assert pi["landing"] == [] and pi["appended"] == []
    else:
        assert [step["leaf"] for step in pi["landing"]] == [plan.new_leaf_id]
    assert result.get("editorText") == plan.editor_text

    # Apply with a model answering as the reference's fake does: the same lines, the same context.
    fake = _PiFake()
    stamp = store.stamp(str(work))
    outcome = navigate_apply(
        NavigateSetup(loaded, from_id, to, case["context_window"], 16384, {}, None, [], str(work), stamp, True),
        SummarizeRequest(backup=False, use_config=False, summarizer=fake),
        summarize=case["summarize"],
        label=case["label"],
    )
    assert len(fake.requests) == len(pi["requests"])
    for mine, theirs in zip(fake.requests, pi["requests"], strict=True):
        assert theirs["prompt"].startswith(_conversation(mine.prompt))
        assert mine.prompt.endswith(BRANCH_INSTRUCTIONS)
    assert len(outcome.entries) == len(pi["appended"])
    id_map = {theirs["id"]: mine["id"] for mine, theirs in zip(outcome.entries, pi["appended"], strict=True)}
    volatile = ("id", "timestamp")
    for mine, theirs in zip(outcome.entries, pi["appended"], strict=True):
        expected = {k: id_map.get(v, v) if k in ("parentId", "targetId") else v for k, v in theirs.items()}
        got = jsonable({k: v for k, v in mine.items() if k not in volatile})
        expected = {k: v for k, v in expected.items() if k not in volatile}
        assert got == expected
    if pi["appended"]:
        assert id_map[pi["leafAfter"]] == outcome.leaf
        # The file as Pi reads it: the written lines, then Pi's context at the new leaf.
        reread = load(str(work))
        assert [e.get("id") for e in reread.session.entries[-len(outcome.entries) :]] == list(id_map.values())
        assert outcome.replay is not None
        ours_ctx = _normalise(jsonable(outcome.replay.projection.messages), outcome.entries)
        theirs_ctx = _normalise(pi["contextAfter"]["messages"], pi["appended"])
        assert not diff_values(ours_ctx, theirs_ctx), "\n".join(diff_values(ours_ctx, theirs_ctx))
    else:
        assert work.read_bytes() == src.read_bytes()  # nothing written, as Pi writes nothing


def _normalise(messages: list[Any], appended: list[dict[str, Any]]) -> list[Any]:
    """The new summary message's timestamp is the entry's (the time of the run): blank it."""
    summaries = {e["summary"] for e in appended if e["type"] == "branch_summary"}
    out = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "branchSummary" and m.get("summary") in summaries:
            m = dict(m, timestamp=0)
        out.append(m)
    return out


# -- sessions pitools navigated, read back by Pi ---------------------------------------------------


@pytest.mark.parametrize("case", APPLIED, ids=[c.name for c in APPLIED])
def test_navigated_sessions_rebuild_byte_identical(case: navigate_cases.Applied, tmp_path: Path) -> None:
    out = tmp_path / "session.jsonl"
    navigate_cases.build_applied(case, out)
    assert out.read_bytes() == (GOLDEN / case.name / "session.jsonl").read_bytes()


@pytest.mark.parametrize("case", APPLIED, ids=[c.name for c in APPLIED])
def test_pi_context_at_new_leaf_is_landing_plus_branch_summary(case: navigate_cases.Applied) -> None:
    folder = GOLDEN / case.name
    meta = json.loads((folder / "navigated.json").read_text())
    pi = json.loads((folder / "pi.contexts.json").read_text())
    source_lines = (GOLDEN / case.source / "session.jsonl").read_bytes().splitlines()
    written = (folder / "session.jsonl").read_bytes().splitlines()
    assert written[: len(source_lines)] == source_lines  # every line of the source kept as is
    assert pi["entryCount"] == len(written) - 1  # Pi loaded every entry (the header aside)
    summary_entry = json.loads(written[len(source_lines)])
    assert summary_entry["type"] == "branch_summary" and summary_entry["id"] == meta["summaryId"]
    landing = "null" if meta["landing"] is None else meta["landing"]
    at_new = pi["contexts"][meta["newLeaf"]]["messages"]
    at_landing = pi["contexts"][landing]["messages"]
    assert at_new[:-1] == at_landing
    from pitools.core.js.date import js_date_ms

    assert at_new[-1] == {
        "role": "branchSummary",
        "summary": summary_entry["summary"],
        "fromId": summary_entry["fromId"],
        "timestamp": js_date_ms(summary_entry["timestamp"]),
    }
    assert summary_entry["summary"].startswith(
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
    )
    # And pitools' own replay of the written file agrees with Pi's at the new leaf.
    from pitools.core.context.build import replay_context

    loaded = load(str(folder / "session.jsonl"))
    ours = jsonable(replay_context(loaded.index, meta["newLeaf"]).projection.messages)
    assert not diff_values(ours, at_new)
