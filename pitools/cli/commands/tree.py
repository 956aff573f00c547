"""``pitools tree``: the session tree as Pi 1.6.0's ``/tree`` draws it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from pitools.cli.options import SessionAt, format_option, session_at_leaf
from pitools.cli.output import Output, pass_output

if TYPE_CHECKING:
    from pitools.core.js.types import JsValue


@click.command("tree")
@session_at_leaf
@click.option(
    "--filter",
    "filter_",
    type=click.Choice(["default", "no-tools", "user-only", "labeled-only", "all"]),
    default="default",
    show_default=True,
    help="Pi's /tree filter: default hides settings entries; no-tools also hides tool results; "
    "user-only shows user messages; labeled-only shows labelled entries; all shows everything "
    "(Pi still hides usage entries and tool-call-only assistant turns).",
)
@click.option("--ids/--no-ids", default=True, show_default=True, help="Show the entry id column (human format).")
@click.option(
    "--depth",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Human format: show N levels of forks (0: the trunk up to its first fork); "
    "each deeper part is one '… N entries deeper' line.",
)
@click.option(
    "--no-pager",
    "no_pager",
    is_flag=True,
    help="Print straight to the terminal. Otherwise, on a terminal, the tree goes through "
    "PITOOLS_PAGER, PAGER or less (LESS=FRX unless LESS is set), as git does.",
)
@format_option("human", "json")
@pass_output
def command(
    out: Output,
    at: SessionAt,
    filter_: str,
    ids: bool,
    depth: int | None,
    no_pager: bool,
    format_: str,
) -> int:
    """Draw the whole session tree as Pi's /tree shows it.

    One line per entry with Pi's text for it, labels in [brackets], • on the path to the
    current leaf and › on the leaf itself. Linear runs stay flat; indentation appears only
    where the tree forks. --format json nests only at forks (linear runs are `chain` lists).

    \b
    Example:
      pitools tree session.jsonl --filter user-only
      pitools tree session.jsonl --depth 1 --no-pager
      pitools tree session.jsonl --leaf a1b2c3d4 --format json
    """
    from pitools.core.views.branches import tree_view

    if depth is not None and format_ == "json":
        raise click.UsageError("--depth shapes the human tree; --format json always holds the whole tree")
    loaded, leaf = at.load(out)
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or None
    view = tree_view(loaded.index, leaf, filter_, home=home)
    name = _name(loaded.session.entries)
    if format_ == "json":
        from pitools.render.tree import tree_json

        out.write_bytes(tree_json(view, name))
    else:
        from pitools.core.session.leaf import default_leaf_text
        from pitools.render.tree import render_tree

        note = default_leaf_text(leaf) + (" (--leaf)" if at.leaf_ref is not None else " (default)")
        with out.paged(not no_pager):
            render_tree(out.line_console(), view, name, leaf_note=note, show_ids=ids, depth=depth)
    return 0


def _name(entries: list[object]) -> JsValue:
    from pitools.core.session.name import session_name
    from pitools.errors import PiCrashError

    try:
        return session_name(list(entries))
    except PiCrashError:
        # A non-string name makes Pi's getSessionName throw; the tree is still worth drawing.
        return None
