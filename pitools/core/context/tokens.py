"""Pi's token heuristics (``compaction.js``): ``estimateTokens`` and the usage-anchored estimates.

"Characters" are JavaScript string lengths (UTF-16 code units), tool-call arguments are measured
as ``JSON.stringify`` prints them, an image counts 4,800 characters, and the result is
``Math.ceil(chars / 4)``. A value Pi would choke on raises :class:`PiCrashError` with the
``TypeError`` Pi throws; a non-number length makes the estimate NaN as in JavaScript.

These decide when Pi compacts and what ``context`` reports. The estimate of what a request sends
(pi-ai's ``estimateContextTokens``: 3.5 characters a token, a usage anchored in timestamp order)
is another rule with the same JavaScript name: :func:`pitools.core.request.estimate.estimate_input_tokens`
(the table in that module lists the differences).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import orjson

from pitools.core.js import ops as jsops
from pitools.core.js.json.encode import js_stringify, js_stringify_len
from pitools.core.js.json.encode import utf8_as_utf16_len as _utf8_as_utf16_len
from pitools.core.js.json.record import record_json
from pitools.core.js.ops import NAN, prop, truthy
from pitools.core.js.value import UNDEFINED, utf16_len

ESTIMATED_IMAGE_CHARS = 4800


def _plus(total: Any, n: Any) -> Any:
    # chars += x, where x may be undefined (NaN) in broken files.
    if type(total) is int and type(n) is int:
        return total + n
    if n is UNDEFINED or n is None or type(n) not in (int, float):
        return NAN
    return total + n


def _content_chars(content: Any, what: str) -> Any:
    if type(content) is str:
        return jsops.length(content)
    chars: Any = 0
    for block in jsops.iterate(content, what):
        btype = prop(block, "type")
        if btype == "text":
            text = prop(block, "text")
            if truthy(text):
                chars = _plus(chars, jsops.length(text))
        elif btype == "image":
            chars = _plus(chars, ESTIMATED_IMAGE_CHARS)
    return chars


def _stringify_len(value: Any) -> Any:
    text = js_stringify(value)
    if text is None:
        raise jsops.type_error("Cannot read properties of undefined (reading 'length')")
    return jsops.length(text)


def estimate_tokens(message: Any) -> Any:
    """Pi's ``estimateTokens(message)``: ``ceil(chars / 4)`` with per-role rules."""
    # The usual shapes (a dict message, a list of dict blocks with string fields) are measured
    # here; anything else, and every error Pi would throw, goes through the general rules.
    if type(message) is dict:
        role = message.get("role")
        assistant = role == "assistant"
        if assistant or role == "user" or role == "toolResult" or role == "custom":
            content = message.get("content")
            if type(content) is str and not assistant:
                return -(-(len(content) if content.isascii() else utf16_len(content)) // 4)
            chars = _blocks_chars(content, assistant) if type(content) is list else None
            if chars is not None:
                return -(-chars // 4)
    return _estimate_tokens(message)


def _blocks_chars(content: list[Any], assistant: bool) -> int | None:
    """The characters Pi counts in the usual content blocks (text and thinking, tool calls for the
    assistant; text and images for the others); None where the general rules must decide."""
    chars = 0
    for block in content:
        if type(block) is not dict:
            return None
        btype = block.get("type")
        if btype == "text" or (assistant and btype == "thinking"):
            text = block.get(btype)
            if type(text) is not str:
                return None
            chars += len(text) if text.isascii() else utf16_len(text)
        elif assistant and btype == "toolCall":
            name = block.get("name")
            args = block.get("arguments", UNDEFINED)
            if type(name) is not str or type(args) is not dict:
                return None
            chars += (len(name) if name.isascii() else utf16_len(name)) + _arguments_len(args)
        elif btype == "image" and not assistant:
            chars += ESTIMATED_IMAGE_CHARS
    return chars


_DIGITS = frozenset("0123456789")


def _arguments_len(args: dict[str, Any]) -> int:
    """``JSON.stringify(args).length`` for a tool call's arguments.

    The usual arguments (string values, no key that could be an array index) print exactly as
    orjson prints them, so only the length of its bytes is needed; anything else (numbers, whose
    layout may differ, nested values, index keys, lone surrogates) takes the exact path.
    """
    for key, value in args.items():
        if type(value) is not str or key[:1] in _DIGITS:
            return js_stringify_len(args)
    try:
        out = orjson.dumps(args)
    except TypeError:
        return js_stringify_len(args)
    return len(out) if out.isascii() else _utf8_as_utf16_len(out)


def _estimate_tokens(message: Any) -> Any:
    role = prop(message, "role")
    if role == "user" or role == "custom" or role == "toolResult":
        return jsops.ceil_div4(_content_chars(prop(message, "content"), "content"))
    if role == "assistant":
        chars: Any = 0
        for block in jsops.iterate(prop(message, "content"), "assistant.content"):
            btype = prop(block, "type")
            if btype == "text":
                chars = _plus(chars, jsops.length(_need(prop(block, "text"), "length")))
            elif btype == "thinking":
                chars = _plus(chars, jsops.length(_need(prop(block, "thinking"), "length")))
            elif btype == "toolCall":
                name_len = jsops.length(_need(prop(block, "name"), "length"))
                chars = _plus(chars, jsops.add(name_len, _stringify_len(prop(block, "arguments"))))
        return jsops.ceil_div4(chars)
    if role == "system":
        chars = _content_chars(prop(message, "content"), "content")
        sections = prop(message, "sections")
        if truthy(sections):
            values = list(sections.values()) if type(sections) is dict else []
            for section in values:
                if truthy(section):
                    chars = _plus(chars, jsops.length(section))
        tools = prop(message, "toolsAdded")
        if truthy(tools):
            chars = _plus(chars, _stringify_len(tools))
        return jsops.ceil_div4(chars)
    if role == "bashExecution":
        command = jsops.length(_need(prop(message, "command"), "length"))
        output = jsops.length(_need(prop(message, "output"), "length"))
        return jsops.ceil_div4(jsops.add(command, output))
    if role == "branchSummary" or role == "compactionSummary":
        return jsops.ceil_div4(jsops.length(_need(prop(message, "summary"), "length")))
    return 0


def _need(value: Any, reading: str) -> Any:
    if value is None or value is UNDEFINED:
        kind = "null" if value is None else "undefined"
        raise jsops.type_error(f"Cannot read properties of {kind} (reading '{reading}')")
    return value


def sum_tokens(messages: list[Any], estimates: list[Any] | None = None) -> Any:
    """Sum of ``estimateTokens`` over ``messages`` (``estimates``: the same, computed already)."""
    total: Any = 0
    for value in estimates if estimates is not None else map(estimate_tokens, messages):
        total = total + value if type(total) is int and type(value) is int else jsops.add(total, value)
    return total


# -- usage ----------------------------------------------------------------------------------


def calculate_context_tokens(usage: Any) -> Any:
    """Pi's ``calculateContextTokens``: ``totalTokens`` or the sum of the four counters."""
    total = prop(usage, "totalTokens")
    if truthy(total):
        return total
    s = jsops.add(prop(usage, "input"), prop(usage, "output"))
    s = jsops.add(s, prop(usage, "cacheRead"))
    return jsops.add(s, prop(usage, "cacheWrite"))


def assistant_usage(message: Any) -> Any:
    """Pi's ``getAssistantUsage``: usage of a finished, non-empty assistant reply, else None."""
    if type(message) is not dict or message.get("role") != "assistant" or "usage" not in message:
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message["usage"]
    if not truthy(usage):
        return None
    return usage if jsops.gt_zero(calculate_context_tokens(usage)) else None


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    """Pi's ``ContextUsageEstimate``."""

    tokens: Any
    usage_tokens: Any
    trailing_tokens: Any
    last_usage_index: int | None

    def to_json(self) -> dict[str, Any]:
        return record_json(self)


def estimate_context_tokens(messages: list[Any], estimates: list[Any] | None = None) -> ContextEstimate:
    """Pi's ``estimateContextTokens``: last valid assistant usage + estimates after it.

    ``estimates``, if given, is ``[estimate_tokens(m) for m in messages]`` computed already.
    """
    for i in range(len(messages) - 1, -1, -1):
        usage = assistant_usage(messages[i])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum_tokens(messages[i + 1 :], None if estimates is None else estimates[i + 1 :])
            return ContextEstimate(jsops.add(usage_tokens, trailing), usage_tokens, trailing, i)
    estimated = sum_tokens(messages, estimates)
    return ContextEstimate(estimated, 0, estimated, None)


def nan_to_none(value: Any) -> Any:
    return None if type(value) is float and math.isnan(value) else value
