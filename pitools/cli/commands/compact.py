"""``pitools compact``: plan a compaction like Pi (--dry-run) or apply one offline (--apply)."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import click

from pitools import PI_REFERENCE_VERSION
from pitools.cli.options import format_option, leaf_option, session_argument
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
@click.option(
    "--model",
    "model_arg",
    metavar="PROVIDER/ID|builtin",
    default=None,
    help="Apply: the summarizer model (default: the session's model, then Pi's default, then builtin).",
)
@click.option("--base-url", default=None, help="Apply: an OpenAI-compatible server (llama.cpp, Ollama, vLLM...).")
@click.option("--instructions", default=None, help="Apply: an extra focus for the summary.")
@click.option("-o", "--output", default=None, metavar="OUT", help="Apply: write a new session file instead.")
@click.option("--no-backup", is_flag=True, help="Apply: do not keep FILE.bak-<time>.")
@click.option("--yes", is_flag=True, help="Apply: do not ask before calling a paid model.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Apply: seconds to wait for each model response.",
)
@format_option("human", "json")
@click.pass_context
def command(
    ctx: click.Context,
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
    out, err = output_.console(), output_.console(err=True)
    _apply(
        ctx,
        file,
        stamp,
        leaf,
        plan,
        settings,
        session_model,
        model_arg,
        base_url,
        instructions,
        output,
        no_backup,
        yes,
        timeout,
        format_,
        out,
        err,
        no_config,
        loaded=loaded,
    )
    return 0


def _after_append(loaded: Any, entry: dict[str, Any], written_to: str) -> Any:
    """The written session as Pi reads it: the entries already loaded plus the compaction line.

    The written file is exactly the bytes that were loaded (proven by their hash while copying or
    by the stamp before appending; -o replaces only the header) followed by the compaction line,
    so reading it again would only cost a second parsed copy (2.3 GB for a 1 GB session).
    """
    import dataclasses

    from pitools.core.compaction.plan import compaction_line
    from pitools.core.js.json.parse import parse_json_line
    from pitools.core.session.api import LoadedSession, load
    from pitools.core.session.tree import SessionIndex

    if loaded is None:
        return load(written_to)
    value = parse_json_line(compaction_line(entry))[0]  # the line as Pi parses it back
    with open(written_to, "rb") as fh:
        header = parse_json_line(fh.readline())[0]
    entries = [*loaded.session.entries, value]
    session = dataclasses.replace(loaded.session, path=written_to, header=header, entries=entries)
    return LoadedSession(session, SessionIndex.build(entries))


def _requests_json(plan: Any) -> list[dict[str, str]]:
    from pitools.core.compaction.prompts import summary_requests

    if plan.preparation is None:
        return []
    return [{"kind": r.kind, "system": r.system, "prompt": r.prompt} for r in summary_requests(plan.preparation)]


def _apply(
    ctx: click.Context,
    file: str,
    stamp: Any,
    leaf: Any,
    plan: Any,
    settings: Any,
    session_model: Any,
    model_arg: str | None,
    base_url: str | None,
    instructions: str | None,
    output: str | None,
    no_backup: bool,
    yes: bool,
    timeout: float,
    format_: str,
    out: Any,
    err: Any,
    no_config: bool = False,
    loaded: Any = None,
) -> None:
    from pitools.errors import PitoolsError
    from pitools.ops.compaction import apply_compaction
    from pitools.summarize import build_summarizer, resolve_model

    if plan.preparation is None:
        raise PitoolsError(f"refusing to compact: {plan.reason}", path=file)
    from pitools.summarize import MissingApiKeyError, builtin_spec

    fallback_reason: str | None = None
    use_config = not no_config
    # First without running any `!command` of the configuration: enough to know which model would
    # be called and whether a key exists. Nothing from the configuration executes before the user
    # has agreed to the paid call (or passed --yes).
    try:
        spec = resolve_model(
            model_arg, session_model=session_model, base_url=base_url, use_config=use_config, run_commands=False
        )
    except MissingApiKeyError as exc:
        if model_arg is not None:
            raise
        # No --model and no credentials for the session's model: the offline summarizer keeps
        # `compact --apply` usable on a fresh machine, but only when asked for (below).
        fallback_reason = exc.message.split(":")[0]
        spec = builtin_spec()
    paid = spec.api != "builtin"
    label = "builtin (offline, extractive)" if not paid else f"{spec.provider}/{spec.model_id}"
    target = output or file
    output_ = get_output()
    if not paid and model_arg != "builtin" and output is None:
        # Rewriting the real session with a summary nobody asked for is not a default.
        why = fallback_reason or "no model is configured"
        if not (sys.stdin.isatty() and output_.stderr_isatty):
            raise PitoolsError(
                f"{why}; refusing to write a builtin (offline, extractive) summary into {file} in place. "
                "Say --model builtin to mean it, configure a key for the model, or write a new file with -o OUT",
                path=None,
            )
        output_.message(f"{why}: the only summarizer available is the builtin (offline, extractive) one")
        if not click.confirm(f"Append a builtin summary to {file} in place?", default=False, err=True):
            raise PitoolsError("cancelled; nothing was written")
    if format_ != "json":
        where = f"a new file {target}" if output else f"{file} (in place)"
        output_.message(f"summarizing with {label}; the compaction goes into {where}")
    if paid and not yes:
        if not sys.stdin.isatty():
            raise click.UsageError(f"calling the paid model {label} needs --yes when not run from a terminal")
        if format_ != "json":
            from pitools.render.compact import render_plan

            render_plan(err, plan)
        if not click.confirm(f"Summarize with {label}?", default=False, err=True):
            raise PitoolsError("cancelled; nothing was written")
    if paid:
        # Confirmed: now `!command` keys and headers may run.
        spec = resolve_model(model_arg, session_model=session_model, base_url=base_url, use_config=use_config)
    summarizer = build_summarizer(spec, on_retry=lambda msg: err.print(f"pitools: retry: {msg}"), timeout=timeout)
    result = apply_compaction(
        file,
        None if leaf is None else str(leaf),
        settings,
        summarizer,
        instructions=instructions,
        output=output,
        backup=not no_backup,
        progress=(lambda msg: err.print(f"pitools: {msg}")) if format_ != "json" else None,
        expected=stamp,
        loaded=loaded,
    )
    from pitools.core.context.build import replay_context

    reloaded = _after_append(loaded, result.entry, result.written_to)
    replay = replay_context(reloaded.index, result.entry["id"])
    after = replay.estimate.tokens
    data = {
        "pi": PI_REFERENCE_VERSION,
        "entry": result.entry,
        "writtenTo": result.written_to,
        "backup": result.backup,
        "model": label,
        "requests": result.requests,
        "tokensBefore": plan.preparation.tokens_before,
        "tokensAfter": after,
        "leafWasLast": result.leaf_was_last,
    }
    if format_ == "json":
        get_output().write_json(data)
        return
    from pitools.render.compact import render_applied
    from pitools.render.context import render_context

    render_applied(out, data)
    render_context(out, replay, reloaded.session)
