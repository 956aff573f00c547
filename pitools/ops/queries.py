"""What the archive commands ask for: one frozen query object per command.

Each front end reads its own input into these — the click commands their options
(:mod:`pitools.cli.archive_commands`), ``pitools serve`` its query string
(:mod:`pitools.cli.serve_app`) — and hands them to the use cases, which return result objects:
:func:`pitools.ops.search.search_archive` (``search``), :func:`pitools.ops.archive.usage_archive`
(``usage``) and :func:`pitools.ops.listing.list_archive` (``ls``). A filter, a default or a rule
is thus written once, here or in the use case, whatever asked.

They are named tuples, immutable as frozen dataclasses are, because their classes are defined on every run
and ~0.1 ms a class to define rather than ~0.8 ms: the click commands' start-up is what a warm
``usage`` or ``ls`` waits for.
"""

from __future__ import annotations

from typing import NamedTuple

from pitools.errors import OptionValueError

__all__ = ["SORTS", "ListQuery", "SearchQuery", "SessionFilter", "UsageQuery", "activity_since"]

#: ``ls --sort`` keys: (what to compare, largest/newest first?)
SORTS: dict[str, tuple[str, bool]] = {
    "activity": ("modified", True),
    "created": ("created", True),
    "size": ("fileBytes", True),
    "tokens": ("tokens.total", True),
    "cost": ("cost", True),
    "messages": ("messageCount", True),
    "name": ("name", False),
}


class SessionFilter(NamedTuple):
    """Which sessions and which time span ``search`` and ``usage`` read: the filters they share.

    ``since``/``until`` are the user's words (a date, a month, an ISO time, an age), read in
    ``timezone`` (None: the local zone) by :func:`pitools.ops.archive.time_range`.
    """

    project: str | None = None
    cwd: str | None = None
    session: str | None = None
    since: str | None = None
    until: str | None = None
    timezone: str | None = None

    @property
    def has_time(self) -> bool:
        """Whether the zone matters: a time bound to read in it, or a zone to check."""
        return bool(self.since or self.until or self.timezone is not None)


class SearchQuery(NamedTuple):
    """``pitools search TEXT``: words and "quoted phrases" (or one regular expression)."""

    text: str
    regex: bool = False
    thinking: bool = False
    roles: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    in_context: bool = False
    #: ``current``: only the default leaf's path; ``all``: every branch.
    branch: str = "all"
    #: At most this many hits; 0: no limit.
    limit: int = 50
    where: SessionFilter = SessionFilter()
    #: Only this session folder (None: every folder Pi's ``listAll`` reads).
    session_dir: str | None = None


class UsageQuery(NamedTuple):
    """``pitools usage``: one row per ``by`` (``BY_CHOICES``), optionally per model inside it."""

    by: str = "day"
    breakdown: bool = False
    where: SessionFilter = SessionFilter()
    session_dir: str | None = None


class ListQuery(NamedTuple):
    """``pitools ls``: this directory's sessions (or ``all`` of them), filtered, sorted, cut."""

    all: bool = False
    cwd: str | None = None
    session_dir: str | None = None
    use_cache: bool = True
    #: Only sessions active at or after this ISO 8601 UTC instant (:func:`activity_since`).
    since: str | None = None
    sort: str = "activity"
    limit: int | None = None


def activity_since(value: str | None) -> str | None:
    """``ls --since``'s value as an ISO 8601 UTC instant (``7d``: seven days ago), the form the
    listing's ``modified`` times take; an unreadable value is an :class:`OptionValueError`."""
    if value is None:
        return None
    import datetime as dt
    import re

    now = dt.datetime.now(dt.UTC)
    m = re.fullmatch(r"(\d+)\s*(m|min|h|d|w)", value.strip())
    if m:
        unit = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}[m.group(2)]
        when = now - dt.timedelta(**{unit: int(m.group(1))})
    else:
        try:
            when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise OptionValueError(f"{value!r} is neither a date (2026-03-01) nor an age (12h, 7d)") from None
        if when.tzinfo is None:
            when = when.astimezone()  # a date or time without zone is local, as people mean it
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
