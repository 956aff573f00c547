"""``pitools validate``: check session files the way Pi 1.6.0 would read them; exit 1 on findings."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from pitools.cli.options import color_option, consoles, format_option
from pitools.core.validate import CODES, SEVERITIES, ValidationReport

#: More files than this are checked by a pool of worker processes.
PARALLEL_THRESHOLD = 4
WORKERS = 2


def _codes(values: Sequence[str], option: str) -> list[str] | None:
    """``--select a --select b,c`` → ``[a, b, c]``; unknown codes are a usage error (exit 2)."""
    if not values:
        return None
    codes = [c.strip() for value in values for c in value.split(",") if c.strip()]
    unknown = [c for c in codes if c not in CODES]
    if unknown:
        raise click.BadParameter(
            f"unknown code(s): {', '.join(unknown)} (see `pitools validate --help` or the README)",
            param_hint=f"'--{option}'",
        )
    return codes


def find_session_files(paths: Sequence[str]) -> list[str]:
    """Files named on the command line, plus every ``*.jsonl`` under named directories (sorted)."""
    out: list[str] = []
    seen: set[str] = set()
    for path in paths:
        if os.path.isdir(path):
            found = sorted(str(p) for p in Path(path).rglob("*.jsonl") if p.is_file())
        else:
            found = [path]  # a missing file becomes an unreadable-file finding, not a crash
        for f in found:
            if f not in seen:
                seen.add(f)
                out.append(f)
    return out


def run_checks(
    files: Sequence[str], check: Callable[[str], ValidationReport], progress: Any = None
) -> list[ValidationReport]:
    """Validate ``files`` in order; more than a few go to a pool of worker processes."""
    if len(files) <= PARALLEL_THRESHOLD:
        reports = []
        for f in files:
            reports.append(check(f))
            if progress is not None:
                progress(1)
        return reports
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from pitools.core.validate import prepare

    prepare()
    results: dict[int, ValidationReport] = {}
    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        # Submit everything first: the workers are forked before any progress thread starts.
        futures = {pool.submit(check, f): i for i, f in enumerate(files)}
        if progress is not None:
            progress(0)
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if progress is not None:
                progress(1)
    return [results[i] for i in range(len(files))]


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...", type=click.Path(path_type=str))
@format_option("human", "json", "github")
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, not only on errors.")
@click.option(
    "--select",
    multiple=True,
    metavar="CODE",
    help="Report only these codes (repeatable; comma-separated lists allowed).",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="CODE",
    help="Do not report these codes (repeatable; comma-separated lists allowed).",
)
@click.option(
    "--min-severity",
    type=click.Choice(list(SEVERITIES)),
    default="info",
    show_default=True,
    help="Leave out findings below this severity.",
)
@color_option
@click.pass_context
def command(
    ctx: click.Context,
    paths: tuple[str, ...],
    format_: str,
    strict: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    min_severity: str,
    color: str,
) -> None:
    """Check Pi session files for everything Pi 1.6.0 would trip over.

    Directories are searched recursively for *.jsonl files. Each finding has a stable code
    (duplicate-id, orphan-entry, parent-cycle, pi-would-crash, ...) and a severity; see the
    README for the full table. Exit status: 0 when nothing reaches the failing severity
    (error, or warning with --strict), 1 when something does or a file cannot be read,
    2 for a usage error.

    \b
    Examples:
      pitools validate ~/.pi/agent/sessions
      pitools validate run.jsonl --strict --ignore timestamp-backwards
      pitools validate sessions/ --format github --min-severity warning
    """
    from functools import partial

    from pitools.core.validate import validate_file

    selected = _codes(select, "select")
    ignored = _codes(ignore, "ignore")
    fail_on = "warning" if strict else "error"
    files = find_session_files(paths)
    out, err = consoles(color)
    if not files:
        err.print(f"pitools: no *.jsonl files under {', '.join(paths)}")
    check = partial(validate_file, select=selected, ignore=ignored, min_severity=min_severity)
    if err.is_terminal and len(files) > 1:
        reports = _with_progress(err, files, check)
    else:
        reports = run_checks(files, check)
    if format_ == "json":
        from pitools.render.validate import validate_json

        _write_json(validate_json(reports, fail_on))
    elif format_ == "github":
        from pitools.render.validate import github_lines, summary_text

        for line in github_lines(reports):
            click.echo(line)
        click.echo(summary_text(reports, fail_on))
    else:
        from pitools.render.validate import render_human

        render_human(out, reports, fail_on)
    from pitools.render.validate import any_failed

    ctx.exit(1 if any_failed(reports, fail_on) else 0)


def _write_json(data: Any) -> None:
    # Like options.write_json, minus click.get_binary_stream (deprecated in click 8.5, and a
    # DeprecationWarning is an error under the test suite): click.echo writes bytes unchanged.
    from pitools.core.jsonout import dumps, jsonable

    click.echo(dumps(jsonable(data)) + b"\n", nl=False)


def _with_progress(err: Any, files: Sequence[str], check: Callable[[str], ValidationReport]) -> list[ValidationReport]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("validating"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task("validate", total=len(files))
    started = False

    def advance(n: int) -> None:
        nonlocal started
        if not started:
            progress.start()
            started = True
        if n:
            progress.advance(task, n)

    try:
        return run_checks(files, check, advance)
    finally:
        if started:
            progress.stop()
