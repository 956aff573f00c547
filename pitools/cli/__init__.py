"""The ``pitools`` command line: a lazy click group; each subcommand lives in its own module."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import Any

import click

from pitools import __version__

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
    "ls": ("pitools.cli.commands.ls", "List sessions where Pi keeps them (this directory, or --all)."),
    "export": (
        "pitools.cli.commands.export",
        "Export a branch or the whole tree as Markdown, HTML or JSONL.",
    ),
    "fork": ("pitools.cli.commands.fork", "New session from the path to an entry, as Pi's /fork does."),
    "clone": ("pitools.cli.commands.clone", "New session holding the path to a leaf, as Pi's /clone does."),
}

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
#: Python frames allowed for walking nested session values (the loader itself has no depth limit).
RECURSION_LIMIT = 20000


class PitoolsGroup(click.Group):
    """Lazy subcommands plus the single place where errors become exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        import importlib

        module = importlib.import_module(entry[0])
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help comes from COMMANDS so `pitools --help` imports no subcommand module.
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, (_, help_) in COMMANDS.items()])

    def invoke(self, ctx: click.Context) -> Any:
        from pitools.core.errors import PitoolsError

        try:
            return super().invoke(ctx)
        except PitoolsError as exc:
            click.echo(f"pitools: {exc}", err=True)
            ctx.exit(EXIT_FAILURE)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("pitools: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            # Output piped into `head` and closed early: not an error.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(EXIT_OK)
        except RecursionError:
            # JSON.parse reads any depth, so a session can hold values nested deeper than the
            # recursive parts of pitools can walk: bad input Pi copes with, not a pitools crash.
            if (ctx.obj and ctx.obj.get("debug")) or os.environ.get("PITOOLS_DEBUG") == "1":
                raise
            click.echo(
                f"pitools: a value in the session nests deeper than this command can follow "
                f"(~{RECURSION_LIMIT:,} levels); Pi reads it, pitools could not finish",
                err=True,
            )
            ctx.exit(EXIT_FAILURE)
        except Exception as exc:
            if (ctx.obj and ctx.obj.get("debug")) or os.environ.get("PITOOLS_DEBUG") == "1":
                raise
            name = type(exc).__name__
            click.echo(
                f"pitools: internal error ({name}: {exc}); this is a bug — rerun with --debug for the traceback",
                err=True,
            )
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=PitoolsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pitools", message="%(prog)s %(version)s (Pi 1.6.0 semantics)")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors (also PITOOLS_DEBUG=1).")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Inspect, validate, replay and compact Pi coding-agent session files, offline.

    Every result matches what Pi 1.6.0 computes on the same file. Exit codes: 0 success,
    1 bad input / findings / refused write, 2 usage error, 3 internal error, 130 interrupted.

    Example: pitools context ~/.pi/agent/sessions/--home-me-proj--/2026-...jsonl
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    # Session values can nest to any depth (Node's JSON.parse has no limit, nor has our loader);
    # walking them needs more Python frames than the default allows.
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    # Session text may hold lone surrogates (JSON allows "\ud800"): never let printing them fail.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            with contextlib.suppress(ValueError, OSError):  # a stream that cannot be changed
                reconfigure(errors="backslashreplace")


def main() -> None:
    """Console-script entry point."""
    # A pitools process is short-lived and its bulk is parsed JSON, which holds no reference
    # cycles: the cyclic collector would only rescan millions of dicts (a third of a 100 MB
    # compact --dry-run) to free nothing. Reference counting still frees everything as usual.
    gc.disable()
    cli(prog_name="pitools")
