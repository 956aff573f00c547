"""Markdown transcripts of Pi messages."""

from __future__ import annotations

from typing import Any

from pitools.core.js.value import UNDEFINED, js_stringify
from pitools.render.md_args import arguments_markdown
from pitools.render.md_text import code_span, no_headings

FOLD_CHARS = 2000


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _json(value: Any) -> str:
    return js_stringify(value) or ""


def _fold(text: str) -> str:
    if len(text) <= FOLD_CHARS:
        return text
    return text[:FOLD_CHARS] + f"\n… [{len(text) - FOLD_CHARS} more characters folded]"


def _blocks(content: Any, markdown: bool = True) -> list[str]:
    # Text shown as Markdown (not inside a fence) gets no headings of its own: see md_text.
    shown = no_headings if markdown else str
    if isinstance(content, str):
        return [shown(content)]
    out: list[str] = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            out.append(shown(str(b.get("text", ""))))
        elif t == "thinking":
            thinking = str(b.get("thinking", ""))
            out.append(f"<details><summary>thinking ({len(thinking)} chars)</summary>\n\n{thinking}\n\n</details>")
        elif t == "image":
            out.append(f"*[image: {b.get('mimeType', 'unknown type')}]*")
        elif t == "toolCall":
            args = b.get("arguments")
            body = arguments_markdown(args, _json, _fence, code_span) or _fence(_json(args), "json")
            out.append(f"**Tool call** `{b.get('name')}`\n\n" + body)
    return out


def message_markdown(message: Any, n: int, source_id: Any, source_type: Any, tokens: Any) -> str:
    """One message as a Markdown section with its provenance."""
    if not isinstance(message, dict):
        return f"### {n}. (not a message)\n\n{_fence(str(message))}\n"
    role = message.get("role")
    sid = "no id" if source_id is UNDEFINED else source_id
    head = f"### {n}. {role} — `{sid}` ({source_type}, ~{tokens} tokens)"
    body: list[str] = []
    if role in ("compactionSummary", "branchSummary"):
        body.append(no_headings(str(message.get("summary", ""))))
    elif role == "toolResult":
        err = " (error)" if message.get("isError") else ""
        body.append(f"Result of `{message.get('toolName')}`{err}:")
        body.append(_fence(_fold("\n".join(_blocks(message.get("content"), markdown=False)))))
    elif role == "bashExecution":
        body.append(f"`$ {message.get('command')}` (exit {message.get('exitCode')})")
        body.append(_fence(_fold(str(message.get("output", "")))))
    else:
        body.extend(_blocks(message.get("content")))
        if role == "system" and isinstance(message.get("sections"), dict):
            for name, value in message["sections"].items():
                body.append(f"**Section `{name}`**: {value if value is not None else '(removed)'}")
    return head + "\n\n" + "\n\n".join(body) + "\n"
