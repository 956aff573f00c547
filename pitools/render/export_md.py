"""Readable transcripts of a branch or of the whole tree: the shared view model and Markdown.

:func:`build_transcript` turns the entries into :class:`EntryView` items (a flat stream with
branch open/close marks for ``--all``); :func:`markdown_pieces` lays those out (the HTML
export is the viewer, :mod:`pitools.render.viewer_html`). Every entry type is shown: messages of every
role, tool calls with their arguments, tool results (long ones folded), thinking (collapsed),
images (placeholders, or embedded as data URIs), compactions and branch summaries as call-outs,
model and thinking-level changes, names, context edits, custom entries, labels and timestamps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from pitools.core.js.value import UNDEFINED
from pitools.render.md_args import arguments_markdown
from pitools.render.mdsafe import code, fence, fence_ticks, html_text, inline, prose, quote
from pitools.render.pretty import MAX_CHARS, MAX_INDENT_DEPTH, pretty_json
from pitools.render.vocab import money
from pitools.render.vocab import size as _size

#: Tool output longer than this (characters or lines) is folded.
FOLD_CHARS = 1500
FOLD_LINES = 25
# Matched with fullmatch: "$" would also accept a trailing newline ("image/png\n").
_MIME = re.compile(r"image/[A-Za-z0-9.+-]{1,64}")
#: The base64 alphabet (without the padding).
_B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _base64_size(data: str) -> int | None:
    """The number of bytes ``data`` decodes to when it is strict base64 (alphabet characters,
    then at most two ``=``, a multiple of four long), else None.

    Worked out, not decoded: every such text decodes under ``base64.b64decode(data,
    validate=True)`` (a test compares the two), each four characters to three bytes, less one
    per ``=``. Decoding a session's images only to measure them was the most expensive step
    of a Markdown export full of screenshots, and the regular expression this replaces the second.
    """
    core = data.rstrip("=")
    pads = len(data) - len(core)
    if pads > 2 or len(data) % 4 or not core.isascii() or core.encode("ascii").translate(None, _B64_ALPHABET):
        return None
    return len(data) // 4 * 3 - pads


@dataclass(slots=True)
class Part:
    """One piece of an entry's body."""

    kind: str  # text, thinking, tool-call, output, image, json, quote
    #: The body (empty for a tool call: its JSON is made from ``args`` by :func:`tool_call_json`).
    text: str = ""
    title: str = ""
    mime: str = ""
    data: str = ""
    error: bool = False
    #: A tool call's arguments as found (Markdown shows multi-line strings as blocks of their own).
    args: Any = UNDEFINED

    @property
    def folded(self) -> bool:
        return len(self.text) > FOLD_CHARS or self.text.count("\n") >= FOLD_LINES


@dataclass(slots=True)
class EntryView:
    """One entry as the transcript shows it."""

    entry_id: str
    kind: str  # user, assistant, tool, bash, system, custom, compaction, branch-summary, event, other
    title: str
    timestamp: str | None
    labels: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    meta: list[str] = field(default_factory=list)
    #: A one-line event (model change, name, ...) rather than a full block.
    inline: bool = False


@dataclass(frozen=True, slots=True)
class BranchMark:
    number: int
    of: int
    parent_id: str | None


@dataclass(slots=True)
class Transcript:
    """What an export shows: session facts and a stream of entries and branch marks."""

    path: str
    header: dict[str, Any]
    name: str | None
    all: bool
    leaf: str | None
    entry_count: int
    leaf_count: int
    #: ("entry", EntryView) | ("open", BranchMark) | ("close", None), made as they are read:
    #: a transcript can be written once.
    items: Iterable[tuple[str, Any]]
    embed_images: bool

    @property
    def title(self) -> str:
        return self.name or f"Session {_text(self.header.get('id'))}"


def _text(value: Any) -> str:
    if type(value) is str:
        return value
    if value is None or value is UNDEFINED:
        return ""
    return pretty_json(value, max_depth=0, max_chars=10_000)  # one line, any depth, bounded


def _pretty(value: Any) -> str:
    # Bounded: indentation stops at a fixed depth and the size is capped (hostile nesting).
    if _orjson_prints_alike(value):
        try:
            text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:  # a lone surrogate: pretty_json escapes it
            return pretty_json(value)
        if len(text) <= MAX_CHARS:
            return text
    return pretty_json(value)


#: Integers printed as they are (beyond this, pretty_json goes through a double first).
_SAFE_INT = 2**53


def _orjson_prints_alike(value: Any) -> bool:
    """Whether orjson's two-space indentation prints ``value`` exactly as :func:`pretty_json` does.

    True for containers of strings, safe integers, booleans and nulls whose non-empty containers
    all sit above pretty_json's indentation limit: both then indent by two spaces, escape strings
    alike (short forms, ``\\u00XX`` for other controls, non-ASCII kept) and print ``{}``/``[]``.
    Floats (number forms differ), big integers and anything else take pretty_json's way, and so
    does a lone surrogate (orjson refuses it). tests/unit/render/test_export_stream.py compares
    the two on generated values.
    """
    t = type(value)
    if t is not dict and t is not list:
        return False
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if not node:
            continue
        if depth >= MAX_INDENT_DEPTH:
            return False
        for child in node.values() if type(node) is dict else node:
            ct = type(child)
            if ct is str or child is None or ct is bool:
                continue
            if ct is dict or ct is list:
                push((child, depth + 1))
            elif ct is not int or not -_SAFE_INT <= child <= _SAFE_INT:
                return False
    return True


def tool_call_json(part: Part) -> str:
    """A tool call's arguments as indented JSON (bounded like every value shown)."""
    return _pretty(part.args)


def _image_part(block: dict[str, Any]) -> Part:
    mime = block.get("mimeType")
    data = block.get("data")
    mime_s = mime if type(mime) is str and _MIME.fullmatch(mime) else ""
    decoded = _base64_size(data) if isinstance(data, str) and data else None
    data_s = data if isinstance(data, str) and decoded is not None else ""
    size = _size(decoded) if decoded is not None else ""
    title = f"image {mime_s or _text(mime) or 'of unknown type'}" + (f", {size}" if size else "")
    return Part("image", title=title, mime=mime_s, data=data_s if mime_s else "")


def content_parts(content: Any, *, as_output: bool = False) -> list[Part]:
    """Parts for a message ``content`` (a string or a list of blocks)."""
    if type(content) is str:
        return [Part("output" if as_output else "text", content)]
    if type(content) is not list:
        return [] if content is None or content is UNDEFINED else [Part("json", _pretty(content), "content")]
    parts: list[Part] = []
    texts: list[str] = []
    for block in content:
        btype = block.get("type") if type(block) is dict else None
        if btype == "text" and as_output:
            texts.append(_text(block.get("text")))
            continue
        if texts:
            parts.append(Part("output", "\n".join(texts)))
            texts = []
        if btype == "text":
            parts.append(Part("text", _text(block.get("text"))))
        elif btype == "thinking":
            if block.get("redacted"):
                parts.append(Part("thinking", "(redacted thinking)", "Thinking (redacted)"))
            else:
                thinking = _text(block.get("thinking"))
                parts.append(Part("thinking", thinking, f"Thinking ({len(thinking):,} characters)"))
        elif btype == "image":
            parts.append(_image_part(block))
        elif btype == "toolCall":
            args = block.get("arguments", UNDEFINED)
            name = _text(block.get("name"))
            call_id = _text(block.get("id"))
            title = f"{name}" + (f" ({call_id})" if call_id else "")
            # The arguments' JSON is made by the renderer, only if it shows it (see tool_call_json).
            parts.append(Part("tool-call", "", title, args=args))
        else:
            parts.append(Part("json", _pretty(block), f"{_text(btype) or 'unknown'} block"))
    if texts:
        parts.append(Part("output", "\n".join(texts)))
    return parts


#: Token counts shown for a usage record, in this order, with their words.
_USAGE_FIELDS = (("input", "in"), ("output", "out"), ("cacheRead", "cache read"), ("cacheWrite", "cache write"))


def _usage_meta(usage: Any) -> str | None:
    if type(usage) is not dict:
        return None
    bits = []
    get = usage.get
    for key, label in _USAGE_FIELDS:
        v = get(key)
        if v and (type(v) is int or type(v) is float):  # not bool: its type is bool
            bits.append(f"{label} {v:,}")
    cost = get("cost")
    total = cost.get("total") if type(cost) is dict else None
    if total and (type(total) is int or type(total) is float):
        bits.append(money(total))
    return "tokens " + ", ".join(bits) if bits else None


def _message_view(entry: dict[str, Any], base: EntryView) -> EntryView:
    message = entry.get("message", UNDEFINED)
    if type(message) is not dict:
        base.kind, base.title = "other", "Message (no message object)"
        base.parts.append(Part("json", _pretty(message), "message"))
        return base
    role = message.get("role")
    content = message.get("content", UNDEFINED)
    if role == "user":
        base.kind, base.title = "user", "User"
        base.parts.extend(content_parts(content))
    elif role == "assistant":
        base.kind = "assistant"
        provider, model_id = message.get("provider"), message.get("model")
        if provider is not None and model_id is not None:
            model = f"{_text(provider)}/{_text(model_id)}"
        else:
            model = _text(provider if model_id is None else model_id)  # "" when both are missing
        base.title = "Assistant" + (f" · {model}" if model else "")
        base.parts.extend(content_parts(content))
        stop = message.get("stopReason")
        if stop is not None:
            base.meta.append(f"stop: {_text(stop)}")
        if message.get("errorMessage"):
            base.parts.append(Part("output", _text(message.get("errorMessage")), "Error", error=True))
        usage = _usage_meta(message.get("usage"))
        if usage:
            base.meta.append(usage)
    elif role == "toolResult":
        base.kind = "tool"
        error = bool(message.get("isError"))
        base.title = f"Tool result · {_text(message.get('toolName')) or '?'}" + (" (error)" if error else "")
        parts = content_parts(content, as_output=True)
        for p in parts:
            p.error = error
        base.parts.extend(parts)
        call_id = message.get("toolCallId")
        if call_id is not None:
            base.meta.append(f"call {_text(call_id)}")
    elif role == "bashExecution":
        base.kind, base.title = "bash", f"Shell · $ {_text(message.get('command'))}"
        base.parts.append(Part("output", _text(message.get("output")), error=message.get("exitCode") not in (0, None)))
        base.meta.append(f"exit {_text(message.get('exitCode'))}")
        if message.get("excludeFromContext"):
            base.meta.append("not sent to the model")
    elif role == "system":
        base.kind, base.title = "system", "System prompt"
        text = content if type(content) is str else _text(content)
        if text:
            base.parts.append(Part("output", text, "System prompt"))
        sections = message.get("sections")
        if type(sections) is dict:
            for name, value in sections.items():
                shown = "(removed)" if value is None else _text(value)
                base.parts.append(Part("output", shown, f"Section {name}"))
        for key, word in (("toolsAdded", "Tools added"), ("toolsRemoved", "Tools removed")):
            if message.get(key):
                base.parts.append(Part("json", _pretty(message.get(key)), word))
    elif role == "custom":
        base.kind, base.title = "custom", f"Custom message · {_text(message.get('customType'))}"
        base.parts.extend(content_parts(content))
    elif role in ("compactionSummary", "branchSummary"):
        base.kind = "compaction" if role == "compactionSummary" else "branch-summary"
        base.title = "Compaction summary" if role == "compactionSummary" else "Branch summary"
        base.parts.append(Part("quote", _text(message.get("summary"))))
    else:
        base.kind, base.title = "other", f"Message · role {_text(role)}"
        base.parts.extend(content_parts(content))
    return base


def entry_view(entry: Any, labels: list[str]) -> EntryView:
    """One entry of any type as a transcript block."""
    if type(entry) is not dict:
        return EntryView("", "other", "Not an object", None, labels, [Part("json", _pretty(entry), "value")])
    etype = entry.get("type")
    ts = entry.get("timestamp")
    view = EntryView(_text(entry.get("id")), "event", _text(etype), _text(ts) if ts is not None else None, labels)
    if etype == "message":
        return _message_view(entry, view)
    if etype == "compaction":
        view.kind, view.title = "compaction", "Compaction: earlier messages summarized"
        view.meta.append(f"kept from {_text(entry.get('firstKeptEntryId')) or '(nothing)'}")
        view.meta.append(f"tokens before {_text(entry.get('tokensBefore'))}")
        view.parts.append(Part("quote", _text(entry.get("summary"))))
    elif etype == "branch_summary":
        view.kind, view.title = "branch-summary", "Branch summary: the abandoned branch, summarized"
        view.meta.append(f"from {_text(entry.get('fromId'))}")
        summary = _text(entry.get("summary"))
        view.parts.append(Part("quote", summary or "(empty summary: Pi adds nothing to the context)"))
    elif etype == "model_change":
        view.inline, view.title = (
            True,
            f"Model → {_text(entry.get('provider'))}/{_text(entry.get('modelId'))}",
        )
    elif etype == "thinking_level_change":
        view.inline, view.title = True, f"Thinking level → {_text(entry.get('thinkingLevel'))}"
    elif etype == "session_info":
        name = entry.get("name")
        view.inline, view.title = True, f"Session named “{_text(name)}”" if name else "Session name cleared"
    elif etype == "label":
        target = _text(entry.get("targetId"))
        label = entry.get("label")
        view.inline = True
        view.title = f"Label “{_text(label)}” on {target}" if label else f"Label cleared on {target}"
    elif etype == "context_edit":
        replacement = entry.get("replacement", UNDEFINED)
        target = _text(entry.get("targetId"))
        if replacement is None:
            view.inline, view.title = True, f"Context edit: {target} hidden from the model"
        else:
            view.title = f"Context edit: {target} replaced"
            rep = replacement.get("content", UNDEFINED) if type(replacement) is dict else replacement
            view.parts.extend(content_parts(rep, as_output=True))
    elif etype == "custom_message":
        view.kind, view.title = "custom", f"Custom message · {_text(entry.get('customType'))}"
        view.parts.extend(content_parts(entry.get("content", UNDEFINED)))
        if entry.get("display") is False:
            view.meta.append("hidden in Pi's UI")
    elif etype == "custom":
        view.title = f"Custom entry · {_text(entry.get('customType'))}"
        view.parts.append(Part("json", _pretty(entry.get("data", UNDEFINED)), "data"))
    elif etype == "usage":
        view.inline = True
        view.title = f"Usage ({_text(entry.get('kind'))}) · {_text(entry.get('provider'))}/{_text(entry.get('model'))}"
        usage = _usage_meta(entry.get("usage"))
        if usage:
            view.title += f" · {usage}"
    else:
        view.kind, view.title = "other", f"Entry · {_text(etype) or '(no type)'}"
        view.parts.append(Part("json", _pretty(entry), "entry"))
    return view


def build_transcript(loaded: Any, leaf: Any, *, all_: bool = False, embed_images: bool = False) -> Transcript:
    """The entries to show: the branch root → ``leaf``, or with ``all_`` every branch of the tree.

    The entry views are made lazily, while the transcript is written (:attr:`Transcript.items`
    is a one-shot iterator), so a big session is never held twice in memory as views.
    """
    from pitools.core.session.fork import resolved_labels
    from pitools.core.session.name import session_name
    from pitools.core.session.tree import get_tree, mkey

    index = loaded.index
    labels: dict[Any, list[str]] = {}
    for key, (_target, label, _ts) in resolved_labels(index.entries).items():
        labels.setdefault(key, []).append(_text(label))

    def view(entry: Any) -> EntryView:
        return entry_view(entry, labels.get(mkey(entry.get("id") if type(entry) is dict else UNDEFINED), []))

    def shown(entry: Any) -> bool:
        # Labels appear on the entries they name, not as entries of their own.
        return not (type(entry) is dict and entry.get("type") == "label")

    def branch_items(branch: list[Any]) -> Iterator[tuple[str, Any]]:
        for entry in branch:
            if shown(entry):
                yield ("entry", view(entry))

    items: Iterator[tuple[str, Any]]
    if not all_:
        # The branch is resolved now: a cycle or a bad leaf fails before any output is written.
        items = branch_items(index.get_branch(leaf))
    else:
        items = _tree_items(get_tree(index), view, shown)
    try:
        name = session_name(list(index.entries))
    except Exception:  # Pi itself would throw on a non-string name; show none
        name = None
    return Transcript(
        path=str(loaded.path),
        header=dict(loaded.session.header or {}),
        name=name,
        all=all_,
        leaf=None if all_ else _text(leaf) or None,
        entry_count=len(index.entries),
        # Shown only for --all; counting leaves walks every entry.
        leaf_count=len(index.leaves()) if all_ else 0,
        items=items,
        embed_images=embed_images,
    )


def _tree_items(roots: list[Any], view: Any, shown: Any) -> Iterator[tuple[str, Any]]:
    """Pre-order walk of ``getTree`` with open/close marks around each branch (no recursion)."""
    seen: set[int] = set()
    stack: list[tuple[str, Any, BranchMark | None]] = []

    def push_group(nodes: list[Any], parent_id: str | None) -> None:
        nodes = [n for n in nodes if id(n) not in seen]
        if len(nodes) == 1:
            stack.append(("node", nodes[0], None))
            return
        for i in range(len(nodes) - 1, -1, -1):
            stack.append(("close", None, None))
            stack.append(("node", nodes[i], BranchMark(i + 1, len(nodes), parent_id)))

    push_group(roots, None)
    while stack:
        what, node, mark = stack.pop()
        if what == "close":
            yield ("close", None)
            continue
        if id(node) in seen:
            if mark is not None:
                yield ("open", mark)
            continue
        seen.add(id(node))
        if mark is not None:
            yield ("open", mark)
        if shown(node.entry):
            yield ("entry", view(node.entry))
        entry = node.entry
        push_group(node.children, _text(entry.get("id")) if type(entry) is dict else None)


# -- Markdown ---------------------------------------------------------------------------------
# Every piece of session text is made inert (pitools.render.mdsafe): message text and summaries are
# literal prose whose own code blocks become fences (mdsafe.prose); tool output and JSON go in
# fences longer than any backtick run inside; names, labels, ids, timestamps and meta lines are
# escaped onto one line; text inside <summary> is entity-escaped on one line.


def _fenced(out: list[str], text: str, lang: str) -> None:
    """``fence(text, lang)`` appended to ``out`` as three pieces (the text itself is not copied)."""
    ticks = fence_ticks(text)
    out.append(f"{ticks}{lang}\n")
    out.append(text)
    out.append(f"\n{ticks}")


def _folded(out: list[str], summary: str, text: str, lang: str) -> None:
    """A ``<details>`` block titled ``summary`` around ``text`` fenced as ``lang``, appended to ``out`` in pieces."""
    out.append(f"<details><summary>{html_text(summary)}</summary>\n\n")
    _fenced(out, text, lang)
    out.append("\n\n</details>")


def _part_md(out: list[str], part: Part, embed: bool) -> None:
    """One part appended to ``out`` (pieces that join to its Markdown)."""
    kind = part.kind
    if kind == "text":  # prose as prose; only the code blocks it holds are fenced
        out.append(prose(part.text))
    elif kind == "thinking":
        _folded(out, part.title or "Thinking", part.text, "text")
    elif kind == "tool-call":
        body = arguments_markdown(part.args, _pretty, fence, code) or fence(tool_call_json(part), "json")
        out.append(f"**Tool call** {code(part.title)}\n\n{body}")
    elif kind == "image":
        title = inline(part.title)
        if embed and part.data:
            # mime passed _MIME (a full match) and data _base64_size, so they cannot leave the link.
            out.append(f"![{title}](data:{part.mime};base64,{part.data})")
        else:
            out.append(f"*\\[{title}\\]*")
    elif kind == "quote":
        out.append(quote(prose(part.text)))
    else:
        lang = "json" if kind == "json" else "text"
        text = part.text
        if part.folded:
            lines = text.count("\n") + 1
            _folded(out, f"{part.title or 'Output'}: {lines:,} lines, {len(text):,} characters (folded)", text, lang)
        else:
            if part.title:
                out.append(f"**{inline(part.title)}**\n\n")
            _fenced(out, text, lang)


#: :func:`inline` of short entry titles, which repeat ("User", "Assistant · provider/model",
#: "Tool result · read"): made once each. Bounded in count and in length (a hostile file's
#: titles may all differ, or each hold megabytes of a model name).
_inline_short = lru_cache(maxsize=1024)(inline)


def _inline_title(title: str) -> str:
    return _inline_short(title) if len(title) <= 256 else inline(title)


def _entry_md(out: list[str], view: EntryView, embed: bool) -> None:
    """One entry appended to ``out`` in pieces: its block, ending in one line break."""
    bits = [_inline_title(view.title)]
    if view.entry_id:
        bits.append(code(view.entry_id))
    if view.timestamp:
        bits.append(inline(view.timestamp))
    head = " · ".join(bits)
    if view.labels:
        head += " · " + ", ".join(f"🏷 **{inline(lab)}**" for lab in view.labels)
    if view.inline:
        out.append(f"*{head}*\n")
        return
    out.append(f"### {head}")
    if view.meta:
        out.append("\n\n*" + inline(" · ".join(view.meta)) + "*")
    for part in view.parts:
        if part.kind == "text" and not part.text.strip():
            continue  # an empty text block shows nothing (it used to be an empty fence)
        out.append("\n\n")
        _part_md(out, part, embed)
    out.append("\n")


def markdown_pieces(t: Transcript) -> Iterator[str]:
    """The transcript as Markdown in pieces, made entry by entry as they are written.

    The pieces join to one document ending in exactly one line break. Every group of pieces
    (the header, an entry, a branch heading) holds text, so the document's trailing line
    breaks are all in the last group: it is held back and trimmed at the end.
    """
    held: list[str] | None = None
    for group in _markdown_groups(t):
        if held is not None:
            # One piece per group: the writer's loop runs once an entry, not once a piece.
            yield "".join(held)
        held = group
    yield "".join(held or ()).rstrip("\n") + "\n"


def _markdown_groups(t: Transcript) -> Iterator[list[str]]:
    h = t.header
    lines = [f"# {inline(t.title)}", ""]
    facts = [
        ("Session id", code(_text(h.get("id")))),
        ("File", code(t.path)),
        ("Working directory", code(_text(h.get("cwd")))),
        ("Created", inline(_text(h.get("timestamp")))),
    ]
    if h.get("parentSession"):
        facts.append(("Forked from", code(_text(h.get("parentSession")))))
    if t.all:
        facts.append(("Shown", f"the whole tree: {t.entry_count:,} entries, {t.leaf_count:,} leaves"))
    else:
        facts.append(("Shown", f"the branch ending at {code(t.leaf or '(none)')}"))
    lines.extend(f"- **{k}:** {v}" for k, v in facts)
    lines.append("")
    # The document is these blocks joined by line breaks: each later block brings its own.
    yield ["\n".join(lines)]
    depth = 0
    embed = t.embed_images
    for kind, item in t.items:
        if kind == "entry":
            out = ["\n---\n\n"]
            _entry_md(out, item, embed)
            yield out
        elif kind == "open":
            depth += 1
            where = f" from {code(item.parent_id)}" if item.parent_id else " (separate root)"
            yield [f"\n{'#' * min(2 + depth, 6)} ⎇ Branch {item.number} of {item.of}{where}\n"]
        else:
            depth -= 1
