"""``pitools repair``: bring a damaged session back, changing only what is broken."""

from __future__ import annotations

import click

from pitools.cli.option_groups import RewriteArgs, rewrite_options
from pitools.cli.options import format_option, session_argument
from pitools.cli.output import Output, pass_output


@click.command("repair")
@session_argument
@rewrite_options("Write the repaired session to OUT ('-' for stdout).", "Report every fix; write nothing.")
@click.option(
    "--cwd",
    "cwd",
    metavar="DIR",
    default=None,
    help="Project directory for a rebuilt header (when the file has no header and is not in a Pi session folder).",
)
@click.option("--reattach", is_flag=True, help="Link each orphan (parent missing) to the previous entry in file order.")
@format_option("human", "json")
@pass_output
def command(
    out: Output,
    file: str,
    cwd: str | None,
    reattach: bool,
    target: RewriteArgs,
    format_: str,
) -> int:
    """Repair a damaged session file so Pi 1.6.0 loads it again (every fix reported).

    Fixes fused lines (split; a torn prefix is dropped), a torn last line, a BOM, CRLF, a
    missing or misplaced header, lines Pi skips, duplicate ids (earlier ones renamed), parentId
    cycles and self-parents, and entries Pi throws on; reports orphans (--reattach links them).
    Untouched lines stay byte-identical. Before writing, pitools proves that nothing Pi reads
    today is lost and that the context is unchanged at every leaf no fix touches; if not, it
    refuses (exit 1). Exit 0 when the result is healthy, 1 when something remains.

    \b
    Examples:
      pitools repair broken.jsonl --dry-run
      pitools repair broken.jsonl -o fixed.jsonl
      pitools repair broken.jsonl --in-place --reattach
    """
    target.check()
    from pitools.ops.repair import repair_file

    output = target.output

    result = repair_file(
        file,
        output=output,
        in_place=target.in_place,
        dry_run=target.dry_run,
        backup=not target.no_backup,
        cwd=cwd,
        reattach=reattach,
    )
    if output == "-" and not result.refused and result.data_after is not None:
        out.write_bytes(result.data_after)
        result.written = "-"
    data = result.to_json()
    if format_ == "json" and output != "-":
        out.write_json(data)
    else:
        from pitools.render.repair import repair_lines

        # With -o - the session is on stdout: the report goes to stderr.
        for line in repair_lines(data):
            out.echo(line, err=output == "-", one_line=True)
    if result.refused:
        out.message("refused to write: the repair would change what Pi reads (see the report); nothing was written")
    elif not result.healthy:
        out.message(_unhealthy(data))
    return 0 if result.healthy else 1


def _unhealthy(data: dict[str, object]) -> str:
    """Exit 1 although repair ran: say what was written and what was not."""
    from pitools.render.vocab import plural

    fixes, remaining = data["fixes"], data["remaining"]
    assert isinstance(fixes, list) and isinstance(remaining, list)
    left = f"{plural(len(remaining), 'problem')} remain{'s' if len(remaining) == 1 else ''} (under 'not fixed')"
    written = data.get("written")
    if written and fixes:
        where = "stdout" if written == "-" else str(written)
        return f"exit 1: {plural(len(fixes), 'fix', 'fixes')} written to {where}, but {left}"
    if fixes:
        return f"exit 1: {left}; nothing written ({plural(len(fixes), 'fix', 'fixes')} would be made)"
    return f"exit 1: {left} and repair has no fix for them; nothing written"
