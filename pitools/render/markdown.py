"""Markdown transcripts of Pi messages (``context --format markdown``).

All session text is inert (see :mod:`pitools.render.mdsafe`): bodies, thinking, tool arguments
and output go in fences longer than any backtick run inside; roles, ids, names and types are
escaped onto one line or shown as code spans.
"""

from __future__ import annotations

from typing import Any

from pitools.core.js.json.encode import js_stringify
from pitools.core.js.value import UNDEFINED
from pitools.render.md_args import arguments_markdown
from pitools.render.mdsafe import code, fence, html_text, inline

FOLD_CHARS = 2000


def _json(value: Any) -> str:
    return js_stringify(value) or ""


def _fold(text: str) -> str:
    if len(text) <= FOLD_CHARS:
        return text
    return text[:FOLD_CHARS] + f"\n… [{len(text) - FOLD_CHARS} more characters folded]"


def _str(value: Any) -> str:
    if type(value) is str:
        return value
    if value is UNDEFINED:
        return "undefined"
    return js_stringify(value) or str(value)


def _blocks(content: Any) -> list[str]:
    if isinstance(content, str):
        return [fence(content, "markdown")]
    out: list[str] = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            out.append(fence(_str(b.get("text", "")), "markdown"))
        elif t == "thinking":
            thinking = _str(b.get("thinking", ""))
            summary = html_text(f"thinking ({len(thinking)} chars)")
            out.append(f"<details><summary>{summary}</summary>\n\n{fence(thinking, 'text')}\n\n</details>")
        elif t == "image":
            out.append(f"*\\[image: {inline(_str(b.get('mimeType', 'unknown type')))}\\]*")
        elif t == "toolCall":
            args = b.get("arguments")
            body = arguments_markdown(args, _json, fence, code) or fence(_json(args), "json")
            out.append(f"**Tool call** {code(_str(b.get('name')))}\n\n" + body)
    return out


def _output_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [_str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts) if isinstance(content, list) else ""


def message_markdown(message: Any, n: int, source_id: Any, source_type: Any, tokens: Any) -> str:
    """One message as a Markdown section with its provenance."""
    if not isinstance(message, dict):
        return f"### {n}. (not a message)\n\n{fence(_str(message))}\n"
    role = message.get("role")
    sid = "no id" if source_id is UNDEFINED else _str(source_id)
    head = f"### {n}. {inline(_str(role))} — {code(sid)} ({inline(_str(source_type))}, ~{tokens} tokens)"
    body: list[str] = []
    if role in ("compactionSummary", "branchSummary"):
        body.append(fence(_str(message.get("summary", "")), "markdown"))
    elif role == "toolResult":
        err = " (error)" if message.get("isError") else ""
        body.append(f"Result of {code(_str(message.get('toolName')))}{err}:")
        body.append(fence(_fold(_output_text(message.get("content")))))
    elif role == "bashExecution":
        body.append(f"{code('$ ' + _str(message.get('command')))} (exit {inline(_str(message.get('exitCode')))})")
        body.append(fence(_fold(_str(message.get("output", "")))))
    else:
        body.extend(_blocks(message.get("content")))
        if role == "system" and isinstance(message.get("sections"), dict):
            for name, value in message["sections"].items():
                shown = fence(_str(value)) if value is not None else "(removed)"
                body.append(f"**Section {code(name)}**:\n\n{shown}")
    return head + "\n\n" + "\n\n".join(body) + "\n"
