"""``pitools compact``: plan a compaction like Pi (--dry-run) or apply one offline (--apply)."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import click

from pitools.cli.options import format_option, leaf_option, session_argument, summarizer_options
from pitools.cli.output import get_output


@click.command("compact")
@session_argument
@click.option("--dry-run", "dry_run", is_flag=True, help="Show the plan; never writes, never calls a model.")
@click.option("--apply", "apply_", is_flag=True, help="Summarize with a model and append a compaction entry.")
@leaf_option
@click.option("--keep-recent-tokens", type=click.IntRange(min=0), default=None, help="Override keepRecentTokens.")
@click.option("--reserve-tokens", type=click.IntRange(min=0), default=None, help="Override reserveTokens.")
@click.option("--context-window", type=click.IntRange(min=1), default=None, help="Model context window in tokens.")
@click.option(
    "--no-config", is_flag=True, help="Read none of Pi's config files (settings, models, auth); keys from env only."
)
@click.option("--show-prompt", is_flag=True, help="Dry run: print the exact summarizer input.")
@click.option(
    "--entries",
    "list_entries",
    is_flag=True,
    help="Dry run: list every entry of every region (default: the first and last few of each).",
)
@summarizer_options("Apply")
@format_option("human", "json")
def command(
    file: str,
    dry_run: bool,
    apply_: bool,
    leaf_ref: str | None,
    keep_recent_tokens: int | None,
    reserve_tokens: int | None,
    context_window: int | None,
    no_config: bool,
    show_prompt: bool,
    list_entries: bool,
    model_arg: str | None,
    base_url: str | None,
    instructions: str | None,
    output: str | None,
    no_backup: bool,
    yes: bool,
    timeout: float,
    format_: str,
) -> int:
    """Plan or apply a compaction exactly as Pi 1.6.0's prepareCompaction/compact would.

    --dry-run leads with the plan: whether Pi would compact now, the regions (already
    summarized, previous compaction, to summarize, split-turn prefix, kept) with entry counts
    and tokens, the cut and why, the previous summary, the file lists and what Pi sends
    afterwards; then each region's first and last entries (--entries lists all of them).
    --apply asks a model (or the offline builtin summarizer) and appends a real compaction
    entry that Pi loads.

    \b
    Examples:
      pitools compact session.jsonl --dry-run --keep-recent-tokens 2000
      pitools compact session.jsonl --dry-run --show-prompt
      pitools compact session.jsonl --apply --model builtin
      pitools compact session.jsonl --apply --model anthropic/claude-sonnet-4-5 --yes
    """
    if dry_run == apply_:
        raise click.UsageError("choose one of --dry-run (plan only) or --apply (write a compaction)")
    mode = "dry-run" if dry_run else "apply"
    apply_only = {"--model": model_arg, "--base-url": base_url, "--instructions": instructions, "-o": output}
    if mode == "dry-run":
        used = (
            [k for k, v in apply_only.items() if v]
            + (["--no-backup"] if no_backup else [])
            + (["--yes"] if yes else [])
        )
        if used:
            raise click.UsageError(f"{', '.join(used)} only apply to --apply")
    elif show_prompt or list_entries:
        raise click.UsageError(f"{'--show-prompt' if show_prompt else '--entries'} only applies to --dry-run")
    if output and no_backup:
        raise click.UsageError("--no-backup has no effect with -o (the original is untouched)")
    from pitools.cli.options import from_stdin

    if mode == "apply" and not output and from_stdin():
        raise click.UsageError("a session read from stdin cannot be compacted in place: add -o OUT")

    from pitools.core.compaction.plan import plan_compaction
    from pitools.core.compaction.settings import resolve_settings
    from pitools.core.context.build import BranchKeys, replay_context
    from pitools.core.session.api import KEEP_ALL, KEEP_CONTEXT, load

    # --apply: the stamp is taken before the first read, so anything appended between this load
    # (which picks the leaf) and the final append is noticed and refused.
    stamp = None
    if mode == "apply":
        from pitools import store

        stamp = store.stamp(file)
    # --dry-run keeps only the context after the leaf's last compaction parsed (the regions
    # need only the ids and types of the rest of the branch); --apply keeps everything, as it
    # appends to what it loaded. The plan is made the same way from either.
    loaded: Any = load(file, keep=KEEP_CONTEXT if mode == "dry-run" else KEEP_ALL)
    leaf = loaded.leaf(leaf_ref)
    replay: Any = replay_context(loaded.index, leaf)
    branch: Any = replay.path
    projection = replay.projection
    keys = BranchKeys(replay.path_ids or [], replay.path_types)
    model = projection.model
    session_model = None
    if isinstance(model, dict) and isinstance(model.get("provider"), str) and isinstance(model.get("modelId"), str):
        session_model = (model["provider"], model["modelId"])
    header = loaded.session.header or {}
    resolved = resolve_settings(
        session_cwd=header.get("cwd") if isinstance(header.get("cwd"), str) else None,
        model=session_model,
        flags={
            "keep_recent_tokens": keep_recent_tokens,
            "reserve_tokens": reserve_tokens,
            "context_window": context_window,
        },
        use_config=not no_config,
    )
    for warning in getattr(resolved, "warnings", []) or []:
        get_output().message(f"warning: {warning}")
    settings = resolved.compaction_settings()
    resolved_json = resolved.to_json()
    sourced = {k: v for k, v in resolved_json.items() if isinstance(v, dict) and "source" in v}
    plan = plan_compaction(
        loaded,
        leaf,
        settings,
        context_window=int(resolved.context_window.value),
        settings_json=sourced,
        branch=branch,
        projection=projection if branch else None,
        keys=keys if branch else None,
        estimates=replay.token_estimates if replay is not None and branch else None,
    )
    plan.config = {k: v for k, v in resolved_json.items() if k not in sourced}
    if keys is not None and branch:
        plan.entries_source = branch  # the human view reads the entries it shows back from the file
    if mode == "dry-run" and format_ == "json":  # no rich console needed: it takes a while to import
        from pitools.core.js.json.parse import gc_paused

        # The plan holds what it reports; the rest of the session (other branches, the index)
        # is let go, so the memory the writing takes (orjson keeps a UTF-8 copy inside every
        # non-ASCII string it writes) can reuse it.
        del loaded, branch, projection, replay
        # Written in pieces: on a never-compacted session the document is larger than the file
        # (every message, plus the transcript), and building it whole tripled the peak memory.
        with gc_paused():  # only bytes are made while writing; see gc_paused
            extra = {"summaryRequests": _requests_json(plan)} if show_prompt else None
            get_output().write_chunks(itertools.chain(plan.json_chunks(extra), (b"\n",)))
        return 0
    output_ = get_output()
    if mode == "dry-run":
        from pitools.render.compact import render_plan, render_prompts

        render_plan(output_.line_console(), plan, entries=list_entries)
        if show_prompt:
            render_prompts(output_.console(), _requests_json(plan))
        return 0
    _apply(
        file,
        stamp,
        leaf,
        plan,
        settings,
        session_model,
        model_arg=model_arg,
        base_url=base_url,
        instructions=instructions,
        output=output,
        no_backup=no_backup,
        yes=yes,
        timeout=timeout,
        format_=format_,
        no_config=no_config,
        loaded=loaded,
    )
    return 0


def _requests_json(plan: Any) -> list[dict[str, str]]:
    from pitools.core.compaction.prompts import summary_requests

    if plan.preparation is None:
        return []
    return [{"kind": r.kind, "system": r.system, "prompt": r.prompt} for r in summary_requests(plan.preparation)]


def confirm_at_terminal() -> Any:
    """The question callback for :mod:`pitools.ops.summarizing`: a y/N prompt on stderr when
    both stdin and stderr are terminals, else None (nobody can answer)."""
    if not (sys.stdin.isatty() and get_output().stderr_isatty):
        return None

    def ask(question: str) -> bool:
        return bool(click.confirm(question, default=False, err=True))

    return ask


def _apply(
    file: str,
    stamp: Any,
    leaf: Any,
    plan: Any,
    settings: Any,
    session_model: Any,
    *,
    model_arg: str | None,
    base_url: str | None,
    instructions: str | None,
    output: str | None,
    no_backup: bool,
    yes: bool,
    timeout: float,
    format_: str,
    no_config: bool,
    loaded: Any,
) -> None:
    from pitools.ops.compaction import compact_apply
    from pitools.ops.summarizing import ConsentRequiredError

    output_ = get_output()
    out, err = output_.console(), output_.console(err=True)

    def show_plan() -> None:
        if format_ != "json":
            from pitools.render.compact import render_plan

            render_plan(err, plan)

    def announce(choice: Any) -> None:
        if format_ != "json":
            where = f"a new file {output}" if output else f"{file} (in place)"
            output_.message(f"summarizing with {choice.label}; the compaction goes into {where}")

    try:
        outcome = compact_apply(
            file,
            stamp=stamp,
            loaded=loaded,
            leaf=leaf,
            plan=plan,
            settings=settings,
            session_model=session_model,
            model_arg=model_arg,
            base_url=base_url,
            instructions=instructions,
            output=output,
            backup=not no_backup,
            yes=yes,
            timeout=timeout,
            use_config=not no_config,
            confirm=confirm_at_terminal(),
            show_plan=show_plan,
            announce=announce,
            progress=(lambda msg: err.print(f"pitools: {msg}")) if format_ != "json" else None,
            on_retry=lambda msg: err.print(f"pitools: retry: {msg}"),
        )
    except ConsentRequiredError as exc:
        raise click.UsageError(exc.message) from None
    if format_ == "json":
        output_.write_json(outcome.data)
        return
    from pitools.render.compact import render_applied
    from pitools.render.context import render_context

    render_applied(out, outcome.data)
    render_context(out, outcome.replay, outcome.session)
