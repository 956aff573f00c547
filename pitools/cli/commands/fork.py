"""``pitools fork``: a new session from the path before a user message, as Pi's /fork makes it."""

from __future__ import annotations

from typing import Any

import click

from pitools.cli import leave_for_exit
from pitools.cli.options import format_option, session_argument
from pitools.cli.output import Output, pass_output

_SESSION_DIR_META = "pitools.session_dir"  # set by session_argument's --session-dir


def write_new_session(new: Any, source: str, output: str | None) -> str:
    """Write ``new`` to ``output`` or where Pi would put it; returns the path written."""
    from pitools.cli.options import from_stdin
    from pitools.ops.newsession import write_where_pi_would

    if not output and from_stdin():
        raise click.UsageError("a session read from stdin has no folder to write next to: add -o OUT")
    session_dir = None if output else click.get_current_context().meta.get(_SESSION_DIR_META)
    return write_where_pi_would(
        new,
        source,
        output,
        session_dir=session_dir,
        warn=lambda note: click.echo(f"pitools: warning: {note}", err=True),
    )


def report(out: Output, new: Any, format_: str) -> None:
    """The new path on stdout (or the JSON record); notes on stderr."""
    if format_ == "json":
        out.write_json(new.to_json())
        return
    out.echo(new.target, one_line=True)
    if new.labels_recreated:
        out.message(f"{new.labels_recreated} label(s) re-created at the end of the new session")
    if new.pi_would_defer:
        out.message(
            "note: the new session has no user or assistant message yet; Pi itself writes such a "
            "file only once the next message is sent"
        )


def resolve_ref(loaded: Any, ref: str, option: str) -> Any:
    from pitools.errors import LeafError

    try:
        return loaded.leaf(ref)
    except LeafError as exc:
        raise LeafError(exc.message.replace("--leaf", option), path=exc.path) from None


@click.command("fork")
@session_argument
@click.option(
    "--at",
    "at_ref",
    metavar="REF",
    required=True,
    shell_complete=lambda ctx, param, incomplete: __import__(
        "pitools.cli.complete", fromlist=["complete_leaf"]
    ).complete_leaf(ctx, param, incomplete),
    help="The user message to fork from: id, id prefix or label.",
)
@click.option("-o", "--output", metavar="OUT", default=None, help="Write here instead of Pi's session directory.")
@format_option("human", "json")
@pass_output
def command(out: Output, file: str, at_ref: str, output: str | None, format_: str) -> int:
    """Fork a new session before a user message, as Pi's /fork does.

    The new session holds the path from the root to the message's parent (labels re-created,
    compactions kept valid) and records the source in parentSession. It is written where Pi
    would (the configured session directory, else next to the source) unless -o is given; its
    path goes to stdout. The message's text, which Pi puts back in the editor, is printed on
    stderr (and as selectedText in --format json).

    \b
    Example:
      pitools fork session.jsonl --at 3f2a1b0c
    """
    from pitools.core.session.fork import fork_session
    from pitools.core.session.load import load

    loaded = load(file)
    leave_for_exit(loaded)
    at = resolve_ref(loaded, at_ref, "--at")
    new = fork_session(loaded, at)
    write_new_session(new, file, output)
    report(out, new, format_)
    if format_ != "json":
        out.message(f"forked before user message {new.forked_entry}; its text (Pi puts it back in the editor):")
        out.echo(new.selected_text or "", err=True)
    return 0
