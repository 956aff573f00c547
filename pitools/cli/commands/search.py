"""``pitools search QUERY``: full-text search over every session, with each hit's place in the tree."""

from __future__ import annotations

from typing import Any

import click

from pitools.cli.options import table_params
from pitools.cli.output import Output, pass_output


@click.command("search")
@table_params("search")
@pass_output
def command(out: Output, **options: Any) -> int:
    """Find text in user and assistant messages, tool calls and results, summaries and custom messages.

    Words match at word starts, ignoring case; "quoted phrases" match as written. Hits come
    grouped by session, newest first, each with the leaves whose path holds it, whether the
    current context holds it or compacted it away, and the commands to go there. No hit still
    exits 0 (exit 1 means the search could not run: a bad pattern, an unreadable index).

    \b
    Examples:
      pitools search 'race condition'
      pitools search '"retry with backoff"' --role assistant --since 30d
      pitools search 'def \\w+_cache' --regex --project myrepo --format json
    """
    from pitools.cli.archive_commands import run_search

    return run_search(out, **options)
