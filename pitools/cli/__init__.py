"""The ``pitools`` command line: a lazy click group; each subcommand lives in its own module.

This module stays free of click so that :func:`main` can answer ``search`` on a warm index
without importing it (:mod:`pitools.cli.fast_search`); the click group itself is in
:mod:`pitools.cli.app` and is loaded on first use of ``cli``.
"""

from __future__ import annotations

import gc
import os
import sys

from pitools.cli.environment import Environment, make_safe_stream
from pitools.cli.errors import (
    EXIT_FAILURE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    RECURSION_LIMIT,
    guarded,
)
from pitools.cli.registry import COMMANDS, META_DEBUG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = [
    "COMMANDS",
    "EXIT_FAILURE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "META_DEBUG",
    "RECURSION_LIMIT",
    "Environment",
    "cli",
    "console_main",
    "leave_for_exit",
    "main",
]


def __getattr__(name: str) -> Any:
    # ``cli``, ``PitoolsGroup`` and ``output_params`` need click: loaded on first use.
    if name in ("cli", "PitoolsGroup", "output_params"):
        from pitools.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None, env: Environment | None = None, *, fast: bool = True) -> int:
    """Run ``pitools ARGV`` (default: this process's arguments) and return the exit status.

    The one entry point (httpie's ``core.main``): the console script, ``python -m pitools`` and
    the test suite all come through here. Every command is read by the click group
    (:mod:`pitools.cli.app`) but one case: ``search`` on a warm index, which the warm search
    (:mod:`pitools.cli.fast_search`) answers before click is imported, or declines. Either way
    the command runs under the one error handler (:func:`pitools.cli.errors.guarded`).

    ``env`` holds the streams and environment variables the run uses (default: the process's).
    ``fast=False`` skips the warm search (the tests run both ways and compare). Nothing here
    exits the process; :func:`console_main` does.
    """
    env = Environment() if env is None else env
    env.interrupt_ends_run = False  # an Environment may serve several runs: only this run's command says
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (env.stdout, env.stderr):
        # Session text may hold lone surrogates, and the locale may not encode everything
        # (LANG=C, PYTHONIOENCODING=ascii): printing must never raise.
        make_safe_stream(stream)
    # Session values can nest to any depth (Node's JSON.parse has no limit, nor has our loader);
    # walking them needs more Python frames than the default allows.
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    # What is read once per run (Pi's configuration files) is reused within this run only.
    from pitools import runscope

    scope = runscope.begin()
    try:
        return guarded(lambda: _dispatch(args, env, fast), env)
    finally:
        runscope.end(scope)


def _dispatch(args: list[str], env: Environment, fast: bool) -> int:
    if fast and args and args[0] == "search" and "_PITOOLS_COMPLETE" not in env.environ:
        from pitools.cli.fast_search import run_search

        status = run_search(args[1:], env)
        if status is not None:
            return status
    from pitools.cli.app import run_click

    return run_click(args, env)


#: What commands left for the process's end (:func:`leave_for_exit`); None: keep nothing.
_LEFT_FOR_EXIT: list[object] | None = None


def leave_for_exit(*objects: object) -> None:
    """Keep ``objects`` (a command's loaded session, its read model) alive until the process
    ends, when it ends as soon as the command returns (the console script, see
    :func:`_exit_now`): freeing a parsed session object by object costs ~0.06 s per 100 MB
    that nobody waits for, while the end of the process returns its memory whole.

    The objects stay until the end instead of being freed for the command's later work to
    reuse: leave only what the command holds to its end anyway. Where :func:`main` runs in a
    process that goes on (tests, ``serve``'s threads, the floor guard) nothing is kept, and a
    command that runs until stopped must not call it."""
    if _LEFT_FOR_EXIT is not None:
        _LEFT_FOR_EXIT.extend(objects)


def console_main() -> None:
    """The ``pitools`` console script: :func:`main` on this process, then exit with its status."""
    global _LEFT_FOR_EXIT
    # A pitools process is short-lived and its bulk is parsed JSON, which holds no reference
    # cycles: the cyclic collector would only rescan millions of dicts (a third of a 100 MB
    # compact --dry-run) to free nothing. Reference counting still frees everything as usual,
    # except what a command leaves for the process's end (leave_for_exit).
    gc.disable()
    _LEFT_FOR_EXIT = []
    status = main()
    _exit_now(status)
    _LEFT_FOR_EXIT = None  # exiting the slow way: freed like everything else
    sys.exit(status)


def _exit_now(status: int) -> None:
    """End the process with ``status`` at once, skipping the interpreter's teardown when safe.

    Freeing every module and object at exit costs a warm ``search`` ~7 ms of its ~60, and
    tearing down a big parsed session ~0.07 s of CPU per 100 MB. It is skipped only when
    nothing is left to do at exit: both streams flushed, no ``atexit`` callback registered
    (logging, multiprocessing and the like register one), no other thread alive. Otherwise (and
    whenever flushing fails, e.g. a closed pipe) the caller exits normally.
    """
    import atexit

    if getattr(atexit, "_ncallbacks", lambda: 1)() != 0:
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return
    os._exit(status)
