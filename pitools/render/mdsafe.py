"""Putting session text into Markdown so that it stays text.

Session text is attacker-written: a session name with a newline would start a new block (a fake
``### User`` heading), a label could be a ``[link](javascript:…)``, a timestamp raw HTML. Every
piece of session text goes through one of these:

* :func:`inline` — one line of literal text: line breaks become spaces and every character that
  can open an inline construct is backslash-escaped (CommonMark makes escaped punctuation
  literal, so no emphasis, link, code span, HTML or entity can start inside it);
* :func:`code` — an inline code span longer than any backtick run inside, on one line;
* :func:`fence` — a fenced block whose fence is longer than any backtick run inside;
* :func:`html_text` — text inside an HTML block (``<summary>``): entities, one line;
* :func:`prose` — a message's text as paragraphs of literal text, its fenced code blocks as
  fences of their own (the only structure kept from the text).
"""

from __future__ import annotations

import re

# CommonMark line endings are LF, CR and CRLF; anything else is an ordinary character.
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
# Characters that can open an inline construct anywhere in a line: emphasis (* _ ~), code (`),
# links and images ([ ] !), raw HTML and autolinks (< >), entities (&), escapes (\), table cells (|).
# Line-start constructs (#, -, +, 1., >, =) cannot occur: the text never starts a line.
_SPECIAL = re.compile(r"([\\`*_\[\]<>&!~|])")


def split_lines(text: str) -> list[str]:
    """``text`` cut at every CommonMark line ending (LF, CR, CRLF); ``str.split`` when it holds
    no CR (the usual text), which gives the same lines without the regex machinery."""
    if "\r" not in text:
        return text.split("\n")
    return _LINE_BREAKS.split(text)


def one_line(text: str) -> str:
    """``text`` with every line ending replaced by a space."""
    if "\n" not in text and "\r" not in text:  # the usual case, without the regex machinery
        return text
    return _LINE_BREAKS.sub(" ", text)


def inline(text: str) -> str:
    """Literal text inside a Markdown line (never at its start): one line, no markup."""
    text = one_line(text)
    if _SPECIAL.search(text) is None:  # most titles, ids and times
        return text
    return _SPECIAL.sub(_backslashed, text)


def _backslashed(match: re.Match[str]) -> str:
    # A function, not the template r"\\\1": re expands a template anew on every sub() call.
    return "\\" + match.group()


def _longest_run(text: str) -> int:
    """The longest run of backticks in ``text``.

    Whether ``k`` backticks in a row occur is monotone in ``k``, so doubling then halving finds
    the longest run in O(log run) substring searches (C speed, no match list), however hostile
    the text (a run of a million backticks takes 40 searches).
    """
    if "`" not in text:
        return 0
    found, missing = 1, 2
    while "`" * missing in text:
        found, missing = missing, missing * 2
    while missing - found > 1:
        mid = (found + missing) // 2
        if "`" * mid in text:
            found = mid
        else:
            missing = mid
    return found


def code(text: str) -> str:
    """An inline code span showing ``text`` literally, on one line."""
    text = one_line(text)
    if "`" not in text and text.strip(" "):  # the usual id or name: no backtick, not all spaces
        return f"`{text}`"
    ticks = "`" * (_longest_run(text) + 1)
    # A span that starts or ends with a backtick (or is all spaces) needs a space of padding.
    pad = " " if text.startswith("`") or text.endswith("`") or (text and not text.strip(" ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}" if text else "` `"


def fence(text: str, lang: str = "") -> str:
    """A fenced code block showing ``text`` literally (``lang`` is pitools' own, never session text)."""
    ticks = fence_ticks(text)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def fence_ticks(text: str) -> str:
    """The fence :func:`fence` puts around ``text``: longer than any backtick run inside, at least 3."""
    run = _longest_run(text)
    return "```" if run < 3 else "`" * (run + 1)


def html_text(text: str) -> str:
    """Text inside an HTML block: escaped, and on one line (a blank line would end the block)."""
    return one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quote(block: str) -> str:
    """``block`` (already safe Markdown, e.g. a fence) inside a block quote: every line prefixed,
    CR and CRLF line endings included, so no line escapes the quote."""
    return "\n".join("> " + line if line else ">" for line in split_lines(block))


# A fence line of the text (CommonMark 4.5): up to three spaces, then ``` or ~~~ (three or more);
# a backtick fence's info string holds no backtick.
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,})[ \t]*(.*)")
# The info string's first word, kept as the language only when it is plainly one.
_LANG = re.compile(r"[A-Za-z0-9_+.#-]{1,32}")
# What opens a block at the start of a line once _SPECIAL's characters are escaped: ATX headings,
# list items and thematic breaks, setext underlines, ordered list markers (1. 1)).
# _SPECIAL for prose, without the one "_" between two letters or digits ("snake_case",
# "ghp_x"): it can neither open nor close emphasis (CommonMark 6.2), and stays readable.
_PROSE_SPECIAL = re.compile(r"[\\`*\[\]<>&!~|]|(?<![^\W_])_|_(?![^\W_])")
_LINE_START = re.compile(r"[#+=-]|[0-9]{1,9}(?=[.)])")


def _prose_line(line: str, special: bool = True) -> str:
    """One line of literal text at the start of a Markdown line: inline markup escaped, leading
    blanks made no-break spaces (four spaces would start an indented code block), and whatever
    would open a block (``#``, ``-``, ``1.``...) escaped. ``special=False``: the line is known
    to hold none of the characters inline markup is made of."""
    body = line.lstrip(" \t")
    lead = line[: len(line) - len(body)]
    if special and _SPECIAL.search(body) is not None:
        body = _PROSE_SPECIAL.sub(_backslashed, body)
    start = _LINE_START.match(body)
    if start is not None:
        end = start.end()
        # "#" "-" "+" "=" escaped themselves; for "12." the "." that makes it a list marker.
        body = body[:end] + "\\" + body[end:] if body[0].isdigit() else "\\" + body
    nbsp = "\u00a0"
    return lead.replace("\t", nbsp * 4).replace(" ", nbsp) + body


def _paragraphs(lines: list[str], special: bool = True) -> str:
    """Literal lines as Markdown: blank lines end paragraphs, other line breaks are kept (a
    backslash at the end of a line is a hard line break). ``special=False``: no line holds a
    character inline markup is made of (one search of the whole text said so)."""
    out: list[str] = []
    filled = [bool(line.strip(" \t")) for line in lines]
    filled.append(False)  # after the last line
    for i, line in enumerate(lines):
        if not filled[i]:
            out.append("")
            continue
        text = _prose_line(line, special)
        out.append(text + "\\" if filled[i + 1] else text)
    return "\n".join(out)


def prose(text: str) -> str:
    """``text`` (a message, a summary) as Markdown that shows it as written: its paragraphs and
    line breaks as prose, every character literal (no heading, list, link, emphasis or HTML can
    come from it), and each fenced code block it holds (``` or ~~~, closed or running to the end,
    as CommonMark reads them) as a fence of pitools' own, with its language when that is one
    plain word. The result starts a block and never ends inside one."""
    lines = split_lines(text)
    if "```" not in text and "~~~" not in text:  # no line can open a fence: one run of prose
        return _paragraphs(lines, _SPECIAL.search(text) is not None)
    return _prose_blocks(lines)


def _prose_blocks(lines: list[str]) -> str:
    """:func:`prose` of the text's lines, fences looked for on every line."""
    blocks: list[str] = []
    plain: list[str] = []
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.fullmatch(lines[i])
        if opened is None:
            plain.append(lines[i])
            i += 1
            continue
        marker = opened.group(1)
        info = opened.group(2).split()
        lang = info[0] if info and _LANG.fullmatch(info[0]) else ""
        close = re.compile(" {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}[ \t]*")
        body: list[str] = []
        i += 1
        while i < len(lines) and close.fullmatch(lines[i]) is None:
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence (or the end of the text)
        if any(line.strip() for line in plain):
            blocks.append(_paragraphs(plain))
        plain = []
        blocks.append(fence("\n".join(body), lang))
    if any(line.strip() for line in plain) or not blocks:
        blocks.append(_paragraphs(plain))
    return "\n\n".join(b for b in blocks if b)
