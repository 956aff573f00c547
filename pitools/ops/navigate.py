"""``navigate --summarize`` / ``--label``: write what Pi's ``navigateTree`` appends, offline.

Pi appends a ``branch_summary`` entry at the place the leaf lands (and a ``label`` entry naming
it when asked); navigating without either only moves Pi's in-memory leaf, so nothing is written.
The plan is core's (:mod:`pitools.core.compaction.branch`); the model comes through the same
layer as ``compact --apply`` (:mod:`pitools.ops.summarizing`), with every precondition checked
before the request, and the lines go through :func:`pitools.ops.append.append_entries` (one
fsynced append, or a new file with ``-o``), refused when the file changed since it was read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
from pitools.ops.append import Appended, append_entries, check_last_line, reporting_the_write

if TYPE_CHECKING:
    from pitools.core.compaction.settings import DefaultModelSetting
    from pitools.core.compaction.summarizer import Summarizer


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
    #: The file read: where a write goes (in place) or what it copies (``-o``); default ``loaded.path``.
    path: str | None = None
    #: Taken before the read, for a write: anything appended since is refused.
    stamp: store.FileStamp | None = None
    #: ``window`` is ``--context-window``'s: a model chosen with ``--model`` does not change it.
    window_from_flag: bool = False
    #: Pi's ``defaultProvider``/``defaultModel`` for the session (the summarizer's last choice).
    default_model: DefaultModelSetting | None = None

    @property
    def file(self) -> str:
        return self.path if self.path is not None else self.loaded.path

    def plan(self, *, window: int | None = None, instructions: str | None = None) -> NavigationPlan:
        """What Pi's ``navigateTree`` would do (the dry run), with ``window`` when another model's
        window sizes the branch summary."""
        budget = token_budget(self.window if window is None else window, self.reserve)
        plan = plan_navigation(
            self.loaded.index, self.from_id, self.target_id, budget, instructions=instructions, path=self.file
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
    path: str | None = None,
    stamp: store.FileStamp | None = None,
) -> NavigateSetup:
    """Resolve FROM (``leaf_ref``, as ``--leaf``) and TARGET (``--to``) and the settings Pi would
    size the branch summary by (the session's cwd and model; the flags override them). A write
    passes the ``stamp`` taken before ``loaded`` was read from ``path``."""
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
        path,
        stamp,
        context_window is not None,
        resolved.default_model,
    )


def _resolve_target(loaded: LoadedSession, ref: str) -> Any:
    """TARGET exactly as --leaf takes a reference; the error names --to."""
    from pitools.errors import LeafError

    try:
        return loaded.leaf(ref)
    except LeafError as exc:
        raise LeafError(exc.message.replace("--leaf", "--to", 1), path=exc.path, line=exc.line) from None


def navigate_apply(
    setup: NavigateSetup, request: summarizing.SummarizeRequest, *, summarize: bool, label: str | None
) -> NavigateOutcome:
    """Navigate from ``setup.from_id`` to ``setup.target_id`` as Pi's ``navigateTree(target, {summarize, label})``.

    ``setup.window`` is the session model's window (or ``--context-window``); when another
    model is chosen with ``--model`` and no window flag was given, that model's window sets the
    budget, as Pi sizes the branch by the model it calls. ``request`` holds the model, the
    dialog and the write options (:class:`~pitools.ops.summarizing.SummarizeRequest`); its
    ``entry_ids`` are the summary's and the label's.
    """
    stamp = _writable(setup)
    plan = setup.plan(instructions=request.instructions)
    if plan.noop:
        return NavigateOutcome(plan, [], None, None, None, 0, setup.from_id)
    wants_summary = summarize and bool(plan.entries)
    if not wants_summary and not label:
        return NavigateOutcome(plan, [], None, None, None, 0, plan.new_leaf_id)
    if wants_summary and plan.prompt_error is not None:  # Pi throws building the request: stop before any model
        raise PiCrashError(
            f"Pi 1.6.0 throws while building the branch summary request: {plan.prompt_error}; nothing was written",
            path=setup.file,
        )
    summarizing.check_target(setup.file, request.output)
    if not stamp.ends_with_newline:
        check_last_line(setup.file, stamp)  # a torn last line is refused before any model is asked
    summary: _Summary | None = None
    if wants_summary:
        summary = _branch_summary(setup, plan, request, stamp)
    entries = _new_entries(setup, plan, summary, request, label)
    done = append_entries(
        setup.file,
        stamp,
        setup.loaded,
        entries,
        output=request.output,
        backup=request.backup,
        new_session=request.new_session,
        now=request.now,
    )
    return _outcome(summary.plan if summary else plan, entries, done, summary)


def _writable(setup: NavigateSetup) -> store.FileStamp:
    """The stamp a write is checked against, once the session is one Pi appends to."""
    if setup.stamp is None:
        raise ValueError("navigate_apply: set up with setup_navigation(..., stamp=store.stamp(path))")
    if setup.loaded.session.migration.needed:
        raise PitoolsError(
            "this session needs migration to v3 before Pi appends to it; run `pitools migrate --in-place` first",
            path=setup.file,
        )
    return setup.stamp


@dataclass(slots=True)
class _Summary:
    """The branch summary entry, the plan it was made from and who wrote it."""

    entry: dict[str, Any]
    plan: NavigationPlan
    model: str | None
    requests: int


def _branch_summary(
    setup: NavigateSetup, plan: NavigationPlan, request: summarizing.SummarizeRequest, stamp: store.FileStamp
) -> _Summary:
    """The ``branch_summary`` entry Pi appends: the model's summary of the branch left, or
    Pi's fixed text, without asking any model, when nothing on that branch is a message."""
    index = setup.loaded.index
    if not plan.would_call_model:
        entry = build_branch_summary_entry(
            index,
            plan,
            NO_CONTENT_SUMMARY,
            {"readFiles": [], "modifiedFiles": []},
            None,
            now=request.now,
            entry_id_=request.entry_id(0),
        )
        return _Summary(entry, plan, None, 0)
    model, summarizer, plan = _summarizer(setup, plan, request)
    asked = summary_request(index, plan, request.instructions)
    store.check_unchanged(setup.file, stamp)  # the leaf was chosen from this read: still current?
    if request.progress:
        request.progress("asking for the branch summary…")
    result = summarizer.summarize(asked)
    text, read_files, modified_files = branch_summary_text(result.text, plan.prepared)
    files = {"readFiles": read_files, "modifiedFiles": modified_files}
    entry = build_branch_summary_entry(
        index, plan, text, files, result.usage, now=request.now, entry_id_=request.entry_id(0)
    )
    return _Summary(entry, plan, model, 1)


def _summarizer(
    setup: NavigateSetup, plan: NavigationPlan, request: summarizing.SummarizeRequest
) -> tuple[str, Summarizer, NavigationPlan]:
    """The model (chosen, asked for, built) and the plan sized by its window, as Pi sizes the
    branch by the model it calls (unless ``--context-window`` was given)."""
    if request.summarizer is not None:
        return summarizing.given_label(request.summarizer), request.summarizer, plan
    choice = summarizing.choose(request, session_model=setup.session_model, default_model=setup.default_model)
    window = choice.spec.context_window
    resize = choice.paid and not setup.window_from_flag and bool(window)
    if resize and token_budget(window, setup.reserve) != plan.token_budget:
        plan = setup.plan(window=window, instructions=request.instructions)
    summarizing.authorize(choice, path=setup.file, what="a branch summary entry", plan=plan)
    return choice.label, summarizing.build(choice), plan


def _new_entries(
    setup: NavigateSetup,
    plan: NavigationPlan,
    summary: _Summary | None,
    request: summarizing.SummarizeRequest,
    label: str | None,
) -> list[dict[str, Any]]:
    """What Pi appends: the summary and a label on it, or (no summary) a label on the target."""
    index, now, label_id = setup.loaded.index, request.now, request.entry_id(1)
    if summary is None:
        # No summary: Pi moves the leaf (to null for a root target), then labels the target.
        return [build_label_entry(index, plan.new_leaf_id, setup.target_id, label or "", now=now, entry_id_=label_id)]
    entry_id = summary.entry["id"]
    if not label:
        return [summary.entry]
    tag = build_label_entry(index, entry_id, entry_id, label, taken=[entry_id], now=now, entry_id_=label_id)
    return [summary.entry, tag]


def _outcome(
    plan: NavigationPlan, entries: list[dict[str, Any]], done: Appended, summary: _Summary | None
) -> NavigateOutcome:
    """The written session replayed at Pi's new leaf; a failure here still says what was written."""
    from pitools.core.context.build import replay_context

    leaf = entries[-1]["id"]  # each append moves Pi's leaf: the label, if any, comes last
    what = " and ".join(f"{e['type']} entry {e['id']}" for e in entries)
    with reporting_the_write(done, what):
        replay = replay_context(done.session.index, leaf)
    model, requests = (summary.model, summary.requests) if summary is not None else (None, 0)
    return NavigateOutcome(
        plan, entries, done.written_to, done.backup, model, requests, leaf, replay, done.session.session
    )
