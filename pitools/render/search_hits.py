"""The layout of ``pitools search``'s human output, and its plain (no colour) form without rich.

:func:`segments` builds the output once as ``(text, style)`` pieces; :func:`pitools.render.archive.render_search`
hands them to rich (a terminal: styles), and :func:`plain` joins them into the very bytes rich
would print without colour and without a width limit (a pipe, a file, ``NO_COLOR``), so the
warm search (:mod:`pitools.cli.fast_search`) prints its hits without importing rich, ``re`` or
``typing`` (``tests/render/test_search_hits.py`` compares the two over hostile hits).

Why the plain join is rich's output: every piece is made safe here (one line: no control
character, TAB or line break is left raw, so rich has nothing to strip, expand or escape), the
only line breaks are the layout's own, styles print nothing without a colour system, and rich
wraps nothing shorter than its (unlimited) width; lines end without padding spaces as the output
layer's ``StripTrailing`` writes them. :func:`plain` returns None for a line long enough that
rich would wrap it: the caller uses rich then.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from typing import Any

#: Lines shorter than this many characters (at most 2 cells each) are never wrapped by rich at
#: the output layer's unlimited width (``pitools.render.safe.UNLIMITED_WIDTH``, 1,000,000 cells).
_SHORT_LINE = 400_000

_table: dict[int, str] | None = None


def _unsafe_table() -> dict[int, str]:
    """``str.translate``'s table for :func:`safe_line`: what :func:`pitools.render.safe.safe_text`
    escapes on one line (TAB, LF and CR read as spaces), built on first need."""
    global _table
    if _table is None:
        codes = [*range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x2028, 0x202F)]
        codes += [*range(0x2066, 0x206A), *range(0xD800, 0xE000)]
        _table = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in codes}
        for c in (0x09, 0x0A, 0x0D):
            _table[c] = " "
    return _table


def safe_line(text: str) -> str:
    """:func:`pitools.render.archive.safe_text` (one line, a line break shown as ``⏎``) without ``re``."""
    # Every character it changes is one str.isprintable() rejects (controls, separators other
    # than the space, format characters, surrogates): printable text is returned as it is.
    if text.isprintable():
        return text
    if "\n" in text:
        text = text.replace("\r\n", "\n").replace("\n", " ⏎ ")
    return text.translate(_unsafe_table())


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _epoch_us(stamp: str) -> int | None:
    """Microseconds since 1970 of a ``YYYY-MM-DDTHH:MM:SS.mmmZ`` time from 1970 on (what the
    index gives every hit), None for any other form."""
    if len(stamp) != 24 or stamp[4:17:3] != "--T::" or stamp[19] != "." or stamp[23] != "Z":
        return None
    digits = stamp[0:4] + stamp[5:7] + stamp[8:10] + stamp[11:13] + stamp[14:16] + stamp[17:19] + stamp[20:23]
    if not (digits.isascii() and digits.isdigit()):
        return None
    y, mo, d = int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10])
    h, mi, sec, ms = int(stamp[11:13]), int(stamp[14:16]), int(stamp[17:19]), int(stamp[20:23])
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if y < 1970 or not 1 <= mo <= 12 or h > 23 or mi > 59 or sec > 59:
        return None
    if not 1 <= d <= _MONTH_DAYS[mo - 1] + (mo == 2 and leap):
        return None
    # Days since 1970-01-01 (the proleptic Gregorian calendar's civil-from-days inverse).
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return (((days * 24 + h) * 60 + mi) * 60 + sec) * 1_000_000 + ms * 1000


def ago(stamp: str, now: datetime.datetime | None = None) -> str:
    """:func:`pitools.render.vocab.ago` for a hit's time, without importing ``datetime`` for the
    index's own form of the past (anything else: ``vocab.ago`` itself)."""
    when = _epoch_us(stamp)
    if when is not None:
        import time

        if now is None:
            current = time.time_ns() // 1000
        else:
            current = (now - now.fromtimestamp(0, now.tzinfo)) // now.resolution
        elapsed = current - when
        if elapsed >= 0:
            from pitools.render.age import age_text

            return age_text(elapsed) or time.strftime("%Y-%m-%d", time.localtime(when // 1_000_000))
    from pitools.render.vocab import ago as general

    return general(stamp, now)


def _fit_header(parts: list[str], width: int) -> list[str]:
    """A session's header pieces (path, then "  title", "  cwd") within ``width`` cells: the
    path keeps its end (the file name), the others are cut with an ellipsis or left out."""
    from rich.cells import cell_len, set_cell_size

    out: list[str] = []
    room = width
    for i, part in enumerate(parts):
        size = cell_len(part)
        if size <= room:
            out.append(part)
            room -= size
        elif i == 0:
            out.append("…" + set_cell_size(part[::-1], max(room - 1, 0))[::-1])
            room = 0
        elif room > 4:  # "  " and at least two characters of it
            out.append(set_cell_size(part, room - 1) + "…")
            room = 0
        else:
            out.append("")
    return out


def segments(
    result: dict[str, Any], now: datetime.datetime | None = None, width: int | None = None
) -> list[tuple[str, str]]:
    """The human output of a search result (``SearchResult.to_json()``) as ``(text, style)`` pieces.

    Session text is made safe here. The last piece ends without a line break (the printer adds it).
    ``now`` fixes the relative times (tests); by default the current time. ``width`` (a terminal
    or ``--width``): each session's header line is cut to fit; the commands never are.
    """
    out: list[tuple[str, str]] = []
    add = out.append
    current = None
    for hit in result["hits"]:
        session = hit["session"]
        if session["path"] != current:
            current = session["path"]
            if out:
                add(("\n", ""))
            title = session.get("name") or session.get("id") or ""
            header = [
                safe_line(session["path"]),
                "  " + safe_line(str(title)) if title else "",
                "  " + safe_line(session["cwd"]) if session.get("cwd") else "",
            ]
            if width is not None:
                header = _fit_header(header, width)
            for text, style in zip(header, ("bold cyan", "bold", "dim"), strict=True):
                if text:
                    add((text, style))
            add(("\n", ""))
        if hit["inContext"]:
            flags = ["in context"]
        elif hit["summarizedAway"]:
            flags = ["summarized away"]
        elif not hit["onCurrentBranch"]:
            flags = ["abandoned branch"]
        else:
            flags = ["not in context"]
        if hit["copied"]:
            flags.append("copied from parent")
        if hit["inThinking"]:
            flags.append("thinking")
        stamp = hit["timestamp"]
        add((f"  {safe_line(ago(stamp, now)) if stamp else '?'} ", "dim"))
        add((f"{safe_line(hit['entryId'] or '-')} ", "yellow"))
        role = hit["role"] or "?"
        if hit["tools"]:
            role += " " + ",".join(hit["tools"])
        add((safe_line(role), "magenta"))
        add((f"  [{', '.join(flags)}]\n", "dim"))
        _snippet(out, hit["snippet"], hit["highlights"])
        leaves = hit["leaves"]
        shown = ", ".join(leaves[:4]) + (f" (+{len(leaves) - 4})" if len(leaves) > 4 else "")
        add((f"    leaves: {safe_line(shown) or '-'}\n", "dim"))
        for command in hit["commands"]:  # its context, then the one command resuming it in Pi
            add((f"    {safe_line(command)}\n", "dim"))
    n = result["count"]
    more = " (more not shown: raise --limit)" if result["truncated"] else ""
    add((f"{n} {'hit' if n == 1 else 'hits'}{more}", "dim"))
    return out


def _snippet(out: list[tuple[str, str]], snippet: str, highlights: list[list[int]]) -> None:
    out.append(("    ", ""))
    pos = 0
    for a, b in highlights:
        if a < pos:
            continue
        out.append((safe_line(snippet[pos:a]), ""))
        out.append((safe_line(snippet[a:b]), "bold reverse"))
        pos = b
    out.append((safe_line(snippet[pos:]), ""))
    out.append(("\n", ""))


def plain(pieces: list[tuple[str, str]]) -> str | None:
    """The text rich prints for ``pieces`` without colour or width limit (with the final line
    break); None when a line is long enough that rich might wrap it."""
    lines = "".join(text for text, _ in pieces).split("\n")
    for i, line in enumerate(lines):
        if len(line) >= _SHORT_LINE:
            return None
        if line.endswith(" "):
            lines[i] = line.rstrip(" ")
    return "\n".join(lines) + "\n"
