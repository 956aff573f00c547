"""Safe text: session data shown on a terminal never acts on it.

Session files are attacker-writable: a message, a tool name, a label, a file name may hold
ESC sequences (colour, cursor moves, OSC 8 links, OSC 52 clipboard writes), BEL, other C0/C1
control characters, bidi overrides that reorder what the reader sees, or lone surrogates that
no encoder accepts. :func:`safe_text` shows each of them visibly escaped, as Python writes
them (``\\x1b``, ``\\x9b``, ``\\u202e``, ``\\ud800``), so the reader sees that they are there
and the terminal never receives them raw. Everything else (all printable Unicode) is kept.
"""

from __future__ import annotations

import re

#: C0 controls except TAB and LF, DEL, C1 controls, Arabic letter mark, LRM/RLM, the line and
#: paragraph separators, the bidi embeddings/overrides (U+202A-U+202E) and isolates
#: (U+2066-U+2069), and lone surrogates.
_UNSAFE_MULTILINE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
#: The same plus TAB and LF, for text that must stay on one line.
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _escape_one_line(match: re.Match[str]) -> str:
    # Line breaks and tabs inside a one-line field read as spaces; they act on nothing.
    return " " if match.group() in "\t\n\r" else _escape(match)


def safe_text(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control, bidi and lone-surrogate character shown escaped.

    TAB and LF are kept unless ``one_line`` is true (then TAB, LF and CR become spaces). The result
    holds no character a terminal would act on and encodes under any codec that has ASCII
    (non-ASCII printable characters are left for the stream's error handler).
    """
    if one_line:
        if _UNSAFE_ONE_LINE.search(text) is None:
            return text
        return _UNSAFE_ONE_LINE.sub(_escape_one_line, text)
    if _UNSAFE_MULTILINE.search(text) is None:
        return text
    return _UNSAFE_MULTILINE.sub(_escape, text)


#: The width the output layer gives a console that must never wrap or cut (stdout is not a
#: terminal and no --width was given). Renderers that fill the width check :func:`unlimited`.
UNLIMITED_WIDTH = 1_000_000


def unlimited(console: object) -> bool:
    """Whether ``console`` has no width limit (nothing may be wrapped, cut or padded to fit)."""
    return int(getattr(console, "width", 0)) >= UNLIMITED_WIDTH
