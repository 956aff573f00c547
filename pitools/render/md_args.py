"""Tool-call arguments for Markdown: multi-line strings as their own code blocks.

A tool call's arguments as one JSON value put a file's content or a patch on one line full of
``\\n``. :func:`split_arguments` takes every multi-line string out of the arguments (to a bounded
depth) and leaves a pointer in its place, so the renderer shows the rest as JSON and each string as
a code block of its own. Labels are built from the session's keys: the renderer must show them as
code spans; the language tag comes only from :data:`_LANGS` (pitools' own words).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pitools.core.js.types import JsValue

#: How deep into the arguments multi-line strings are looked for, and how many are taken out;
#: anything beyond stays in the JSON (hostile nesting costs nothing here).
MAX_DEPTH = 6
MAX_BLOCKS = 32

#: Keys whose value names the file a string belongs to, and the extensions pitools tags.
_PATH_KEYS = ("path", "file_path", "filePath", "file", "filename")
_LANGS = {
    "py": "python",
    "js": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "tsx": "tsx",
    "jsx": "jsx",
    "json": "json",
    "md": "markdown",
    "sh": "sh",
    "bash": "sh",
    "rs": "rust",
    "go": "go",
    "java": "java",
    "c": "c",
    "h": "c",
    "cpp": "cpp",
    "rb": "ruby",
    "toml": "toml",
    "yaml": "yaml",
    "yml": "yaml",
    "html": "html",
    "css": "css",
    "sql": "sql",
    "diff": "diff",
    "patch": "diff",
}
_COMMAND_KEYS = frozenset({"command", "cmd", "script"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class TextBlock:
    """One multi-line string taken out of the arguments."""

    label: str  # where it was, e.g. ``content`` or ``edits[0].newText`` (session text)
    text: str
    lang: str  # from _LANGS or "sh", never session text


def _lang(key: str, siblings: dict[str, Any], inherited: str) -> str:
    """``sh`` for a command; else the language of a sibling path (``{"path": "a.py", ...}``);
    else the one of the enclosing object (an ``edits`` list under ``path``)."""
    if key in _COMMAND_KEYS:
        return "sh"
    for k in _PATH_KEYS:
        path = siblings.get(k)
        if type(path) is str:
            name = path.rsplit("/", 1)[-1]
            return _LANGS.get(name.rsplit(".", 1)[1].lower(), "") if "." in name else ""
    return inherited


def _label(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if not _IDENT.fullmatch(key):
        return f"{parent}[{key!r}]"
    return f"{parent}.{key}" if parent else key


def split_arguments(args: JsValue) -> tuple[Any, list[TextBlock]]:
    """``args`` with each multi-line string replaced by a pointer (``"↓ label"``), and the strings.

    Nothing is taken out (and ``args`` comes back unchanged) when no string holds a line break.
    A top-level string is one block labelled ``arguments``.
    """
    blocks: list[TextBlock] = []

    def walk(value: Any, label: str, depth: int, lang: str) -> Any:
        # Labels and languages are worked out only for what is descended into or taken out:
        # most values are one-line strings and numbers, kept as they are.
        if len(blocks) >= MAX_BLOCKS:
            return value
        t = type(value)
        if t is str:
            if "\n" in value or "\r" in value:  # a CommonMark line break (LF, CR or CRLF)
                blocks.append(TextBlock(label or "arguments", value, lang))
                return f"↓ {label or 'arguments'}"
            return value
        if depth >= MAX_DEPTH:
            return value
        if t is dict:
            out: dict[Any, Any] = {}
            for k, v in value.items():
                vt = type(v)
                if (vt is str and "\n" not in v and "\r" not in v) or not (vt is str or vt is dict or vt is list):
                    out[k] = v
                else:
                    out[k] = walk(v, _label(label, k), depth + 1, _lang(k, value, lang))
            return out
        if t is list:
            return [walk(v, _label(label, i), depth + 1, lang) for i, v in enumerate(value)]
        return value

    rest = walk(args, "", 0, "")
    if not blocks:
        return args, []
    return rest, blocks


def arguments_markdown(
    args: JsValue,
    json_text: Callable[[Any], str],
    fence: Callable[[str, str], str],
    code: Callable[[str], str],
) -> str | None:
    """The arguments as Markdown: the JSON (pointers in place of multi-line strings), then each
    string as a labelled code block. ``None`` when no string holds a line break (the caller shows
    the JSON as before). ``fence`` and ``code`` are the caller's inert Markdown makers."""
    rest, blocks = split_arguments(args)
    if not blocks:
        return None
    out = [] if type(rest) is str else [fence(json_text(rest), "json")]
    out.extend(f"{code(b.label)}\n\n{fence(b.text, b.lang)}" for b in blocks)
    return "\n\n".join(out)
