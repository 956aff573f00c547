"""A throttled one-line progress counter on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def progress_line(label: str) -> Callable[[int, int], None] | None:
    """``label n/total`` redrawn in place (at most ten times a second); None when not a terminal."""
    if not sys.stderr.isatty():
        return None
    import click

    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 0.1:
            return
        last[0] = now
        width = 24
        filled = width * done // total if total else width
        bar = "█" * filled + "░" * (width - filled)
        end = "\r\x1b[K" if done >= total else "\r"
        click.echo(f"\r{label} {bar} {done}/{total}{end}", err=True, nl=False)

    return show


def warn_to_stderr(message: str) -> None:
    import click

    click.echo(f"pitools: warning: {message}", err=True)
