"""``pitools usage``: tokens and cost across every session, fork/clone history counted once."""

from __future__ import annotations

import click

from pitools.cli.options import format_option
from pitools.cli.output import get_output
from pitools.core.views.usage_report import BY_CHOICES


@click.command("usage")
@click.option("--by", type=click.Choice(BY_CHOICES), default="day", show_default=True, help="One row per this.")
@click.option("--since", metavar="TIME", default=None, help="From TIME (2026-03-01, 2026-03, ISO time, 7d).")
@click.option("--until", metavar="TIME", default=None, help="Up to TIME (a date includes that day).")
@click.option("--timezone", "timezone", metavar="TZ", default=None, help="Zone for days/weeks/months (default local).")
@click.option("--breakdown", is_flag=True, help="Per model inside each row.")
@click.option("--project", metavar="TEXT", default=None, help="Only sessions whose cwd contains TEXT.")
@click.option("--cwd", metavar="DIR", default=None, help="Only sessions started in DIR.")
@click.option("--session", metavar="REF", default=None, help="Only this session (path, id or id prefix).")
@click.option("--session-dir", metavar="DIR", default=None, help="Only this session folder.")
@format_option("human", "json", "csv")
def command(
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
    """Sum tokens (input, output, cache read/write) and cost over every usage record Pi keeps.

    Counts assistant messages, compactions, branch summaries, usage entries and tool results,
    as Pi's session stats do, so one session's totals equal `pitools inspect`. History that a
    fork or clone copied from its parent session counts once, in the parent.

    \b
    Examples:
      pitools usage --by month
      pitools usage --by model --since 2026-03-01 --until 2026-03-31
      pitools usage --by day --breakdown --timezone Europe/Paris --format csv
    """
    from pitools.cli.archive_run import run_usage

    return run_usage(
        get_output(),
        by=by,
        since=since,
        until=until,
        timezone=timezone,
        breakdown=breakdown,
        project=project,
        cwd=cwd,
        session=session,
        session_dir=session_dir,
        format_=format_,
    )
