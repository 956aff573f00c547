"""``pitools validate``: check session files the way Pi 1.6.0 would read them; exit 1 on findings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from pitools.cli.options import format_option, jobs_option, model_option, no_config_option, session_paths_argument
from pitools.cli.output import Output, pass_output
from pitools.core.validate import CODES, SEVERITIES, ValidationReport


def _codes(values: Sequence[str], option: str) -> list[str] | None:
    """``--select a --select b,c`` → ``[a, b, c]``; unknown codes are a usage error (exit 2)."""
    if not values:
        return None
    codes = [c.strip() for value in values for c in value.split(",") if c.strip()]
    unknown = [c for c in codes if c not in CODES]
    if unknown:
        raise click.BadParameter(_unknown_codes(unknown), param_hint=f"'--{option}'")
    return codes


def _unknown_codes(unknown: Sequence[str]) -> str:
    """``unknown code 'dupe-id' (did you mean 'duplicate-id'?); valid codes: …``."""
    import difflib

    parts = []
    for code in unknown:
        close = difflib.get_close_matches(code, list(CODES), n=1)
        parts.append(f"{code!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (
        f"unknown code {', '.join(parts)}; valid codes: {', '.join(CODES)} "
        "(`pitools validate --list-codes` explains them)"
    )


@click.command("validate")
@session_paths_argument("paths", required=False)
@format_option("human", "json", "github")
@click.option("--list-codes", is_flag=True, help="List every finding code with its severity and meaning, then exit.")
@click.option("--explain", metavar="CODE", default=None, help="Explain one code: meaning, what Pi does, how to fix.")
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
@jobs_option("Processes to use (default: 2 when the machine has two cores; 1 = no extra process).")
@model_option(
    "--for-model",
    "for_model",
    "Also check the request pi-ai would send to this model at each file's default leaf "
    "(the rules of `pitools request --check`).",
)
@no_config_option
@pass_output
def command(
    out: Output,
    paths: tuple[str, ...],
    format_: str,
    list_codes: bool,
    explain: str | None,
    strict: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    min_severity: str,
    jobs: int | None,
    for_model: str | None,
    no_config: bool,
) -> int:
    """Check Pi session files for everything Pi 1.6.0 would trip over.

    Directories are searched recursively for *.jsonl files. Each finding has a stable code
    (duplicate-id, orphan-entry, parent-cycle, pi-would-crash, ...) and a severity; --list-codes
    and docs/validate.md list them all. Exit status: 0 when nothing reaches the failing severity
    (error, or warning with --strict), 1 when something does or a file cannot be read,
    2 for a usage error.

    \b
    Examples:
      pitools validate ~/.pi/agent/sessions
      pitools validate run.jsonl --strict --ignore timestamp-backwards
      pitools validate sessions/ --format github --min-severity warning
      pitools validate run.jsonl --for-model anthropic/claude-sonnet-4-5
    """
    from pitools.cli.options import no_session_files, stdin_spool
    from pitools.ops.request import check_requests
    from pitools.ops.validate import find_session_files, validate_many

    # Parse: the options, checked (bad ones are usage errors, exit 2).
    if list_codes or explain is not None:
        return _describe_codes(out, format_, explain)
    if not paths:
        raise click.UsageError("give at least one FILE or DIR to check (or --list-codes / --explain CODE)")
    selected = _codes(select, "select")
    ignored = _codes(ignore, "ignore")
    fail_on = "warning" if strict else "error"
    # Build: the files.
    files = find_session_files(paths)
    if not files:
        no_session_files(paths)
    # Run.
    options: dict[str, Any] = {"select": selected, "ignore": ignored, "min_severity": min_severity, "jobs": jobs}
    if len(files) > 1 and out.progress:
        from pitools.cli.progress import with_progress_bar

        reports = with_progress_bar(
            out.console(err=True),
            "validating",
            len(files),
            lambda advance: validate_many(files, progress=advance, **options),
        )
    else:
        reports = validate_many(files, **options)
    request_checks = check_requests(files, for_model, use_config=not no_config) if for_model else None
    spool = stdin_spool()
    if spool:  # `-`: the session came on stdin; its private spool file is no name to show
        from dataclasses import replace

        reports = [replace(r, path="-") if r.path == spool else r for r in reports]
    # Render.
    return _render(out, reports, format_, fail_on, request_checks)


def _render(
    out: Output,
    reports: list[ValidationReport],
    format_: str,
    fail_on: str,
    request_checks: list[dict[str, Any]] | None,
) -> int:
    if format_ == "json":
        from pitools.render.validate import validate_json

        out.write_json(validate_json(reports, fail_on, request_checks))
    elif format_ == "github":
        from pitools.render.validate import github_lines, request_check_lines, summary_text

        lines = github_lines(reports)
        if request_checks is not None:
            lines.extend(request_check_lines(request_checks, format_))
        out.echo("\n".join([*lines, summary_text(reports, fail_on, request_checks)]))
    else:
        from pitools.render.validate import heal_hints, human_lines, render_human, repair_hint

        if not out.color:
            # What rich would print without colour; importing it would take a tenth of the run
            # on a small file.
            from pitools.render.safe import safe_text

            # One finding per line, whatever its message holds.
            lines = human_lines(reports, fail_on, request_checks)
            out.echo("\n".join(safe_text(line, one_line=True).rstrip(" ") for line in lines))
        else:
            render_human(out.console(), reports, fail_on, request_checks)
        hint = repair_hint(reports)
        if hint:
            out.message(hint)
        for line in heal_hints(request_checks or []):
            out.message(line)
    from pitools.render.validate import any_failed

    return 1 if any_failed(reports, fail_on, request_checks) else 0


def _describe_codes(out: Output, format_: str, code: str | None) -> int:
    """``--list-codes`` (every code) or ``--explain CODE`` (one), like ``ruff rule``."""
    from pitools.core.validate.codes import explain

    if code is not None and code not in CODES:
        raise click.BadParameter(_unknown_codes([code]), param_hint="'--explain'")
    codes = [code] if code is not None else list(CODES)
    if format_ == "json":
        out.write_json([explain(c) for c in codes] if code is None else explain(code))
        return 0
    from pitools.render.validate import code_list_lines, explain_lines

    out.echo("\n".join(code_list_lines() if code is None else explain_lines(explain(code))))
    return 0
