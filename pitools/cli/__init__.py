"""The ``pitools`` command line: a lazy click group; each subcommand lives in its own module.

This module stays free of click so that :func:`main` can answer the archive commands' common
invocations (``search``, ``usage``, ``ls``) without importing it (:mod:`pitools.cli.fast`);
the click group itself is in :mod:`pitools.cli.app` and is loaded on first use of ``cli``.
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
    "RECURSION_LIMIT",
    "Environment",
    "cli",
    "console_main",
    "main",
]

#: name -> "module:function"; modules are imported only when the command runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "inspect": (
        "pitools.cli.commands.inspect",
        "Summarise a session: header, counts, leaves, labels, usage.",
    ),
    "validate": ("pitools.cli.commands.validate", "Check session files; exit 1 when problems are found."),
    "migrate": (
        "pitools.cli.commands.migrate",
        "Migrate a v1/v2 session to v3 (prints, writes -o, or --in-place).",
    ),
    "context": ("pitools.cli.commands.context", "Replay what Pi sends to the model at a leaf."),
    "request": ("pitools.cli.commands.request", "The body pi-ai would send a provider at a leaf; --check it."),
    "tree": ("pitools.cli.commands.tree", "Draw the session tree as Pi's /tree shows it."),
    "branches": ("pitools.cli.commands.branches", "List the leaves (branches) of a session."),
    "compact": ("pitools.cli.commands.compact", "Plan (--dry-run) or apply (--apply) a compaction like Pi."),
    "navigate": (
        "pitools.cli.commands.navigate",
        "Leave a branch as Pi's /tree does: show or write the branch summary.",
    ),
    "ls": ("pitools.cli.commands.ls", "List sessions where Pi keeps them (this directory, or --all)."),
    "export": (
        "pitools.cli.commands.export",
        "Export a branch or the tree as Markdown, HTML, JSONL, OTLP or ATIF.",
    ),
    "fork": ("pitools.cli.commands.fork", "New session from the path to an entry, as Pi's /fork does."),
    "clone": ("pitools.cli.commands.clone", "New session holding the path to a leaf, as Pi's /clone does."),
    "index": ("pitools.cli.commands.index", "Build or update the archive index (ls, search and usage use it)."),
    "search": ("pitools.cli.commands.search", "Full-text search over every session, with each hit's branch."),
    "usage": ("pitools.cli.commands.usage", "Tokens and cost by day/week/month/model/project, forks counted once."),
    "serve": ("pitools.cli.commands.serve", "Browse, search and chart every session in a local, read-only web app."),
    "repair": (
        "pitools.cli.commands.repair",
        "Repair a damaged session so Pi loads it; every fix reported.",
    ),
    "slim": (
        "pitools.cli.commands.slim",
        "Shrink a session: drop compacted-away images, output, thinking.",
    ),
    "scan": ("pitools.cli.commands.scan", "Find secrets (API keys, tokens, passwords) in sessions."),
    "redact": (
        "pitools.cli.commands.redact",
        "Replace the secrets in a session with placeholders.",
    ),
    "help": ("pitools.cli.commands.help", "Show the help of pitools or of one command (pitools help tree)."),
    "dataset": ("pitools.cli.commands.dataset", "Write sessions as Parquet/JSONL tables for DuckDB, Spark, Trino."),
}

META_DEBUG = "pitools.debug"


def __getattr__(name: str) -> Any:
    # ``cli``, ``PitoolsGroup`` and ``output_params`` need click: loaded on first use.
    if name in ("cli", "PitoolsGroup", "output_params"):
        from pitools.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None, env: Environment | None = None, *, fast: bool = True) -> int:
    """Run ``pitools ARGV`` (default: this process's arguments) and return the exit status.

    The one entry point (httpie's ``core.main``): the console script, ``python -m pitools`` and
    the test suite all come through here. It reads ``argv`` one of three ways, most specific
    first, and runs the command under the one error handler (:func:`pitools.cli.errors.guarded`):

    1. ``search`` on a warm index: the lean path (:mod:`pitools.cli.fast_search`);
    2. ``search``/``usage``/``ls`` with options it reads exactly as click would: the click-free
       path (:mod:`pitools.cli.fast`), from the same option table as the click commands;
    3. everything else: the click group (:mod:`pitools.cli.app`).

    ``env`` holds the streams and environment variables the run uses (default: the process's).
    ``fast=False`` skips 1 and 2 (the tests run both ways and compare). Nothing here exits the
    process; :func:`console_main` does.
    """
    env = Environment() if env is None else env
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (env.stdout, env.stderr):
        # Session text may hold lone surrogates, and the locale may not encode everything
        # (LANG=C, PYTHONIOENCODING=ascii): printing must never raise.
        make_safe_stream(stream)
    # Session values can nest to any depth (Node's JSON.parse has no limit, nor has our loader);
    # walking them needs more Python frames than the default allows.
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    return guarded(lambda: _dispatch(args, env, fast), env)


def _dispatch(args: list[str], env: Environment, fast: bool) -> int:
    if fast and args and "_PITOOLS_COMPLETE" not in env.environ:
        if args[0] == "search":
            from pitools.cli.fast_search import run_search

            status = run_search(args[1:], env)
            if status is not None:
                return status
        from pitools.cli.fast import run_fast

        status = run_fast(args, env)
        if status is not None:
            return status
    from pitools.cli.app import run_click

    return run_click(args, env)


def console_main() -> None:
    """The ``pitools`` console script: :func:`main` on this process, then exit with its status."""
    # A pitools process is short-lived and its bulk is parsed JSON, which holds no reference
    # cycles: the cyclic collector would only rescan millions of dicts (a third of a 100 MB
    # compact --dry-run) to free nothing. Reference counting still frees everything as usual.
    gc.disable()
    status = main()
    _exit_now(status)
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
