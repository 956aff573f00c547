"""``navigate --summarize`` / ``--label``: write what Pi's ``navigateTree`` appends, offline.

Pi appends a ``branch_summary`` entry at the place the leaf lands (and a ``label`` entry naming
it when asked); navigating without either only moves Pi's in-memory leaf, so nothing is written.
The plan is core's (:mod:`pitools.core.compaction.branch`); the model comes through the same
layer as ``compact --apply`` (:mod:`pitools.ops.summarizing`), with every precondition checked
before the request, and the lines go through :func:`pitools.ops.append.append_entries` (one
fsynced append, or a new file with ``-o``), refused when the file changed since it was read.
"""

from __future__ import annotations

import datetime as _dt
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
from pitools.core.session.load import LoadedSession
from pitools.errors import PiCrashError, PitoolsError
from pitools.ops import summarizing
from pitools.ops.append import append_entries, check_last_line, reporting_the_write


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


@dataclass(slots=True)
class NavigateSetup:
    """FROM and TARGET resolved in a loaded session, and the branch summary budget Pi would use."""

    loaded: LoadedSession
    from_id: Any
    target_id: Any
    #: The session model's window, or ``--context-window``.
    window: int
    #: ``branchSummary.reserveTokens``.
    reserve: Any
    #: Where ``window`` and ``reserve`` came from (shown with the plan).
    sources: dict[str, Any]
    session_model: tuple[str, str] | None
    warnings: list[str]

    def plan(self) -> NavigationPlan:
        """The dry run: what Pi's ``navigateTree`` would do, writing nothing."""
        plan = plan_navigation(
            self.loaded.index,
            self.from_id,
            self.target_id,
            token_budget(self.window, self.reserve),
            path=self.loaded.path,
        )
        plan.budget_sources = self.sources
        return plan


def setup_navigation(
    loaded: LoadedSession,
    target_ref: str,
    leaf_ref: str | None = None,
    *,
    reserve_tokens: int | None = None,
    context_window: int | None = None,
    use_config: bool = True,
) -> NavigateSetup:
    """Resolve FROM (``leaf_ref``, as ``--leaf``) and TARGET (``--to``) and the settings Pi would
    size the branch summary by (the session's cwd and model; the flags override them)."""
    from pitools.core.context.build import build_projection
    from pitools.ops.compaction import resolve_session_settings

    from_id = loaded.leaf(leaf_ref)
    target_id = _resolve_target(loaded, target_ref)
    projection = build_projection(loaded.index.session_path(from_id)) if from_id is not None else None
    session_model = projection.model_ref() if projection is not None else None
    resolved = resolve_session_settings(
        loaded,
        session_model,
        {"context_window": context_window, "branch_reserve_tokens": reserve_tokens},
        use_config=use_config,
    )
    sources = {
        "contextWindow": resolved.context_window.to_json(),
        "reserveTokens": resolved.branch_reserve_tokens.to_json(),
    }
    return NavigateSetup(
        loaded,
        from_id,
        target_id,
        int(resolved.context_window.value),
        resolved.branch_reserve_tokens.value,
        sources,
        session_model,
        list(resolved.warnings),
    )


def _resolve_target(loaded: LoadedSession, ref: str) -> Any:
    """TARGET exactly as --leaf takes a reference; the error names --to."""
    from pitools.errors import LeafError

    try:
        return loaded.leaf(ref)
    except LeafError as exc:
        raise LeafError(exc.message.replace("--leaf", "--to", 1), path=exc.path, line=exc.line) from None


def navigate_apply(
    file: str,
    request: summarizing.SummarizeRequest,
    setup: NavigateSetup,
    *,
    stamp: store.FileStamp,
    window_from_flag: bool,
    summarize: bool,
    label: str | None,
    now: _dt.datetime | None = None,
    entry_ids: tuple[str, str] | None = None,
    new_session: bool = True,
    summarizer: Any = None,
) -> NavigateOutcome:
    """Navigate from ``setup.from_id`` to ``setup.target_id`` as Pi's ``navigateTree(target, {summarize, label})``.

    ``setup.window`` is the session model's window (or ``--context-window``); when another
    model is chosen with ``--model`` and no window flag was given, that model's window sets the
    budget, as Pi sizes the branch by the model it calls. ``entry_ids`` fixes the new ids and
    ``new_session=False`` keeps the source header in ``output`` (both for the golden corpus).
    A ``summarizer`` given by a library caller is used as is: no model is resolved or asked about.
    ``request`` holds the model, output and dialog options (:class:`~pitools.ops.summarizing.SummarizeRequest`).
    """
    path = file
    instructions, output = request.instructions, request.output
    loaded, from_id, target_id = setup.loaded, setup.from_id, setup.target_id
    reserve_tokens, context_window, session_model = setup.reserve, setup.window, setup.session_model
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
        check_last_line(path, stamp)  # a torn last line is refused before any model is asked
    model_label: str | None = None
    requests = 0
    summary_entry: dict[str, Any] | None = None
    summary_id, label_id = entry_ids or (None, None)
    if wants_summary and plan.would_call_model:
        if summarizer is None:
            choice = summarizing.choose(request, session_model=session_model)
            if choice.paid and not window_from_flag and choice.spec.context_window:
                budget = token_budget(choice.spec.context_window, reserve_tokens)
                if budget != plan.token_budget:
                    plan = plan_navigation(index, from_id, target_id, budget, instructions=instructions, path=path)
            summarizing.authorize_request(choice, request, path=path, what="a branch summary entry", plan=plan)
            summarizer = summarizing.build_for(choice, request)
            model_label = choice.label
        else:
            spec = getattr(summarizer, "spec", None)
            model_label = spec.label if spec is not None else "builtin (offline, extractive)"
        asked = summary_request(index, plan, instructions)
        store.check_unchanged(path, stamp)  # the leaf was chosen from this read: still current?
        if request.progress:
            request.progress("asking for the branch summary…")
        result = summarizer.summarize(asked)
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
    done = append_entries(
        path, stamp, loaded, new_entries, output=output, backup=request.backup, new_session=new_session, now=now
    )
    from pitools.core.context.build import replay_context

    reloaded = done.session
    leaf = new_entries[-1]["id"]  # each append moves Pi's leaf: the label, if any, comes last
    what = " and ".join(f"{e['type']} entry {e['id']}" for e in new_entries)
    with reporting_the_write(done, what):
        replay = replay_context(reloaded.index, leaf)
    return NavigateOutcome(
        plan,
        new_entries,
        done.written_to,
        done.backup,
        model_label,
        requests,
        leaf,
        replay,
        reloaded.session,
    )
