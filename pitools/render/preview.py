"""Short, safe, one-line previews of Pi messages and entries for human output."""

from __future__ import annotations

from typing import Any

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.types import Entry, JsValue

ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """One line, at most ``limit`` characters, with a visible marker when cut.

    Whitespace runs become one space. The marker counts what is not shown: on the flattened text
    when the text is short; on a long text only its head is flattened (a human view of a 100 MB
    session previews thousands of tool results: flattening each whole doubled its time), so the
    count beyond the head is of the raw characters.
    """
    window = 8 * limit + 64
    if len(text) <= window:
        flat = " ".join(text.split())
        rest = 0
    else:
        flat = " ".join(text[:window].split())
        rest = len(text) - window
        if len(flat) <= limit:  # mostly whitespace: flatten it all after all
            flat, rest = " ".join(text.split()), 0
    if len(flat) <= limit and not rest:
        return flat
    return flat[: max(0, limit - 12)] + f"{ELLIPSIS} [+{len(flat) - limit + 12 + rest} chars]"


def block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return str(block)
    btype = block.get("type")
    if btype == "text":
        return str(block.get("text", ""))
    if btype == "thinking":
        n = len(str(block.get("thinking", "")))
        return f"[thinking: {n} chars]" if not block.get("redacted") else "[redacted thinking]"
    if btype == "image":
        return f"[image {block.get('mimeType', '?')}]"
    if btype == "toolCall":
        return f"{block.get('name')}({tool_args(block.get('arguments'))})"
    return f"[{btype} block]"


def tool_args(args: JsValue, limit: int = 160) -> str:
    if isinstance(args, dict):
        parts = [f"{k}={js_stringify(v)}" for k, v in args.items()]
        return clip(", ".join(parts), limit)
    return clip(js_stringify(args) or "", limit)


def content_preview(content: JsValue) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(block_text(b) for b in content)
    return "" if content is None else str(content)


def message_preview(message: Any, limit: int = 200) -> str:
    """What a reader needs to recognise a message: text, tool calls, results, summaries."""
    if message is None:
        return "[message without a message]"  # the words of the tree view (core/views/branches.py)
    if not isinstance(message, dict):
        return clip(f"[message is not an object: {js_stringify(message)}]", limit)
    role = message.get("role")
    if role == "assistant":
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        texts = [block_text(b) for b in blocks if isinstance(b, dict) and b.get("type") in ("text", "thinking")]
        calls = [block_text(b) for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"]
        text = " ".join(t for t in texts if t)
        if calls:
            text = (text + " " if text else "") + "→ " + "; ".join(calls)
        if message.get("stopReason") in ("error", "aborted"):
            text = f"[{message.get('stopReason')}] " + text
        return clip(text, limit)
    if role == "toolResult":
        prefix = f"{message.get('toolName', '?')}{' ERROR' if message.get('isError') else ''}: "
        return clip(prefix + content_preview(message.get("content")), limit)
    if role in ("compactionSummary", "branchSummary"):
        return clip(str(message.get("summary", "")), limit)
    if role == "bashExecution":
        return clip(f"$ {message.get('command')} → {message.get('output', '')}", limit)
    if role == "system":
        extra = ""
        if message.get("toolsAdded"):
            extra = f" [+{len(message['toolsAdded'])} tools]"
        return clip(content_preview(message.get("content")) + extra, limit)
    if role == "custom":
        return _custom_preview(message, limit)
    return clip(content_preview(message.get("content")), limit)


def _custom_preview(custom: dict[str, Any], limit: int) -> str:
    """``<customType> content``: a custom message, whether met as a message or as the
    ``custom_message`` entry Pi makes it from (the two carry the same two fields)."""
    return clip(f"<{custom.get('customType')}> " + content_preview(custom.get("content")), limit)


def entry_preview(entry: Entry, limit: int = 200) -> str:
    """A preview for any entry type (metadata entries included)."""
    if not isinstance(entry, dict):
        return clip(f"(not an object: {js_stringify(entry)})", limit)
    etype = entry.get("type")
    if etype == "message":
        return message_preview(entry.get("message"), limit)
    if etype == "model_change":
        return f"model → {entry.get('provider')}/{entry.get('modelId')}"
    if etype == "thinking_level_change":
        return f"thinking → {entry.get('thinkingLevel')}"
    if etype == "compaction":
        return clip(f"kept from {entry.get('firstKeptEntryId')}; {entry.get('summary', '')}", limit)
    if etype == "branch_summary":
        return clip(f"from {entry.get('fromId')}: {entry.get('summary', '')}", limit)
    if etype == "context_edit":
        rep = entry.get("replacement")
        what = (
            "omit"
            if rep is None
            else "replace: " + content_preview(rep.get("content") if isinstance(rep, dict) else rep)
        )
        return clip(f"edit {entry.get('targetId')} ({what})", limit)
    if etype == "label":
        return (
            f"label {entry.get('targetId')} = {entry.get('label')!r}"
            if entry.get("label")
            else f"clear label on {entry.get('targetId')}"
        )
    if etype == "session_info":
        return f"name = {entry.get('name')!r}"
    if etype == "custom":
        return clip(f"<{entry.get('customType')}> {js_stringify(entry.get('data')) or ''}", limit)
    if etype == "custom_message":
        return _custom_preview(entry, limit)
    if etype == "usage":
        return clip(f"{entry.get('kind')} usage {entry.get('provider')}/{entry.get('model')}", limit)
    return clip(js_stringify(entry) or "", limit)


def entry_tag(entry: Entry) -> str:
    """A short role/type tag: user, assistant, tool, compaction, ..."""
    if not isinstance(entry, dict):
        return "?"
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        role = msg.get("role") if isinstance(msg, dict) else None
        if role is None:
            return "message"
        return {"toolResult": "tool", "bashExecution": "bash"}.get(str(role), str(role))
    return {
        "thinking_level_change": "thinking",
        "model_change": "model",
        "branch_summary": "branch-summary",
        "custom_message": "custom-msg",
        "session_info": "name",
        "context_edit": "edit",
    }.get(str(etype), str(etype))
