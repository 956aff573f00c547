"""The bodies of ``pitools search``, ``usage`` and ``ls``, free of click.

The click commands (:mod:`pitools.cli.commands`) parse options and call these; so does the fast
path (:mod:`pitools.cli.fast`), which runs the common invocations without importing click.
Each takes the run's :class:`~pitools.cli.output.Output` and returns the exit status.
"""

from __future__ import annotations

from pitools.cli.output import Output
from pitools.cli.progress import progress_line, warner
from pitools.ops.search_core import ROLE_CHOICES

__all__ = ["ROLE_CHOICES", "run_ls", "run_search", "run_usage"]

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
    from pitools.ops.archive import usage_archive
    from pitools.ops.queries import SessionFilter, UsageQuery

    where = SessionFilter(project, cwd, session, since, until, timezone)
    query = UsageQuery(by, breakdown, where, session_dir)
    report = usage_archive(query, progress=progress_line("indexing sessions", out), warn=warner(out))
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
    from pitools.ops.queries import SearchQuery, SessionFilter
    from pitools.ops.search import search_archive

    where = SessionFilter(project, cwd, session, since, until, timezone)
    asked = SearchQuery(query, regex, thinking, roles, tools, in_context, branch, limit, where, session_dir)
    result = search_archive(asked, progress=progress_line("indexing sessions", out), warn=warner(out))
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
    from pitools.ops.listing import list_archive
    from pitools.ops.queries import ListQuery

    query = ListQuery(all_, cwd, session_dir, not no_cache, since, sort, limit)
    listing = list_archive(query, progress=progress_line("reading sessions", out, bar=False), warn=warner(out))
    data = listing.to_json()
    if format_ == "json":
        out.write_json(data)
    elif format_ == "tsv":
        from pitools.render.ls import ls_tsv

        for line in ls_tsv(data):
            out.echo(line)
    else:
        from pitools.render.ls import render_ls

        render_ls(out.console(), data)
    return 0
