"""``pitools migrate``: bring a v1/v2 session to v3 the way Pi does, but only when asked."""

from __future__ import annotations

import click

from pitools.cli.option_groups import RewriteArgs, rewrite_options
from pitools.cli.options import format_option, session_argument
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
    from pitools.ops.migrate import migrate
    from pitools.render.migrate import migrate_text

    result = migrate(
        file,
        output=output,
        in_place=in_place,
        check=check,
        backup=not target.no_backup,
        force=force,
        to_stdout=out.write_chunks,
    )
    if result["written"] != "-":
        if format_ == "json":
            out.write_json(result)
        else:
            out.echo(migrate_text(result, check))
    elif format_ == "json":
        out.echo(migrate_text(result, check), err=True)
    return 1 if check and result["needed"] else 0
