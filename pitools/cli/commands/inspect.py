"""``pitools inspect``: header, counts, tree shape, labels, models and usage totals."""

from __future__ import annotations

import click

from pitools.cli.options import format_option, session_argument
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
    from pitools.core.session.api import load
    from pitools.core.validate.pi_crashes import first_crash
    from pitools.core.views.inspect import inspect_session

    loaded = load(file)
    data = inspect_session(loaded.session, loaded.index, first_crash)
    from pitools.ops.traces import fork_split

    split = fork_split(loaded)
    if split is not None:
        data["fork"] = split
    from pitools.cli.options import from_stdin

    if from_stdin():
        data["path"] = "-"  # the session came on stdin: its private spool file is no name to show
    if format_ == "json":
        out.write_json(data)
    else:
        from pitools.render.inspect import render_inspect

        render_inspect(out.console(), data, all_=all_)
    return 0
