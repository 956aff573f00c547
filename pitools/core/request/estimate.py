"""pi-ai's input-token estimate (``src/utils/estimate.ts``, ``dist/utils/estimate.js``).

pi-ai names it ``estimateContextTokens``, and so does Pi's compaction code for a different rule;
pitools calls this one :func:`estimate_input_tokens`. It measures what a request sends, to fit
``max_tokens`` into the context window (``clampMaxTokensToContext``) and to warn before the
provider would refuse (``request --check``). It is not Pi's own
:func:`pitools.core.context.tokens.estimate_context_tokens` (``compaction.ts``), which decides
when Pi compacts and what ``context`` reports:

====================  ==========================================  ==========================================
                      here (pi-ai, the request)                   core/context/tokens.py (Pi, compaction)
====================  ==========================================  ==========================================
characters per token  3.5                                         4
messages              pi-ai's LLM messages; a system message      Pi's agent messages (bash executions,
                      counts its sections and the tools it        summaries, custom messages); a system
                      adds *and* removes                          message counts the tools it adds
anchoring usage       the last usable one that is not older than  the last usable one in list order
                      a message before it (timestamps)
result                a number                                    a :class:`ContextEstimate`
====================  ==========================================  ==========================================

``tests/unit/request/test_estimate.py`` checks both against the two JavaScript functions on the
same messages, and that they disagree.
"""

from __future__ import annotations

import math
from typing import Any

from pitools.core.js.access import get
from pitools.core.js.json.encode import js_stringify
from pitools.core.js.value import UNDEFINED, js_truthy, utf16_len
from pitools.core.request.text import system_message_text

_CHARS_PER_TOKEN = 3.5
_IMAGE_CHARS = 4800


def _safe_stringify_len(value: Any) -> int:
    text = js_stringify(value)
    return utf16_len("undefined" if text is None else text)


def _content_chars(content: Any) -> int:
    if type(content) is str:
        return utf16_len(content)
    chars = 0
    for block in content:
        chars += utf16_len(block.get("text", "")) if get(block, "type") == "text" else _IMAGE_CHARS
    return chars


def _text_tokens(text: str) -> int:
    return math.ceil(utf16_len(text) / _CHARS_PER_TOKEN)


def _tools_tokens(tools: Any) -> int:
    if not tools or type(tools) is not list:
        return 0
    return math.ceil(_safe_stringify_len(tools) / _CHARS_PER_TOKEN)


def estimate_input_message_tokens(message: Any) -> int:
    """pi-ai ``estimateMessageTokens``: ``ceil(chars / 3.5)`` for one LLM message."""
    role = get(message, "role")
    if role == "system":
        return (
            _text_tokens(system_message_text(message))
            + _tools_tokens(get(message, "toolsAdded"))
            + _tools_tokens(get(message, "toolsRemoved"))
        )
    if role in ("user", "toolResult"):
        return math.ceil(_content_chars(message["content"]) / _CHARS_PER_TOKEN)
    chars = 0
    for block in message["content"]:
        btype = get(block, "type")
        if btype == "text":
            chars += utf16_len(block.get("text", ""))
        elif btype == "thinking":
            chars += utf16_len(block.get("thinking", ""))
        else:
            chars += utf16_len(str(block.get("name", ""))) + _safe_stringify_len(block.get("arguments", UNDEFINED))
    return math.ceil(chars / _CHARS_PER_TOKEN)


def _usage_tokens(usage: Any) -> float:
    total = get(usage, "totalTokens")
    if js_truthy(total):
        return float(total) if type(total) in (int, float) else math.nan
    parts = [get(usage, k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    if all(type(p) in (int, float) for p in parts):
        return float(sum(parts))
    return math.nan


def estimate_input_tokens(messages: list[Any]) -> float:
    """pi-ai ``estimateContextTokens(context).tokens``: the input a request carries, as the last
    usable usage (in timestamp order) plus ``ceil(chars / 3.5)`` for each message after it."""
    latest_prefix = -math.inf
    usage_index: int | None = None
    usage_tokens = 0.0
    for i, message in enumerate(messages):
        if type(message) is not dict:  # (``get`` inlined: this runs over the whole transcript)
            latest_prefix = math.nan
            continue
        ts: Any = message.get("timestamp")
        number = type(ts) is int or type(ts) is float
        if (
            number
            and message.get("role") == "assistant"
            and ts >= latest_prefix
            and message.get("stopReason") not in ("aborted", "error")
        ):
            usage = message.get("usage", UNDEFINED)
            total = usage.get("totalTokens") if type(usage) is dict else None
            # the usual usage (a positive totalTokens) without the call; the rest by _usage_tokens
            tokens = float(total) if type(total) is int and total > 0 else _usage_tokens(usage)
            if tokens > 0:
                usage_index, usage_tokens = i, tokens
        if not number:
            latest_prefix = math.nan
        elif ts > latest_prefix:  # max(latest_prefix, ts), without the call
            latest_prefix = ts
    if usage_index is not None:
        return usage_tokens + sum(estimate_input_message_tokens(m) for m in messages[usage_index + 1 :])
    return sum(estimate_input_message_tokens(m) for m in messages)
