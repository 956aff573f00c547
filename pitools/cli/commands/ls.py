"""``pitools ls``: the sessions Pi keeps for this directory (or all of them), newest first."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

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


#: --sort keys: (what to compare, largest/newest first?)
SORTS: dict[str, tuple[str, bool]] = {
    "activity": ("modified", True),
    "created": ("created", True),
    "size": ("fileBytes", True),
    "tokens": ("tokens.total", True),
    "cost": ("cost", True),
    "messages": ("messageCount", True),
    "name": ("name", False),
}


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
    """
    from pitools.ops.listing import list_sessions

    out = get_output()
    listing = list_sessions(
        cwd=cwd,
        session_dir=session_dir,
        all_=all_,
        use_cache=not no_cache,
        progress=_progress(),
        warn=lambda m: out.message(f"warning: {m}"),
        select=lambda found: select_sessions(found, since=since, sort=sort, limit=limit),
    )
    data = listing.to_json()
    if format_ == "json":
        get_output().write_json(data)
    else:
        from pitools.render.ls import render_ls

        render_ls(get_output().console(), data)
    return 0
