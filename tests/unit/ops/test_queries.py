"""The archive query objects and ``ls``'s selection rule, called as a library (no click, no server)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from pitools.errors import OptionValueError
from pitools.ops.listing import select_sessions
from pitools.ops.queries import ListQuery, SearchQuery, SessionFilter, UsageQuery, activity_since

_SESSIONS: list[dict[str, Any]] = [
    # In Pi's order (newest activity first), as the listing hands them over.
    {"path": "a", "modified": "2026-03-05T10:00:00.000Z", "name": "zeta", "cost": 0.5, "tokens": {"total": 10}},
    {"path": "b", "modified": "2026-03-04T10:00:00.000Z", "firstMessage": "Alpha", "cost": None, "tokens": {}},
    {"path": "c", "modified": "2026-03-01T10:00:00.000Z", "name": "beta", "cost": 2, "tokens": {"total": 30}},
    {"path": "d", "modified": None, "name": "", "firstMessage": "", "cost": True, "tokens": None},
]


def _paths(query: ListQuery) -> list[str]:
    return [s["path"] for s in select_sessions(list(_SESSIONS), query)]


def test_activity_keeps_pis_order_and_since_drops_the_older_and_the_undated() -> None:
    assert _paths(ListQuery()) == ["a", "b", "c", "d"]
    assert _paths(ListQuery(since="2026-03-04T00:00:00.000Z")) == ["a", "b"]
    assert _paths(ListQuery(limit=2)) == ["a", "b"]


def test_sorts_put_missing_values_last_and_names_ignore_case() -> None:
    # b has no cost and d's is a bool: neither is a number, both keep their order after the rest.
    assert _paths(ListQuery(sort="cost")) == ["c", "a", "b", "d"]
    assert _paths(ListQuery(sort="tokens")) == ["c", "a", "b", "d"]
    # A session without a name goes by its first message ("Alpha" before "beta"); d has neither.
    assert _paths(ListQuery(sort="name")) == ["d", "b", "c", "a"]
    assert _paths(ListQuery(sort="cost", limit=1)) == ["c"]


def test_activity_since_reads_dates_and_ages_as_utc_instants() -> None:
    assert activity_since(None) is None
    assert activity_since("2026-03-01T09:30:00+02:00") == "2026-03-01T07:30:00.000Z"
    week = dt.datetime.strptime(activity_since("7d") or "", "%Y-%m-%dT%H:%M:%S.000Z").replace(tzinfo=dt.UTC)
    assert abs((dt.datetime.now(dt.UTC) - week) - dt.timedelta(days=7)) < dt.timedelta(minutes=1)
    with pytest.raises(OptionValueError, match="neither a date"):
        activity_since("last tuesday")


def test_queries_are_frozen_and_default_like_the_commands() -> None:
    query = SearchQuery("otter")
    assert (query.limit, query.branch, query.where) == (50, "all", SessionFilter())
    with pytest.raises(AttributeError):
        query.limit = 3  # type: ignore[misc]
    assert (UsageQuery().by, ListQuery().sort, ListQuery().use_cache) == ("day", "activity", True)
    assert not SessionFilter(project="x").has_time
    assert SessionFilter(until="2026-03").has_time and SessionFilter(timezone="UTC").has_time
