"""What ``pitools search`` can find in an entry: its role, tool names, text and thinking.

Searchable, per entry:

* user and assistant messages: their text (a string, or ``text`` blocks);
* assistant tool calls: the tool's name and its arguments (as JSON);
* tool results: the text blocks of the result (role ``toolResult``, the tool's name kept);
* ``bashExecution`` messages (``!cmd`` in Pi): the command and its output;
* custom messages (``custom_message`` entries, ``custom`` role messages): their text;
* ``compaction`` and ``branch_summary`` entries (and the v2 summary messages): the summary.

Thinking blocks are kept apart so that search can leave them out unless asked (``--thinking``).
Everything is taken only from values of the expected types; anything else is skipped.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pitools.core.js.types import Entry, JsValue

# No dataclass and no orjson at import: a warm ``pitools search`` imports this module on its
# start-up path, and needs orjson only when a matching entry holds a tool call's arguments.
_dumps: Any = None

ROLE_USER = "user"
ROLE_ASSISTANT = "assistant"
ROLE_TOOL_RESULT = "toolResult"
ROLE_BASH = "bashExecution"
ROLE_CUSTOM = "custom"
ROLE_COMPACTION = "compaction"
ROLE_BRANCH_SUMMARY = "branchSummary"
ROLES = (ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL_RESULT, ROLE_BASH, ROLE_CUSTOM, ROLE_COMPACTION, ROLE_BRANCH_SUMMARY)

_SUMMARY_ROLES = {"compactionSummary": ROLE_COMPACTION, "branchSummary": ROLE_BRANCH_SUMMARY}


class EntryText:
    __slots__ = ("parts", "role", "thinking", "tools")

    def __init__(self) -> None:
        self.role: str | None = None
        self.tools: list[str] = []
        self.parts: list[str] = []
        self.thinking: list[str] = []

    @property
    def text(self) -> str:
        return "\n".join(self.parts)

    @property
    def thinking_text(self) -> str:
        return "\n".join(self.thinking)


def _blocks(content: JsValue, out: EntryText, *, tool_calls: bool = False) -> None:
    if type(content) is str:
        out.parts.append(content)
        return
    if type(content) is not list:
        return
    for block in content:
        if type(block) is not dict:
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if type(text) is str:
                out.parts.append(text)
        elif kind == "thinking":
            text = block.get("thinking")
            if type(text) is str:
                out.thinking.append(text)
        elif kind == "toolCall" and tool_calls:
            name = block.get("name")
            if type(name) is str:
                out.tools.append(name)
                out.parts.append(name)
            args = block.get("arguments")
            if args is not None:
                dumped = args_json(args)
                if dumped is not None:
                    out.parts.append(dumped)


def args_json(args: JsValue) -> str | None:
    """``orjson.dumps(args)`` as text, or None where orjson refuses the value.

    A process that has not loaded orjson (the warm ``pitools search``) writes plain values
    itself rather than import it for one tool call (~20 ms of start-up); the two agree on
    every value :func:`_plain_json` accepts (tests/unit/ops/test_search_core.py)."""
    global _dumps
    if _dumps is None:
        if "orjson" not in sys.modules:
            text = _plain_json(args)
            if text is not None:
                return text
        import orjson

        _dumps = orjson.dumps
    try:
        dumped: bytes = _dumps(args)
    except TypeError:  # orjson.JSONEncodeError: a value it cannot write
        return None
    return dumped.decode("utf-8")


def _plain_json(value: JsValue) -> str | None:
    """``orjson.dumps(value)`` for plain values (64-bit integers, nesting under 200 levels: orjson
    stops at 255), else None (floats: orjson has its own number forms)."""
    from pitools.core.js.json.lean import plain_json

    return plain_json(value, min_int=-(1 << 63), max_int=(1 << 64) - 1, max_depth=200)


def entry_text(entry: Entry) -> EntryText:
    """The searchable text of one entry (empty for entries that hold none)."""
    out = EntryText()
    if type(entry) is not dict:
        return out
    etype = entry.get("type")
    if etype == "message":
        message = entry.get("message")
        if type(message) is not dict:
            return out
        role = message.get("role")
        if role == "user":
            out.role = ROLE_USER
            _blocks(message.get("content"), out)
        elif role == "assistant":
            out.role = ROLE_ASSISTANT
            _blocks(message.get("content"), out, tool_calls=True)
        elif role == "toolResult":
            out.role = ROLE_TOOL_RESULT
            name = message.get("toolName")
            if type(name) is str:
                out.tools.append(name)
            _blocks(message.get("content"), out)
        elif role == "bashExecution":
            out.role = ROLE_BASH
            out.tools.append("bash")
            for key in ("command", "output"):
                value = message.get(key)
                if type(value) is str:
                    out.parts.append(value)
        elif role == "custom":
            out.role = ROLE_CUSTOM
            _blocks(message.get("content"), out)
        elif role in _SUMMARY_ROLES:
            out.role = _SUMMARY_ROLES[role]
            summary = message.get("summary")
            if type(summary) is str:
                out.parts.append(summary)
    elif etype == "custom_message":
        out.role = ROLE_CUSTOM
        _blocks(entry.get("content"), out)
    elif etype in ("compaction", "branch_summary"):
        out.role = ROLE_COMPACTION if etype == "compaction" else ROLE_BRANCH_SUMMARY
        summary = entry.get("summary")
        if type(summary) is str:
            out.parts.append(summary)
    return out
