"""What one run of ``pitools`` talks to: its streams, its environment variables, ``--debug``.

httpie's ``Environment``: :func:`pitools.cli.main` takes one (or builds it from the process)
and everything below it reads streams and variables from it, not from ``sys``/``os.environ``,
so a test (or a program embedding pitools) can run a command against its own streams. It is
deliberately light (no imports beyond ``os``/``sys``): the lean ``search`` starts with it. The
output layer (:class:`pitools.cli.output.Output`) adds the colour/width/terminal decisions on
top, once ``--color``/``--width`` are known.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class Environment:
    """The streams and environment variables of one run (defaults: this process's)."""

    __slots__ = ("debug", "environ", "interrupt_ends_run", "stderr", "stdin", "stdin_spool", "stdout")

    def __init__(
        self,
        *,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        environ: Mapping[str, str] | None = None,
        debug: bool = False,
    ) -> None:
        self.stdin = sys.stdin if stdin is None else stdin
        self.stdout = sys.stdout if stdout is None else stdout
        self.stderr = sys.stderr if stderr is None else stderr
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        #: ``--debug`` (set while the options are read) or ``PITOOLS_DEBUG=1``: internal errors
        #: show their traceback instead of the one-line report.
        self.debug = debug
        #: Set by a command that runs until Ctrl-C by design (``watch``): the error handler then
        #: ends the run with exit 0 and no line instead of its interrupted status (130).
        self.interrupt_ends_run = False
        #: Where ``-`` (a session on stdin) was spooled: messages name it ``-``, never this path.
        self.stdin_spool: str | None = None

    @property
    def show_tracebacks(self) -> bool:
        return self.debug or self.environ.get("PITOOLS_DEBUG") == "1"

    def __repr__(self) -> str:
        return f"Environment(stdout={self.stdout!r}, stderr={self.stderr!r}, debug={self.debug})"


def make_safe_stream(stream: Any) -> None:
    """Make a text stream write anything: characters it cannot encode become ``\\uXXXX``.

    ``strict`` (``PYTHONIOENCODING=ascii``, a latin-1 locale) raises on the first non-encodable
    character and ``surrogateescape`` (``LANG=C.UTF-8``, ``LANG=C``) on a lone surrogate that
    did not come from undecodable bytes; both become ``backslashreplace``.
    """
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", None) != "backslashreplace":
        try:  # noqa: SIM105  # contextlib is an import the lean search does without
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError, AttributeError):
            pass  # a stream that cannot be changed
