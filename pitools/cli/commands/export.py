"""``pitools export``: a branch (or the whole tree) as Markdown, HTML, a standalone JSONL session,
OpenTelemetry traces (OTLP) or ATIF trajectories."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

import click

from pitools.cli import leave_for_exit
from pitools.cli.commands._secrets_options import ValueArgs, value_options
from pitools.cli.options import jobs_option, leaf_option, session_argument
from pitools.cli.output import Output, pass_output


def _check_endpoint(value: str | None) -> str | None:
    """A malformed or non-http(s) endpoint is a usage error (exit 2), named without its credentials."""
    if value is not None:
        from pitools.ops.otlp_send import traces_url

        try:
            traces_url(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


#: The formats --format takes; ``md`` is another name for ``markdown``.
FORMATS = ["markdown", "md", "html", "jsonl", "otlp", "atif"]
#: What an output file's extension says it holds, and the formats that write such a file.
_BY_EXTENSION = {
    ".md": ("markdown", ("markdown",)),
    ".markdown": ("markdown", ("markdown",)),
    ".html": ("html", ("html",)),
    ".htm": ("html", ("html",)),
    ".jsonl": ("jsonl", ("jsonl",)),
    ".json": (None, ("otlp", "atif")),
}


def output_format(given: str | None, output: str | None) -> str:
    """The export format: --format (``md`` read as ``markdown``), else the one OUT's extension
    names, else markdown. A --format that writes something other than OUT's extension says is a
    usage error, so `-o page.html` never silently gets Markdown."""
    chosen = "markdown" if given == "md" else given
    ext = os.path.splitext(output)[1].lower() if output else ""
    inferred, fits = _BY_EXTENSION.get(ext, (None, None))
    if chosen is None:
        if fits is not None and inferred is None:
            raise click.UsageError(f"-o {output}: a {ext} file can be --format otlp or atif; say which")
        return inferred or "markdown"
    if fits is not None and chosen not in fits:
        want = " or ".join(f"--format {f}" for f in fits)
        raise click.UsageError(
            f"--format {chosen} does not write a {ext} file ({want} does); change the format or OUT's name"
        )
    return chosen


class _Request(NamedTuple):
    """What to export and where, as the options gave it (the same whether or not it is redacted first)."""

    leaf_ref: str | None
    all_: bool
    format_: str
    images: str | None
    output: str | None
    endpoint: str | None
    legacy: bool
    force: bool
    jobs: int | None


@click.command("export")
@session_argument
@leaf_option
@click.option("--all", "all_", is_flag=True, help="Every branch of the tree instead of one branch.")
@click.option(
    "--format",
    "format_",
    type=click.Choice(FORMATS),
    default=None,
    help="markdown (or md) and html are transcripts; jsonl is the branch as a session file, as Pi's /export "
    "writes it; otlp is OpenTelemetry GenAI traces (OTLP/JSON); atif is Agent Trajectory Interchange Format. "
    "Default: from OUT's extension (.md/.markdown, .html/.htm, .jsonl), else markdown.",
)
@click.option(
    "--images",
    type=click.Choice(["placeholder", "embed"]),
    default=None,
    help="Images as placeholders or embedded data URIs (default: embed in html and atif, placeholder in markdown).",
)
@click.option(
    "-o", "--output", metavar="OUT", default=None, help="Write to OUT instead of stdout (replaced only with --force)."
)
@click.option("--force", is_flag=True, help="With -o: replace OUT if it exists.")
@click.option(
    "--redact",
    is_flag=True,
    help="Replace secrets with [REDACTED:<kind>:<hash>] first, as `pitools redact` does, so the export "
    "can be shared. The value options below apply to it.",
)
@value_options
@click.option(
    "--endpoint",
    metavar="URL",
    default=None,
    callback=lambda _ctx, _param, value: _check_endpoint(value),
    help="otlp only: send the traces to this OTLP/HTTP collector (e.g. http://localhost:4318) instead of writing them.",
)
@click.option(
    "--otel-legacy-names",
    "legacy",
    is_flag=True,
    help="otlp only: the attribute names of the conventions before they moved (gen_ai.system, "
    "gen_ai.usage.cache_creation.input_tokens), for a backend that still reads them.",
)
@jobs_option(
    "html only: processes to use (default: 2 when the machine has two cores, and then a big context's request "
    "check is built in a second process while the page is written; 1 = no extra process)."
)
@pass_output
def command(
    out: Output,
    file: str,
    leaf_ref: str | None,
    all_: bool,
    format_: str | None,
    images: str | None,
    output: str | None,
    force: bool,
    redact: bool,
    values: ValueArgs,
    endpoint: str | None,
    legacy: bool,
    jobs: int | None,
) -> int:
    """Export a session as a readable transcript, or its branch as a standalone session.

    The transcript shows user and assistant messages, tool calls with their arguments, tool
    results (long ones folded), thinking (collapsed), images, compactions and branch summaries,
    labels, timestamps and model changes. HTML is one self-contained page (inline CSS, no
    network). jsonl writes the branch the way Pi's /export does: same session id, new timestamp,
    entries re-chained root to leaf.

    \b
    Examples:
      pitools export session.jsonl -o session.html        # the format follows the extension
      pitools export 0190a1b2 --leaf a1b2c3d4 > branch.md
      pitools export --all --format markdown
      pitools export session.jsonl --redact --format html -o shareable.html
      pitools export session.jsonl --all --format otlp --endpoint http://localhost:4318
      pitools export session.jsonl --format atif -o trajectory.json
    """
    format_ = output_format(format_, output)
    if force and output is None:
        raise click.UsageError("--force only applies to -o OUT")
    if output is not None and not force and os.path.lexists(output):
        from pitools.errors import PitoolsError

        # Before anything is read (the store refuses again at the write, should OUT appear meanwhile).
        raise PitoolsError("already exists; pass --force to replace it, or choose another path", path=output)
    if endpoint is not None and format_ != "otlp":
        raise click.UsageError("--endpoint is only for --format otlp")
    if jobs is not None and format_ != "html":
        raise click.UsageError("--jobs is only for --format html")
    if legacy and format_ != "otlp":
        raise click.UsageError("--otel-legacy-names is only for --format otlp")
    if endpoint is not None and output is not None:
        raise click.UsageError("--endpoint sends the traces; it cannot be combined with -o")
    if all_ and leaf_ref is not None:
        raise click.UsageError("--all exports every branch; it cannot be combined with --leaf")
    if all_ and format_ == "jsonl":
        raise click.UsageError("--all cannot be used with --format jsonl (a session file holds one branch here)")
    if format_ == "otlp":
        from pitools.render.export_otlp import require_otlp

        require_otlp()  # one line and exit 1 before anything is read, redacted or written
    request = _Request(leaf_ref, all_, format_, images, output, endpoint, legacy, force, jobs)
    if not redact:
        if values.any_given():
            raise click.UsageError("--value, --values-file, --env, --no-pi-keys and --no-entropy go with --redact")
        return _export(out, file, request)
    from pitools.core.secrets.redact import RedactOptions
    from pitools.ops.redact import redacted_copy, run_key
    from pitools.render.secrets import export_redact_note

    detector = values.detector(out)
    with redacted_copy(file, detector=detector, options=RedactOptions(key=run_key(None))) as (copy, stats):
        out.message(export_redact_note(stats))
        return _export(out, copy, request, shown=file)


def _export(out: Output, file: str, request: _Request, shown: str | None = None) -> int:
    """Export ``file``; ``shown``: the path the output names instead (the user's file, when
    ``file`` is its redacted temporary copy)."""
    from pitools.core.session.load import load

    leaf_ref, all_, format_, images, output, endpoint, legacy, force, jobs = request

    if format_ == "html":
        from pitools.ops.parallel import default_jobs
        from pitools.ops.viewer import file_page

        # The viewer page reads every entry once and writes the file's own lines. It always
        # holds the whole tree; --leaf (or Pi's default leaf) is selected on open.
        lean, page = file_page(
            file,
            lambda loaded: None if all_ else loaded.leaf(leaf_ref),
            embed_images=images != "placeholder",
            jobs=default_jobs() if jobs is None else jobs,
            shown=shown,
        )
        leave_for_exit(lean)
        if output:
            # UTF-8 with nothing a terminal would act on, by construction (page_chunks): as
            # written, without a second pass over every byte. Stdout may need another encoding.
            out.write_chunks_to(output, page, overwrite=force)
        else:
            out.write_utf8_pieces(page)
        return 0
    loaded = load(file)
    leave_for_exit(loaded)
    loaded.show_as(shown)
    if format_ in ("otlp", "atif"):
        from pitools.cli.export_traces import export_every_branch, export_traces

        parts = images != "placeholder"  # atif: images as content parts unless asked for placeholders
        if all_ and endpoint is None:
            return export_every_branch(out, loaded, format_, output, legacy=legacy, images=parts, overwrite=force)
        return export_traces(
            out,
            loaded,
            format_,
            leaf_ref=leaf_ref,
            all_=all_,
            output=output,
            endpoint=endpoint,
            legacy=legacy,
            images=parts,
            overwrite=force,
        )
    leaf = None if all_ else loaded.leaf(leaf_ref)
    if format_ == "jsonl":
        from pitools.core.session.fork import export_branch

        new = export_branch(loaded, leaf)
        if output:
            from pitools.ops.newsession import write_session

            write_session(new, output, overwrite=force)
            out.message(f"wrote {output}")
        else:
            out.write_chunks(new.lines())  # line by line, never joined
        return 0
    from pitools.render.export_md import build_transcript

    embed = (images or ("embed" if format_ == "html" else "placeholder")) == "embed"
    transcript = build_transcript(loaded, leaf, all_=all_, embed_images=embed)
    # The document is rendered entry by entry while it is written: never held whole in memory.
    from pitools.render.export_md import markdown_pieces

    return _write_pieces(out, markdown_pieces(transcript), output, force)


def _write_pieces(out: Output, pieces: Iterator[str], output: str | None, force: bool) -> int:
    if output:
        from pitools.cli.output import encoded_text

        # Control characters and lone surrogates (no UTF-8 form) are shown escaped, as on stdout.
        out.write_chunks_to(output, encoded_text(pieces, "utf-8"), overwrite=force)
    else:
        out.write_text_pieces(pieces)
    return 0
