"""``pitools branches``: one row per leaf of the session tree."""

from __future__ import annotations

import click

from pitools.cli import leave_for_exit
from pitools.cli.options import format_option, note_synthetic_ids, session_argument
from pitools.cli.output import Output, pass_output


@click.command("branches")
@session_argument
@format_option("human", "json")
@pass_output
def command(out: Output, file: str, format_: str) -> int:
    """List the branches (leaves) of a session.

    For every leaf: entries on its path, depth, last timestamp, the entry where it forks from
    its siblings, the first user message after that fork, the leaf's own label, and Pi's
    estimated context tokens there. ★ marks Pi's default leaf (the last entry), which is listed
    even when entries hang below it. A leaf whose path loops gets an error instead of numbers.

    \b
    Example:
      pitools branches session.jsonl
      pitools branches session.jsonl --format json
    """
    from pitools.core.session.load import load
    from pitools.core.session.name import session_name
    from pitools.core.views.branches import list_branches
    from pitools.errors import PiCrashError

    loaded = load(file)
    leave_for_exit(loaded)
    result = list_branches(loaded.index)
    note_synthetic_ids(out, loaded)
    try:
        name = session_name(list(loaded.session.entries))
    except PiCrashError:
        name = None  # a non-string name makes Pi's getSessionName throw; the listing still helps
    if format_ == "json":
        from pitools.render.branches import branches_json

        out.write_json(branches_json(result, name))
    else:
        from pitools.render.branches import render_branches

        render_branches(out.console(), result, name)
    return 0
