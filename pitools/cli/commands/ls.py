"""``pitools ls``: the sessions Pi keeps for this directory (or all of them), newest first."""

from __future__ import annotations

import time
from collections.abc import Callable

import click

from pitools.cli.options import format_option
from pitools.cli.output import get_output


def _progress() -> Callable[[int, int], None] | None:
    """A throttled ``reading sessions n/total`` line on stderr, only when stderr is a terminal."""
    if not get_output().progress:
        return None
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 0.1:
            return
        last[0] = now
        end = "\r\x1b[K" if done >= total else "\r"
        click.echo(f"\rreading sessions {done}/{total}{end}", err=True, nl=False)

    return show


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
@format_option("human", "json")
@click.option("--no-cache", is_flag=True, help="Read every file again instead of using the summary cache.")
def command(all_: bool, cwd: str | None, session_dir: str | None, format_: str, no_cache: bool) -> int:
    """List sessions the way Pi finds them (pi --resume), newest activity first.

    Each row shows the session's name or first message, message and entry counts, leaves, size,
    token and cost totals and models. Markers flag files that need migration (M), that Pi cannot
    open (!) or read (E), or that Pi's picker leaves out (h). Summaries are cached by path, size
    and mtime under $PITOOLS_CACHE_DIR (default $XDG_CACHE_HOME/pitools).

    \b
    Examples:
      pitools ls
      pitools ls --all --format json
    """
    from pitools.ops.listing import list_sessions

    listing = list_sessions(cwd=cwd, session_dir=session_dir, all_=all_, use_cache=not no_cache, progress=_progress())
    data = listing.to_json()
    if format_ == "json":
        get_output().write_json(data)
    else:
        from pitools.render.ls import render_ls

        render_ls(get_output().console(), data)
    return 0
