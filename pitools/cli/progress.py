"""A throttled one-line progress display on stderr, drawn only where the output layer allows it.

Kept free of click and rich: the archive commands' fast path (:mod:`pitools.cli.fast`) uses it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pitools.cli.output import Output

ProgressFn = Callable[[int, int], None]


def progress_line(label: str, out: Output, *, bar: bool = True) -> ProgressFn | None:
    """``label ███░░ n/total`` (or ``label n/total`` without ``bar``) redrawn in place on
    ``out``'s stderr, at most ten times a second; None off a terminal."""
    if not out.progress:
        return None
    stream = out.stderr
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 0.1:
            return
        last[0] = now
        shown = label
        if bar:
            width = 24
            filled = width * done // total if total else width
            shown = f"{label} {'█' * filled}{'░' * (width - filled)}"
        end = "\r\x1b[K" if done >= total else "\r"
        stream.write(f"\r{shown} {done}/{total}{end}")
        stream.flush()

    return show


def warner(out: Output) -> Callable[[str], None]:
    """One ``pitools: warning: …`` line on stderr per message (the index falling back, rebuilding)."""
    return lambda message: out.message(f"warning: {message}")
