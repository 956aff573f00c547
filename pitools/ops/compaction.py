"""``compact``: plan a compaction as Pi would (the dry run), or apply it offline (``--apply``).

The computation is core's (:mod:`pitools.core.compaction.plan`); this module adds the effects:
reading the file with the settings Pi would use (:func:`plan_compact`), then for ``--apply``
(:func:`apply_compaction`) the model through :mod:`pitools.ops.summarizing`, and the one
fsynced append (or the new file with ``-o``) of :func:`pitools.ops.append.append_entries`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.compaction.prepare import CompactionSettings
from pitools.core.session.load import LoadedSession, load
from pitools.errors import PitoolsError

if TYPE_CHECKING:
    # Only --apply writes: the dry run's imports stay light (no store, no model layer).
    from pitools import store
    from pitools.core.compaction.prepare import CompactionPreparation
    from pitools.core.compaction.settings import DefaultModelSetting
    from pitools.core.compaction.summarizer import Summarizer
    from pitools.ops.append import Appended
    from pitools.ops.summarizing import SummarizeRequest

# -- the plan (``compact --dry-run``, and the first half of ``--apply``) -------------------------


def resolve_session_settings(
    loaded: LoadedSession, session_model: tuple[str, str] | None, flags: dict[str, Any], *, use_config: bool
) -> Any:
    """Pi's settings for this session (its header's cwd, its model) with the command's flags on
    top: what ``compact`` and ``navigate`` both size their plans by."""
    from pitools.core.compaction.settings import resolve_settings

    header = loaded.session.header or {}
    cwd = header.get("cwd")
    return resolve_settings(
        session_cwd=cwd if isinstance(cwd, str) else None, model=session_model, flags=flags, use_config=use_config
    )


@dataclass(slots=True)
class CompactPlanning:
    """A compaction plan and what ``--apply`` needs to carry it out."""

    plan: Any
    loaded: LoadedSession
    leaf: Any
    settings: CompactionSettings
    session_model: tuple[str, str] | None
    warnings: list[str]
    #: The file planned: where ``--apply`` writes (in place) or what it copies (``-o``).
    path: str = ""
    #: Taken before the read when planned ``for_apply``: anything appended since is refused.
    stamp: store.FileStamp | None = None
    #: Pi's ``defaultProvider``/``defaultModel`` for the session (the summarizer's last choice).
    default_model: DefaultModelSetting | None = None


def plan_compact(
    file: str,
    leaf_ref: str | None = None,
    *,
    keep_recent_tokens: int | None = None,
    reserve_tokens: int | None = None,
    context_window: int | None = None,
    use_config: bool = True,
    for_apply: bool = False,
) -> CompactPlanning:
    """Load ``file`` and plan a compaction at ``leaf_ref`` as Pi's ``prepareCompaction`` would,
    with the settings Pi would use (the flags override them).

    By default only the context after the leaf's last compaction stays parsed (the regions need
    only the ids and types of the rest of the branch); ``for_apply`` keeps everything, as
    ``--apply`` appends to what it loaded, and stamps the file before reading it (so anything
    appended between this read, which picks the leaf, and the final append is refused). The
    plan is made the same way either way.
    """
    from pitools.core.compaction.plan import plan_compaction
    from pitools.core.context.build import BranchKeys, replay_context
    from pitools.core.session.load import KEEP_ALL, KEEP_CONTEXT

    stamp = None
    if for_apply:
        from pitools import store

        stamp = store.stamp(file)
    loaded: Any = load(file, keep=KEEP_ALL if for_apply else KEEP_CONTEXT)
    leaf = loaded.leaf(leaf_ref)
    replay: Any = replay_context(loaded.index, leaf)
    branch: Any = replay.path
    projection = replay.projection
    keys = BranchKeys(replay.path_ids or [], replay.path_types)
    session_model = projection.model_ref()
    resolved = resolve_session_settings(
        loaded,
        session_model,
        {
            "keep_recent_tokens": keep_recent_tokens,
            "reserve_tokens": reserve_tokens,
            "context_window": context_window,
        },
        use_config=use_config,
    )
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
        estimates=replay.token_estimates if branch else None,
    )
    plan.config = {k: v for k, v in resolved_json.items() if k not in sourced}
    if branch:
        plan.entries_source = branch  # the human view reads the entries it shows back from the file
    warnings = list(getattr(resolved, "warnings", []) or [])
    return CompactPlanning(plan, loaded, leaf, settings, session_model, warnings, file, stamp, resolved.default_model)


def summary_requests_json(plan: Any) -> list[dict[str, str]]:
    """The exact summarizer inputs of ``plan`` (``--show-prompt``), as data."""
    from pitools.core.compaction.prompts import summary_requests

    if plan.preparation is None:
        return []
    return [{"kind": r.kind, "system": r.system, "prompt": r.prompt} for r in summary_requests(plan.preparation)]


# -- --apply: preconditions, model, append, the result as Pi reads it back ----------------------


@dataclass(slots=True)
class CompactOutcome:
    """What ``compact --apply`` wrote, and the context at the new entry afterwards."""

    entry: dict[str, Any]
    #: What was written where, and the written session as Pi loads it.
    written: Appended
    #: The model that wrote the summary (``provider/id``, or the builtin summarizer).
    model: str
    #: The model requests made (two when a split turn's prefix is summarized too).
    requests: int
    #: The compacted leaf was the file's last entry (else Pi's default leaf is elsewhere).
    leaf_was_last: bool
    tokens_before: int
    tokens_after: int
    replay: Any

    @property
    def session(self) -> Any:
        return self.written.session.session

    def to_json(self) -> dict[str, Any]:
        return {
            "pi": PI_REFERENCE_VERSION,
            "entry": self.entry,
            "writtenTo": self.written.written_to,
            "backup": self.written.backup,
            "model": self.model,
            "requests": self.requests,
            "tokensBefore": self.tokens_before,
            "tokensAfter": self.tokens_after,
            "leafWasLast": self.leaf_was_last,
        }


def apply_compaction(planning: CompactPlanning, request: SummarizeRequest) -> CompactOutcome:
    """``compact --apply``: every precondition (:mod:`pitools.ops.summarizing`) before the first
    request, the summary, one compaction entry appended (or ``request.output`` written), then
    the written session replayed at the new entry.

    ``planning`` comes from :func:`plan_compact` with ``for_apply``: its stamp was taken before
    it read the file, so nothing is written when the file changed since (checked before the
    model is paid for and again right before the append), when the plan is empty or when the
    model fails. The session read for the plan is the one appended to: the file is never parsed
    a second time (two parsed copies of a 1 GB session are about 4.6 GB).
    """
    from pitools.ops import summarizing
    from pitools.ops.append import append_entries

    stamp = _applicable(planning)
    model, summarizer = summarizing.prepare(
        planning.path,
        request,
        session_model=planning.session_model,
        default_model=planning.default_model,
        what="a compaction entry",
        plan=planning.plan,
    )
    prep = _still_compactable(planning, stamp)
    entry, requests = _compaction_entry(planning, prep, request, summarizer)
    loaded = planning.loaded
    leaf_was_last = bool(loaded.session.entries) and loaded.session.entries[-1] is loaded.index.get(planning.leaf)
    done = append_entries(
        planning.path,
        stamp,
        loaded,
        [entry],
        output=request.output,
        backup=request.backup,
        new_session=request.new_session,
        now=request.now,
    )
    return _outcome(planning, done, entry, model, requests, leaf_was_last)


def _applicable(planning: CompactPlanning) -> store.FileStamp:
    """The plan's stamp, once the plan says Pi would compact here at all."""
    if planning.stamp is None:
        raise ValueError("apply_compaction: plan with plan_compact(..., for_apply=True)")
    plan = planning.plan
    if plan.preparation is None:
        raise PitoolsError(f"refusing to compact: {plan.reason}", path=planning.path)
    return planning.stamp


def _still_compactable(planning: CompactPlanning, stamp: store.FileStamp) -> CompactionPreparation:
    """Right before the model is paid for: the file is still what was planned from, and the
    branch is something Pi compacts (a v3 session, not already ending in a compaction, no torn
    last line to append after)."""
    from pitools import store
    from pitools.core.compaction.prepare import prepare_compaction
    from pitools.core.js.access import entry_type
    from pitools.ops.append import check_last_line

    path, loaded = planning.path, planning.loaded
    store.check_unchanged(path, stamp)
    if loaded.session.migration.needed:
        raise PitoolsError(
            "this session needs migration to v3 before it can be compacted; run `pitools migrate --in-place` first",
            path=path,
        )
    branch = loaded.index.get_branch(planning.leaf)
    prep = prepare_compaction(branch, planning.settings)
    if prep is None:
        if branch and entry_type(branch[-1]) == "compaction":
            raise PitoolsError("already compacted: the branch ends in a compaction entry", path=path)
        raise PitoolsError("nothing to compact on this branch", path=path)
    if not stamp.ends_with_newline:
        check_last_line(path, stamp)  # a torn last line is refused before the model is paid for
    return prep


def _compaction_entry(
    planning: CompactPlanning, prep: CompactionPreparation, request: SummarizeRequest, summarizer: Summarizer
) -> tuple[dict[str, Any], int]:
    """Ask ``summarizer`` for the history (and split-turn prefix) summary: the entry Pi would
    append, and how many requests it took."""
    from pitools.core.compaction.plan import build_compaction_entry, summary_inputs
    from pitools.core.compaction.prompts import join_summaries
    from pitools.summarize.usage import combine_usage

    asks = summary_inputs(planning.loaded, planning.leaf, prep, request.instructions)
    texts: dict[str, str] = {}
    usage: dict[str, Any] | None = None
    for ask in asks:
        if request.progress:
            request.progress(f"asking for the {'history' if ask.kind == 'history' else 'turn-prefix'} summary…")
        result = summarizer.summarize(ask)
        texts[ask.kind] = result.text
        usage = result.usage if usage is None else combine_usage(usage, result.usage)
    summary = join_summaries(prep, texts.get("history"), texts.get("turnPrefix"))
    entry = build_compaction_entry(
        planning.loaded, planning.leaf, prep, summary, usage, now=request.now, entry_id_=request.entry_id(0)
    )
    return entry, len(asks)


def _outcome(
    planning: CompactPlanning, done: Appended, entry: dict[str, Any], model: str, requests: int, leaf_was_last: bool
) -> CompactOutcome:
    """The written session replayed at the new entry; a failure here still says what was written."""
    from pitools.core.context.build import replay_context
    from pitools.ops.append import reporting_the_write

    with reporting_the_write(done, f"compaction entry {entry['id']}"):
        replay = replay_context(done.session.index, entry["id"])
        tokens_after = replay.estimate.tokens
    tokens_before = planning.plan.preparation.tokens_before
    return CompactOutcome(entry, done, model, requests, leaf_was_last, tokens_before, tokens_after, replay)
