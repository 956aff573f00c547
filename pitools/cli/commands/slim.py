"""``pitools slim``: shrink a session without changing what Pi builds at any leaf."""

from __future__ import annotations

import click

from pitools.cli.option_groups import RewriteArgs, rewrite_options
from pitools.cli.options import format_option, session_argument
from pitools.cli.output import Output, pass_output


@click.command("slim")
@session_argument
@rewrite_options("Write the slimmed session to OUT.", "Report what would be saved; write nothing.")
@click.option("--images", is_flag=True, help="Replace base64 images.")
@click.option(
    "--tool-output",
    "tool_output",
    metavar="BYTES",
    type=click.IntRange(min=0),
    default=None,
    help="Replace tool-result text blocks larger than BYTES (UTF-8).",
)
@click.option("--thinking", is_flag=True, help="Replace assistant thinking blocks.")
@click.option(
    "--full-check",
    is_flag=True,
    help="Also replay Pi's context and prepareCompaction at every leaf, before and after (slow on big files).",
)
@format_option("human", "json")
@pass_output
def command(
    out: Output,
    file: str,
    images: bool,
    tool_output: int | None,
    thinking: bool,
    full_check: bool,
    target: RewriteArgs,
    format_: str,
) -> int:
    """Shrink a session without changing the context Pi builds at any leaf.

    Only content that no leaf's context holds any more (compacted away on every branch through
    it) is touched: base64 images (--images), tool results over BYTES (--tool-output BYTES)
    and thinking blocks (--thinking) become a short placeholder text naming what was removed,
    its size and sha256. Ids, parents, labels, entry count and order, and every other line
    stay byte-identical. Before writing, pitools checks on the new lines that nothing outside
    the replaced content changes and that no leaf's context holds a replaced entry, so the
    context and compaction plan at every leaf, the tree and inspect's totals stay identical;
    otherwise it refuses (exit 1). --full-check also replays every leaf before and after.

    The cost: the removed content is gone from the file (the backup keeps it); branching in
    Pi's /tree from inside the compacted history shows the placeholders.

    \b
    Examples:
      pitools slim big.jsonl --images --tool-output 20000 --thinking --dry-run
      pitools slim big.jsonl --images --in-place
      pitools slim big.jsonl --images --thinking -o small.jsonl
    """
    output, in_place, dry_run = target.output, target.in_place, target.dry_run
    if output == "-" and not in_place:
        raise click.UsageError("slim writes a file: give -o a path (or use --in-place)")
    target.check()
    from pitools.core.repair.slim import SlimOptions
    from pitools.ops.slim import slim_file

    options = SlimOptions(images=images, tool_output=tool_output, thinking=thinking)
    if not options.categories():
        raise click.UsageError("choose what to slim: --images, --tool-output BYTES and/or --thinking")
    result = slim_file(
        file,
        options,
        output=output,
        in_place=in_place,
        dry_run=dry_run or not (output or in_place),
        backup=not target.no_backup,
        full_check=full_check,
    )
    result.dry_run = dry_run
    data = result.to_json()
    if format_ == "json":
        out.write_json(data)
    else:
        from pitools.render.repair import slim_lines

        for line in slim_lines(data):
            out.echo(line, one_line=True)
    if result.refused:
        out.message("refused to write: slimming would change what Pi builds (see the report)")
        return 1
    return 0
