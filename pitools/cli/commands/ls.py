"""``pitools ls``: the sessions Pi keeps for this directory (or all of them), newest first."""

from __future__ import annotations

import click

from pitools.cli.archive_run import SORTS, select_sessions
from pitools.cli.options import format_option
from pitools.cli.output import get_output

__all__ = ["SORTS", "command", "select_sessions"]


def _since(value: str | None) -> str | None:
    """``--since`` as an ISO 8601 UTC instant (``7d`` = seven days ago); bad values exit 2."""
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
            raise click.BadParameter(f"{value!r} is neither a date (2026-03-01) nor an age (12h, 7d)") from None
        if when.tzinfo is None:
            when = when.astimezone()  # a date or time without zone is local, as people mean it
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@click.command("ls")
@click.option("--all", "all_", is_flag=True, help="Every session Pi keeps, not just this directory's.")
@click.option("--cwd", metavar="DIR", default=None, help="List for DIR instead of the current directory.")
@click.option(
    "--session-dir",
    metavar="DIR",
    default=None,
    help="Session directory (default: PI_CODING_AGENT_SESSION_DIR, the sessionDir setting, or Pi's "
    "per-directory folder under ~/.pi/agent/sessions).",
)
@format_option("human", "json", "tsv")
@click.option("--no-cache", is_flag=True, help="Read every file again instead of using the archive index.")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N", help="Show the first N sessions.")
@click.option(
    "--since",
    metavar="WHEN",
    default=None,
    callback=lambda ctx, param, value: _since(value),
    help="Only sessions active since WHEN: a date (2026-03-01), a date-time, or an age (30m, 12h, 7d, 2w).",
)
@click.option(
    "--sort",
    type=click.Choice(list(SORTS)),
    default="activity",
    show_default=True,
    help="Order: newest activity (Pi's), newest created, or largest size/tokens/cost/messages first; name A-Z.",
)
def command(
    all_: bool,
    cwd: str | None,
    session_dir: str | None,
    format_: str,
    no_cache: bool,
    limit: int | None,
    since: str | None,
    sort: str,
) -> int:
    """List sessions the way Pi finds them (pi --resume), newest activity first.

    Each row shows the session's name or first message, message and entry counts, leaves, size,
    token and cost totals, models and the file's path (~ for your home folder). Markers flag
    files that need migration (M), that Pi cannot open (!) or read (E), or that Pi's picker
    leaves out (h). A totals row ends the table (fork and clone history counted once). Summaries
    come from the archive index (`pitools index`), which rereads only the files that changed.

    \b
    Examples:
      pitools ls
      pitools ls --all --format json
      pitools ls --all --since 7d --sort cost --limit 10
      pitools ls --all --format tsv | cut -f2,10    # one line per session, fixed tab-separated columns
    """
    from pitools.cli.archive_run import run_ls

    return run_ls(
        get_output(),
        all_=all_,
        cwd=cwd,
        session_dir=session_dir,
        format_=format_,
        no_cache=no_cache,
        limit=limit,
        since=since,
        sort=sort,
    )
