"""``pitools context``: what Pi 1.6.0 would send to the model from a leaf."""

from __future__ import annotations

import click

from pitools.cli.options import SessionAt, format_option, session_at_leaf
from pitools.cli.output import Output, pass_output


def _check_tokenizer(name: str | None) -> str | None:
    """An unknown encoding name is a usage error (exit 2) naming the valid ones."""
    if name is None:
        return None
    from pitools.core.context.tiktoken_count import encoding_names

    names = encoding_names()
    if name not in names:
        raise click.BadParameter(f"unknown encoding {name!r}; choose one of {', '.join(names)}")
    return name


@click.command("context")
@session_at_leaf
@format_option("human", "json", "markdown")
@click.option(
    "--tokenizer",
    metavar="NAME",
    default=None,
    callback=lambda ctx, param, value: _check_tokenizer(value),
    help="Also count real tokens with a tiktoken encoding (cl100k_base works offline; o200k_base, ...).",
)
@pass_output
def command(out: Output, at: SessionAt, format_: str, tokenizer: str | None) -> int:
    """Replay Pi's context (buildSessionContext) at a leaf.

    Shows the path, the context entries after compaction and context edits, every message
    Pi would send with its token estimate, and the model and thinking level in force.

    \b
    Example:
      pitools context session.jsonl --leaf a1b2c3d4 --format json
    """
    from pitools.core.context.build import replay_context
    from pitools.core.session.load import KEEP_CONTEXT

    # Only the entries after the leaf's last compaction are needed in full: the loader's
    # "context" keep policy parses every line (Pi's rules) but keeps and re-reads only those.
    loaded, leaf = at.load(out, keep=KEEP_CONTEXT)
    replay = replay_context(loaded.index, leaf)
    counts = None
    if tokenizer:
        from pitools.core.context.tiktoken_count import count_messages

        counts = count_messages(replay.projection.messages, tokenizer)
    if format_ == "json":
        from pitools.render.context import context_json_chunks

        # Each message is serialized once, and released as it is written: its bytes take the
        # place of its parsed objects instead of adding to them (where the index can let go).
        loaded.index.forget_values()
        out.write_chunks(context_json_chunks(replay, counts, consume=True))
    elif format_ == "markdown":
        from pitools.render.context import context_markdown

        out.write_text(context_markdown(replay, loaded.session))
    else:
        from pitools.render.context import render_context

        render_context(out.line_console(), replay, loaded.session, counts)
    return 0
