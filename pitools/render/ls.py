"""Human rendering of ``pitools ls``: one row per session, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools.core.js.types import JsValue

if TYPE_CHECKING:
    from rich.console import Console

#: Short markers for the status column, and what they mean (printed under the table).
MARKERS = {
    "needs-migration": ("M", "needs migration (Pi rewrites it to v3 when it opens it; `pitools migrate`)"),
    "invalid": ("!", "not a session Pi can open"),
    "error": ("E", "cannot be read, or Pi fails on it"),
    "hidden": ("h", "Pi's session picker leaves it out"),
}


def human_size(n: Any) -> str:
    """Sizes as every renderer writes them (decimal units: :func:`pitools.render.vocab.size`)."""
    from pitools.render.vocab import size

    return size(n)


def human_tokens(n: Any) -> str:
    """Token counts abbreviated for the table (:func:`pitools.render.vocab.tokens_short`)."""
    from pitools.render.vocab import tokens_short

    return tokens_short(n)


def _money(x: Any) -> str:
    from pitools.render.vocab import money

    return money(x)


def local_time(iso: str | None) -> str:
    """Recent activity relative (``3 h ago``), older as a local date (vocabulary of ``render.vocab``)."""
    from pitools.render.vocab import ago

    return ago(iso) if iso else "?"


def marker(session: dict[str, Any]) -> str:
    status = session.get("status")
    if status in MARKERS:
        return MARKERS[status][0]
    if not session.get("piListed", True):
        return MARKERS["hidden"][0]
    return ""


def display_path(path: Any, home: str | None = None) -> str:
    """A session file's path for a table cell: the home folder shown as ``~``, one safe line
    (controls, TAB and LF escaped as ``\\x09``, never raw and never turned into spaces).

    ``home`` defaults to the user's home folder; a root or empty home shortens nothing.
    """
    import os

    from pitools.render.safe import safe_text

    text = str(path or "")
    if home is None:
        home = os.path.expanduser("~")
    home = home.rstrip("/\\")
    if home and home != "~" and text and (text == home or text.startswith((home + "/", home + os.sep))):
        text = "~" + text[len(home) :]
    # Escaped, not turned into spaces: a path shown with a space in it would name another file.
    return safe_text(text).replace("\t", "\\x09").replace("\n", "\\x0a")


def title_of(session: dict[str, Any]) -> str:
    """The session's name, else its first user message (one line)."""
    if session.get("status") in ("invalid", "error"):
        return f"({session.get('problem')})"
    from pitools.render.safe import safe_text

    text = session.get("name") or session.get("firstMessage") or ""
    # Made safe before it is measured: an escaped control is wider than the character.
    return safe_text(" ".join(str(text).split()), one_line=True)


def _row(s: dict[str, Any], all_: bool, copied_col: bool = False, short: dict[str, str] | None = None) -> list[str]:
    sid = str(s.get("id") or "")
    cost = s.get("cost")
    shown = (short or {}).get(sid) or sid[:8]
    row = [marker(s), local_time(s.get("modified")), _tsv_cell(shown) if sid else "-"]
    if all_:
        row.append(str(s.get("cwd") or ""))
    row += [
        title_of(s),
        f"{s.get('messageCount', 0):,}",
        f"{s.get('entryCount', 0):,}",
        f"{s.get('leafCount', 0):,}",
        human_size(s.get("fileBytes")),
        human_tokens(s.get("tokens", {}).get("total")),
        _money(cost),
        *([_money(s["copiedCost"]) if "copiedCost" in s else ""] if copied_col else []),
        ", ".join(s.get("models") or []),
        display_path(s.get("path")),
    ]
    return row


def _total_row(t: dict[str, Any], all_: bool, copied_col: bool = False) -> list[str]:
    """The totals row (same columns as :func:`_row`); its cost counts fork/clone history once."""
    n = t.get("sessions", 0)
    row = ["", "", "total"] + ([""] if all_ else [])
    row += [
        f"{n} {'session' if n == 1 else 'sessions'}",
        f"{t.get('messageCount', 0):,}",
        f"{t.get('entryCount', 0):,}",
        "",
        human_size(t.get("fileBytes")),
        human_tokens(t.get("tokens", {}).get("total")),
        _money(t.get("cost")),
        *([""] if copied_col else []),
        "",
        "",
    ]
    return row


#: ``ls --format tsv``: fixed columns for scripts, exact values (bytes, tokens, dollars, ISO times).
TSV_COLUMNS = (
    "activity", "id", "name", "messages", "entries", "leaves", "bytes", "tokens", "cost", "copied_cost",
    "status", "models", "cwd", "path",
)  # fmt: skip


def _tsv_cell(value: JsValue) -> str:
    from pitools.render.safe import safe_text

    if value is None:
        return ""
    if type(value) is float:
        return repr(value)
    # One safe line: a TAB or line break inside a value would start another column or row.
    return safe_text(str(value)).replace("\t", "\\x09").replace("\n", "\\x0a").replace("\r", "\\x0d")


def ls_tsv(listing: dict[str, Any]) -> list[str]:
    """A header line, then one line per session: no totals row, nothing cut, no colour."""
    lines = ["\t".join(TSV_COLUMNS)]
    for s in listing["sessions"]:
        values = (
            s.get("modified"),
            s.get("id"),
            title_of(s),
            s.get("messageCount"),
            s.get("entryCount"),
            s.get("leafCount"),
            s.get("fileBytes"),
            (s.get("tokens") or {}).get("total"),
            s.get("cost"),
            s.get("copiedCost"),
            s.get("status"),
            ",".join(s.get("models") or []),
            s.get("cwd"),
            s.get("path"),
        )
        lines.append("\t".join(_tsv_cell(v) for v in values))
    return lines


def totals_note(totals: dict[str, Any], copied_col: bool) -> str | None:
    """What the totals row counts when forks are listed, in the words inspect and usage use."""
    copied = totals.get("copiedCost") or 0
    if not copied:
        return None  # the total is the plain sum of the rows
    where = " (the copied column)" if copied_col else ""
    return (
        f"total: history copied from a parent counted once, in the parent: {_money(copied)} of the rows' "
        f"cost is copied{where}, so the total is less than the sum of the rows"
    )


def _fit(text: str, width: int, right: bool, keep_end: bool = False) -> str:
    """``text`` cut (with an ellipsis; at the start with ``keep_end``) or padded to exactly
    ``width`` terminal cells."""
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) > width:
        if not width:
            text = ""
        elif keep_end:
            text = "…" + set_cell_size(text[::-1], width - 1)[::-1]
        else:
            text = set_cell_size(text, width - 1) + "…"
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


#: The widest the name / first message column gets in a pipe (a preview: ``--format tsv`` and
#: ``json`` give it whole), so that rows are not padded to the longest first message.
PIPE_TITLE = 60
#: The widest the id column gets: a whole UUID (a hostile megabyte-long id is cut, with an ellipsis).
MAX_ID = 36


def render_ls(console: Console, listing: dict[str, Any], short: dict[str, str] | None = None) -> None:
    """The table, laid out by hand (a rich Table is slow for thousands of rows), then a summary.

    ``short``: the id prefix to show for each session id (:func:`pitools.core.views.resume.short_ids`).
    """
    from rich.cells import cell_len
    from rich.text import Text

    from pitools.render.safe import unlimited

    sessions = listing["sessions"]
    all_ = listing["all"]
    headers = ["", "activity", "id"] + (["cwd"] if all_ else [])
    # A fork's or clone's cost includes what it copied from its parent (as Pi's stats count it);
    # the "copied" column shows that part, and the totals count it once, in the parent.
    copied_col = any("copiedCost" in s for s in sessions)
    headers += ["name / first message", "msgs", "entries", "leaves", "size", "tokens", "cost"]
    headers += ["copied", "models", "path"] if copied_col else ["models", "path"]
    rows = [_row(s, all_, copied_col, short) for s in sessions]
    totals = listing.get("totals")
    total_row = _total_row(totals, all_, copied_col) if totals and sessions else None
    right = {"msgs", "entries", "leaves", "size", "tokens", "cost", "copied"}
    every = rows + ([total_row] if total_row else [])
    widths = [max([cell_len(h)] + [cell_len(r[i]) for r in every]) for i, h in enumerate(headers)]
    if not unlimited(console):  # a terminal or --width; in a pipe nothing is cut
        caps = {"cwd": 28, "models": 28, "path": 60}
        widths = [min(w, caps.get(h, w)) for h, w in zip(headers, widths, strict=True)]
    title_col = headers.index("name / first message")
    if unlimited(console):  # a pipe: the preview is cut rather than every row padded to the longest
        widths[title_col] = min(widths[title_col], PIPE_TITLE)
    id_col = headers.index("id")  # Pi's ids are 36 characters; a longer one is cut anywhere
    widths[id_col] = min(widths[id_col], MAX_ID)
    # On a narrow terminal drop the least useful columns until the title gets some room.
    shown = list(range(len(headers)))
    for drop in ("path", "models", "entries", "leaves", "copied", "cost", "size", "cwd", "tokens", "msgs"):
        if drop not in headers:
            continue
        if console.width - sum(widths[i] for i in shown if i != title_col) - (len(shown) - 1) >= 24:
            break
        shown.remove(headers.index(drop))
    rest = sum(widths[i] for i in shown if i != title_col) + len(shown) - 1
    widths[title_col] = max(12, min(widths[title_col], console.width - rest))
    out = Text(no_wrap=True, overflow="ignore")
    if sessions:
        line = " ".join(_fit(headers[i], widths[i], headers[i] in right) for i in shown)
        out.append(line.rstrip() + "\n", style="bold")
    used: set[str] = set()
    # Unstyled text is gathered and appended in one piece (the same text and spans as a piece
    # per cell, at a fraction of the calls on a listing of thousands of rows).
    plain: list[str] = []
    for s, row in zip(sessions, rows, strict=True):
        if row[0]:
            used.add(row[0])
        for n, i in enumerate(shown):
            if n:
                plain.append(" ")
            cell = _fit(row[i], widths[i], headers[i] in right, keep_end=headers[i] == "path")
            if n == len(shown) - 1:
                cell = cell.rstrip()
            style = {0: "yellow", 2: "cyan"}.get(i, "")
            if i == title_col and s.get("name"):
                style = "bold"
            if style:
                if plain:
                    out.append("".join(plain))
                    plain.clear()
                out.append(cell, style=style)
            else:
                plain.append(cell)
        plain.append("\n")
    if plain:
        out.append("".join(plain))
    if total_row:
        line = " ".join(_fit(total_row[i], widths[i], headers[i] in right) for i in shown)
        out.append(line.rstrip() + "\n", style="bold")
    out.rstrip()
    if out.plain:
        console.print(out, soft_wrap=True)
    # The summary under the table is prose: wrapped to the width like any text (never in a pipe).
    where = ", ".join(listing["folders"]) if all_ else listing["sessionDir"]
    scope = "all sessions" if all_ else f"sessions for {listing['cwd']}"
    count = len(sessions)
    foot = Text(style="dim")
    foot.append(f"{count} {'session' if count == 1 else 'sessions'} ({scope}) in {where or '(nothing)'}")
    if listing.get("sessionDirSource") not in (None, "default"):
        foot.append(f" [{listing['sessionDirSource']}]")
    note = totals_note(totals, copied_col) if totals and total_row else None
    if note:
        foot.append("\n" + note)
    for mark, meaning in MARKERS.values():
        if mark in used:
            foot.append(f"\n  {mark}  {meaning}")
    console.print(foot)
    resume = resume_hint(sessions)
    if resume:  # not wrapped: a command copied from the terminal must stay whole
        console.print(Text(resume, style="dim"), soft_wrap=True)


def resume_hint(sessions: list[dict[str, Any]]) -> str | None:
    """How to open a listed session in Pi, with the whole command for the first row."""
    from pitools.core.views.resume import resume_command

    first = next((s for s in sessions if s.get("path") and s.get("status") not in ("invalid", "error")), None)
    if first is None:
        return None
    return f"resume one in Pi with pi --session PATH; the first row:\n  {resume_command(str(first['path']))}"
