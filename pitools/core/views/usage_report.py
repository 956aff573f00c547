"""``pitools usage``: group usage sums by period, model, provider, project or session.

Input is a list of :class:`UsageGroup` (sums over usage records that share a 15-minute UTC bucket,
a session and a provider/model; the index pre-aggregates them so that a warm report reads few
rows). Periods are cut in the requested time zone: 15-minute buckets are fine-grained enough for
every real UTC offset (…:30 and …:45 included). Records without a valid time fall in the
``(no date)`` row of a period report.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

BUCKET_MS = 15 * 60 * 1000
BY_CHOICES = ("day", "week", "month", "model", "provider", "project", "session")
PERIODS = ("day", "week", "month")
NO_DATE = "(no date)"


@dataclass(slots=True)
class Sums:
    input: int | float = 0
    output: int | float = 0
    cache_read: int | float = 0
    cache_write: int | float = 0
    cost: int | float = 0
    records: int = 0

    def add(self, other: Sums) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.cost += other.cost
        self.records += other.records

    @property
    def total_tokens(self) -> int | float:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_json(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "totalTokens": self.total_tokens,
            "cost": self.cost,
            "records": self.records,
        }


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: str
    id: str | None
    name: str | None
    cwd: str | None


@dataclass(slots=True)
class UsageGroup:
    """Sums of the records of one session, one provider/model, one 15-minute bucket (or no time)."""

    bucket_ms: int | None
    session: SessionInfo
    provider: str
    model: str
    sums: Sums


@dataclass(slots=True)
class ReportRow:
    key: str
    sums: Sums = field(default_factory=Sums)
    models: dict[str, Sums] = field(default_factory=dict)
    session: SessionInfo | None = None

    def to_json(self, breakdown: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, **self.sums.to_json()}
        if self.session is not None:
            out["session"] = {
                "path": self.session.path,
                "id": self.session.id,
                "name": self.session.name,
                "cwd": self.session.cwd,
            }
        if breakdown:
            out["models"] = [
                {"model": name, **sums.to_json()}
                for name, sums in sorted(self.models.items(), key=lambda kv: (-kv[1].cost, kv[0]))
            ]
        return out


@dataclass(slots=True)
class UsageReport:
    by: str
    timezone: str
    since: str | None
    until: str | None
    breakdown: bool
    rows: list[ReportRow]
    totals: Sums
    sessions: int
    copied_excluded: Sums

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "timezone": self.timezone,
            "since": self.since,
            "until": self.until,
            "sessions": self.sessions,
            "rows": [r.to_json(self.breakdown) for r in self.rows],
            "totals": self.totals.to_json(),
            "copiedHistory": self.copied_excluded.to_json(),
        }


def period_key(bucket_ms: int | None, by: str, tz: _dt.tzinfo) -> str:
    """The day (``2026-03-01``), ISO week (``2026-W09``) or month (``2026-03``) of a bucket in ``tz``."""
    if bucket_ms is None:
        return NO_DATE
    when = _dt.datetime.fromtimestamp(bucket_ms / 1000, tz)
    if by == "day":
        return when.strftime("%Y-%m-%d")
    if by == "week":
        year, week, _ = when.isocalendar()
        return f"{year:04d}-W{week:02d}"
    return when.strftime("%Y-%m")


def model_name(provider: str, model: str) -> str:
    return f"{provider}/{model}"


def build_report(
    groups: Iterable[UsageGroup],
    *,
    by: str,
    tz: _dt.tzinfo,
    tz_name: str,
    breakdown: bool = False,
    since: str | None = None,
    until: str | None = None,
    copied: Sequence[UsageGroup] = (),
) -> UsageReport:
    """Group ``groups`` into report rows with a totals row (Pi's ``provider/model`` names)."""
    if by not in BY_CHOICES:
        raise ValueError(f"unknown grouping {by!r}")
    rows: dict[str, ReportRow] = {}
    totals = Sums()
    sessions: set[str] = set()
    period_cache: dict[int | None, str] = {}
    for g in groups:
        if by in PERIODS:
            key = period_cache.get(g.bucket_ms)
            if key is None:
                key = period_cache[g.bucket_ms] = period_key(g.bucket_ms, by, tz)
        elif by == "model":
            key = model_name(g.provider, g.model)
        elif by == "provider":
            key = g.provider
        elif by == "project":
            key = g.session.cwd or "(no cwd)"
        else:
            key = g.session.path
        row = rows.get(key)
        if row is None:
            row = rows[key] = ReportRow(key, session=g.session if by == "session" else None)
        row.sums.add(g.sums)
        if breakdown:
            row.models.setdefault(model_name(g.provider, g.model), Sums()).add(g.sums)
        totals.add(g.sums)
        sessions.add(g.session.path)
    ordered = list(rows.values())
    if by in PERIODS:
        ordered.sort(key=lambda r: (r.key == NO_DATE, r.key))
    else:
        ordered.sort(key=lambda r: (-r.sums.cost, -r.sums.total_tokens, r.key))
    excluded = Sums()
    for g in copied:
        excluded.add(g.sums)
    return UsageReport(by, tz_name, since, until, breakdown, ordered, totals, len(sessions), excluded)
