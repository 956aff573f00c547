"""``pitools compact``: plan a compaction like Pi (--dry-run) or apply one offline (--apply)."""

from __future__ import annotations

from typing import Any

import click

from pitools.cli import leave_for_exit
from pitools.cli.option_groups import PlanArgs, SummarizerArgs, planning_command_options
from pitools.cli.options import leaf_option, session_argument
from pitools.cli.output import Output, pass_output


@click.command("compact")
@session_argument
@click.option(
    "--dry-run", "dry_run", is_flag=True, help="Show the plan; never writes, never calls a model (the default)."
)
@click.option("--apply", "apply_", is_flag=True, help="Summarize with a model and append a compaction entry.")
@leaf_option
@click.option("--keep-recent-tokens", type=click.IntRange(min=0), default=None, help="Override keepRecentTokens.")
@planning_command_options(
    "Apply",
    "Override reserveTokens.",
    "Dry run: print the exact summarizer input.",
    "Dry run: list every entry of every region (default: the first and last few of each).",
)
@pass_output
def command(
    out: Output,
    file: str,
    dry_run: bool,
    apply_: bool,
    leaf_ref: str | None,
    keep_recent_tokens: int | None,
    plan: PlanArgs,
    summarizer: SummarizerArgs,
    format_: str,
) -> int:
    """Plan or apply a compaction exactly as Pi 1.6.0's prepareCompaction/compact would.

    The dry run (the default; --dry-run says so explicitly) leads with the plan: whether Pi
    would compact now, the regions (already summarized, previous compaction, to summarize,
    split-turn prefix, kept) with entry counts and tokens, the cut and why, the previous
    summary, the file lists and what Pi sends afterwards; then each region's first and last
    entries (--entries lists all of them).
    --apply asks a model (or the offline builtin summarizer) and appends a real compaction
    entry that Pi loads.

    \b
    Examples:
      pitools compact session.jsonl                     # the plan; writes nothing
      pitools compact session.jsonl --dry-run --keep-recent-tokens 2000
      pitools compact session.jsonl --dry-run --show-prompt
      pitools compact session.jsonl --apply --model builtin
      pitools compact session.jsonl --apply --model anthropic/claude-sonnet-4-5 --yes
    """
    if dry_run and apply_:
        raise click.UsageError("choose one of --dry-run (plan only) or --apply (write a compaction)")
    # Without --apply it is a dry run, as for every command that writes.
    plan.check(writes=apply_, dry_run="--dry-run")
    summarizer.check(writes=apply_, when="to --apply", changed="compacted")

    from pitools.ops.compaction import plan_compact

    # --apply: the plan stamps the file before its read, so anything appended between this load
    # (which picks the leaf) and the final append is noticed and refused.
    planning = plan_compact(file, leaf_ref, keep_recent_tokens=keep_recent_tokens, for_apply=apply_, **plan.settings())
    for warning in planning.warnings:
        out.message(f"warning: {warning}")
    if not apply_:
        made = planning.plan
        leave_for_exit(made)
        # The plan holds what it reports; the rest of the session (other branches, the index)
        # is let go, so the memory the writing takes can reuse it.
        del planning
        return _dry_run(out, made, plan, format_=format_)
    return _apply(out, file, planning, summarizer, format_=format_, use_config=plan.use_config)


def _dry_run(out: Output, plan: Any, view: PlanArgs, *, format_: str) -> int:
    from pitools.ops.compaction import summary_requests_json

    if format_ == "json":  # no rich console needed: it takes a while to import
        import itertools

        from pitools.core.js.json.parse import gc_paused

        # Written in pieces: on a never-compacted session the document is larger than the file
        # (every message, plus the transcript), and building it whole tripled the peak memory.
        # orjson keeps a UTF-8 copy inside every non-ASCII string it writes.
        with gc_paused():  # only bytes are made while writing; see gc_paused
            extra = {"summaryRequests": summary_requests_json(plan)} if view.show_prompt else None
            out.write_chunks(itertools.chain(plan.json_chunks(extra), (b"\n",)))
        return 0
    from pitools.render.compact import render_plan, render_prompts

    render_plan(out.line_console(), plan, entries=view.list_entries)
    if view.show_prompt:
        render_prompts(out.console(), summary_requests_json(plan))
    return 0


def _apply(out: Output, file: str, planning: Any, summarizer: SummarizerArgs, *, format_: str, use_config: bool) -> int:
    from pitools.ops.compaction import apply_compaction
    from pitools.ops.summarizing import ConsentRequiredError
    from pitools.render.compact import render_plan

    request = summarizer.request(
        out,
        file=file,
        format_=format_,
        entry="the compaction",
        show_plan=lambda console, plan: render_plan(console, plan),
        use_config=use_config,
    )
    try:
        outcome = apply_compaction(planning, request)
    except ConsentRequiredError as exc:
        raise click.UsageError(exc.message) from None
    if format_ == "json":
        out.write_json(outcome.to_json())
        return 0
    from pitools.render.compact import render_applied
    from pitools.render.context import render_context

    console = out.console()
    render_applied(console, outcome.to_json())
    render_context(console, outcome.replay, outcome.session)
    return 0
