"""Compactions written by pitools: reproducible, and shaped like Pi's appendCompaction entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.golden.compacted_cases import CASES, GOLDEN, Case, build
from tests.golden.test_conformance import load_recording


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rebuild_is_byte_identical(case: Case, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    build(case, out)
    assert out.read_bytes() == (GOLDEN / case.name / "session.jsonl").read_bytes()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_original_lines_untouched(case: Case) -> None:
    source = (GOLDEN / case.source / "session.jsonl").read_bytes()
    compacted = (GOLDEN / case.name / "session.jsonl").read_bytes()
    assert compacted.startswith(source)
    assert compacted[len(source) :].count(b"\n") == 1


RECORDED = [c for c in CASES if c.keep_recent_tokens in (20000, 2000, 300)]


@pytest.mark.parametrize("case", RECORDED, ids=[c.name for c in RECORDED])
def test_entry_matches_pi_compact_result(case: Case) -> None:
    """Fields Pi's compact()+appendCompaction would write for the same plan (summary aside)."""
    source = load_recording(case.source, case.keep_recent_tokens)
    leaf = case.leaf or source["leafId"]
    expected = source["byLeaf"][leaf]["compaction"]
    line = (GOLDEN / case.name / "session.jsonl").read_bytes().splitlines()[-1]
    entry = json.loads(line)
    result = expected["compactResult"]
    assert entry["type"] == "compaction"
    assert entry["parentId"] == leaf
    assert entry["firstKeptEntryId"] == result["firstKeptEntryId"]
    assert entry["tokensBefore"] == result["tokensBefore"]
    assert entry["details"] == result["details"]
    assert entry["fromHook"] is False
    assert entry["summary"].endswith(expected["fileListsText"])
    checkpoint = expected["systemCheckpoint"]
    if checkpoint is None:
        assert "systemMessage" not in entry
    else:
        assert {k: v for k, v in entry["systemMessage"].items() if k != "timestamp"} == {
            k: v for k, v in checkpoint.items() if k != "timestamp"
        }
    # Pi's own compact() with a canned model makes the same number of requests.
    kinds = [r["kind"] for r in expected["summaryRequests"]]
    from pitools.core.compaction.prepare import CompactionSettings, prepare_compaction
    from pitools.core.compaction.prompts import summary_requests
    from pitools.core.session.load import load

    loaded = load(GOLDEN / case.source / "session.jsonl")
    prep = prepare_compaction(
        loaded.index.get_branch(leaf), CompactionSettings(keep_recent_tokens=case.keep_recent_tokens)
    )
    assert prep is not None
    assert [r.kind for r in summary_requests(prep)] == kinds


def test_compacted_cases_are_in_the_conformance_corpus() -> None:
    for case in CASES:
        assert (GOLDEN / case.name / "pi.krt20000.json.xz").exists(), f"run make golden for {case.name}"


@pytest.mark.parametrize("case", RECORDED, ids=[c.name for c in RECORDED])
def test_request_layout_matches_pi(case: Case) -> None:
    """Everything before the instructions (transcript, previous summary) is byte-identical to Pi's."""
    from pitools.core.compaction import prompts
    from pitools.core.compaction.prepare import CompactionSettings, prepare_compaction
    from pitools.core.session.load import load

    source = load_recording(case.source, case.keep_recent_tokens)
    leaf = case.leaf or source["leafId"]
    pi_requests = source["byLeaf"][leaf]["compaction"]["summaryRequests"]
    loaded = load(GOLDEN / case.source / "session.jsonl")
    prep = prepare_compaction(
        loaded.index.get_branch(leaf), CompactionSettings(keep_recent_tokens=case.keep_recent_tokens)
    )
    assert prep is not None
    ours = prompts.summary_requests(prep)
    for mine, theirs in zip(ours, pi_requests, strict=True):
        marker = "# Instructions\n" if mine.kind == "turnPrefix" else None
        if marker:
            head = mine.prompt.split(marker)[0] + marker
        else:
            instr = prompts.UPDATE_INSTRUCTIONS if "<previous-summary>" in mine.prompt else prompts.HISTORY_INSTRUCTIONS
            head = mine.prompt.split(instr)[0]
        assert theirs["prompt"].startswith(head)
