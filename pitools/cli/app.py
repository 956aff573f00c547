"""The click group behind ``pitools``: lazy subcommands, shared output options, usage errors.

Imported only when a run needs click (:func:`pitools.cli.main` first offers a ``search`` to the
warm search, :mod:`pitools.cli.fast_search`); ``pitools.cli.cli`` and friends resolve to this module.
:func:`run_click` is how :func:`pitools.cli.main` runs it; errors a command raises are left to
:func:`pitools.cli.errors.guarded`, around the whole run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from pitools import __version__
from pitools.cli.environment import Environment
from pitools.cli.output import COLOR_MODES, EXIT_FAILURE, EXIT_OK, META_COLOR, META_WIDTH
from pitools.cli.registry import COMMANDS, META_DEBUG

__all__ = ["PitoolsGroup", "cli", "output_params", "run_click"]


def run_click(args: Sequence[str], env: Environment) -> int:
    """Run ``pitools ARGS`` through click on ``env``; its exit status.

    Help, ``--version`` and usage errors end here (click's exit statuses: 0 and 2); a command's
    return value is the status; whatever else a command raises goes up to the caller's handler
    (:func:`pitools.cli.errors.guarded`). Click's own ``main`` is used only for shell
    completion: it would turn Ctrl-C and a closed pipe into its own statuses.
    """
    if "_PITOOLS_COMPLETE" in env.environ:
        try:
            cli.main(list(args), prog_name="pitools", obj=env)
        except SystemExit as done:
            return done.code if isinstance(done.code, int) else EXIT_FAILURE
        return EXIT_OK
    try:
        with cli.make_context("pitools", list(args), obj=env) as ctx:
            rv = cli.invoke(ctx)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as exc:
        exc.show(file=env.stderr)
        return exc.exit_code
    except click.exceptions.Abort:
        env.stderr.write("Aborted!\n")
        return EXIT_FAILURE
    # The int a command returns is the process's exit status.
    return rv if isinstance(rv, int) and not isinstance(rv, bool) else EXIT_OK


def _remember(key: str) -> Any:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None and value is not False:
            root = ctx.find_root()
            root.meta[key] = value
            if key == META_DEBUG and isinstance(root.obj, Environment):
                root.obj.debug = True  # read by the error handler, around the whole run
        return value

    return callback


def _width_type() -> click.IntRange:
    return click.IntRange(min=1)


def output_params() -> list[click.Parameter]:
    """``--color``, ``--width`` and ``--debug``: accepted before or after any subcommand."""
    return [
        click.Option(
            ["--color"],
            type=click.Choice(COLOR_MODES),
            default=None,
            expose_value=False,
            callback=_remember(META_COLOR),
            help="Colour: auto (default; honours NO_COLOR, FORCE_COLOR, TERM=dumb and terminals), always, never.",
        ),
        click.Option(
            ["--width"],
            type=_width_type(),
            default=None,
            metavar="N",
            expose_value=False,
            callback=_remember(META_WIDTH),
            help="Wrap/cut human output at N columns (default: the terminal's width; no limit in a pipe; "
            "also PITOOLS_WIDTH).",
        ),
        click.Option(
            ["--debug"],
            is_flag=True,
            default=False,
            expose_value=False,
            callback=_remember(META_DEBUG),
            help="Show tracebacks for internal errors (also PITOOLS_DEBUG=1).",
        ),
    ]


class PitoolsGroup(click.Group):
    """Lazy subcommands plus the single place where errors and return values become exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        import importlib

        module = importlib.import_module(entry[0])
        command: click.Command = module.command
        names = {name for param in command.params for name in param.opts}
        for param in output_params():
            if not names.intersection(param.opts):
                command.params.append(param)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise click.UsageError(f"No such command '{name}'.{hint} (pitools --help lists them)", ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help comes from COMMANDS so `pitools --help` imports no subcommand module.
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, (_, help_) in COMMANDS.items()])


@click.group(
    cls=PitoolsGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
    no_args_is_help=False,
)
@click.version_option(__version__, prog_name="pitools", message="%(prog)s %(version)s (Pi 1.6.0 semantics)")
@click.option(
    "--format",
    "format_",
    metavar="FORMAT",
    default=None,
    help="Output format for the subcommand (same as giving --format after it).",
)
@click.pass_context
def cli(ctx: click.Context, format_: str | None) -> None:
    """Inspect, validate, replay and compact Pi coding-agent session files, offline.

    Every result matches what Pi 1.6.0 computes on the same file. Exit codes: 0 success,
    1 bad input / findings / refused write, 2 usage error, 3 internal error, 130 interrupted.
    --color, --width, --debug and --format work before or after the subcommand.

    Example: pitools context ~/.pi/agent/sessions/--home-me-proj--/2026-...jsonl
    """
    if ctx.invoked_subcommand is None:
        # Bare `pitools`: the help, and success (it is what was asked for).
        click.echo(ctx.get_help())
        ctx.exit(EXIT_OK)
    if format_ is not None and ctx.invoked_subcommand is not None:
        # The subcommand checks the value against its own choices (a bad one is a usage error).
        ctx.default_map = {ctx.invoked_subcommand: {"format_": format_}}


for _param in output_params():
    cli.params.append(_param)
