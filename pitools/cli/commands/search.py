"""``pitools search QUERY``: full-text search over every session, with each hit's place in the tree."""

from __future__ import annotations

import click

from pitools.cli.options import table_params
from pitools.cli.output import Output, pass_output


@click.command("search")
@table_params("search")
@pass_output
def command(
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
    """Find text in user and assistant messages, tool calls and results, summaries and custom messages.

    Words match at word starts, ignoring case; "quoted phrases" match as written. Hits come
    grouped by session, newest first, each with the leaves whose path holds it, whether the
    current context holds it or compacted it away, and the commands to go there. No hit still
    exits 0 (exit 1 means the search could not run: a bad pattern, an unreadable index).

    \b
    Examples:
      pitools search 'race condition'
      pitools search '"retry with backoff"' --role assistant --since 30d
      pitools search 'def \\w+_cache' --regex --project myrepo --format json
    """
    from pitools.cli.archive_commands import run_search
    from pitools.ops.queries import SearchQuery, SessionFilter

    where = SessionFilter(project, cwd, session, since, until, timezone)
    asked = SearchQuery(query, regex, thinking, roles, tools, in_context, branch, limit, where, session_dir)
    return run_search(out, asked, format_)
