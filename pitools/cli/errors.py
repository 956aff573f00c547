"""The one place where an exception becomes a line on stderr and an exit status.

:func:`guarded` wraps every run of a command, whichever way :func:`pitools.cli.main` runs it
(the warm ``search`` or click): pre-commit's
``error_handler.py`` split, with pitools' statuses:

* a :class:`~pitools.errors.PitoolsError` (bad input, refused write): its message, its exit code (1; 2 for
  an option value that only the command can read, :class:`~pitools.errors.OptionValueError`);
* Ctrl-C: ``pitools: interrupted``, exit 130; nothing and exit 0 for a command that runs until
  Ctrl-C by design and said so (``Environment.interrupt_ends_run``: ``watch``);
* a reader that closed the pipe early (``| head -1``): nothing, exit 0;
* a value nested deeper than Python can walk: one line, exit 1 (bad input Pi copes with);
* the machine refusing a write (disk full, ``> /dev/full``): one line, exit 1;
* anything else is a bug: one line with a hint to rerun with ``--debug``, exit 3.

With ``--debug`` or ``PITOOLS_DEBUG=1`` the last two kinds propagate (the traceback shows).
Usage errors (exit 2) are click's: :func:`pitools.cli.main` shows them. Light on purpose: the
lean ``search`` imports this module on every run.
"""

from __future__ import annotations

import contextlib
import os
import sys

from pitools.cli.environment import Environment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: Exit statuses (README "Exit codes"; ``pitools.cli.output`` re-exports them).
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

#: Python frames allowed for walking nested session values (the loader itself has no depth limit).
RECURSION_LIMIT = 20000


def guarded(body: Callable[[], int], env: Environment) -> int:
    """Run ``body`` and return its exit status, or the status of what it raised (module docstring)."""
    try:
        try:
            status = body()
        finally:
            _stop_progress()
        env.stdout.flush()  # a closed pipe shows up here, not in the interpreter's exit flush
        return status
    except KeyboardInterrupt:
        if env.interrupt_ends_run:
            return EXIT_OK
        _line(env, "pitools: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except RecursionError:
        # JSON.parse reads any depth, so a session can hold values nested deeper than the
        # recursive parts of pitools can walk: bad input Pi copes with, not a pitools crash.
        if env.show_tracebacks:
            raise
        report(env, internal_error_message(None))
        return EXIT_FAILURE
    except Exception as exc:
        from pitools.errors import PitoolsError

        if isinstance(exc, PitoolsError):
            report(env, str(exc))
            return exc.exit_code  # 1 for bad input; 2 for an option value only readable past click
        if env.show_tracebacks:
            raise
        line, status = unexpected_error(exc)
        report(env, line)
        return status


def report(env: Environment, text: str) -> None:
    """One ``pitools: ...`` line on stderr, made safe and kept on one line (``Output.message``)."""
    from pitools.render.safe import safe_text

    if env.stdin_spool:  # a session read from stdin is named as the user named it
        text = text.replace(env.stdin_spool, "-")
    _line(env, safe_text(f"pitools: {text}", one_line=True))


def internal_error_message(exc: BaseException | None) -> str:
    """The one line for an unexpected error (None: a value nested too deep to walk)."""
    if exc is None:
        return (
            f"a value in the session nests deeper than this command can follow "
            f"(~{RECURSION_LIMIT:,} levels); Pi reads it, pitools could not finish"
        )
    return f"internal error ({type(exc).__name__}: {exc}); this is a bug — rerun with --debug for the traceback"


def unexpected_error(exc: Exception) -> tuple[str, int]:
    """The one line and the exit status for an exception no command handled.

    A write the machine refused (disk full, quota, I/O error, file too large, read-only file
    system: e.g. ``> /dev/full``) is not a pitools bug: its own line, exit 1 (and when stdout was
    the one refused, stdout goes to /dev/null so the exit-time flush cannot fail again). Anything
    else is an internal error, exit 3."""
    import errno

    refused = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EROFS)
    if not isinstance(exc, OSError) or isinstance(exc, BrokenPipeError) or exc.errno not in refused:
        return internal_error_message(exc), EXIT_INTERNAL
    if exc.filename is None:
        _silence_stdout()
    where = f" {exc.filename}" if isinstance(exc.filename, str) else " the output"
    return f"cannot write{where}: {exc.strerror or exc}", EXIT_FAILURE


def _line(env: Environment, text: str) -> None:
    try:
        env.stderr.write(text + "\n")
        env.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr itself is gone: the exit status still tells


def _stop_progress() -> None:
    output = sys.modules.get("pitools.cli.output")  # a spinner can only run if it was loaded
    if output is not None:
        output.stop_progress()


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the exit-time flush cannot fail."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
