"""The ``pitools`` command line: a lazy click group; each subcommand lives in its own module.

This module stays free of click so that :func:`main` can answer the archive commands' common
invocations (``search``, ``usage``, ``ls``) without importing it (:mod:`pitools.cli.fast`);
the click group itself is in :mod:`pitools.cli.app` and is loaded on first use of ``cli``.
"""

from __future__ import annotations

import gc
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The exit codes (pitools.cli.output holds them; repeated here so that importing this module,
# which every start-up does, does not load the output layer: a test keeps the two equal).
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

__all__ = ["COMMANDS", "EXIT_FAILURE", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "cli", "main"]

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

#: Python frames allowed for walking nested session values (the loader itself has no depth limit).
RECURSION_LIMIT = 20000
META_DEBUG = "pitools.debug"


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
        from pitools.cli.output import silence_stdout

        silence_stdout()
    where = f" {exc.filename}" if isinstance(exc.filename, str) else " the output"
    return f"cannot write{where}: {exc.strerror or exc}", EXIT_FAILURE


def __getattr__(name: str) -> Any:
    # ``cli``, ``PitoolsGroup`` and ``output_params`` need click: loaded on first use.
    if name in ("cli", "PitoolsGroup", "output_params"):
        from pitools.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point."""
    # A pitools process is short-lived and its bulk is parsed JSON, which holds no reference
    # cycles: the cyclic collector would only rescan millions of dicts (a third of a 100 MB
    # compact --dry-run) to free nothing. Reference counting still frees everything as usual.
    gc.disable()
    # The archive commands' usual invocations run without click (tens of milliseconds of
    # imports on a command that otherwise answers from the index in a few): anything the fast
    # path does not handle exactly as the click command would goes to click.
    argv = sys.argv[1:]
    status: int | None = None
    if argv and argv[0] == "search":
        # The warm search: its own lean path (pitools.cli.fast_search), else the fast path below.
        from pitools.cli.fast_search import run_search

        status = run_search(argv[1:])
    from pitools.cli.fast import exit_now, run_fast

    if status is None:
        status = run_fast(argv)
    if status is not None:
        exit_now(status)
        sys.exit(status)
    from pitools.cli.app import cli

    try:
        cli(prog_name="pitools")
    except SystemExit as done:
        # Tearing down a big parsed session at exit costs ~0.07 s of CPU per 100 MB for nothing:
        # end at once when the command has finished everything (see exit_now for when it may).
        if done.code is None or isinstance(done.code, int):
            exit_now(done.code or 0)
        raise
    except BrokenPipeError:  # pragma: no cover - a pipe closed while click itself printed
        from pitools.cli.output import silence_stdout

        silence_stdout()
        sys.exit(EXIT_OK)
