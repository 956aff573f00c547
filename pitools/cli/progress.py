"""A throttled one-line progress bar on stderr, drawn only where the output layer allows it."""

from __future__ import annotations

import time
from collections.abc import Callable


def progress_line(label: str) -> Callable[[int, int], None] | None:
    """``label ███░░ n/total`` redrawn in place (at most ten times a second); None off a terminal."""
    from pitools.cli.output import get_output

    out = get_output()
    if not out.progress:
        return None
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
        out.stderr.write(f"\r{label} {bar} {done}/{total}{end}")
        out.stderr.flush()

    return show


def warn_to_stderr(message: str) -> None:
    """One ``pitools: warning: …`` line on stderr (the index falling back, rebuilding)."""
    from pitools.cli.output import get_output

    get_output().message(f"warning: {message}")
