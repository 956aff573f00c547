"""The context meter of ``pitools watch``: a running session's context against its window.

Pi checks before each assistant response whether the projected context is above the compaction
threshold (``_exceedsCompactionThreshold``: ``estimateProjectedContextTokens`` then
``shouldCompact``, i.e. tokens > contextWindow - reserveTokens) and compacts first when it is.
:func:`reading` is that check on a replayed leaf. :func:`advance` keeps the total current as Pi
appends, from the new entries alone, where that gives the same number as a replay: message
entries (user, assistant, tool result) and entries that put nothing in the context (labels,
extension data, session names, thinking levels) that continue the current leaf. Anything else (a
compaction, a branch summary, a context edit, a model change, an entry on another branch, a line
that does not parse) returns None and the caller replays the file.

Appending a message changes ``estimateProjectedContextTokens`` in one of two ways: an assistant
reply with usable usage (``getAssistantUsage``) becomes the new base (its entry is the newest on
the branch, so no compaction or edit comes after it); any other message adds its
``estimateTokens`` to the total, both when the total is usage plus trailing estimates and when
it is estimates only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pitools.core.compaction.prepare import CompactionSettings, should_compact
from pitools.core.context.tokens import assistant_usage, calculate_context_tokens, estimate_tokens
from pitools.core.js import ops as jsops
from pitools.core.js.json.record import record_json
from pitools.core.js.types import Entry, EntryId, JsValue

#: Message roles whose entry is projected as the message itself (checked against a full replay
#: on the golden sessions, ``tests/unit/ops/test_watch.py``).
_PLAIN_ROLES = frozenset({"user", "assistant", "toolResult"})
#: Entry types that move the leaf but put nothing in the context and change neither the model
#: nor the compaction settings (a thinking level only changes the request), checked the same way.
_SILENT_TYPES = frozenset({"label", "custom", "session_info", "thinking_level_change"})


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading of the meter."""

    leaf_id: EntryId
    tokens: JsValue
    context_window: int
    reserve_tokens: int
    enabled: bool
    model: str | None
    #: Whether Pi would compact before the next assistant response.
    will_compact: bool

    @property
    def threshold(self) -> int:
        return self.context_window - self.reserve_tokens

    @property
    def percent(self) -> float | None:
        tokens = self.tokens
        if (type(tokens) is not int and type(tokens) is not float) or self.context_window <= 0:
            return None
        return float(tokens / self.context_window * 100)

    @property
    def tokens_to_threshold(self) -> int | float | None:
        """Tokens that still fit before the threshold (0 once above it)."""
        tokens = self.tokens
        if type(tokens) is not int and type(tokens) is not float:
            return None
        return max(0, self.threshold - tokens)

    def to_json(self) -> dict[str, Any]:  # the leaf id or tokens may be UNDEFINED
        data = record_json(self, ("leaf_id", "model", "tokens", "context_window", "reserve_tokens"))
        data["compactionEnabled"] = self.enabled
        data["threshold"] = self.threshold
        data["percent"] = self.percent
        data["tokensToThreshold"] = self.tokens_to_threshold
        data["willCompact"] = self.will_compact
        return data


def reading(
    leaf_id: EntryId, tokens: JsValue, context_window: int, settings: CompactionSettings, model: str | None
) -> Reading:
    """The meter for ``tokens`` (``estimateProjectedContextTokens`` at the leaf)."""
    will = context_window > 0 and should_compact(tokens, context_window, settings)
    return Reading(leaf_id, tokens, context_window, settings.reserve_tokens, settings.enabled, model, will)


def advance(current: Reading, entries: Iterable[Entry]) -> Reading | None:
    """``current`` after Pi appended ``entries`` (parsed lines, oldest first), or None when a
    replay is needed to know (see the module docstring)."""
    leaf_id = current.leaf_id
    tokens = current.tokens
    for entry in entries:
        if type(entry) is not dict:
            return None
        entry_id = entry.get("id")
        if type(entry_id) is not str or type(leaf_id) is not str or entry.get("parentId") != leaf_id:
            return None
        if entry.get("type") in _SILENT_TYPES:
            leaf_id = entry_id
            continue
        message = entry.get("message")
        if entry.get("type") != "message" or type(message) is not dict or message.get("role") not in _PLAIN_ROLES:
            return None
        if message.get("role") == "assistant" and _model_of(message) != current.model:
            return None  # an assistant reply sets the session's model (its window is resolved anew)
        usage = assistant_usage(message)
        if usage is not None:
            tokens = calculate_context_tokens(usage)
        else:
            value = estimate_tokens(message)
            tokens = tokens + value if type(tokens) is int and type(value) is int else jsops.add(tokens, value)
        leaf_id = entry_id
    settings = CompactionSettings(reserve_tokens=current.reserve_tokens, keep_recent_tokens=0, enabled=current.enabled)
    return reading(leaf_id, tokens, current.context_window, settings, current.model)


def _model_of(message: dict[str, Any]) -> str | None:
    """``provider/model`` of an assistant reply, as :func:`model_label` writes the session's."""
    provider, model = message.get("provider"), message.get("model")
    return model_label((provider, model)) if type(provider) is str and type(model) is str else None


def model_label(ref: tuple[str, str] | None) -> str | None:
    """The session's model (``Projection.model_ref``) as the meter shows it."""
    return f"{ref[0]}/{ref[1]}" if ref else None
