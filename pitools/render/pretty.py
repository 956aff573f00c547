"""Indented JSON for transcripts, bounded so hostile nesting cannot blow up an export.

``json.dumps(indent=2)`` pads every line with two spaces per level, so a value nested N deep
prints in O(N²) (a 16 KB custom entry nested 8,000 deep became 128 MB of Markdown) and recurses
once per level. :func:`pretty_json` indents the first :data:`MAX_INDENT_DEPTH` levels the same way,
prints anything deeper compactly on one line, walks the value with its own stack, and stops after
:data:`MAX_CHARS` characters with a visible marker. Its output is at most a constant times the
size of the value plus that cap, whatever the shape.
"""

from __future__ import annotations

from typing import Any

from pitools.core.js.json.encode import jsonable, scalar_text
from pitools.core.js.json.exact import quote
from pitools.core.js.types import JsValue
from pitools.core.js.value import UNDEFINED

#: Levels indented as ``json.dumps(indent=2)`` would; deeper values go on one line.
MAX_INDENT_DEPTH = 16
#: Characters shown per value before the rest is folded away.
MAX_CHARS = 1_000_000


def _scalar(value: JsValue) -> str:
    text = scalar_text(value)  # JSON.stringify's own text: the export shows what Pi would write
    return str(value) if text is None else text


def pretty_json(value: JsValue, *, max_depth: int = MAX_INDENT_DEPTH, max_chars: int = MAX_CHARS) -> str:
    """``value`` as indented JSON (non-ASCII kept), bounded in depth of indentation and in size."""
    if value is UNDEFINED:
        return "undefined"
    data = jsonable(value)
    out: list[str] = []
    size = 0
    # The stack holds text to emit (str) or (value, depth) pairs still to print.
    stack: list[Any] = [(data, 0)]
    while stack:
        item = stack.pop()
        if type(item) is str:
            piece = item
        else:
            node, depth = item
            t = type(node)
            if (t is dict or t is list) and node:
                indented = depth < max_depth
                pad = "\n" + "  " * (depth + 1) if indented else ""
                sep = "," + pad if indented else ", "
                close = ("\n" + "  " * depth if indented else "") + ("}" if t is dict else "]")
                stack.append(close)
                if t is dict:
                    pairs = list(node.items())
                    for i in range(len(pairs) - 1, -1, -1):
                        key, child = pairs[i]
                        stack.append((child, depth + 1))
                        stack.append((pad if i == 0 else sep) + quote(key) + ": ")
                    piece = "{"
                else:
                    for i in range(len(node) - 1, -1, -1):
                        stack.append((node[i], depth + 1))
                        stack.append(pad if i == 0 else sep)
                    piece = "["
            elif t is dict:
                piece = "{}"
            elif t is list:
                piece = "[]"
            else:
                piece = _scalar(node)
        if size + len(piece) > max_chars:
            out.append(piece[: max_chars - size])
            out.append(f"\n… (folded: the value goes on past {max_chars:,} characters)")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)
