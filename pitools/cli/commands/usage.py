"""``pitools usage``: tokens and cost across every session, fork/clone history counted once."""

from __future__ import annotations

import click

from pitools.cli.options import table_params
from pitools.cli.output import Output, pass_output


@click.command("usage")
@table_params("usage")
@pass_output
def command(
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
    from pitools.cli.archive_commands import run_usage
    from pitools.ops.queries import SessionFilter, UsageQuery

    where = SessionFilter(project, cwd, session, since, until, timezone)
    return run_usage(out, UsageQuery(by, breakdown, where, session_dir), format_)
