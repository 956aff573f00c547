"""Run ``pitools search``, ``usage`` and ``ls`` once their click command has built the query.

Each takes the run's :class:`~pitools.cli.output.Output`, the command's query object
(:mod:`pitools.ops.queries`) and ``--format``; it calls the use case with the output layer's
progress line and warnings, renders the result, and returns the exit status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pitools.cli.output import Output
from pitools.cli.progress import progress_line, warner

if TYPE_CHECKING:
    from pitools.ops.queries import ListQuery, SearchQuery, UsageQuery

__all__ = ["run_ls", "run_search", "run_usage"]

# -- usage ------------------------------------------------------------------------------------------


def run_usage(out: Output, query: UsageQuery, format_: str) -> int:
    from pitools.ops.archive import usage_archive

    report = usage_archive(query, progress=progress_line("indexing sessions", out), warn=warner(out))
    data = report.to_json()
    if format_ == "json":
        out.write_json(data)
    elif format_ == "csv":
        from pitools.render.archive import usage_csv

        out.write_text(usage_csv(data))
    else:
        from pitools.render.archive import render_usage

        render_usage(out.console(), data)
    return 0


# -- search -----------------------------------------------------------------------------------------


def run_search(out: Output, query: SearchQuery, format_: str) -> int:
    from pitools.ops.search import search_archive

    result = search_archive(query, progress=progress_line("indexing sessions", out), warn=warner(out))
    data = result.to_json()
    if format_ == "json":
        out.write_json(data)
    else:
        if not out.color and out.width is None:  # plain text, the bytes rich would print
            from pitools.render.search_hits import plain, segments

            text = plain(segments(data))
            if text is not None:
                out.line_console().file.write(text)
                return 0
        from pitools.render.archive import render_search

        render_search(out.console(), data)
    return 0


# -- ls ----------------------------------------------------------------------------------------------


def run_ls(out: Output, query: ListQuery, format_: str) -> int:
    from pitools.core.views.resume import short_ids
    from pitools.ops.listing import list_archive

    # Id prefixes unique among every session found (not only those --since/--limit keep), so the
    # prefix shown names one session wherever pitools looks it up.
    every_id: list[str] = []
    listing = list_archive(
        query, progress=progress_line("reading sessions", out, bar=False), warn=warner(out), found_ids=every_id
    )
    data = listing.to_json()
    if format_ == "json":
        out.write_json(data)
    elif format_ == "tsv":
        from pitools.render.ls import ls_tsv

        for line in ls_tsv(data):
            out.echo(line)
    else:
        from pitools.render.ls import render_ls

        render_ls(out.console(), data, short_ids(every_id))
    return 0
