"""Usage records: every source Pi's getSessionStats counts, summing to ``pitools inspect``'s totals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pitools.core.session.load import load
from pitools.core.views.stats import session_stats
from pitools.core.views.usage import SOURCES, entry_time, iso_utc, sum_records, usage_records

GOLDEN = Path(__file__).resolve().parents[3] / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "session.jsonl").is_file())


def _usage(i: int, o: int, r: int, w: int, cost: float) -> dict[str, Any]:
    return {
        "input": i,
        "output": o,
        "cacheRead": r,
        "cacheWrite": w,
        "totalTokens": 999999,  # not trusted: Pi's stats add the four fields
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def _every_source() -> list[dict[str, Any]]:
    ts = "2026-03-01T10:00:00.000Z"
    return [
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": ts,
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": ts,
            "message": {
                "role": "assistant",
                "provider": "anthropic",
                "model": "claude-x",
                "responseModel": "claude-x-2026",
                "content": [],
                "usage": _usage(10, 20, 30, 40, 0.5),
            },
        },
        {
            "type": "message",
            "id": "t1",
            "parentId": "a1",
            "timestamp": "2026-03-01T11:00:00+01:00",
            "message": {"role": "toolResult", "content": [], "usage": _usage(1, 2, 3, 4, 0.25)},
        },
        {"type": "message", "id": "t2", "parentId": "t1", "timestamp": ts, "message": {"role": "toolResult"}},
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "t2",
            "timestamp": ts,
            "summary": "s",
            "firstKeptEntryId": "a1",
            "tokensBefore": 5,
            "usage": _usage(100, 200, 0, 0, 1.0),
        },
        {"type": "compaction", "id": "c2", "parentId": "c1", "timestamp": ts, "summary": "s", "usage": None},
        {
            "type": "branch_summary",
            "id": "b1",
            "parentId": "c1",
            "timestamp": ts,
            "fromId": "a1",
            "summary": "s",
            "usage": _usage(7, 8, 0, 0, 0.125),
        },
        {
            "type": "usage",
            "id": "x1",
            "parentId": "b1",
            "timestamp": ts,
            "provider": "openai",
            "model": "gpt-x",
            "usage": _usage(1000, 0, "12", None, 2.0),
        },
        {"type": "custom", "id": "k1", "parentId": "x1", "timestamp": ts, "usage": _usage(5, 5, 5, 5, 5)},
    ]


def test_every_source_is_a_record_with_its_model_and_kind() -> None:
    records = usage_records(_every_source(), "S")
    assert [(r.entry_id, r.source, r.provider, r.model) for r in records] == [
        ("a1", "assistant", "anthropic", "claude-x-2026"),
        ("t1", "toolResult", "Tools", "summaries"),
        ("c1", "compaction", "Tools", "summaries"),
        ("b1", "branch_summary", "Tools", "summaries"),
        ("x1", "usage", "openai", "gpt-x"),
    ]
    assert {r.source for r in records} == set(SOURCES)
    assert records[1].timestamp == "2026-03-01T10:00:00.000Z"  # normalised to UTC
    assert records[4].cache_read == 0 and records[4].total_tokens == 1000  # non-numbers count 0
    assert records[0].total_tokens == 100
    assert all(r.session_id == "S" for r in records)
    assert records[0].to_json()["totalTokens"] == 100


def _sums(totals: Any) -> tuple[Any, ...]:
    """The five sums a usage total and Pi's session stats both keep."""
    return (totals.input, totals.output, totals.cache_read, totals.cache_write, totals.cost)


def test_totals_equal_session_stats_on_constructed_entries() -> None:
    entries = _every_source()
    total = sum_records(usage_records(entries))
    stats = session_stats(entries, strict=False).totals
    assert _sums(total) == _sums(stats)
    assert total.total_tokens == stats.tokens


@pytest.mark.parametrize("case", CASES)
def test_totals_equal_inspect_on_golden(case: str) -> None:
    """A session's records add up to exactly what ``pitools inspect`` (getSessionStats) reports."""
    from pitools.core.session.migrate import MigrationError

    try:
        session = load(GOLDEN / case / "session.jsonl", strict=False).session
    except MigrationError:
        pytest.skip("Pi cannot open this file")
    from pitools.errors import PiCrashError

    entries = session.entries
    try:
        stats = session_stats(entries, strict=False).totals
    except PiCrashError:
        pytest.skip("Pi's getSessionStats itself throws on this file")
    total = sum_records(usage_records(entries))
    assert _sums(total) == _sums(stats)


def test_golden_corpus_has_usage() -> None:
    """The parametrized comparison above is not vacuous."""
    with_usage = 0
    for case in CASES:
        try:
            session = load(GOLDEN / case / "session.jsonl", strict=False).session
        except Exception:
            continue
        if sum_records(usage_records(session.entries)).cost:
            with_usage += 1
    assert with_usage >= 20


def test_entry_time_forms() -> None:
    assert entry_time({"timestamp": "2026-03-01T10:00:00.000Z"}) == "2026-03-01T10:00:00.000Z"
    assert entry_time({"timestamp": "2026-03-01 12:00:00Z"}) == "2026-03-01T12:00:00.000Z"
    assert entry_time({"timestamp": "garbage", "message": {"timestamp": 0}}) == "1970-01-01T00:00:00.000Z"
    assert entry_time({"timestamp": 5}) is None
    assert iso_utc(float("nan")) is None and iso_utc(9e15) is None
