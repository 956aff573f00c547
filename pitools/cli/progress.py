"""Progress on the run's stderr, drawn only where the output layer allows it.

Everything here draws on a stream it is given: the run's :class:`~pitools.cli.output.Output`
(its stderr, its terminal decision, its safe text), never the process's ``sys.stderr``.
Kept free of click and rich (bar the rich bar), so that it costs the archive commands little.
"""

from __future__ import annotations

import contextlib
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


class Spinner:
    """A one-line "still working" indicator on ``stream``, drawn only after ``delay`` s.

    :meth:`pitools.cli.output.Output.start_progress` starts one (a terminal's stderr only) on
    single-file commands while they read and compute; the Output erases it as soon as output
    starts or the run ends, so it never mixes with data. ``label`` is drawn as given (the
    Output has made it safe). With ``delay`` 0 the first frame is drawn at once.
    """

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: Any, label: str, delay: float) -> None:
        import threading  # only when a spinner is drawn: the fast path never needs it

        self.stream = stream
        self.label = label
        self.delay = delay
        self.drawn = False
        self._started = 0.0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="pitools-progress", daemon=True)

    def start(self) -> None:
        self._started = time.monotonic()
        _live.add(self)
        if self.delay <= 0:
            self._draw(0)
        self._thread.start()

    def _draw(self, frame: int) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            elapsed = time.monotonic() - self._started
            with contextlib.suppress(OSError, ValueError):
                self.stream.write(f"\r{self.FRAMES[frame % len(self.FRAMES)]} {self.label} ({elapsed:.0f} s)\x1b[K")
                self.stream.flush()
                self.drawn = True

    def _run(self) -> None:
        # With no delay frame 0 is already drawn: the next one comes a tenth of a second later.
        if self._stop.wait(self.delay if self.delay > 0 else 0.1):
            return
        frame = 0 if self.delay > 0 else 1
        while True:
            self._draw(frame)
            frame += 1
            if self._stop.wait(0.1):
                return

    def stop(self) -> None:
        self._stop.set()
        _live.discard(self)
        with self._lock:  # a frame being drawn finishes first
            if self.drawn:
                with contextlib.suppress(OSError, ValueError):
                    self.stream.write("\r\x1b[K")
                    self.stream.flush()
                self.drawn = False
        if self._thread.is_alive():
            self._thread.join(timeout=1)


#: Spinners started and not yet stopped (each one a thread drawing on some run's stderr).
_live: set[Spinner] = set()


def stop_spinners() -> None:
    """Stop every spinner still drawing: the error handler's safety net when a run ends."""
    for spinner in list(_live):
        spinner.stop()
