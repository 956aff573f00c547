"""``pitools redact``: replace every secret with a placeholder; the result still loads in Pi."""

from __future__ import annotations

import click

from pitools.cli.commands._secrets_options import ValueArgs, value_options
from pitools.cli.option_groups import RewriteArgs, rewrite_options
from pitools.cli.options import format_option, session_argument
from pitools.cli.output import Output, pass_output


@click.command("redact")
@session_argument
@rewrite_options(
    "Write the redacted session to OUT (a new file).",
    "Report what would be replaced; write nothing (the default without -o or --in-place).",
    in_place_help="Rewrite FILE itself (atomic; a backup is kept).",
    no_backup_help="With --in-place: keep no backup copy.",
)
@click.option(
    "--key",
    metavar="KEY",
    default=None,
    help="Key for the placeholders' hash (default: random per run). The same key gives the same "
    "placeholders across files and runs.",
)
@value_options
@click.option("--paths", is_flag=True, help="Also replace the home folder with ~ and the user name with 'user'.")
@click.option("--strip-images", is_flag=True, help="Replace every image with a short '[image removed]' text.")
@click.option(
    "--strip-thinking",
    is_flag=True,
    help="Remove thinking blocks and their provider signatures. Pi can then no longer replay those "
    "turns to the same model with their reasoning.",
)
@format_option("human", "json", help="json describes what was replaced (schemas/output/redact.schema.json).")
@pass_output
def command(
    out: Output,
    file: str,
    key: str | None,
    values: ValueArgs,
    paths: bool,
    strip_images: bool,
    strip_thinking: bool,
    target: RewriteArgs,
    format_: str,
) -> int:
    """Replace every secret in a session with [REDACTED:<kind>:<hash>].

    The hash is a keyed HMAC of the secret (8 hex digits): one secret gets one placeholder
    across the file, so a reader can still follow it. Only lines holding a secret are
    rewritten; every other line stays byte-identical, and ids, parentIds, entry count and order
    are kept, so Pi loads the result and builds the same tree. `pitools scan` finds nothing in it.

    Without -o or --in-place it is a dry run: it reports what it would replace and writes nothing.

    \b
    Examples:
      pitools redact session.jsonl                      # what would be replaced; writes nothing
      pitools redact session.jsonl -o shareable.jsonl
      pitools redact session.jsonl --in-place --paths --strip-images
      pitools redact session.jsonl -o out.jsonl --values-file my-secrets.txt --env
    """
    from pitools.core.secrets.redact import RedactOptions
    from pitools.ops.redact import path_options, redact_file, run_key

    output, in_place = target.output, target.in_place
    target.check()
    # Like every writer, a dry run unless told where to write.
    dry_run = target.dry_run or not (output or in_place)
    detector = values.detector(out)
    home, user = path_options(paths)
    options = RedactOptions(
        key=run_key(key),
        paths=paths,
        home=home,
        user=user,
        strip_images=strip_images,
        strip_thinking=strip_thinking,
    )
    result = redact_file(
        file,
        detector=detector,
        options=options,
        output=output,
        in_place=in_place,
        backup=not target.no_backup,
        dry_run=dry_run,
    )
    from pitools.render import secrets as R

    if format_ == "json":
        stats = result.stats
        out.write_json(
            {
                "file": result.source,
                "output": result.output,
                "backup": result.backup,
                "findings": [f.to_json() for f in stats.findings],
                "lines": stats.lines,
                "changedLines": stats.changed_lines,
                "imagesRemoved": stats.images_removed,
                "thinkingRemoved": stats.thinking_removed,
                "pathsReplaced": stats.paths_replaced,
            }
        )
    out.message(R.redact_summary(result.stats, result.output))
    if result.backup:
        out.message(
            f"backup kept at {result.backup}: it still holds every secret (owner-only, "
            "mode 0600); delete it once you have checked the result (--no-backup keeps none)"
        )
    return 0
