"""Entries outside Pi's types: what Pi itself would throw on them, and what the models reject.

Only entries the fast predicate (:mod:`pitools.core.session.entry_precheck`) does not accept get here,
so this is where pydantic and Pi's replayed functions are imported, lazily.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from pitools.core.js.access import entry_id
from pitools.core.js.nesting import nesting_ok
from pitools.core.js.ops import prop
from pitools.core.js.value import UNDEFINED
from pitools.core.validate.codes import TOLERATED_FIELDS
from pitools.errors import PiCrashError

#: A Python frame limit at which running out of frames while walking a value means it nests far
#: deeper than the ~4,100 levels V8's JSON.stringify follows (one frame or more per level).
_FRAMES_PAST_V8 = 10_000

#: The shallowest value V8's JSON.stringify throws on (RangeError: Maximum call stack size
#: exceeded) in Pi 1.6.0's own calls, counting the value itself as one level: 4,114 when
#: prepareCompaction estimates a tool call's tokens and when SessionManager.open rewrites a
#: migrated file (4,116 for estimateTokens called on its own: the limit is the machine stack, so
#: it moves by a level or two with the caller's depth; the lowest of Pi's calls counts). Measured
#: with Node 20 (default stack) by ``scripts/pi_probe_deep.mjs --bisect`` at every position.
#: Known gap: a provider that sends the arguments as an object inside its request body (Anthropic's
#: ``input``) stringifies them under four or five more levels, so that request can already throw
#: from about 4,110; which provider a session will use is not in the file.
PI_STRINGIFY_DEPTH = 4114
#: A value nested PI_STRINGIFY_DEPTH deep takes at least twice that many bytes: lines shorter than
#: this are never walked.
PI_STRINGIFY_MIN_BYTES = 2 * PI_STRINGIFY_DEPTH

_TOO_DEEP = f"{PI_STRINGIFY_DEPTH:,} or more levels deep, past what V8's JSON.stringify follows"
_RANGE_ERROR = "RangeError: Maximum call stack size exceeded"


def stringify_crash(entry: Any, rewritten_at_open: bool) -> str | None:
    """Where Pi 1.6.0 throws because V8's JSON.stringify gives up on a deeply nested value.

    ``rewritten_at_open``: Pi migrates the file when it opens it and writes every entry back
    (``_rewriteFile``, after truncating the file), so any entry that deep throws there. Otherwise
    only the values Pi itself stringifies matter: a tool call's arguments and a system message's
    ``toolsAdded`` (estimateTokens, hence context usage and compaction, and serializeConversation).
    Tool-result details, extra fields and custom entries are not stringified in a v3 file (the
    providers send only the fields they know), so they are no crash there.
    """
    if type(entry) is not dict:
        return None
    if rewritten_at_open:
        if nesting_ok(entry, PI_STRINGIFY_DEPTH - 1):
            return None
        return (
            f"Pi 1.6.0 cannot open this session: the entry nests {_TOO_DEEP} ({_RANGE_ERROR}), and Pi migrates the "
            "file when it opens it by truncating it and writing every entry back, so the open throws here and "
            "leaves the file cut off before this line (this entry and every later one are lost); "
            "`pitools migrate --in-place` writes it as v3 first"
        )
    if entry.get("type") != "message":
        return None
    message = entry.get("message")
    if type(message) is not dict:
        return None
    role = message.get("role")
    if role == "assistant" and type(content := message.get("content")) is list:
        for block in content:
            deep_call = type(block) is dict and block.get("type") == "toolCall"
            if deep_call and not nesting_ok(block.get("arguments"), PI_STRINGIFY_DEPTH - 1):
                return (
                    f"Pi 1.6.0 throws on this entry: the tool call's arguments nest {_TOO_DEEP} ({_RANGE_ERROR} in "
                    "estimateTokens and serializeConversation: context usage, auto-compaction and /compact "
                    "fail on every branch whose context holds it)"
                )
    elif role == "system" and not nesting_ok(message.get("toolsAdded"), PI_STRINGIFY_DEPTH - 1):
        return (
            f"Pi 1.6.0 throws on this entry: the system message's toolsAdded nests {_TOO_DEEP} ({_RANGE_ERROR} in "
            "estimateTokens: context usage, auto-compaction and /compact fail on every branch whose context holds it)"
        )
    return None


#: Findings reported per entry for shape problems, at most.
MAX_FIELD_FINDINGS_PER_ENTRY = 5


class Suspicion:
    """Replays Pi on a suspicious entry, then reports the models' complaints.

    Both depend only on the entry's shape (types, empty or not, tag values), and a damaged
    file tends to repeat one shape thousands of times, so results are reused per shape.
    """

    def __init__(self) -> None:
        self.by_shape: dict[Any, tuple[str, list[Any]]] = {}

    def findings(
        self, entry: dict[str, Any], covered: set[tuple[str, ...]], too_deep: bool = False
    ) -> list[tuple[str, str]]:
        """``(code, message)`` pairs; ``covered`` holds field paths other findings explain already.

        ``too_deep``: :func:`stringify_crash` reported the entry already (a RangeError from
        running out of frames is then not reported a second time)."""
        # A value nested past MAX_NESTING gets no shape key (the walk would recurse that deep):
        # such an entry is checked on its own, and not remembered.
        key = (_shape(entry), frozenset(covered)) if nesting_ok(entry) else None
        known = self.by_shape.get(key) if key is not None else None
        if known is None:
            from pitools.core.session.schema import field_problems

            crashes = _pi_crashes(entry)
            if too_deep:
                crashes.pop(_RANGE_ERROR, None)
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
            # V8's JSON.stringify gives up near 4,114 levels (PI_STRINGIFY_DEPTH); with the
            # CLI's frame limit pitools follows ~20,000, so running out of frames means Pi throws.
            if sys.getrecursionlimit() < _FRAMES_PAST_V8:
                raise
            crashes.setdefault(_RANGE_ERROR, []).append(where)

    attempt("getSessionStats", lambda: session_stats([entry]))
    attempt("getUsageCostBreakdown", lambda: usage_breakdown([entry]))
    etype = entry.get("type")
    if etype == "session_info":
        attempt("getSessionName", lambda: session_name([entry]))
    messages: list[Any] = []

    def build() -> None:
        messages.extend(entry_to_messages(entry))

    attempt("buildSessionContext", build)
    # getContextUsage reads a reply's usage only when a compaction is on the branch: that needs the
    # tree, so validate's structure pass reports it (context_usage_crash, Structure.context_usage).
    for message in messages:
        attempt("estimateTokens", partial(estimate_tokens, message))
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


def context_usage_crash(entry: dict[str, Any]) -> str | None:
    """What Pi 1.6.0's ``AgentSession.getContextUsage`` throws on this entry's reply, if anything.

    Pi calls ``calculateContextTokens(message.usage)`` on every finished assistant reply of the
    projection, but only when a compaction is on the branch (to find a reply newer than it), so
    this throws only at leaves whose branch holds a compaction and whose context holds the reply.
    """
    from pitools.core.context.tokens import calculate_context_tokens

    message = entry.get("message") if entry.get("type") == "message" else None
    if type(message) is not dict or message.get("role") != "assistant":
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    try:
        calculate_context_tokens(prop(message, "usage"))
    except PiCrashError as exc:
        return exc.message
    return None


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


def first_crash(session: Any) -> dict[str, Any] | None:
    """The first entry Pi 1.6.0 throws on: its line, id, the error and the Pi functions that throw."""
    for i, entry in enumerate(session.entries):
        if type(entry) is not dict:
            continue
        crashes = pi_crashes(entry)
        if crashes:
            error, functions = next(iter(crashes.items()))
            return {"line": session.lines[i], "entryId": entry_id(entry), "error": error, "functions": functions}
    return None
