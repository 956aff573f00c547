"""``pitools dataset``: session files as Parquet (or JSONL) tables for DuckDB, Spark, Trino, BigQuery."""

from __future__ import annotations

import click

from pitools.cli.options import format_option, jobs_option, session_paths_argument
from pitools.cli.output import Output, pass_output


@click.command("dataset")
@session_paths_argument("inputs", required=True)
@click.option("-o", "--output", "outdir", required=True, metavar="OUTDIR", help="Folder for the tables (created).")
@format_option("parquet", "jsonl", help="parquet needs the optional extra: pip install 'pi-session-tools[dataset]'.")
@click.option(
    "--partition-by",
    type=click.Choice(["day", "project"]),
    default=None,
    help="Hive-style folders per session: day=YYYY-MM-DD (the session's start) or project_dir=<cwd name>.",
)
@jobs_option(
    "Worker processes writing sessions side by side (default 1: this process alone). "
    "Each holds one parsed session in memory."
)
@pass_output
def command(
    out: Output, inputs: tuple[str, ...], outdir: str, format_: str, partition_by: str | None, jobs: int | None
) -> int:
    """Write sessions as tables: sessions, entries, messages, tool_calls, compactions, usage.

    Directories are searched for *.jsonl session files. Run it again on the same OUTDIR and only
    sessions that changed (or whose fork ancestors changed) are rewritten; sessions no longer among
    the inputs are removed. Every table has a `copied` column: rows a fork or clone copied from an
    ancestor session, so fork-correct totals are `WHERE NOT copied`. Columns: see docs/dataset.md and
    docs/duckdb-examples.sql. Files Pi would not load are skipped with a warning (exit 1, the rest
    is written).

    \b
    Examples:
      pitools dataset ~/.pi/agent/sessions -o pi-dataset
      pitools dataset ~/.pi/agent/sessions -o pi-dataset --partition-by day
      duckdb -c "SELECT model, sum(cost) FROM 'pi-dataset/usage/**/*.parquet' WHERE NOT copied GROUP BY 1"
    """
    from pitools.ops.dataset import build_dataset

    report = build_dataset(
        list(inputs),
        outdir,
        format_=format_,
        partition_by=partition_by,
        jobs=jobs,
        # File names and loader messages may hold control characters: the output layer escapes them.
        warn=out.message,
    )
    from pitools.render.vocab import plural, size

    out.message(
        f"{plural(report.sessions, 'session')} in {outdir}: {report.written} written, "
        f"{report.unchanged} unchanged, {report.removed} removed, {len(report.skipped)} skipped "
        f"({size(report.bytes_read)} read in {report.seconds:.1f} s)"
    )
    if report.skipped:
        # Exit 1 (bad input) while any input cannot be used, but say plainly what that means.
        out.message(
            f"exit 1: {plural(len(report.skipped), 'input file')} not in the dataset (listed above); "
            "every other session was written. Repair or remove them (pitools repair, pitools validate): "
            "they are reported, and the exit is 1, on every run until then"
        )
        return 1
    return 0
