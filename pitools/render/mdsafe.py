"""Putting session text into Markdown so that it stays text.

Session text is attacker-written: a session name with a newline would start a new block (a fake
``### User`` heading), a label could be a ``[link](javascript:…)``, a timestamp raw HTML. Every
piece of session text goes through one of these:

* :func:`inline` — one line of literal text: line breaks become spaces and every character that
  can open an inline construct is backslash-escaped (CommonMark makes escaped punctuation
  literal, so no emphasis, link, code span, HTML or entity can start inside it);
* :func:`code` — an inline code span longer than any backtick run inside, on one line;
* :func:`fence` — a fenced block whose fence is longer than any backtick run inside;
* :func:`html_text` — text inside an HTML block (``<summary>``): entities, one line.
"""

from __future__ import annotations

import re

# CommonMark line endings are LF, CR and CRLF; anything else is an ordinary character.
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
# Characters that can open an inline construct anywhere in a line: emphasis (* _ ~), code (`),
# links and images ([ ] !), raw HTML and autolinks (< >), entities (&), escapes (\), table cells (|).
# Line-start constructs (#, -, +, 1., >, =) cannot occur: the text never starts a line.
_SPECIAL = re.compile(r"([\\`*_\[\]<>&!~|])")


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
    return "\n".join("> " + line if line else ">" for line in _LINE_BREAKS.split(block))
