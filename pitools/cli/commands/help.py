"""``pitools help [COMMAND]``: the same text as ``pitools [COMMAND] --help``."""

from __future__ import annotations

import click


@click.command("help")
@click.argument("name", metavar="[COMMAND]", required=False)
@click.pass_context
def command(ctx: click.Context, name: str | None) -> int:
    """Show the help of pitools, or of one command.

    \b
    Example:
      pitools help compact
    """
    group_ctx = ctx.parent
    assert group_ctx is not None and isinstance(group_ctx.command, click.Group)
    group = group_ctx.command
    if name is None:
        click.echo(group.get_help(group_ctx))
        return 0
    sub = group.get_command(group_ctx, name)
    if sub is None:
        import difflib

        from pitools.cli import COMMANDS

        close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise click.UsageError(f"No such command '{name}'.{hint}")
    with sub.make_context(name, ["--help"], parent=group_ctx, resilient_parsing=True) as sub_ctx:
        click.echo(sub.get_help(sub_ctx))
    return 0
