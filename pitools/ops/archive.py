"""Archive-wide use cases over the index: scope, update, ``usage``, ``ls``.

Each entry point updates the index first (transparently: nothing to do on a warm index), then
answers from it. Any problem with the index file is reported as a warning and worked around
(see :mod:`pitools.ops.index`); it never fails the command.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from pitools.errors import OptionValueError
from pitools.ops.index import ArchiveIndex, IndexUnavailableError, open_index
from pitools.ops.index_limits import SLOT_MS, ProgressFn, UpdateStats, WarnFn
from pitools.ops.queries import UsageQuery

if TYPE_CHECKING:
    from pitools.core.session.locate import SessionDirChoice
    from pitools.core.views.usage_report import UsageReport
    from pitools.ops.search_core import SqlParam

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Scope:
    """Which session folders a command covers, found by ``ls``'s rules."""

    folders: list[str]
    cwd: str
    choice: SessionDirChoice
    all: bool


def archive_scope(
    *,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
    all_: bool = True,
    cwd: str | None = None,
) -> Scope:
    """``--session-dir DIR``: that folder; ``all_``: every folder Pi's ``listAll`` reads; else this cwd's."""
    from pitools.core.session.locate import all_session_dirs, choose_session_dir, resolve_path

    env = os.environ if env is None else env
    here = os.getcwd()
    resolved = resolve_path(cwd or here, here, env)
    choice = choose_session_dir(cwd=resolved, env=env, session_dir=session_dir)
    if all_ and not session_dir:
        folders = [choice.configured] if choice.configured else all_session_dirs(env)
    else:
        folders = [choice.directory]
    return Scope([os.path.abspath(f) for f in folders], resolved, choice, all_)


def updated_index(
    scope: Scope,
    *,
    env: Mapping[str, str] | None = None,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
    rebuild: bool = False,
    jobs: int | None = None,
) -> tuple[ArchiveIndex, UpdateStats]:
    """Open the index and bring ``scope`` up to date; on any index trouble, work in memory."""
    import sqlite3

    warn = warn or (lambda _m: None)
    index = open_index(env, warn=warn)
    for attempt in range(2):
        try:
            if rebuild and attempt == 0:
                index.rebuild()
            stats = index.update(scope.folders, progress=progress, jobs=jobs)
            for message in stats.warnings:
                warn(message)
            return index, stats
        except (sqlite3.DatabaseError, IndexUnavailableError, OSError, UnicodeDecodeError) as exc:
            index.close()
            if index.in_memory:
                raise
            warn(f"index problem ({str(exc).splitlines()[0][:200]}); indexing in memory for this run")
            index = open_index(env, warn=warn, in_memory=True)
    raise AssertionError("unreachable")  # pragma: no cover


def query_index(
    scope: Scope,
    query: Callable[[ArchiveIndex], _T],
    *,
    env: Mapping[str, str] | None = None,
    progress: ProgressFn | None = None,
    warn: WarnFn | None = None,
) -> _T:
    """:func:`updated_index`, then ``query(index)``, then close it.

    Damage the open-time checks cannot see (a page of the main database, text that is no longer
    UTF-8) shows up as a ``DatabaseError`` or a decoding error in the query: the index files are
    then deleted and rebuilt, with a warning, and the query runs once more. Never a failed command.
    """
    import sqlite3

    from pitools.ops.index import _is_locked

    warn = warn or (lambda _m: None)
    index, _stats = updated_index(scope, env=env, progress=progress, warn=warn)
    try:
        return query(index)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if isinstance(exc, sqlite3.DatabaseError) and _is_locked(exc):
            raise
        warn(f"index damaged ({str(exc).splitlines()[0][:200] or type(exc).__name__}); rebuilding it")
        if not index.in_memory:
            index.discard()
        index, _stats = updated_index(scope, env=env, progress=progress, warn=warn)
        return query(index)
    finally:
        index.close()


# -- time -----------------------------------------------------------------------------------------


def local_timezone(name: str | None = None) -> tuple[_dt.tzinfo, str]:
    """``name`` (IANA, ``UTC`` or ``local``) as a tzinfo, and how to call it."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name and name.lower() != "local":
        if name.upper() in ("UTC", "Z"):
            return _dt.UTC, "UTC"
        try:
            return ZoneInfo(name), name
        except (ZoneInfoNotFoundError, ValueError):
            raise OptionValueError(
                f"--timezone: unknown time zone {name!r} (use an IANA name like Europe/Paris, or UTC)"
            ) from None
    tz_env = os.environ.get("TZ")
    if tz_env:
        try:
            return ZoneInfo(tz_env.lstrip(":")), tz_env.lstrip(":")
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open("/etc/localtime", "rb") as fh:
            return ZoneInfo.from_file(fh, key="localtime"), "local"
    except (OSError, ValueError):
        pass
    local = _dt.datetime.now().astimezone().tzinfo or _dt.UTC
    return local, "local"


_RELATIVE = re.compile(r"^(\d+)([hdw])$")


TIME_FORMS = "a date (2026-03-01), a month (2026-03), an ISO time (2026-03-01T09:00), or an age (12h, 7d, 2w)"


def time_range(
    since: str | None, until: str | None, tz: _dt.tzinfo, *, now: _dt.datetime | None = None
) -> tuple[int | None, int | None]:
    """``--since``/``--until`` as Unix ms bounds [lo, hi); a range that ends before it starts is a
    usage error (exit 2) rather than a silently empty answer."""
    lo = parse_time(since, tz, now=now, option="--since") if since else None
    hi = parse_time(until, tz, end=True, now=now, option="--until") if until else None
    if lo is not None and hi is not None and lo >= hi:
        raise OptionValueError(
            f"--since {since} is not before --until {until}: the range holds no time "
            "(a date or month given to --until includes it whole)"
        )
    return lo, hi


def parse_time(
    text: str, tz: _dt.tzinfo, *, end: bool = False, now: _dt.datetime | None = None, option: str = "--since"
) -> int:
    """``--since``/``--until`` as Unix ms: ``2026-03-01``, ``2026-03``, an ISO time, or ``7d``/``12h``/``2w`` ago.

    A bare date or month given as ``--until`` includes that whole day or month.
    """
    text = text.strip()
    m = _RELATIVE.match(text)
    if m:
        unit = {"h": 3600, "d": 86400, "w": 7 * 86400}[m.group(2)]
        base = now or _dt.datetime.now(_dt.UTC)
        return int((base.timestamp() - int(m.group(1)) * unit) * 1000)
    try:
        if re.fullmatch(r"\d{4}-\d{2}", text):
            when = _dt.datetime.strptime(text, "%Y-%m").replace(tzinfo=tz)
            if end:
                when = (when.replace(day=28) + _dt.timedelta(days=4)).replace(day=1)
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            when = _dt.datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=tz)
            if end:
                when += _dt.timedelta(days=1)
        else:
            when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=tz)
    except ValueError:
        raise OptionValueError(f"{option}: cannot read the time {text!r}; use {TIME_FORMS}") from None
    return int(when.timestamp() * 1000)


# -- usage --------------------------------------------------------------------------------------------


def usage_archive(query: UsageQuery, *, progress: ProgressFn | None = None, warn: WarnFn | None = None) -> UsageReport:
    """``pitools usage``: bring the index up to date for every session folder (or
    ``query.session_dir``), then :func:`usage_report` it in the query's zone."""
    tz, tz_name = local_timezone(query.where.timezone)
    scope = archive_scope(session_dir=query.session_dir, all_=True)

    def report(index: ArchiveIndex) -> UsageReport:
        return usage_report(index, scope, query, tz=tz, tz_name=tz_name)

    return query_index(scope, report, progress=progress, warn=warn)


def usage_report(
    index: ArchiveIndex,
    scope: Scope,
    query: UsageQuery | None = None,
    *,
    tz: _dt.tzinfo = _dt.UTC,
    tz_name: str = "UTC",
) -> UsageReport:
    """``pitools usage``: sums over every usage record in scope, copied fork history counted once."""
    from pitools.core.views.usage import UsageSum
    from pitools.core.views.usage_report import PERIODS, SessionInfo, UsageGroup, build_report

    query = UsageQuery() if query is None else query
    by, breakdown, f = query.by, query.breakdown, query.where
    project, cwd, session, since, until = f.project, f.cwd, f.session, f.since, f.until
    swhere, params = _session_filters(scope, project=project, cwd=cwd, session=session)
    # A semi-join on the sessions in scope: cheaper than joining every usage row.
    where = [f"u.sid IN (SELECT s.sid FROM sessions s WHERE {' AND '.join(swhere) or '1'})"]
    lo, hi = time_range(since, until, tz)
    conn = index.conn
    src = _usage_source(conn, tz if by in PERIODS else None, lo, hi, " AND ".join(where), params)
    ts = src.ts
    times: list[str] = []
    time_params: list[SqlParam] = []
    if lo is not None:
        times.append(f"{ts} >= ?")
        time_params.append(lo)
    if hi is not None:
        times.append(f"{ts} < ?")
        time_params.append(hi)
    cond = " AND ".join(where + times)
    params += time_params
    # The whole archive, no session filter, no per-session rows: the all-sessions sums will do.
    whole = (
        src.table == "usage_slots"
        and by not in ("project", "session")
        and not (project or cwd or session)
        and _covers_index(conn, scope)
    )
    rows_src, rows_cond, rows_params = src, cond, params
    if whole:
        rows_src, rows_cond, rows_params = _GLOB, " AND ".join(times) or "1", time_params
    if by in PERIODS:
        key_sql = _local_day_sql(conn, tz, rows_cond, rows_params, rows_src)
    elif by in ("project", "session"):
        key_sql = "u.sid"
    else:
        key_sql = "NULL"
    sql = (
        f"SELECT {key_sql}, u.provider, u.model, u.copied, sum(u.input), sum(u.output), "
        f"sum(u.cache_read), sum(u.cache_write), sum(u.cost), {rows_src.count} "
        f"FROM {rows_src.table} u WHERE {rows_cond} GROUP BY 1, 2, 3, 4"
    )
    infos: dict[int, SessionInfo] = {}
    if by in ("project", "session"):
        for sid, path, hid, name, scwd in conn.execute("SELECT sid, path, header_id, name, cwd FROM sessions"):
            infos[sid] = SessionInfo(path, hid, name, scwd)
    epoch = _dt.date(1970, 1, 1)
    days: dict[int, str] = {}
    groups: list[UsageGroup] = []
    copied: list[UsageGroup] = []
    for key, provider, model, is_copied, i, o, r, w, c, n in conn.execute(sql, rows_params):
        info: SessionInfo | None = None
        if by in PERIODS:
            if key is not None:
                if key not in days:
                    days[key] = (epoch + _dt.timedelta(days=key)).isoformat()
                key = days[key]
        elif by == "session":
            info = infos.get(key)
            key = info.path if info is not None else None
        elif by == "project":
            key = infos[key].cwd if key in infos else None
        g = UsageGroup(key, provider or "", model or "", UsageSum(i or 0, o or 0, r or 0, w or 0, c or 0, n), info)
        (copied if is_copied else groups).append(g)
    sessions = conn.execute(
        f"SELECT count(DISTINCT u.sid) FROM {src.table} u WHERE {cond} AND u.copied = 0", params
    ).fetchone()[0]
    return build_report(
        groups,
        by=by,
        tz_name=tz_name,
        sessions=sessions,
        breakdown=breakdown,
        since=since,
        until=until,
        copied=copied,
    )


@dataclass(frozen=True, slots=True)
class _Source:
    """Where usage sums come from: every record, or the quarter-hour sums (``usage_slots``)."""

    table: str
    ts: str  # SQL for a row's time (ms)
    count: str  # SQL for the number of records
    last: str  # SQL for the latest time a row may hold (ms)


_RECORDS = _Source("usage", "u.ts", "count(*)", "u.ts")


_SLOTS = _Source("usage_slots", f"(u.q * {SLOT_MS})", "sum(u.n)", f"(u.q * {SLOT_MS} + {SLOT_MS - 1})")
_GLOB = _Source("usage_glob", _SLOTS.ts, _SLOTS.count, _SLOTS.last)


def _covers_index(conn: sqlite3.Connection, scope: Scope) -> bool:
    """Whether ``scope``'s folders hold every session the index knows (then usage_glob is theirs)."""
    if not scope.folders:
        return False
    marks = ",".join("?" * len(scope.folders))
    row = conn.execute(f"SELECT 1 FROM sessions WHERE folder NOT IN ({marks}) LIMIT 1", scope.folders).fetchone()
    return row is None


def _usage_source(
    conn: sqlite3.Connection,
    tz: _dt.tzinfo | None,
    lo: int | None,
    hi: int | None,
    cond: str,
    params: Sequence[SqlParam],
) -> _Source:
    """The quarter-hour sums when they give exactly the records' answer, else the records.

    Exact when ``--since``/``--until`` fall on quarter hours (dates and months do; ``7d`` ago
    does not), no record is before 1970 (day numbers truncate toward zero there), and for
    periods when every offset of ``tz`` over the data, and every change of offset, is a whole
    quarter hour (true of every zone today; not of old local mean times).
    """
    if any(t is not None and t % SLOT_MS for t in (lo, hi)):
        return _RECORDS
    q_lo, q_hi = conn.execute(f"SELECT min(u.q), max(u.q) FROM usage_slots u WHERE {cond}", params).fetchone()
    if q_lo is None or q_lo < 0:
        return _RECORDS
    slots = _SLOTS
    if tz is None:
        return slots
    from pitools.core.views.usage_report import offset_pieces

    quarter = SLOT_MS // 1000
    pieces = offset_pieces(tz, q_lo * quarter - 1, (q_hi + 1) * quarter + 1)
    if any(off % quarter for _, off in pieces) or any(start % quarter for start, _ in pieces[1:]):
        return _RECORDS
    return slots


def _local_day_sql(
    conn: sqlite3.Connection, tz: _dt.tzinfo, cond: str, params: Sequence[SqlParam], src: _Source = _RECORDS
) -> str:
    """SQL for a record's local day number in ``tz``: its time plus the offset in force then."""
    from pitools.core.views.usage_report import offset_pieces

    ts = src.ts
    lo, hi = conn.execute(f"SELECT min({ts}), max({src.last}) FROM {src.table} u WHERE {cond}", params).fetchone()
    if lo is None:
        return "NULL"
    pieces = offset_pieces(tz, int(lo) // 1000 - 1, int(hi) // 1000 + 1)
    if len(pieces) == 1:
        offset = str(pieces[0][1])
    else:
        cases = " ".join(
            f"WHEN {ts} < {start * 1000} THEN {prev}"
            for (start, _), (_, prev) in zip(pieces[1:], pieces[:-1], strict=True)
        )
        offset = f"(CASE {cases} ELSE {pieces[-1][1]} END)"
    # Whole days since 1970-01-01 in local time (integer arithmetic: cheaper than strftime).
    return f"({ts} / 1000 + {offset}) / 86400"


def _session_filters(
    scope: Scope, *, project: str | None = None, cwd: str | None = None, session: str | None = None
) -> tuple[list[str], list[SqlParam]]:
    where: list[str] = []
    params: list[SqlParam] = []
    where.append("s.folder IN (" + ",".join("?" * len(scope.folders)) + ")" if scope.folders else "0")
    params.extend(scope.folders)
    from pitools.ops.search_core import project_filter, session_filter

    if project:
        clause, values = project_filter(project)
        where.append(clause)
        params.extend(values)
    if cwd:
        from pitools.core.session.locate import resolve_path

        where.append("s.cwd = ?")
        params.append(resolve_path(cwd, os.getcwd(), os.environ))
    if session:
        clause, values = session_filter(session)
        where.append(clause)
        params.extend(values)
    return where, params
