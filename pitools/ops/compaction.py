"""``compact --apply``: plan, summarize, then append one compaction entry through the store.

The computation is core's (:mod:`pitools.core.compaction.plan`); this module adds the effects:
hashing the file, asking the :class:`~pitools.core.compaction.summarizer.Summarizer`, and the
one fsynced append (or the new file with ``-o``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.compaction.plan import build_compaction_entry, summary_inputs
from pitools.core.compaction.prepare import CompactionSettings, prepare_compaction
from pitools.core.session.load import LoadedSession, load
from pitools.core.session.loaded import entry_type
from pitools.errors import PitoolsError

if TYPE_CHECKING:
    # Only --apply writes: the dry run's imports stay light (no store, no model layer).
    from pitools import store
    from pitools.core.compaction.summarizer import Summarizer
    from pitools.ops.append import Appended
    from pitools.ops.summarizing import SummarizeRequest

ProgressFn = Callable[[str], None]


@dataclass(slots=True)
class ApplyResult:
    entry: dict[str, Any]
    written_to: str
    backup: str | None
    requests: int
    leaf_was_last: bool
    #: What was written, and the written session as Pi loads it.
    written: Appended


def apply_compaction(
    path: str,
    leaf_ref: str | None,
    settings: CompactionSettings,
    summarizer: Summarizer,
    *,
    instructions: str | None = None,
    output: str | None = None,
    backup: bool = True,
    progress: ProgressFn | None = None,
    now: _dt.datetime | None = None,
    entry_id_: str | None = None,
    expected: store.FileStamp | None = None,
    new_session: bool = True,
    loaded: LoadedSession | None = None,
) -> ApplyResult:
    """Plan, summarize with ``summarizer``, and append one compaction entry (or write ``output``).

    Nothing is written when the plan is empty, the model fails, or the file changed while the
    model was working. ``expected`` is the stamp the caller took before its own first read of
    the file: when given, the file must still match it (the caller's leaf is still current).
    ``output`` is a new session (new id, ``parentSession`` = ``path``) unless ``new_session`` is
    false, which keeps the source's header (the golden corpus builds its compacted cases so).
    ``loaded`` is the session the caller read after taking ``expected`` (required with it): it
    is used instead of reading the file a second time (two parsed copies of a 1 GB session are
    about 4.6 GB), once the file is proven unchanged since ``expected``.
    """
    from pitools import store
    from pitools.core.compaction.prompts import join_summaries
    from pitools.core.compaction.summarizer import SummaryResult
    from pitools.ops.append import append_entries, check_last_line
    from pitools.ops.summarizing import check_target
    from pitools.summarize.usage import combine_usage

    if loaded is not None and expected is None:
        raise ValueError("apply_compaction: `loaded` needs the `expected` stamp taken before it was read")
    check_target(path, output)  # before anything is asked of the model
    before = expected if expected is not None else store.stamp(path)
    if loaded is None:
        loaded = load(path)
    if expected is not None:
        # The caller chose the leaf from its own read: the file must still be what it read, now
        # (before the model is paid for) and again under the lock right before the append.
        store.check_unchanged(path, expected)
    if loaded.session.migration.needed:
        raise PitoolsError(
            "this session needs migration to v3 before it can be compacted; run `pitools migrate --in-place` first",
            path=path,
        )
    leaf = loaded.leaf(leaf_ref)
    branch = loaded.index.get_branch(leaf)
    prep = prepare_compaction(branch, settings)
    if prep is None:
        if branch and entry_type(branch[-1]) == "compaction":
            raise PitoolsError("already compacted: the branch ends in a compaction entry", path=path)
        raise PitoolsError("nothing to compact on this branch", path=path)
    if not before.ends_with_newline:
        check_last_line(path, before)  # a torn last line is refused before the model is paid for
    requests = summary_inputs(loaded, leaf, prep, instructions)
    texts: dict[str, str] = {}
    usage: dict[str, Any] | None = None
    for request in requests:
        if progress:
            progress(f"asking for the {'history' if request.kind == 'history' else 'turn-prefix'} summary…")
        result: SummaryResult = summarizer.summarize(request)
        texts[request.kind] = result.text
        usage = result.usage if usage is None else combine_usage(usage, result.usage)
    summary = join_summaries(prep, texts.get("history"), texts.get("turnPrefix"))
    entry = build_compaction_entry(loaded, leaf, prep, summary, usage, now=now, entry_id_=entry_id_)
    leaf_was_last = bool(loaded.session.entries) and loaded.session.entries[-1] is loaded.index.get(leaf)
    done = append_entries(path, before, loaded, [entry], output=output, backup=backup, new_session=new_session, now=now)
    return ApplyResult(entry, done.written_to, done.backup, len(requests), leaf_was_last, done)


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


def plan_compact(
    file: str,
    leaf_ref: str | None = None,
    *,
    keep_recent_tokens: int | None = None,
    reserve_tokens: int | None = None,
    context_window: int | None = None,
    use_config: bool = True,
    keep_all: bool = False,
) -> CompactPlanning:
    """Load ``file`` and plan a compaction at ``leaf_ref`` as Pi's ``prepareCompaction`` would,
    with the settings Pi would use (the flags override them).

    By default only the context after the leaf's last compaction stays parsed (the regions need
    only the ids and types of the rest of the branch); ``keep_all`` keeps everything, as
    ``--apply`` appends to what it loaded. The plan is made the same way from either.
    """
    from pitools.core.compaction.plan import plan_compaction
    from pitools.core.context.build import BranchKeys, replay_context
    from pitools.core.session.load import KEEP_ALL, KEEP_CONTEXT

    loaded: Any = load(file, keep=KEEP_ALL if keep_all else KEEP_CONTEXT)
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
    return CompactPlanning(plan, loaded, leaf, settings, session_model, list(getattr(resolved, "warnings", []) or []))


def summary_requests_json(plan: Any) -> list[dict[str, str]]:
    """The exact summarizer inputs of ``plan`` (``--show-prompt``), as data."""
    from pitools.core.compaction.prompts import summary_requests

    if plan.preparation is None:
        return []
    return [{"kind": r.kind, "system": r.system, "prompt": r.prompt} for r in summary_requests(plan.preparation)]


# -- the whole use case: preconditions, model, append, the result as Pi reads it back ----------


@dataclass(slots=True)
class CompactOutcome:
    """What ``compact --apply`` did: the written entry and the context at it afterwards."""

    data: dict[str, Any]
    replay: Any
    session: Any


def compact_apply(
    file: str,
    request: SummarizeRequest,
    *,
    stamp: store.FileStamp,
    planning: CompactPlanning,
) -> CompactOutcome:
    """``compact --apply``: every precondition (:mod:`pitools.ops.summarizing`) before the first
    request, then :func:`apply_compaction`, then the written session replayed at the new entry.

    ``stamp`` was taken before ``planning`` read the file (with ``keep_all``), so anything
    appended since is refused."""
    from pitools.core.context.build import replay_context
    from pitools.ops import summarizing

    plan, leaf = planning.plan, planning.leaf
    if plan.preparation is None:
        raise PitoolsError(f"refusing to compact: {plan.reason}", path=file)
    choice, summarizer = summarizing.prepare(
        file, request, session_model=planning.session_model, what="a compaction entry", plan=plan
    )
    result = apply_compaction(
        file,
        None if leaf is None else str(leaf),
        planning.settings,
        summarizer,
        instructions=request.instructions,
        output=request.output,
        backup=request.backup,
        progress=request.progress,
        expected=stamp,
        loaded=planning.loaded,
    )
    reloaded = result.written.session
    from pitools.ops.append import reporting_the_write

    with reporting_the_write(result.written, f"compaction entry {result.entry['id']}"):
        replay = replay_context(reloaded.index, result.entry["id"])
        tokens_after = replay.estimate.tokens
    data = {
        "pi": PI_REFERENCE_VERSION,
        "entry": result.entry,
        "writtenTo": result.written_to,
        "backup": result.backup,
        "model": choice.label,
        "requests": result.requests,
        "tokensBefore": plan.preparation.tokens_before,
        "tokensAfter": tokens_after,
        "leafWasLast": result.leaf_was_last,
    }
    return CompactOutcome(data, replay, reloaded.session)
