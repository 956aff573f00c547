"""Pi's context at a leaf: ``buildSessionPath`` → ``buildContextEntries`` → ``buildSessionProjection``.

Everything here mirrors ``session-manager.js`` of Pi 1.6.0 (see the docstrings), plus
``estimateProjectedContextTokens`` from ``compaction.js``, on plain parsed entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.context.messages import entry_to_messages, get_current_system_message
from pitools.core.context.tokens import ContextEstimate, estimate_context_tokens, estimate_tokens
from pitools.core.js import ops as jsops
from pitools.core.js.ops import prop
from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import gc_paused
from pitools.core.session.tree import SessionIndex, mkey


@dataclass(slots=True)
class ProjectedEntry:
    """One context entry and the messages it contributes (Pi's ``ProjectedSessionEntry``)."""

    source: Any
    messages: list[Any]
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
    def source_id(self) -> Any:
        return self.source.get("id", UNDEFINED) if type(self.source) is dict else UNDEFINED

    @property
    def source_type(self) -> Any:
        return self.source.get("type", UNDEFINED) if type(self.source) is dict else UNDEFINED


@dataclass(slots=True)
class Projection:
    """Pi's ``SessionProjection``: projected entries, their messages and the path's settings."""

    entries: list[ProjectedEntry]
    thinking_level: Any
    model: Any
    messages: list[Any] = field(default_factory=list)


def latest_compaction_on(path: Sequence[Any]) -> Any:
    """The last compaction entry of ``path`` (Pi's ``getLatestCompactionEntry``), or None."""
    for entry in reversed(path):
        if type(entry) is dict and entry.get("type") == "compaction":
            return entry
    return None


def context_entries_from_path(path: list[Any]) -> list[Any]:
    """Pi's ``buildContextEntries`` on an already-built path.

    The newest compaction comes first, then the entries from its ``firstKeptEntryId`` up to it
    (system messages left out: the compaction carries their replay), then everything after it.
    A ``firstKeptEntryId`` that is not on the path keeps nothing before the compaction.
    """
    compaction = latest_compaction_on(path)
    if compaction is None:
        return path
    comp_id = compaction.get("id", UNDEFINED)
    comp_idx = -1
    if type(comp_id) is str:  # the usual case: === on strings is ==, and only strings equal one
        for i, entry in enumerate(path):
            if type(entry) is dict and entry.get("id") == comp_id:
                comp_idx = i
                break
    else:
        for i, entry in enumerate(path):
            if jsops.strict_equal(_id(entry), comp_id):
                comp_idx = i
                break
    if comp_idx < 0:
        return path
    first_kept = compaction.get("firstKeptEntryId", UNDEFINED)
    out = [compaction]
    start = comp_idx
    for i in range(comp_idx):
        if jsops.strict_equal(_id(path[i]), first_kept):
            start = i
            break
    out.extend(entry for entry in path[start:comp_idx] if not _is_system_message(entry))
    out.extend(path[comp_idx + 1 :])
    return out


def _id(entry: Any) -> Any:
    return entry.get("id", UNDEFINED) if type(entry) is dict else UNDEFINED


def _is_system_message(entry: Any) -> bool:
    return (
        type(entry) is dict
        and entry.get("type") == "message"
        and prop(entry.get("message", UNDEFINED), "role") == "system"
    )


def session_settings(path: Sequence[Any]) -> tuple[Any, Any]:
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


def project_entry(entry: Any, edit: Any) -> list[Any]:
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


def build_projection(path: list[Any], context_entries: list[Any] | None = None) -> Projection:
    """Pi's ``buildSessionProjection`` for a path (``buildSessionPath`` already applied)."""
    thinking, model = session_settings(path)
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


def message_estimates(projection: Projection) -> list[Any]:
    """``estimateTokens`` of every projected message, computed once; each projected entry's
    :meth:`ProjectedEntry.tokens` is filled in from them (the same sums, in the same order)."""
    estimates = [estimate_tokens(m) for m in projection.messages]
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


def estimate_projected_context_tokens(
    projection: Projection, branch: Sequence[Any], estimates: list[Any] | None = None
) -> ContextEstimate:
    """Pi's ``estimateProjectedContextTokens``: usage is trusted only after the latest edit/compaction.

    ``estimates``, if given, is ``estimate_tokens`` of every projected message, computed already.
    """
    estimate = estimate_context_tokens(projection.messages, estimates)
    if estimate.last_usage_index is not None:
        index = 0
        usage_entry_id: Any = UNDEFINED
        for pe in projection.entries:
            nxt = index + len(pe.messages)
            if estimate.last_usage_index < nxt:
                usage_entry_id = pe.source_id
                break
            index = nxt
        usage_entry_index = -1
        if jsops.truthy(usage_entry_id):
            for i, entry in enumerate(branch):
                if jsops.strict_equal(_id(entry), usage_entry_id):
                    usage_entry_index = i
                    break
        latest_invalidating = -1
        for i in range(len(branch) - 1, -1, -1):
            entry = branch[i]
            if type(entry) is dict and entry.get("type") in ("context_edit", "compaction"):
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


def context_usage(projection: Projection, branch: Sequence[Any], context_window: int) -> dict[str, Any] | None:
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
            if jsops.strict_equal(_id(entry), latest.get("id", UNDEFINED)):
                comp_idx = i
                break
        if not any(mkey(_id(e)) in assistants for e in branch[comp_idx + 1 :]):
            return {"tokens": None, "contextWindow": context_window, "percent": None}
    estimate = estimate_projected_context_tokens(projection, branch)
    tokens = estimate.tokens
    percent = tokens / context_window * 100 if type(tokens) in (int, float) else None
    return {"tokens": tokens, "contextWindow": context_window, "percent": percent}


@dataclass(slots=True)
class ContextReplay:
    """Everything ``pitools context`` reports for one leaf."""

    leaf_id: Any
    leaf_exists: bool
    path: list[Any]
    context_entries: list[Any]
    projection: Projection
    token_estimates: list[Any]
    estimate: ContextEstimate


def replay_context(index: SessionIndex, leaf_id: Any) -> ContextReplay:
    """Replay Pi's context at ``leaf_id`` (``UNDEFINED`` → Pi's fallback to the last entry).

    ``path`` is ``getBranch(leaf)`` (``[]`` for an unknown leaf); the context uses
    ``buildSessionPath``, which falls back to the last entry, exactly as Pi does.
    """
    with gc_paused():  # only acyclic objects are made here; see gc_paused
        return _replay_context(index, leaf_id)


def _replay_context(index: SessionIndex, leaf_id: Any) -> ContextReplay:
    branch = index.get_branch(leaf_id)
    # A leaf that exists gives the same walk for both (only a missing leaf falls back differently).
    session_path = list(branch) if branch else index.session_path(leaf_id)
    ctx_entries = context_entries_from_path(session_path)
    projection = build_projection(session_path, ctx_entries)
    estimates = message_estimates(projection)
    estimate = estimate_projected_context_tokens(projection, branch, estimates)
    return ContextReplay(
        leaf_id=leaf_id,
        leaf_exists=leaf_id is not None and index.has(leaf_id),
        path=branch,
        context_entries=ctx_entries,
        projection=projection,
        token_estimates=estimates,
        estimate=estimate,
    )
