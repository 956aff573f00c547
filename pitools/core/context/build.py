"""Pi's context at a leaf: ``buildSessionPath`` → ``buildContextEntries`` → ``buildSessionProjection``.

Everything here mirrors ``session-manager.js`` of Pi 1.6.0 (see the docstrings), plus
``estimateProjectedContextTokens`` from ``compaction.js``. Each Pi function has one
implementation: the walks and :func:`build_context_entries` / :func:`replay_context` are
written on the loader's index interface (:class:`~pitools.core.session.index.EntryIndex`,
the same for every keep policy); the projection and the token estimates take the entries
that interface returns. :func:`context_entries_from_path` runs the same layout on a list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pitools.core.context.messages import entry_to_messages, get_current_system_message
from pitools.core.context.tokens import ContextEstimate, estimate_context_tokens, estimate_tokens
from pitools.core.js import ops as jsops
from pitools.core.js.access import entry_id
from pitools.core.js.json.parse import gc_paused
from pitools.core.js.ops import prop
from pitools.core.js.types import Entry, EntryId, JsValue, Message
from pitools.core.js.value import UNDEFINED
from pitools.core.session.index import MARK_CRASH, MARK_MODEL, MARK_THINKING, mkey
from pitools.errors import PiCrashError

if TYPE_CHECKING:
    from pitools.core.session.index import EntryIndex


@dataclass(slots=True)
class ProjectedEntry:
    """One context entry and the messages it contributes (Pi's ``ProjectedSessionEntry``)."""

    source: Any
    messages: list[Message]
    #: Why an entry contributes nothing: "edited-out", "older-compaction", or None.
    omitted: str | None = None
    #: The context_edit entry applied to it, if any.
    edit: Any = None
    _tokens: Any = None

    def tokens(self) -> Any:
        """Sum of Pi's ``estimateTokens`` over the messages (computed once)."""
        if self._tokens is None:
            total: Any = 0
            for m in self.messages:
                total = jsops.add(total, estimate_tokens(m))
            self._tokens = total
        return self._tokens

    @property
    def source_id(self) -> JsValue:
        return entry_id(self.source)

    @property
    def source_type(self) -> JsValue:
        return self.source.get("type", UNDEFINED) if type(self.source) is dict else UNDEFINED


@dataclass(slots=True)
class Projection:
    """Pi's ``SessionProjection``: projected entries, their messages and the path's settings."""

    entries: list[ProjectedEntry]
    thinking_level: Any
    model: Any
    messages: list[Any] = field(default_factory=list)

    def model_ref(self) -> tuple[str, str] | None:
        """``(provider, modelId)`` of the path's model record, when it names one."""
        model = self.model
        if type(model) is dict and type(model.get("provider")) is str and type(model.get("modelId")) is str:
            return (model["provider"], model["modelId"])
        return None


def latest_compaction_on(path: Sequence[Entry]) -> Entry | None:
    """The last compaction entry of ``path`` (Pi's ``getLatestCompactionEntry``), or None."""
    for entry in reversed(path):
        if type(entry) is dict and entry.get("type") == "compaction":
            return entry
    return None


def context_entries_from_path(path: Sequence[Entry]) -> list[Entry]:
    """Pi's ``buildContextEntries`` on a path already built as a list of entries (the same
    layout as :func:`build_context_entries`, which reads the path through the index)."""
    comp_at = -1
    for i in range(len(path) - 1, -1, -1):
        entry = path[i]
        if type(entry) is dict and entry.get("type") == "compaction":
            comp_at = i
            break
    if comp_at < 0:
        return list(path)
    # Only the ids up to the compaction are compared (Pi's findIndex stops there at the latest).
    path_ids = [e.get("id", UNDEFINED) if type(e) is dict else UNDEFINED for e in path[: comp_at + 1]]
    compaction = path[comp_at]
    comp_idx, start = context_layout(path_ids, comp_at, compaction)
    if comp_idx < 0:  # pragma: no cover - the compaction itself is on the path
        return list(path)
    return _context_assemble(compaction, path[start:comp_idx], path[comp_idx + 1 :])


def build_context_entries(
    index: EntryIndex, path: Sequence[int], path_ids: Sequence[EntryId] | None = None
) -> list[Entry]:
    """Pi's ``buildContextEntries`` on a path of positions, parsing only the entries it returns.

    The newest compaction comes first, then the entries from its ``firstKeptEntryId`` up to it
    (system messages left out: the compaction carries their replay), then everything after it.
    A ``firstKeptEntryId`` that is not on the path keeps nothing before the compaction.
    ``path_ids``, if given, is ``[index.ids[p] for p in path]``, made already.
    """
    return context_entries_at(index, path, path_ids)[1]


def context_entries_at(
    index: EntryIndex, path: Sequence[int], path_ids: Sequence[EntryId] | None = None
) -> tuple[Sequence[int], list[Entry]]:
    """:func:`build_context_entries`, with the position of each entry it returns."""
    types = index.types
    comp_at = -1
    for i in range(len(path) - 1, -1, -1):
        if types[path[i]] == "compaction":  # types are UNDEFINED for values that are not objects
            comp_at = i
            break
    if comp_at < 0:
        return path, index.entries_at(path)
    if path_ids is None:
        ids = index.ids
        path_ids = [ids[p] for p in path]
    compaction = index.entry(path[comp_at])
    comp_idx, start = context_layout(path_ids, comp_at, compaction)
    if comp_idx < 0:  # pragma: no cover - the compaction itself is on the path
        return path, index.entries_at(path)
    kept = [
        (p, entry)
        for p, entry in zip(path[start:comp_idx], index.entries_at(path[start:comp_idx]), strict=True)
        if not _is_system_message(entry)
    ]
    after = path[comp_idx + 1 :]
    positions = [path[comp_at], *(p for p, _ in kept), *after]
    return positions, _context_assemble(compaction, [entry for _, entry in kept], index.entries_at(after))


def context_layout(path_ids: Sequence[EntryId], comp_at: int, compaction: Entry) -> tuple[int, int]:
    """Where ``buildContextEntries`` cuts the path: ``(compaction index, first kept index)``.

    The compaction is the first entry whose id is ``===`` the newest compaction's (``comp_at``;
    -1 when none is); the kept range starts at the first entry before it whose id is ``===`` its
    ``firstKeptEntryId``, else at the compaction (nothing kept). ``path_ids`` covers the path at
    least up to ``comp_at``.
    """
    comp_idx = _first_strict_equal(path_ids, path_ids[comp_at], comp_at + 1)
    if comp_idx < 0:
        return -1, -1
    start = _first_strict_equal(path_ids, compaction.get("firstKeptEntryId", UNDEFINED), comp_idx)
    return comp_idx, comp_idx if start < 0 else start


def _context_assemble(compaction: Any, kept: Sequence[Any], after: Sequence[Any]) -> list[Any]:
    """The context entries: the compaction, the kept range without system messages, the rest."""
    out = [compaction]
    out.extend(entry for entry in kept if not _is_system_message(entry))
    out.extend(after)
    return out


def _is_system_message(entry: Entry) -> bool:
    return (
        type(entry) is dict
        and entry.get("type") == "message"
        and prop(entry.get("message", UNDEFINED), "role") == "system"
    )


def session_settings(path: Sequence[Entry]) -> tuple[Any, Any]:
    """Pi's ``getSessionContextSettings``: thinking level and model recovered from the path."""
    thinking: Any = "off"
    model: Any = None
    for entry in path:
        if type(entry) is not dict:
            continue
        etype = entry.get("type")
        if etype == "thinking_level_change":
            thinking = entry.get("thinkingLevel", UNDEFINED)
        elif etype == "model_change":
            model = {"provider": entry.get("provider", UNDEFINED), "modelId": entry.get("modelId", UNDEFINED)}
        elif etype == "message":
            message = entry.get("message", UNDEFINED)
            if type(message) is dict:  # prop() inlined for the usual case
                if message.get("role") == "assistant":
                    model = {"provider": message.get("provider", UNDEFINED), "modelId": message.get("model", UNDEFINED)}
            elif prop(message, "role") == "assistant":
                model = {"provider": prop(message, "provider"), "modelId": prop(message, "model")}
    return thinking, model


_EDITABLE_ROLES = ("user", "assistant", "toolResult", "custom")


def project_entry(entry: Entry, edit: Any) -> list[Any]:
    """Pi's ``projectContextEntry``: the entry's messages with its latest context edit applied."""
    messages = entry_to_messages(entry)
    if edit is None:
        return messages
    replacement = edit.get("replacement", UNDEFINED)
    if replacement is None:
        return []
    out = []
    for message in messages:
        role = prop(message, "role")
        if role not in _EDITABLE_ROLES:
            out.append(message)
            continue
        content = prop(replacement, "content")
        if (role == "assistant" or role == "toolResult") and type(content) is str:
            content = [{"type": "text", "text": content}]
        new = dict(message) if type(message) is dict else {}
        new["content"] = content
        out.append(new)
    return out


def build_projection(
    path: list[Entry], context_entries: list[Any] | None = None, settings: tuple[Any, Any] | None = None
) -> Projection:
    """Pi's ``buildSessionProjection`` for a path (``buildSessionPath`` already applied).

    ``settings``, if given, is :func:`session_settings` of the path, computed already.
    """
    thinking, model = settings if settings is not None else session_settings(path)
    entries = context_entries if context_entries is not None else context_entries_from_path(path)
    edits: dict[Any, Any] = {}
    for entry in entries:
        if type(entry) is dict and entry.get("type") == "context_edit":
            edits[mkey(entry.get("targetId", UNDEFINED))] = entry
    projected: list[ProjectedEntry] = []
    messages: list[Any] = []
    for i, entry in enumerate(entries):
        if type(entry) is dict:
            eid = entry.get("id", UNDEFINED)
            edit = edits.get(eid if type(eid) is str else mkey(eid)) if edits else None
            if edit is None and entry.get("type") == "message":
                # The usual entry, inlined: a message object with content contributes itself.
                message = entry.get("message")
                if type(message) is dict and message.get("content") is not None:
                    projected.append(ProjectedEntry(entry, [message]))
                    messages.append(message)
                    continue
        else:
            edit = edits.get(mkey(UNDEFINED)) if edits else None
        if i > 0 and type(entry) is dict and entry.get("type") == "compaction":
            pe = ProjectedEntry(entry, [], "older-compaction", edit)
        else:
            msgs = project_entry(entry, edit)
            pe = ProjectedEntry(entry, msgs, None, edit)
            if edit is not None and not msgs and edit.get("replacement", UNDEFINED) is None:
                pe.omitted = "edited-out"
        projected.append(pe)
        messages.extend(pe.messages)
    return Projection(projected, thinking, model, messages)


def message_estimates(projection: Projection, known: Callable[[int], int | None] | None = None) -> list[Any]:
    """``estimateTokens`` of every projected message, computed once; each projected entry's
    :meth:`ProjectedEntry.tokens` is filled in from them (the same sums, in the same order).

    ``known(j)``, if given, is the estimate of projected entry ``j``'s one message when it was
    computed already (the viewer's per-entry facts), or None: it is used for an entry that
    contributes exactly its own one message, unedited, and estimated again for anything else."""
    if known is None:
        estimates = [estimate_tokens(m) for m in projection.messages]
    else:
        estimates = []
        for j, pe in enumerate(projection.entries):
            if len(pe.messages) == 1 and pe.edit is None:
                value = known(j)
                estimates.append(estimate_tokens(pe.messages[0]) if value is None else value)
            else:
                estimates.extend(estimate_tokens(m) for m in pe.messages)
    at = 0
    for pe in projection.entries:
        n = len(pe.messages)
        if pe._tokens is None:
            total: Any = 0
            for value in estimates[at : at + n]:
                total = total + value if type(total) is int and type(value) is int else jsops.add(total, value)
            pe._tokens = total
        at += n
    return estimates


@dataclass(slots=True)
class BranchKeys:
    """A branch as the ids and types of its entries (``UNDEFINED`` for what an entry lacks or
    for a value that is not an object): all :func:`estimate_projected_context_tokens` reads."""

    ids: list[Any]
    types: Sequence[Any]


def estimate_projected_context_tokens(
    projection: Projection, branch: Sequence[Any] | BranchKeys, estimates: list[Any] | None = None
) -> ContextEstimate:
    """Pi's ``estimateProjectedContextTokens``: usage is trusted only after the latest edit/compaction.

    ``estimates``, if given, is ``estimate_tokens`` of every projected message, computed already.
    """
    estimate = estimate_context_tokens(projection.messages, estimates)
    if estimate.last_usage_index is not None:
        index = 0
        ids: list[Any]
        types: Sequence[Any]
        if isinstance(branch, BranchKeys):
            ids, types = branch.ids, branch.types
        else:
            ids = [entry_id(e) for e in branch]
            types = [e.get("type", UNDEFINED) if type(e) is dict else UNDEFINED for e in branch]
        usage_entry_id: Any = UNDEFINED
        for pe in projection.entries:
            nxt = index + len(pe.messages)
            if estimate.last_usage_index < nxt:
                usage_entry_id = pe.source_id
                break
            index = nxt
        usage_entry_index = -1
        if jsops.truthy(usage_entry_id):
            usage_entry_index = _first_strict_equal(ids, usage_entry_id, len(ids))
        latest_invalidating = -1
        for i in range(len(types) - 1, -1, -1):
            if types[i] in ("context_edit", "compaction"):
                latest_invalidating = i
                break
        if usage_entry_index > latest_invalidating:
            return estimate
    system = get_current_system_message(projection.messages)
    tokens: Any = estimate_tokens(system) if system is not None else 0
    messages = projection.messages
    for i, message in enumerate(messages):
        if prop(message, "role") != "system":
            value = estimate_tokens(message) if estimates is None else estimates[i]
            tokens = tokens + value if type(tokens) is int and type(value) is int else jsops.add(tokens, value)
    return ContextEstimate(tokens, 0, tokens, None)


def context_usage(projection: Projection, branch: Sequence[Entry], context_window: int) -> dict[str, Any] | None:
    """``AgentSession.getContextUsage``: tokens are unknown after a compaction until a new reply."""
    from pitools.core.context.tokens import calculate_context_tokens

    if context_window <= 0:
        return None
    latest = latest_compaction_on(branch)
    if latest is not None:
        assistants: set[Any] = set()
        for pe in projection.entries:
            for m in pe.messages:
                if (
                    prop(m, "role") == "assistant"
                    and prop(m, "stopReason") not in ("aborted", "error")
                    and jsops.gt_zero(calculate_context_tokens(prop(m, "usage")))
                ):
                    assistants.add(mkey(pe.source_id))
                    break
        comp_idx = -1
        for i, entry in enumerate(branch):
            if jsops.strict_equal(entry_id(entry), latest.get("id", UNDEFINED)):
                comp_idx = i
                break
        if not any(mkey(entry_id(e)) in assistants for e in branch[comp_idx + 1 :]):
            return {"tokens": None, "contextWindow": context_window, "percent": None}
    estimate = estimate_projected_context_tokens(projection, branch)
    tokens = estimate.tokens
    percent = tokens / context_window * 100 if type(tokens) in (int, float) else None
    return {"tokens": tokens, "contextWindow": context_window, "percent": percent}


@dataclass(slots=True)
class ContextReplay:
    """Everything ``pitools context`` reports for one leaf."""

    leaf_id: EntryId
    leaf_exists: bool
    #: ``getBranch(leaf)``: a list, or on a lean index a sequence that parses entries when read.
    path: Sequence[Entry]
    context_entries: list[Entry]
    projection: Projection
    #: ``estimateTokens`` of each message; None for a message Pi throws on (see ``estimates_error``).
    shown_estimates: list[Any]
    _estimate: ContextEstimate | None
    #: The ids of ``path`` (what JSON output prints; reading them needs no entry parsed again).
    path_ids: list[EntryId] | None = None
    #: The positions of ``path`` in the index, and the types of its entries.
    path_positions: list[int] = field(default_factory=list)
    path_types: Sequence[Any] = ()
    #: What Pi 1.6.0 throws estimating one of the messages (``estimateTokens``), and estimating
    #: the context (``estimateContextTokens``, which estimates only the messages after the last
    #: reply's usage): Pi still builds this context, so the replay keeps both as values.
    estimates_error: PiCrashError | None = None
    estimate_error: PiCrashError | None = None

    @property
    def token_estimates(self) -> list[Any]:
        """``estimateTokens`` of every message; raises where Pi does (prepareCompaction, the
        branch summary's and the viewer's per-message figures all need every one)."""
        if self.estimates_error is not None:
            raise self.estimates_error
        return self.shown_estimates

    @property
    def estimate(self) -> ContextEstimate:
        """Pi's ``estimateContextTokens`` here; raises where Pi does (context usage, compaction)."""
        if self._estimate is None:
            assert self.estimate_error is not None
            raise self.estimate_error
        return self._estimate


def replay_context(
    index: EntryIndex, leaf_id: EntryId, entry_tokens: Callable[[int], int | None] | None = None
) -> ContextReplay:
    """Replay Pi's context at ``leaf_id`` (``UNDEFINED`` → Pi's fallback to the last entry).

    ``path`` is ``getBranch(leaf)`` (``[]`` for an unknown leaf); the context uses
    ``buildSessionPath``, which falls back to the last entry, exactly as Pi does. Written once
    on the index interface (:class:`~pitools.core.session.index.EntryIndex`): the walks read ids,
    parents and types only, and only the entries the context needs are asked for (read back
    from the file when the loader's keep policy dropped them); ``path`` gives its entries
    when read, ``path_ids`` and ``path_positions`` need none.
    """
    with gc_paused():  # only acyclic objects are made here; see gc_paused
        ids, types = index.ids, index.types
        branch = index.branch_positions(leaf_id)
        # A leaf that exists gives the same walk for both (only a missing leaf falls back differently).
        session_path = branch if branch else index.session_path_positions(leaf_id)
        path_ids = [ids[p] for p in session_path]
        positions, ctx_entries = context_entries_at(index, session_path, path_ids)
        projection = build_projection([], ctx_entries, path_settings(index, session_path))
        known = None if entry_tokens is None else (lambda j: entry_tokens(positions[j]))
        estimates: list[Any] | None
        estimates_error = estimate_error = None
        try:
            estimates = shown = message_estimates(projection, known)
        except PiCrashError as exc:
            # Pi builds the context all the same: only the figures that estimate this message fail.
            estimates_error, estimates = exc, None
            shown = [_estimate_or_none(m) for m in projection.messages]
        branch_ids = path_ids if branch else []
        keys = BranchKeys(branch_ids, [types[p] for p in branch])
        estimate: ContextEstimate | None
        try:
            estimate = estimate_projected_context_tokens(projection, keys, estimates)
        except PiCrashError as exc:
            estimate_error, estimate = exc, None
        return ContextReplay(
            leaf_id=leaf_id,
            leaf_exists=leaf_id is not None and index.has(leaf_id),
            path=index.entries_seq(branch),
            context_entries=ctx_entries,
            projection=projection,
            shown_estimates=shown,
            _estimate=estimate,
            path_ids=branch_ids,
            path_positions=branch,
            path_types=keys.types,
            estimates_error=estimates_error,
            estimate_error=estimate_error,
        )


def _estimate_or_none(message: JsValue) -> Any:
    try:
        return estimate_tokens(message)
    except PiCrashError:
        return None


def _first_strict_equal(values: Sequence[Any], target: Any, stop: int) -> int:
    """The first ``i < stop`` with ``values[i] === target``, or -1."""
    if type(target) is str:
        # == finds the same element at C speed: only a string equals a string.
        try:
            return values.index(target, 0, stop)
        except ValueError:
            return -1
    for i in range(min(stop, len(values))):
        if jsops.strict_equal(values[i], target):
            return i
    return -1


def path_settings(index: EntryIndex, path: list[int]) -> tuple[Any, Any]:
    """:func:`session_settings` of the path of positions, reading only the entries that decide it."""
    return session_settings(index.entries_at(_settings_positions(index, path)))


def _settings_positions(index: EntryIndex, path: list[int]) -> list[int]:
    """The entries of ``path`` that decide :func:`session_settings` (in path order): the last
    thinking level change, the last model change or assistant message, and every message entry
    whose message is missing (reading its role throws in Pi, as it does in session_settings)."""
    marks = index.marks
    thinking = model = -1
    crash: list[int] = []
    for i in range(len(path) - 1, -1, -1):
        mark = marks[path[i]]
        if not mark:
            continue
        if mark == MARK_THINKING:
            if thinking < 0:
                thinking = i
        elif mark == MARK_MODEL:
            if model < 0:
                model = i
        elif mark == MARK_CRASH:
            crash.append(i)
        if thinking >= 0 and model >= 0 and not index.crashes:
            break
    chosen = sorted({*crash, *(i for i in (thinking, model) if i >= 0)})
    return [path[i] for i in chosen]
