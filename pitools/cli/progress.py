"""A throttled one-line progress display on stderr, drawn only where the output layer allows it.

Kept free of click and rich: the archive commands' fast path (:mod:`pitools.cli.fast`) uses it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pitools.cli.output import Output

ProgressFn = Callable[[int, int], None]
T = TypeVar("T")


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


def with_progress_bar(err: Any, label: str, total: int, run: Callable[[Callable[[int], None]], T]) -> T:
    """``run(advance)`` with a rich progress bar (``label``, bar, n/total, time) on the ``err``
    console that ``advance(n)`` moves; started at the first call (once any worker processes
    exist) and erased at the end. rich is imported only here."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task(label, total=total)
    started = False

    def advance(n: int) -> None:
        nonlocal started
        if not started:
            progress.start()
            started = True
        if n:
            progress.advance(task, n)

    try:
        return run(advance)
    finally:
        if started:
            progress.stop()
