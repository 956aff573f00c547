"""Entries outside Pi's types: what Pi itself would throw on them, and what the models reject.

Only entries the fast predicate (:mod:`pitools.core.session._entry_check`) does not accept get here,
so this is where pydantic and Pi's replayed functions are imported, lazily.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from pitools.core.errors import PiCrashError
from pitools.core.js.ops import prop
from pitools.core.js.value import UNDEFINED
from pitools.core.validate.codes import TOLERATED_FIELDS
from pitools.core.views.branches import nesting_ok

#: A Python frame limit at which running out of frames while walking a value means it nests far
#: deeper than the ~4,200 levels V8's JSON.stringify follows (one frame or more per level).
_FRAMES_PAST_V8 = 10_000

#: Findings reported per entry for shape problems, at most.
MAX_FIELD_FINDINGS_PER_ENTRY = 5


class Suspicion:
    """Replays Pi on a suspicious entry, then reports the models' complaints.

    Both depend only on the entry's shape (types, empty or not, tag values), and a damaged
    file tends to repeat one shape thousands of times, so results are reused per shape.
    """

    def __init__(self) -> None:
        self.by_shape: dict[Any, tuple[str, list[Any]]] = {}

    def findings(self, entry: dict[str, Any], covered: set[tuple[str, ...]]) -> list[tuple[str, str]]:
        """``(code, message)`` pairs; ``covered`` holds field paths other findings explain already."""
        # A value nested past MAX_NESTING gets no shape key (the walk would recurse that deep):
        # such an entry is checked on its own, and not remembered.
        key = (_shape(entry), frozenset(covered)) if nesting_ok(entry) else None
        known = self.by_shape.get(key) if key is not None else None
        if known is None:
            from pitools.core.session.schema import field_problems

            crashes = _pi_crashes(entry)
            if crashes:
                covered.update(_crash_paths(entry))
            crash_text = "; ".join(f"{err} (in {', '.join(where)})" for err, where in crashes.items())
            known = (crash_text, field_problems(entry, covered, MAX_FIELD_FINDINGS_PER_ENTRY))
            if key is not None and len(self.by_shape) < 10_000:
                self.by_shape[key] = known
        crash_text, problems = known
        out = [("pi-would-crash", f"Pi 1.6.0 throws on this entry: {crash_text}")] if crash_text else []
        for problem in problems:
            code = problem.code
            text = problem.describe(entry)
            if code == "missing-field" and problem.path in TOLERATED_FIELDS:
                code = "tolerated-missing-field"  # Pi copes: graded info, not warning
                text = text.replace("is required", f"is missing; Pi copes ({TOLERATED_FIELDS[problem.path]})")
            out.append((code, text))
        return out


def _pi_crashes(entry: dict[str, Any]) -> dict[str, list[str]]:
    """Pi functions that throw on this entry alone: ``{error text: [Pi function, ...]}``."""
    from pitools.core.compaction.prepare import serialize_conversation
    from pitools.core.context.messages import convert_to_llm, entry_to_messages, get_current_system_message
    from pitools.core.context.tokens import estimate_context_tokens, estimate_tokens
    from pitools.core.session.name import session_name
    from pitools.core.views.stats import session_stats, usage_breakdown

    crashes: dict[str, list[str]] = {}

    def attempt(where: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except PiCrashError as exc:
            crashes.setdefault(exc.message, []).append(where)
        except RecursionError:
            # V8's JSON.stringify gives up near 4,200 levels (scripts/pi_probe_deep.mjs); with the
            # CLI's frame limit pitools follows ~20,000, so running out of frames means Pi throws.
            if sys.getrecursionlimit() < _FRAMES_PAST_V8:
                raise
            crashes.setdefault("RangeError: Maximum call stack size exceeded", []).append(where)

    attempt("getSessionStats", lambda: session_stats([entry]))
    attempt("getUsageCostBreakdown", lambda: usage_breakdown([entry]))
    etype = entry.get("type")
    if etype == "session_info":
        attempt("getSessionName", lambda: session_name([entry]))
    messages: list[Any] = []

    def build() -> None:
        messages.extend(entry_to_messages(entry))

    attempt("buildSessionContext", build)
    for message in messages:
        attempt("estimateTokens", partial(estimate_tokens, message))
        if prop(message, "role") == "assistant" and prop(message, "stopReason") not in ("aborted", "error"):
            attempt("getContextUsage", partial(_context_tokens, message))
    if messages:
        attempt("estimateContextTokens", lambda: estimate_context_tokens(messages))
        attempt("getCurrentSystemMessage", lambda: get_current_system_message(messages))
        attempt("serializeConversation", lambda: serialize_conversation(convert_to_llm(messages)))
        for message in messages:
            content = prop(message, "content")
            # pi-ai's transformMessages calls assistantMsg.content.flatMap(...) after a `?? []` fix-up.
            if prop(message, "role") == "assistant" and type(content) not in (
                list,
                type(None),
                type(UNDEFINED),
            ):
                error = "TypeError: assistantMsg.content.flatMap is not a function"
                crashes.setdefault(error, []).append("transformMessages")
    message = entry.get("message", UNDEFINED) if etype == "message" else UNDEFINED
    if type(message) is dict and message.get("role") != "toolResult":
        # Branch summaries read the raw message, without the content ?? [] fix-up of the context.
        attempt("prepareBranchEntries", lambda: estimate_tokens(message))
    return crashes


def _context_tokens(message: Any) -> Any:
    from pitools.core.context.tokens import calculate_context_tokens

    return calculate_context_tokens(prop(message, "usage"))


#: String fields whose value (not only its type) steers Pi's code or the models' Literal checks.
_SHAPE_VALUES = frozenset({"type", "role", "stopReason", "status"})


def _shape(value: Any) -> Any:
    """What Pi's code and the models can tell apart in ``value``: types, truthiness, tag values."""
    t = type(value)
    if t is dict:
        return (
            "{",
            *((k, v if k in _SHAPE_VALUES and type(v) is str else _shape(v)) for k, v in value.items()),
        )
    if t is list:
        return ("[", *(_shape(v) for v in value))
    if t is str:
        return "s" if value else "e"
    if t is int or t is float:
        # Zero is falsy; NaN and infinities come only from numbers JSON.parse overflows.
        return "0" if value == 0 else "n" if -(2.0**1023) < value < 2.0**1023 else repr(value)
    return value  # None, True, False


def _crash_paths(entry: dict[str, Any]) -> set[tuple[str, ...]]:
    """Field paths whose shape problem the crash report already explains."""
    message = entry.get("message", UNDEFINED)
    if entry.get("type") != "message":
        return set()
    if type(message) is not dict:
        return {("message",)}
    paths: set[tuple[str, ...]] = set()
    if message.get("role") == "assistant":
        if type(message.get("content")) is not list:
            paths.add(("message", "content"))
        usage = message.get("usage", UNDEFINED)
        if type(usage) is not dict or type(usage.get("cost")) is not dict:
            paths.add(("message", "usage"))
    return paths


def pi_crashes(entry: dict[str, Any]) -> dict[str, list[str]]:
    """The Pi 1.6.0 functions that throw on this one entry: ``{error text: [function, ...]}``."""
    return _pi_crashes(entry)
