"""``pitools migrate``: bring a v1/v2 session to v3 the way Pi does, but only when asked."""

from __future__ import annotations

import os
from typing import Any

import click

from pitools.cli.options import RewriteArgs, format_option, rewrite_options, session_argument
from pitools.cli.output import Output, pass_output


@click.command("migrate")
@session_argument
@rewrite_options("Write the migrated session to OUT ('-' for stdout); the original is untouched.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the file needs migration (for CI).")
@click.option("--force", is_flag=True, help="With -o: replace OUT if it exists.")
@format_option("human", "json")
@pass_output
def command(
    out: Output,
    file: str,
    check: bool,
    force: bool,
    target: RewriteArgs,
    format_: str,
) -> int:
    """Migrate a session to format v3 (Pi's migrateToCurrentVersion).

    v1 entries get ids (deterministic: the k-th entry gets %08x of k) and parent links,
    compaction indices become firstKeptEntryId, and the hookMessage role becomes custom.
    A v3 file is left alone (exit 0). Without -o or --in-place nothing is written: the
    command reports what would change.

    \b
    Examples:
      pitools migrate old.jsonl --check
      pitools migrate old.jsonl -o new.jsonl
      pitools migrate old.jsonl --in-place
    """
    output, in_place = target.output, target.in_place
    if sum(bool(x) for x in (output, in_place, check)) > 1:
        raise click.UsageError("use only one of -o/--output, --in-place and --check")
    target.check(from_stdin_hint="a session read from stdin cannot be migrated in place: use -o OUT or -o -")
    if force and (not output or output == "-"):
        raise click.UsageError("--force only applies to -o OUT")
    from pitools.ops.migrate import plan_migration, write_copy, write_in_place

    if output and output != "-" and not force and os.path.lexists(output):
        from pitools.errors import PitoolsError

        raise PitoolsError("already exists; pass --force to replace it, or choose another path", path=output)

    plan = plan_migration(file, in_place=in_place)
    report = plan.session.migration
    pointless, needed = plan.pointless, plan.needed
    written: str | None = None
    backup: Any = None
    if needed and not check:
        if in_place:
            backup = write_in_place(plan, backup=not target.no_backup)
            written = file
        elif output == "-":
            out.write_chunks(plan.lines())
            written = "-"
        elif output:
            write_copy(plan, output, overwrite=force)
            written = output
    elif output and output != "-" and not check and not pointless:
        # Nothing to migrate, but a file was asked for: an identical copy.
        write_copy(plan, output, overwrite=force)
        written = output
    elif output == "-" and not needed:
        # Nothing to migrate: the output is the file itself.
        with open(file, "rb") as fh:
            out.write_bytes(fh.read())
        written = "-"
    result = {
        "path": file,
        "needed": needed,
        "note": (
            f"header version {report.version_before!r} is not a number: Pi rewrites this file unchanged "
            "every time it opens it; set the version to 3 to stop that"
            if pointless
            else None
        ),
        "versionBefore": report.version_before,
        "versionAfter": 3 if needed else report.version_before,
        "report": report.to_json(),
        "written": written,
        "backup": str(backup) if backup else None,
    }
    if written != "-":
        if format_ == "json":
            out.write_json(result)
        else:
            out.echo(_human(result, check))
    elif format_ == "json":
        out.echo(_human(result, check), err=True)
    return 1 if check and needed else 0


def _human(r: dict[str, Any], check: bool) -> str:
    rep = r["report"]
    if r.get("note"):
        return f"{r['path']}: {r['note']}"
    if not r["needed"]:
        copied = f"; wrote an identical copy to {r['written']}" if r["written"] else ""
        return f"{r['path']}: already version {r['versionBefore']}; nothing to migrate{copied}"
    parts = [f"{r['path']}: version {r['versionBefore'] if r['versionBefore'] is not None else '1 (none)'} → 3"]
    details = []
    if rep["idsAssigned"]:
        details.append(f"{rep['idsAssigned']} entries given ids")
    if rep["rolesRenamed"]:
        details.append(f"{rep['rolesRenamed']} hookMessage roles renamed to custom")
    if rep["indicesConverted"]:
        details.append(f"{rep['indicesConverted']} compaction indices converted")
    if rep["indicesDropped"]:
        details.append(f"{rep['indicesDropped']} compaction indices dropped (target missing, as Pi does)")
    if rep["indicesKeptAsIs"]:
        details.append(f"{rep['indicesKeptAsIs']} non-numeric compaction indices kept as is (as Pi does)")
    if details:
        parts.append("  " + "; ".join(details))
    if check:
        parts.append("  migration needed (nothing written)")
    elif r["written"]:
        parts.append(f"  written to {r['written']}" + (f" (backup: {r['backup']})" if r["backup"] else ""))
    else:
        parts.append("  nothing written: use -o OUT or --in-place")
    return "\n".join(parts)
