"""Message text inside pitools' Markdown, kept from adding to the document's structure.

Message text is Markdown already and reads best as such, but a ``# Heading`` in it would sit among
the export's own headings (the title, one ``###`` per entry, the branch headings), and a fence it
opens without closing would swallow the rest of the document. :func:`no_headings` shows every
heading line literally (a backslash before its ``#``, or before a setext underline) and closes a
fence the text left open; everything else stays Markdown.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
# Container prefixes (block quotes, list items) in front of a heading still leave a heading.
_PREFIX = r"(?:[ \t]{0,3}(?:>|[-*+]|\d{1,9}[.)])(?:[ \t]|(?=[\r\n]|$)))*[ \t]{0,3}"
_ATX = re.compile(rf"^({_PREFIX})(#{{1,6}}(?:[ \t]|[\r\n]|$))")
_SETEXT = re.compile(rf"^({_PREFIX})((?:=+|-+)[ \t]*(?:[\r\n]|$))")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def no_headings(text: str) -> str:
    """``text`` with no line that Markdown reads as a heading, and no fence left open."""
    out: list[str] = []
    fence = ""  # the open fence's marker, while inside one
    for line in _LINE.findall(text):
        if not line:
            continue
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end() :].strip():
                fence = ""
            out.append(line)
            continue
        if m and not (m.group(1)[0] == "`" and "`" in line[m.end() :]):
            fence = m.group(1)
            out.append(line)
            continue
        h = _ATX.match(line) or _SETEXT.match(line)
        if h:
            line = f"{h.group(1)}\\{line[h.end(1) :]}"
        out.append(line)
    result = "".join(out)
    if fence:
        result += ("" if result.endswith(("\n", "\r")) else "\n") + fence
    return result


def code_span(text: str) -> str:
    """An inline code span showing ``text`` literally on one line (longer ticks than any run inside)."""
    text = re.sub(r"\r\n|\r|\n", " ", text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip(" ") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"
