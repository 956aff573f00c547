"""The bodies of ``pitools search``, ``usage`` and ``ls``, free of click.

The click commands (:mod:`pitools.cli.commands`) parse options and call these; so does the fast
path (:mod:`pitools.cli.fast`), which runs the common invocations without importing click.
Each takes the run's :class:`~pitools.cli.output.Output` and returns the exit status.
"""

from __future__ import annotations

from typing import Any

from pitools.cli.archive_options import SORTS
from pitools.cli.output import Output
from pitools.cli.progress import progress_line, warner
from pitools.ops.search_core import ROLE_CHOICES

__all__ = ["ROLE_CHOICES", "SORTS", "run_ls", "run_search", "run_usage", "select_sessions"]

# -- usage ------------------------------------------------------------------------------------------


def run_usage(
    out: Output,
    *,
    by: str,
    since: str | None,
    until: str | None,
    timezone: str | None,
    breakdown: bool,
    project: str | None,
    cwd: str | None,
    session: str | None,
    session_dir: str | None,
    format_: str,
) -> int:
    from pitools.ops.archive import archive_scope, local_timezone, query_index, usage_report

    tz, tz_name = local_timezone(timezone)
    scope = archive_scope(session_dir=session_dir, all_=True)
    report = query_index(
        scope,
        lambda index: usage_report(
            index,
            scope,
            by=by,
            tz=tz,
            tz_name=tz_name,
            since=since,
            until=until,
            breakdown=breakdown,
            project=project,
            cwd=cwd,
            session=session,
        ),
        progress=progress_line("indexing sessions", out),
        warn=warner(out),
    )
    data = report.to_json()
    if format_ == "json":
        out.write_json(data)
    elif format_ == "csv":
        from pitools.render.archive import usage_csv

        out.write_text(usage_csv(data))
    else:
        from pitools.render.archive import render_usage

        render_usage(out.console(), data)
    return 0


# -- search -----------------------------------------------------------------------------------------


def run_search(
    out: Output,
    *,
    query: str,
    regex: bool,
    thinking: bool,
    roles: tuple[str, ...],
    tools: tuple[str, ...],
    project: str | None,
    cwd: str | None,
    session: str | None,
    since: str | None,
    until: str | None,
    in_context: bool,
    branch: str,
    limit: int,
    timezone: str | None,
    session_dir: str | None,
    format_: str,
) -> int:
    from pitools.ops.archive import archive_scope, local_timezone, query_index
    from pitools.ops.search import search

    warn = warner(out)
    # The zone only reads --since/--until: without them (and without --timezone to check) the
    # usual search skips loading zoneinfo and the system's zone file.
    tz = local_timezone(timezone)[0] if timezone is not None or since or until else None
    scope = archive_scope(session_dir=session_dir, all_=True)

    def run(index: Any) -> Any:
        if not index.fts and not regex:
            warn("this Python's SQLite has no FTS5: scanning every entry instead")
        return search(
            index,
            scope,
            query,
            regex=regex,
            thinking=thinking,
            roles=roles,
            tools=tools,
            project=project,
            cwd=cwd,
            session=session,
            since=since,
            until=until,
            in_context=in_context,
            branch=branch,
            limit=limit,
            tz=tz,
        )

    result = query_index(scope, run, progress=progress_line("indexing sessions", out), warn=warn)
    data = result.to_json()
    if format_ == "json":
        out.write_json(data)
    else:
        if not out.color and out.width is None:  # plain text, the bytes rich would print
            from pitools.render.search_hits import plain, segments

            text = plain(segments(data))
            if text is not None:
                out.line_console().file.write(text)
                return 0
        from pitools.render.archive import render_search

        render_search(out.console(), data)
    return 0


# -- ls ----------------------------------------------------------------------------------------------


def select_sessions(
    sessions: list[dict[str, Any]], *, since: str | None, sort: str, limit: int | None
) -> list[dict[str, Any]]:
    """Filter by activity (``since``, ISO UTC), order by ``sort`` (SORTS), keep the first ``limit``."""
    if since is not None:
        sessions = [s for s in sessions if (s.get("modified") or "") >= since]
    if sort != "activity":  # the listing already comes in Pi's order
        key, descending = SORTS[sort]

        def value(s: dict[str, Any]) -> Any:
            v: Any = s
            for part in key.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            if key == "name":
                v = s.get("name") or s.get("firstMessage") or ""
                return str(v).casefold()
            return v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None

        present = [s for s in sessions if value(s) is not None]
        missing = [s for s in sessions if value(s) is None]
        sessions = sorted(present, key=value, reverse=descending) + missing
    return sessions[:limit] if limit is not None else sessions


def run_ls(
    out: Output,
    *,
    all_: bool,
    cwd: str | None,
    session_dir: str | None,
    format_: str,
    no_cache: bool,
    limit: int | None,
    since: str | None,
    sort: str,
) -> int:
    from pitools.core.views.resume import short_ids
    from pitools.ops.listing import list_sessions

    every_id: list[str] = []

    def select(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Id prefixes unique among every session found (not only those --since/--limit keep),
        # so the prefix shown names one session wherever pitools looks it up.
        every_id.extend(str(s["id"]) for s in found if s.get("id"))
        return select_sessions(found, since=since, sort=sort, limit=limit)

    listing = list_sessions(
        cwd=cwd,
        session_dir=session_dir,
        all_=all_,
        use_cache=not no_cache,
        progress=progress_line("reading sessions", out, bar=False),
        warn=warner(out),
        select=select,
    )
    data = listing.to_json()
    if format_ == "json":
        out.write_json(data)
    elif format_ == "tsv":
        from pitools.render.ls import ls_tsv

        for line in ls_tsv(data):
            out.echo(line)
    else:
        from pitools.render.ls import render_ls

        render_ls(out.console(), data, short_ids(every_id))
    return 0
