"""``pitools ls``: the sessions Pi keeps for this directory (or all of them), newest first."""

from __future__ import annotations

import click

from pitools.cli.options import since_value, table_params
from pitools.cli.output import Output, pass_output

__all__ = ["command"]


@click.command("ls")
@table_params("ls", callbacks={"since": lambda ctx, param, value: since_value(value)})
@pass_output
def command(
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
    from pitools.cli.archive_commands import run_ls
    from pitools.ops.queries import ListQuery

    return run_ls(out, ListQuery(all_, cwd, session_dir, not no_cache, since, sort, limit), format_)
