"""``pitools search QUERY``: full-text search over every session, with each hit's place in the tree."""

from __future__ import annotations

import click

from pitools.cli.archive_run import ROLE_CHOICES
from pitools.cli.options import format_option
from pitools.cli.output import get_output


@click.command("search")
@click.argument("query")
@click.option("--regex", is_flag=True, help="QUERY is a regular expression; scan the text instead of the index.")
@click.option("--thinking", is_flag=True, help="Search thinking blocks too.")
@click.option("--role", "roles", multiple=True, type=click.Choice(ROLE_CHOICES), help="Only entries of this role.")
@click.option("--tool", "tools", multiple=True, metavar="NAME", help="Only tool calls/results of this tool.")
@click.option("--project", metavar="TEXT", default=None, help="Only sessions whose cwd contains TEXT.")
@click.option("--cwd", metavar="DIR", default=None, help="Only sessions started in DIR.")
@click.option("--session", metavar="REF", default=None, help="Only this session (path, id or id prefix).")
@click.option("--since", metavar="TIME", default=None, help="From TIME (2026-03-01, 2026-03, ISO time, 7d).")
@click.option("--until", metavar="TIME", default=None, help="Up to TIME (a date includes that day).")
@click.option("--in-context", is_flag=True, help="Only what the context at the default leaf still holds.")
@click.option(
    "--branch",
    type=click.Choice(["current", "all"]),
    default="all",
    show_default=True,
    help="current: only the default leaf's path; all: every branch.",
)
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True, help="At most this many hits.")
@click.option("--timezone", "timezone", metavar="TZ", default=None, help="Zone of --since/--until dates.")
@click.option("--session-dir", metavar="DIR", default=None, help="Search only this session folder.")
@format_option("human", "json")
def command(
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
    current context holds it or compacted it away, and the commands to go there.

    \b
    Examples:
      pitools search 'race condition'
      pitools search '"retry with backoff"' --role assistant --since 30d
      pitools search 'def \\w+_cache' --regex --project myrepo --format json
    """
    from pitools.cli.archive_run import run_search

    return run_search(
        get_output(),
        query=query,
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
        timezone=timezone,
        session_dir=session_dir,
        format_=format_,
    )
