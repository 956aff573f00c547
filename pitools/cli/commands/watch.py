"""``pitools watch``: a live context meter for a session Pi is writing."""

from __future__ import annotations

import click

from pitools.cli.options import format_option, no_config_option, session_argument
from pitools.cli.output import Output, pass_output


@click.command("watch")
@session_argument
@format_option("human", "json", help="json: one object per reading (JSON Lines).")
@click.option("--once", is_flag=True, help="Print the current reading and exit instead of following the file.")
@click.option(
    "--reserve-tokens",
    type=click.IntRange(min=0),
    default=None,
    help="Tokens kept free of the window (default: Pi's compaction.reserveTokens setting, 16384).",
)
@click.option("--context-window", type=click.IntRange(min=1), default=None, help="Model context window in tokens.")
@no_config_option
@click.option(
    "--max-interval",
    type=click.FloatRange(min=0.05, max=60),
    default=1.0,
    show_default=True,
    help="Longest pause, in seconds, between two looks at an idle file.",
)
@pass_output
def command(
    out: Output,
    file: str,
    format_: str,
    once: bool,
    reserve_tokens: int | None,
    context_window: int | None,
    no_config: bool,
    max_interval: float,
) -> int:
    """Follow a session as Pi appends to it and show its context against the window.

    Each reading is Pi's own check before an assistant response: the projected context tokens
    (last reply's usage plus estimates of what came after), the model's context window (as
    `compact --dry-run` resolves it from Pi's settings and model catalogue) and the compaction
    threshold, window - reserveTokens. Above it, Pi compacts before the next turn; the line
    says so. A new line is printed when the reading changes. Only the appended bytes are read;
    the file is read again whole after a compaction, a branch change or a rewrite. Ctrl-C stops.

    \b
    Examples:
      pitools watch                       # the most recent session of this directory
      pitools watch 0190a1b2 --format json
      pitools watch session.jsonl --once
    """
    from pitools.cli.options import from_stdin
    from pitools.ops.watch import MeterConfig, follow, measure

    if from_stdin() and not once:
        raise click.UsageError("watch follows a file: a session on stdin ('-') only goes with --once")
    from pitools.render.watch import meter_json, meter_line

    config = MeterConfig(reserve_tokens, context_window, not no_config)

    def show(state: object) -> None:
        from pitools.ops.watch import Followed

        assert isinstance(state, Followed)
        if format_ == "json":
            out.write_json(meter_json(state.reading, state.path, state.how))
        else:
            out.echo(meter_line(state.reading), one_line=True)

    if once:
        state = measure(file, config)
        for text in state.warnings:
            out.message(text)
        show(state)
        return 0
    from pitools.cli.environment import Environment

    env = click.get_current_context().find_root().obj
    if isinstance(env, Environment):
        env.interrupt_ends_run = True  # Ctrl-C is how a watch ends: exit 0, not 130
    follow(file, config, show, warn=out.message, max_delay=max_interval)
    return 0
