"""``pitools usage``: group usage sums by period, model, provider, project or session.

Input is a list of :class:`UsageGroup`: sums over the usage records that share a key (the local
day for periods, the cwd, the session) and a provider/model, which the index computes in SQL so
that a warm report reads few rows. Days are cut in the requested time zone: :func:`offset_pieces`
lists the zone's UTC offsets over the data's time range (daylight-saving changes included), and
the query adds the offset in force to each record's time. Weeks (ISO) and months are made of
days here. Records without a valid time fall in the ``(no date)`` row of a period report.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.json.record import record_json
from pitools.core.js.types import JsonObject
from pitools.core.views.usage import UsageSum

BY_CHOICES = ("day", "week", "month", "model", "provider", "project", "session")
PERIODS = ("day", "week", "month")
NO_DATE = "(no date)"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: str
    id: str | None
    name: str | None
    cwd: str | None


@dataclass(slots=True)
class UsageGroup:
    """Sums of the records that share a key and a provider/model.

    ``key``: the local day (``2026-03-01``, or None without a time) for periods, the cwd for
    ``project``, the session path for ``session``; ignored for ``model`` and ``provider``.
    """

    key: str | None
    provider: str
    model: str
    sums: UsageSum
    session: SessionInfo | None = None


@dataclass(slots=True)
class ReportRow:
    key: str
    sums: UsageSum = field(default_factory=UsageSum)
    models: dict[str, UsageSum] = field(default_factory=dict)
    session: SessionInfo | None = None
    #: ``--by session``: what this session copied from its parent by fork/clone. Shown beside its
    #: own usage (``sums``) and counted in the parent's row, not in this row or the totals.
    copied: UsageSum | None = None

    def to_json(self, breakdown: bool) -> JsonObject:
        out: dict[str, Any] = {"key": self.key, **self.sums.to_json()}
        if self.session is not None:
            out["session"] = {
                "path": self.session.path,
                "id": self.session.id,
                "name": self.session.name,
                "cwd": self.session.cwd,
            }
        if self.copied is not None:
            out["copied"] = self.copied.to_json()
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
    totals: UsageSum
    sessions: int
    copied_excluded: UsageSum

    def to_json(self) -> JsonObject:
        return {
            **record_json(self, ("by", "timezone", "since", "until", "sessions")),
            "rows": [r.to_json(self.breakdown) for r in self.rows],
            "totals": self.totals.to_json(),
            "copiedHistory": self.copied_excluded.to_json(),
        }


def period_key(day: str | None, by: str) -> str:
    """The day (``2026-03-01``), ISO week (``2026-W09``) or month (``2026-03``) of a local day."""
    if day is None:
        return NO_DATE
    if by == "day":
        return day
    if by == "month":
        return day[:7]
    year, week, _ = _dt.date.fromisoformat(day).isocalendar()
    return f"{year:04d}-W{week:02d}"


def _offset(tz: _dt.tzinfo, seconds: int) -> int:
    off = _dt.datetime.fromtimestamp(seconds, tz).utcoffset()
    return int(off.total_seconds()) if off is not None else 0


def offset_pieces(tz: _dt.tzinfo, lo_s: int, hi_s: int) -> list[tuple[int, int]]:
    """``[(from_second, utc_offset_seconds), …]``: the zone's offsets over ``[lo_s, hi_s]``.

    The first piece starts at ``lo_s``; each later one where the offset changes (found to the
    second by bisection inside the day it changes in).
    """
    current = _offset(tz, lo_s)
    pieces = [(lo_s, current)]
    t = lo_s
    while t < hi_s:
        nxt = min(t + 86_400, hi_s)
        off = _offset(tz, nxt)
        if off != current:
            a, b = t, nxt
            while b - a > 1:
                mid = (a + b) // 2
                if _offset(tz, mid) == current:
                    a = mid
                else:
                    b = mid
            pieces.append((b, off))
            current = off
        t = nxt
    return pieces


def model_name(provider: str, model: str) -> str:
    return f"{provider}/{model}"


def _new_row(key: str, group: UsageGroup, by: str) -> ReportRow:
    if by != "session":
        return ReportRow(key)
    return ReportRow(key, session=group.session, copied=UsageSum())


def build_report(
    groups: Iterable[UsageGroup],
    *,
    by: str,
    tz_name: str,
    sessions: int,
    breakdown: bool = False,
    since: str | None = None,
    until: str | None = None,
    copied: Sequence[UsageGroup] = (),
) -> UsageReport:
    """Group ``groups`` into report rows with a totals row (Pi's ``provider/model`` names)."""
    if by not in BY_CHOICES:
        raise ValueError(f"unknown grouping {by!r}")
    rows: dict[str, ReportRow] = {}
    totals = UsageSum()
    for g in groups:
        if by in PERIODS:
            key = period_key(g.key, by)
        elif by == "model":
            key = model_name(g.provider, g.model)
        elif by == "provider":
            key = g.provider
        elif by == "project":
            key = g.key or "(no cwd)"
        else:
            key = g.key or ""
        row = rows.get(key)
        if row is None:
            row = rows[key] = _new_row(key, g, by)
        row.sums.merge(g.sums)
        if breakdown:
            row.models.setdefault(model_name(g.provider, g.model), UsageSum()).merge(g.sums)
        totals.merge(g.sums)
    excluded = UsageSum()
    for g in copied:
        excluded.merge(g.sums)
        if by == "session":  # a fork gets its row even with no usage of its own
            key = g.key or ""
            row = rows.get(key)
            if row is None:
                row = rows[key] = _new_row(key, g, by)
            if row.copied is None:
                row.copied = UsageSum()
            row.copied.merge(g.sums)
    ordered = list(rows.values())
    if by in PERIODS:
        ordered.sort(key=lambda r: (r.key == NO_DATE, r.key))
    else:
        ordered.sort(key=lambda r: (-r.sums.cost, -r.sums.total_tokens, r.key))
    return UsageReport(by, tz_name, since, until, breakdown, ordered, totals, sessions, excluded)
