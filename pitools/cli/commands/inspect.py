"""``pitools inspect``: header, counts, tree shape, labels, models and usage totals."""

from __future__ import annotations

from typing import Any

import click

from pitools.cli import leave_for_exit
from pitools.cli.options import format_option, from_stdin, session_argument
from pitools.cli.output import Output, pass_output


@click.command("inspect")
@session_argument
@format_option("human", "json")
@click.option(
    "--all", "all_", is_flag=True, help="List every leaf, label, compaction and model (default: the first 12)."
)
@pass_output
def command(out: Output, file: str, format_: str, all_: bool) -> int:
    """Summarise a session file.

    Header (id, cwd, version, whether migration is needed), size, counts by entry type and
    message role, roots, leaves, the default leaf, labels, compactions, branch summaries,
    models, thinking levels, and token/cost totals computed as Pi's session stats do.

    \b
    Example:
      pitools inspect session.jsonl --format json
    """
    from pitools.core.session.load import load
    from pitools.core.validate.pi_crashes import first_crash
    from pitools.core.views.inspect import inspect_session

    loaded = load(file)
    leave_for_exit(loaded)
    data = inspect_session(loaded.session, loaded.index, first_crash)
    from pitools.ops.traces import fork_split

    split = fork_split(loaded)
    if split is not None:
        data["fork"] = split
    if from_stdin():
        data["path"] = "-"  # the session came on stdin: its private spool file is no name to show
    else:  # a session read from stdin has no file for Pi to open
        # The path as given (relative stays relative, as in "path"): Pi resolves it against the
        # working directory the command is run in, the same one.
        data["resume"] = resume_commands(file, data)
    if format_ == "json":
        out.write_json(data)
    else:
        from pitools.render.inspect import render_inspect

        render_inspect(out.console(), data, all_=all_)
    return 0


def resume_commands(path: str, data: dict[str, Any]) -> dict[str, Any]:
    """The command resuming the session in Pi, and the one for each leaf (another leaf than the
    default is copied out first: :func:`pitools.core.views.resume.resume_command`)."""
    from pitools.core.views.resume import resume_command

    default = data["defaultLeaf"]
    return {
        "session": resume_command(path),
        "leaves": {
            leaf["id"]: resume_command(path, leaf["id"], at_leaf=leaf["id"] == default)
            for leaf in data["leaves"]
            if type(leaf["id"]) is str
        },
    }
