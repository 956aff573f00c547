"""``pitools clone``: a new session holding the path to a leaf, as Pi's /clone makes it."""

from __future__ import annotations

import click

from pitools.cli import leave_for_exit
from pitools.cli.options import format_option, leaf_option, session_argument
from pitools.cli.output import Output, pass_output


@click.command("clone")
@session_argument
@leaf_option
@click.option("-o", "--output", metavar="OUT", default=None, help="Write here instead of Pi's session directory.")
@format_option("human", "json")
@pass_output
def command(out: Output, file: str, leaf_ref: str | None, output: str | None, format_: str) -> int:
    """Clone the branch at a leaf into a new session, as Pi's /clone does.

    The new session holds the path from the root to the leaf (default: Pi's default leaf, the
    last entry), with label entries re-created at the end and parentSession pointing at the
    source. Pi 1.6.0 builds the same context from it as from the source at that leaf. It is
    written where Pi would (the configured session directory, else next to the source) unless
    -o is given; its path goes to stdout.

    \b
    Example:
      pitools clone session.jsonl --leaf my-label -o copy.jsonl
    """
    from pitools.cli.commands.fork import report, resolve_ref, write_new_session
    from pitools.core.session.fork import clone_session
    from pitools.core.session.load import load

    loaded = load(file)
    leave_for_exit(loaded)
    leaf = resolve_ref(loaded, leaf_ref, "--leaf") if leaf_ref is not None else loaded.index.leaf_id
    new = clone_session(loaded, leaf)
    write_new_session(new, file, output)
    report(out, new, format_)
    return 0
