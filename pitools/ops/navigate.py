"""``navigate --summarize`` / ``--label``: write what Pi's ``navigateTree`` appends, offline.

Pi appends a ``branch_summary`` entry at the place the leaf lands (and a ``label`` entry naming
it when asked); navigating without either only moves Pi's in-memory leaf, so nothing is written.
The plan is core's (:mod:`pitools.core.compaction.branch`); the model comes through the same
layer as ``compact --apply`` (:mod:`pitools.ops.summarizing`), with every precondition checked
before the request, and the lines go through :mod:`pitools.store` (one fsynced append, or a new
file with ``-o``), refused when the file changed since it was read.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pitools import PI_REFERENCE_VERSION, store
from pitools.core.compaction.branch import (
    NO_CONTENT_SUMMARY,
    NavigationPlan,
    branch_summary_text,
    build_branch_summary_entry,
    build_label_entry,
    plan_navigation,
    summary_request,
    token_budget,
)
from pitools.core.compaction.plan import compaction_line
from pitools.core.session.api import LoadedSession
from pitools.errors import PiCrashError, PitoolsError
from pitools.ops import summarizing
from pitools.ops.compaction import after_append, write_copy

ProgressFn = Callable[[str], None]


@dataclass(slots=True)
class NavigateOutcome:
    """What was written (``entries``; empty when nothing was) and the context at the new leaf."""

    plan: NavigationPlan
    entries: list[dict[str, Any]]
    written_to: str | None
    backup: str | None
    model: str | None
    requests: int
    #: The leaf Pi would be at afterwards: the summary entry, else the landing position.
    leaf: Any
    replay: Any = None
    session: Any = None

    def to_json(self) -> dict[str, Any]:
        return {
            "pi": PI_REFERENCE_VERSION,
            "plan": self.plan.to_json(),
            "written": bool(self.entries),
            "entries": self.entries,
            "writtenTo": self.written_to,
            "backup": self.backup,
            "model": self.model,
            "requests": self.requests,
            "leafId": self.leaf,
        }


def navigate_apply(
    file: str,
    *,
    stamp: store.FileStamp,
    loaded: LoadedSession,
    from_id: Any,
    target_id: Any,
    reserve_tokens: Any,
    context_window: int,
    window_from_flag: bool,
    summarize: bool,
    label: str | None,
    session_model: tuple[str, str] | None,
    model_arg: str | None,
    base_url: str | None,
    instructions: str | None,
    output: str | None,
    backup: bool,
    yes: bool,
    timeout: float,
    use_config: bool,
    confirm: summarizing.Confirm | None,
    show_plan: Callable[[NavigationPlan], None] | None = None,
    announce: Callable[[Any], None] | None = None,
    progress: ProgressFn | None = None,
    on_retry: ProgressFn | None = None,
    now: _dt.datetime | None = None,
    entry_ids: tuple[str, str] | None = None,
    new_session: bool = True,
    summarizer: Any = None,
) -> NavigateOutcome:
    """Navigate from ``from_id`` to ``target_id`` as Pi's ``navigateTree(target, {summarize, label})``.

    ``context_window`` is the session model's window (or ``--context-window``); when another
    model is chosen with ``--model`` and no window flag was given, that model's window sets the
    budget, as Pi sizes the branch by the model it calls. ``entry_ids`` fixes the new ids and
    ``new_session=False`` keeps the source header in ``output`` (both for the golden corpus).
    A ``summarizer`` given by a library caller is used as is: no model is resolved or asked about.
    """
    path = file
    index = loaded.index
    if loaded.session.migration.needed:
        raise PitoolsError(
            "this session needs migration to v3 before Pi appends to it; run `pitools migrate --in-place` first",
            path=path,
        )
    budget = token_budget(context_window, reserve_tokens)
    plan = plan_navigation(index, from_id, target_id, budget, instructions=instructions, path=path)
    if plan.noop:
        return NavigateOutcome(plan, [], None, None, None, 0, from_id)
    wants_summary = summarize and bool(plan.entries)
    if not wants_summary and not label:
        return NavigateOutcome(plan, [], None, None, None, 0, plan.new_leaf_id)
    if wants_summary and plan.prompt_error is not None:  # Pi throws building the request: stop before any model
        raise PiCrashError(
            f"Pi 1.6.0 throws while building the branch summary request: {plan.prompt_error}; nothing was written",
            path=path,
        )
    summarizing.check_target(path, output)
    if not stamp.ends_with_newline:
        raise PitoolsError(
            "the file's last line has no newline (torn write?); refusing to add a line after it. "
            "Repair it first (`pitools migrate --in-place` terminates it) and retry",
            path=path,
        )
    model_label: str | None = None
    requests = 0
    summary_entry: dict[str, Any] | None = None
    summary_id, label_id = entry_ids or (None, None)
    if wants_summary and plan.would_call_model:
        if summarizer is None:
            choice = summarizing.choose_summarizer(
                model_arg, session_model=session_model, base_url=base_url, use_config=use_config
            )
            if choice.paid and not window_from_flag and choice.spec.context_window:
                budget = token_budget(choice.spec.context_window, reserve_tokens)
                if budget != plan.token_budget:
                    plan = plan_navigation(index, from_id, target_id, budget, instructions=instructions, path=path)
            summarizing.authorize(
                choice,
                path=path,
                output=output,
                yes=yes,
                what="a branch summary entry",
                confirm=confirm,
                show_plan=(lambda: show_plan(plan)) if show_plan is not None else None,
            )
            if announce is not None:
                announce(choice)
            summarizer = summarizing.build(choice, timeout=timeout, on_retry=on_retry)
            model_label = choice.label
        else:
            spec = getattr(summarizer, "spec", None)
            model_label = spec.label if spec is not None else "builtin (offline, extractive)"
        request = summary_request(index, plan, instructions)
        store.check_unchanged(path, stamp)  # the leaf was chosen from this read: still current?
        if progress:
            progress("asking for the branch summary…")
        result = summarizer.summarize(request)
        requests = 1
        summary, read_files, modified_files = branch_summary_text(result.text, plan.prepared)
        summary_entry = build_branch_summary_entry(
            index,
            plan,
            summary,
            {"readFiles": read_files, "modifiedFiles": modified_files},
            result.usage,
            now=now,
            entry_id_=summary_id,
        )
    elif wants_summary:
        # Nothing on the branch is a message: Pi writes a fixed text and asks no model.
        summary_entry = build_branch_summary_entry(
            index,
            plan,
            NO_CONTENT_SUMMARY,
            {"readFiles": [], "modifiedFiles": []},
            None,
            now=now,
            entry_id_=summary_id,
        )
    new_entries: list[dict[str, Any]] = []
    if summary_entry is not None:
        new_entries.append(summary_entry)
        if label:
            new_entries.append(
                build_label_entry(
                    index,
                    summary_entry["id"],
                    summary_entry["id"],
                    label,
                    taken=[summary_entry["id"]],
                    now=now,
                    entry_id_=label_id,
                )
            )
    else:
        # No summary: Pi moves the leaf (to null for a root target), then labels the target.
        new_entries.append(
            build_label_entry(index, plan.new_leaf_id, target_id, label or "", now=now, entry_id_=label_id)
        )
    lines = [compaction_line(e) for e in new_entries]
    made: Any = None
    if output:
        write_copy(path, stamp, loaded, lines, output, new_session=new_session, now=now)
        written_to = output
    else:
        made = store.append_lines(path, lines, expected=stamp, backup=backup)
        written_to = path
    from pitools.core.context.build import replay_context

    reloaded = after_append(loaded, new_entries, written_to)
    leaf = new_entries[-1]["id"]  # each append moves Pi's leaf: the label, if any, comes last
    replay = replay_context(reloaded.index, leaf)
    return NavigateOutcome(
        plan,
        new_entries,
        written_to,
        None if made is None else str(made),
        model_label,
        requests,
        leaf,
        replay,
        reloaded.session,
    )
