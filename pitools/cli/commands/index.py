"""``pitools index``: build or update the archive index that ``ls``, ``search`` and ``usage`` read."""

from __future__ import annotations

import contextlib

import click

from pitools.cli.options import format_option
from pitools.cli.output import Output, pass_output


def index_size(index: object) -> int | None:
    import os

    folder = getattr(index, "folder", None)
    if not folder:
        return None
    total = 0
    for name in os.listdir(folder):
        if name.startswith("index-v"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(folder, name))
    return total


@click.command("index")
@click.option("--session-dir", metavar="DIR", default=None, help="Index only this session folder.")
@click.option("--all", "all_", is_flag=True, help="Every session Pi can see (the default).")
@click.option("--rebuild", is_flag=True, help="Forget the index and build it again from the files.")
@format_option("human", "json")
@pass_output
def command(out: Output, session_dir: str | None, all_: bool, rebuild: bool, format_: str) -> int:
    """Build or update the archive index (other commands do this by themselves).

    The index lives in $PITOOLS_CACHE_DIR (default $XDG_CACHE_HOME/pitools or the platform's
    cache folder), never in Pi's folders. Sessions that only grew are read from where the last
    run stopped; rewritten ones are read again; deleted ones are dropped.

    \b
    Examples:
      pitools index
      pitools index --rebuild --format json
    """
    from pitools.cli.progress import progress_line, warner
    from pitools.ops.archive import archive_scope, updated_index

    if session_dir and all_:
        raise click.UsageError("--session-dir and --all exclude each other")
    scope = archive_scope(session_dir=session_dir, all_=True)
    index, stats = updated_index(
        scope, progress=progress_line("indexing sessions", out), warn=warner(out), rebuild=rebuild
    )
    try:
        data = {
            "path": index.main_path,
            "fts": index.fts,
            "shards": index.shard_count(),
            "folders": scope.folders,
            "sessions": index.conn.execute("SELECT count(*) FROM sessions").fetchone()[0],
            "sizeBytes": None,
            "update": stats.to_json(),
        }
    finally:
        index.close()
    data["sizeBytes"] = index_size(index)  # after close: the write-ahead log is folded in
    if format_ == "json":
        out.write_json(data)
    else:
        from pitools.render.archive import render_index

        render_index(out.console(), data)
    return 0
