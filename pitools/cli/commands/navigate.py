"""``pitools navigate``: what Pi's /tree does when leaving a branch (dry run), or write it (--summarize)."""

from __future__ import annotations

from typing import Any

import click

from pitools.cli.options import format_option, leaf_option, session_argument, summarizer_options
from pitools.cli.output import get_output


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
@click.option(
    "--reserve-tokens", type=click.IntRange(min=0), default=None, help="Override branchSummary.reserveTokens."
)
@click.option("--context-window", type=click.IntRange(min=1), default=None, help="Model context window in tokens.")
@click.option(
    "--no-config", is_flag=True, help="Read none of Pi's config files (settings, models, auth); keys from env only."
)
@click.option("--show-prompt", is_flag=True, help="Dry run: print the exact summary request whole.")
@click.option("--entries", "list_entries", is_flag=True, help="Dry run: list every entry of the branch being left.")
@summarizer_options("Summarize")
@format_option("human", "json")
def command(
    file: str,
    target_ref: str,
    leaf_ref: str | None,
    dry_run: bool,
    summarize: bool,
    label: str | None,
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
    mode = "apply" if writes else "dry-run"
    apply_only = {"--model": model_arg, "--base-url": base_url, "--instructions": instructions, "-o": output}
    if mode == "dry-run":
        used = [k for k, v in apply_only.items() if v] + (["--no-backup"] if no_backup else [])
        used += ["--yes"] if yes else []
        if used:
            raise click.UsageError(f"{', '.join(used)} only apply with --summarize or --label")
    else:
        if show_prompt or list_entries:
            raise click.UsageError(f"{'--show-prompt' if show_prompt else '--entries'} only applies to the dry run")
        if not summarize and (model_arg or base_url or instructions):
            raise click.UsageError("--model, --base-url and --instructions only apply with --summarize")
        if output and no_backup:
            raise click.UsageError("--no-backup has no effect with -o (the original is untouched)")
        from pitools.cli.options import from_stdin

        if not output and from_stdin():
            raise click.UsageError("a session read from stdin cannot be changed in place: add -o OUT")

    from pitools.core.compaction.settings import resolve_settings
    from pitools.core.context.build import build_projection
    from pitools.core.session.api import load
    from pitools.ops.summarizing import session_model_of

    stamp = None
    if mode == "apply":
        from pitools import store

        stamp = store.stamp(file)  # before the read: anything appended after it is noticed
    loaded = load(file)
    from pitools.cli.options import note_synthetic_ids

    note_synthetic_ids(loaded)
    from_id = loaded.leaf(leaf_ref)
    target_id = _resolve_target(loaded, target_ref)
    projection = build_projection(loaded.index.session_path(from_id)) if from_id is not None else None
    session_model = session_model_of(projection.model if projection is not None else None)
    header = loaded.session.header or {}
    resolved = resolve_settings(
        session_cwd=header.get("cwd") if isinstance(header.get("cwd"), str) else None,
        model=session_model,
        flags={"context_window": context_window, "branch_reserve_tokens": reserve_tokens},
        use_config=not no_config,
    )
    output_ = get_output()
    for warning in resolved.warnings:
        output_.message(f"warning: {warning}")
    window = int(resolved.context_window.value)
    reserve = resolved.branch_reserve_tokens.value
    sources = {
        "contextWindow": resolved.context_window.to_json(),
        "reserveTokens": resolved.branch_reserve_tokens.to_json(),
    }
    if mode == "dry-run":
        return _dry_run(loaded, from_id, target_id, window, reserve, sources, format_, show_prompt, list_entries)
    assert stamp is not None
    return _apply(
        file,
        stamp,
        loaded,
        from_id,
        target_id,
        window=window,
        reserve=reserve,
        sources=sources,
        window_from_flag=context_window is not None,
        summarize=summarize,
        label=label,
        session_model=session_model,
        model_arg=model_arg,
        base_url=base_url,
        instructions=instructions,
        output=output,
        no_backup=no_backup,
        yes=yes,
        timeout=timeout,
        no_config=no_config,
        format_=format_,
    )


def _resolve_target(loaded: Any, ref: str) -> Any:
    """TARGET exactly as --leaf takes a reference; the error names --to."""
    from pitools.errors import LeafError

    try:
        return loaded.leaf(ref)
    except LeafError as exc:
        raise LeafError(exc.message.replace("--leaf", "--to", 1), path=exc.path, line=exc.line) from None


def _dry_run(
    loaded: Any,
    from_id: Any,
    target_id: Any,
    window: int,
    reserve: Any,
    sources: dict[str, Any],
    format_: str,
    show_prompt: bool,
    list_entries: bool,
) -> int:
    from pitools.core.compaction.branch import plan_navigation, token_budget
    from pitools.core.compaction.prompts import SYSTEM_PROMPT

    plan = plan_navigation(loaded.index, from_id, target_id, token_budget(window, reserve), path=loaded.path)
    plan.budget_sources = sources
    output_ = get_output()
    if format_ == "json":
        data = plan.to_json()
        data["systemPrompt"] = SYSTEM_PROMPT if plan.prompt is not None else None
        data["written"] = False
        output_.write_json(data)
        return 0
    from pitools.render.navigate import render_plan, render_prompt

    render_plan(output_.line_console(), plan, entries=list_entries)
    if show_prompt:
        render_prompt(output_.console(), SYSTEM_PROMPT, plan.prompt)
    if not plan.noop:
        output_.message(
            "note: dry run: nothing written. Pi itself writes nothing when it navigates without a summary or a label "
            "(its leaf moves in memory only); --summarize writes the summary"
        )
    return 0


def _apply(
    file: str,
    stamp: Any,
    loaded: Any,
    from_id: Any,
    target_id: Any,
    *,
    window: int,
    reserve: Any,
    sources: dict[str, Any],
    window_from_flag: bool,
    summarize: bool,
    label: str | None,
    session_model: Any,
    model_arg: str | None,
    base_url: str | None,
    instructions: str | None,
    output: str | None,
    no_backup: bool,
    yes: bool,
    timeout: float,
    no_config: bool,
    format_: str,
) -> int:
    from pitools.cli.commands.compact import confirm_at_terminal
    from pitools.ops.navigate import navigate_apply
    from pitools.ops.summarizing import ConsentRequiredError

    output_ = get_output()
    out, err = output_.console(), output_.console(err=True)

    def show_plan(plan: Any) -> None:
        if format_ != "json":
            from pitools.render.navigate import render_plan

            plan.budget_sources = sources
            render_plan(err, plan)

    def announce(choice: Any) -> None:
        if format_ != "json":
            where = f"a new file {output}" if output else f"{file} (in place)"
            output_.message(f"summarizing with {choice.label}; the branch summary goes into {where}")

    try:
        outcome = navigate_apply(
            file,
            stamp=stamp,
            loaded=loaded,
            from_id=from_id,
            target_id=target_id,
            reserve_tokens=reserve,
            context_window=window,
            window_from_flag=window_from_flag,
            summarize=summarize,
            label=label,
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
    outcome.plan.budget_sources = sources
    if format_ == "json":
        output_.write_json(outcome.to_json())
        return 0
    if not outcome.entries:
        if outcome.plan.noop:
            output_.message("note: the target is the current leaf: Pi does nothing; nothing was written")
        else:
            output_.message(
                "note: nothing to summarize (the current leaf is on the target's path) and no --label: Pi writes "
                "nothing when it navigates so (its leaf moves in memory only); nothing was written"
            )
        return 0
    from pitools.render.navigate import render_applied

    render_applied(out, outcome.to_json())
    return 0
