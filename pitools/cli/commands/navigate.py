"""``pitools navigate``: what Pi's /tree does when leaving a branch (dry run), or write it (--summarize)."""

from __future__ import annotations

from typing import Any

import click

from pitools.cli import leave_for_exit
from pitools.cli.option_groups import PlanArgs, SummarizerArgs, planning_command_options
from pitools.cli.options import leaf_option, session_argument
from pitools.cli.output import Output, pass_output


@click.command("navigate")
@session_argument
@click.option(
    "--to",
    "target_ref",
    metavar="TARGET",
    required=True,
    help="The entry to go to: id, unique id prefix, label, or L<line>.",
)
@leaf_option
@click.option("--dry-run", "dry_run", is_flag=True, help="Show what Pi would do; never writes (the default).")
@click.option("--summarize", is_flag=True, help="Summarize the branch being left and append the summary, as Pi does.")
@click.option(
    "--label", default=None, metavar="TEXT", help="Label the summary (or, without one, the target), as Pi does."
)
@planning_command_options(
    "Summarize",
    "Override branchSummary.reserveTokens.",
    "Dry run: print the exact summary request whole.",
    "Dry run: list every entry of the branch being left.",
)
@pass_output
def command(
    out: Output,
    file: str,
    target_ref: str,
    leaf_ref: str | None,
    dry_run: bool,
    summarize: bool,
    label: str | None,
    plan: PlanArgs,
    summarizer: SummarizerArgs,
    format_: str,
) -> int:
    """Go to another entry of the session tree as Pi's /tree does, summarizing the branch left.

    FROM is --leaf (default: Pi's default leaf, the last entry); TARGET is --to. The dry run
    (the default) shows the common ancestor, the entries of the branch being left that Pi
    would summarize, the token budget (context window − branchSummary.reserveTokens) and what
    fits in it (messages, files read/modified, tokens), the exact request (--show-prompt), and
    where the leaf lands: TARGET, or its parent when TARGET is a user or custom message (Pi
    then puts that message's text back in the editor).

    --summarize asks a model (or --model builtin, offline) and appends what Pi appends: a
    branch_summary entry at the landing position, and with --label a label entry on it. In
    place (with a backup), or a new file with -o. Without --summarize or --label Pi writes
    nothing (its leaf moves in memory only), and neither does pitools.

    \b
    Examples:
      pitools navigate session.jsonl --to A2
      pitools navigate session.jsonl --leaf A3 --to C1 --show-prompt
      pitools navigate session.jsonl --to A2 --summarize --model builtin -o navigated.jsonl
      pitools navigate session.jsonl --to A2 --summarize --label jwt-attempt --yes
    """
    writes = summarize or label is not None
    if dry_run and writes:
        raise click.UsageError("--dry-run never writes: drop --summarize/--label, or --dry-run")
    plan.check(writes=writes, dry_run="the dry run")
    if writes and not summarize and (summarizer.model_arg or summarizer.base_url or summarizer.instructions):
        raise click.UsageError("--model, --base-url and --instructions only apply with --summarize")
    summarizer.check(writes=writes, when="with --summarize or --label")

    from pitools.cli.options import note_synthetic_ids
    from pitools.core.session.load import load
    from pitools.ops.navigate import setup_navigation

    stamp = None
    if writes:
        from pitools import store

        stamp = store.stamp(file)  # before the read: anything appended after it is noticed
    loaded = load(file)
    leave_for_exit(loaded)
    note_synthetic_ids(out, loaded)
    setup = setup_navigation(loaded, target_ref, leaf_ref, path=file, stamp=stamp, **plan.settings())
    for warning in setup.warnings:
        out.message(f"warning: {warning}")
    if stamp is None:
        return _dry_run(out, setup, plan, format_=format_)
    request = summarizer.request(
        out,
        file=file,
        format_=format_,
        entry="the branch summary",
        show_plan=_show_plan,
        use_config=plan.use_config,
    )
    return _apply(out, setup, request, summarize=summarize, label=label, format_=format_)


def _dry_run(out: Output, setup: Any, view: PlanArgs, *, format_: str) -> int:
    from pitools.core.compaction.prompts import SYSTEM_PROMPT

    plan = setup.plan()
    if format_ == "json":
        data = plan.to_json()
        data["systemPrompt"] = SYSTEM_PROMPT if plan.prompt is not None else None
        data["written"] = False
        out.write_json(data)
        return 0
    from pitools.render.navigate import render_plan, render_prompt

    render_plan(out.line_console(), plan, entries=view.list_entries)
    if view.show_prompt:
        render_prompt(out.console(), SYSTEM_PROMPT, plan.prompt)
    if not plan.noop:
        out.message(
            "note: dry run: nothing written. Pi itself writes nothing when it navigates without a summary or a label "
            "(its leaf moves in memory only); --summarize writes the summary"
        )
    return 0


def _show_plan(console: Any, plan: Any) -> None:
    from pitools.render.navigate import render_plan

    render_plan(console, plan)


def _apply(out: Output, setup: Any, request: Any, *, summarize: bool, label: str | None, format_: str) -> int:
    from pitools.ops.navigate import navigate_apply
    from pitools.ops.summarizing import ConsentRequiredError

    try:
        outcome = navigate_apply(setup, request, summarize=summarize, label=label)
    except ConsentRequiredError as exc:
        raise click.UsageError(exc.message) from None
    if format_ == "json":
        out.write_json(outcome.to_json())
        return 0
    if not outcome.entries:
        if outcome.plan.noop:
            out.message("note: the target is the current leaf: Pi does nothing; nothing was written")
        else:
            out.message(
                "note: nothing to summarize (the current leaf is on the target's path) and no --label: Pi writes "
                "nothing when it navigates so (its leaf moves in memory only); nothing was written"
            )
        return 0
    from pitools.render.navigate import render_applied

    render_applied(out.console(), outcome.to_json())
    return 0
