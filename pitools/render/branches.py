"""Render a :class:`~pitools.core.views.branches.BranchList` as a rich table or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.js.access import entry_id, entry_type
from pitools.core.js.types import JsonObject, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.views.branches import Branch, BranchList, js_text, safe_value
from pitools.render.preview import entry_preview, entry_tag, message_preview
from pitools.render.safe import safe_text

if TYPE_CHECKING:
    from rich.console import Console


def _plain(value: JsValue) -> Any:
    return None if value is UNDEFINED else safe_value(value)


def _text(value: str) -> str:
    # One line, and shown safe (controls, bidi characters and lone surrogates escaped).
    return safe_text(value, one_line=True)


def divergent_preview(branch: Branch, limit: int = 200) -> str | None:
    if branch.divergent_user is None:
        return None
    return message_preview(branch.divergent_user.get("message"), limit)


def branch_json(branch: Branch) -> JsonObject:
    """One ``branches[]`` item of ``pitools branches --format json``."""
    leaf = branch.leaf
    msg = leaf.get("message") if type(leaf) is dict else None
    role = msg.get("role") if entry_type(leaf) == "message" and type(msg) is dict else None
    return {
        "leafId": _plain(branch.leaf_id),
        "isDefaultLeaf": branch.is_default_leaf,
        "isLeaf": branch.is_leaf,
        "entryCount": branch.entry_count,
        "depth": branch.depth,
        "timestamp": _plain(branch.timestamp),
        "forkId": None if branch.fork is None else _plain(entry_id(branch.fork)),
        "divergentUserId": None if branch.divergent_user is None else _plain(entry_id(branch.divergent_user)),
        "divergentPreview": divergent_preview(branch),
        "leafType": None if leaf is None else _plain(entry_type(leaf)),
        "leafRole": _plain(role),
        "leafPreview": None if leaf is None else entry_preview(leaf, 200),
        "label": safe_value(branch.label),
        "estimatedContextTokens": branch.tokens,
        "error": branch.error,
    }


def branches_json(result: BranchList, session_name: JsValue) -> JsonObject:
    """The ``pitools branches --format json`` object (schemas/output/branches.schema.json)."""
    return {
        "pi": PI_REFERENCE_VERSION,
        "sessionName": _plain(session_name),
        "defaultLeafId": _plain(result.default_leaf_id),
        "entryCount": result.entry_count,
        "branchCount": len(result.branches),
        "branches": [branch_json(b) for b in result.branches],
    }


def _when(value: JsValue) -> str:
    if value is None or value is UNDEFINED:
        return ""
    from pitools.render.vocab import local_time

    # Cut first: a 10 MB timestamp must cost no more than a short one.
    return _text(_short(local_time(_short(js_text(value), 200))))


#: Ids and labels are cut to this many characters before any measuring: a 10 MB id must cost
#: no more than a short one (rich used to measure and wrap the whole of it).
MAX_ID_CHARS = 40
MAX_LABEL_CELLS = 16
_SEP = "  "
#: The least room the divergent message / leaf column gets beside the others; with less, it goes
#: on lines of its own under each row (indented by ``_INDENT``).
MIN_STORY_CELLS = 30
_INDENT = "    "
_RIGHT = frozenset({"entries", "depth", "~tokens"})
_STYLE = {"leaf": "cyan", "~tokens": "yellow", "label": "yellow"}


def _short(text: str, limit: int = MAX_ID_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _id(value: JsValue) -> str:
    if value is None or value is UNDEFINED:
        return "—"
    text = value if type(value) is str else repr(safe_value(value))
    return _text(_short(text))


def render_branches(console: Console, result: BranchList, session_name: JsValue) -> None:
    """Human view: a header line and one two-line row per leaf (★ marks Pi's default leaf).

    Laid out by hand rather than with ``rich.table.Table``: a table measures and wraps every cell
    of every row, about 1.3 ms per leaf (69 s for 50,000 leaves). Here each cell is cut short
    first, the fixed columns are padded to their widest cell, and the last column is cropped to
    what is left of the line, so the cost per leaf is small and bounded.
    """
    from rich.cells import cell_len, set_cell_size
    from rich.text import Span, Text

    head = Text("Branches · ", style="bold")
    if session_name is None or session_name is UNDEFINED:
        head.append("(no name)", style="dim")
    else:
        head.append(_text(_short(js_text(session_name), 400)), style="bold cyan")
    head.append(
        f" · {len(result.branches):,} {'leaf' if len(result.branches) == 1 else 'leaves'}"
        f" of {result.entry_count:,} {'entry' if result.entry_count == 1 else 'entries'}",
        style="dim",
    )
    head.append(f" · ★ Pi's default leaf {_id(result.default_leaf_id)}", style="dim")
    console.print(head, no_wrap=True, overflow="ellipsis")

    headers = ["", "leaf", "entries", "depth", "last activity", "forks at", "~tokens", "label"]
    # Each row: the fixed cells, then the story as lines of (text, style) pieces.
    rows: list[tuple[list[str], list[list[tuple[str, str]]]]] = []
    for b in result.branches:
        marker = "★" if b.is_default_leaf else ""
        if b.error is not None and b.entry_count is None:
            cells = [marker, _id(b.leaf_id), "", "", _when(b.timestamp), "", "", ""]
            rows.append((cells, [[(_text(_short(f"error: {b.error}", 400)), "red")]]))
            continue
        user = divergent_preview(b)
        first = [("user: " if user is not None else "user: —", "dim"), (_text(user or ""), "")]
        second = [("leaf: ", "dim")]
        if b.leaf is not None:
            second += [(f"{entry_tag(b.leaf)}: ", "dim"), (_text(entry_preview(b.leaf, 200)), "")]
        if not b.is_leaf:
            second.append((" (entries hang below it)", "dim"))
        if b.error is not None:
            second.append((f" ({_text(_short(b.error, 400))})", "red"))
        label = "" if b.label is None else _text(_short(js_text(b.label), 4 * MAX_LABEL_CELLS))
        cells = [
            marker,
            _id(b.leaf_id),
            f"{b.entry_count:,}",
            f"{b.depth:,}",
            _when(b.timestamp),
            _id(None if b.fork is None else entry_id(b.fork)),
            "" if b.tokens is None else (f"{b.tokens:,}" if type(b.tokens) is int else _short(js_text(b.tokens))),
            label,
        ]
        rows.append((cells, [first, second]))
    widths = [max([len(title)] + [cell_len(cells[n]) for cells, _ in rows]) for n, title in enumerate(headers)]
    widths[-1] = min(widths[-1], MAX_LABEL_CELLS)
    fixed = sum(widths) + len(_SEP) * len(widths)
    from pitools.render.safe import unlimited

    # In a pipe nothing is cut or padded; on a screen too narrow for the fixed columns rich crops
    # each line (slower, but only then).
    endless = unlimited(console)
    # Too little room beside the fixed columns (80 columns left 3 cells: "us…"): each story line
    # goes under its row instead, indented, with the whole width.
    stacked = not endless and console.width - fixed < MIN_STORY_CELLS
    narrow = not endless and fixed + 8 > console.width
    last = 10**9 if endless else max(8, console.width - (len(_INDENT) if stacked else fixed))
    # One plain string plus style spans for the whole table: no rich object per cell.
    plain: list[str] = []
    spans: list[Span] = []
    pos = 0

    def put(text: str, style: str = "") -> None:
        nonlocal pos
        if style and text:
            spans.append(Span(pos, pos + len(text), style))
        plain.append(text)
        pos += len(text)

    def put_fixed(cells: list[str], style: str | None = None) -> None:
        for n, (cell, width) in enumerate(zip(cells, widths, strict=True)):
            size = cell_len(cell)
            if size > width:
                cell = set_cell_size(cell, width - 1) + "…"
                size = width
            pad = " " * (width - size)
            if headers[n] in _RIGHT:
                put(pad)
            put(cell, style or _STYLE.get(headers[n], ""))
            if headers[n] not in _RIGHT:
                put(pad)
            put(_SEP)

    def put_story(pieces: list[tuple[str, str]]) -> None:
        sizes = [cell_len(text) for text, _ in pieces]
        if sum(sizes) <= last:
            for text, style in pieces:
                put(text, style)
            if not endless:
                put(" " * (last - sum(sizes)))
            return
        room = last - 1  # cropped: what fits, then an ellipsis
        for (text, style), size in zip(pieces, sizes, strict=True):
            if size > room:
                put(set_cell_size(text, room), style)
                break
            put(text, style)
            room -= size
        put("…")

    def flush(end: str) -> None:
        nonlocal pos
        # Lines are already laid out to the width: soft_wrap skips rich's wrapping pass. Chunks
        # of 500 rows keep rich's working memory small.
        text = Text("".join(plain), spans=spans)
        if narrow:
            console.print(text, no_wrap=True, overflow="ellipsis", crop=True, end=end)
        else:
            console.print(text, soft_wrap=True, end=end)
        plain.clear()
        spans.clear()
        pos = 0

    put_fixed(headers, "bold")
    if stacked:
        put("\n" + _INDENT)
    put_story([("divergent user message / leaf", "bold")])
    blank = _INDENT if stacked else " " * fixed
    for n, (cells, story) in enumerate(rows, 1):
        put("\n")
        put_fixed(cells)
        if stacked:
            put("\n" + blank)
        put_story(story[0])
        for more in story[1:]:
            put("\n" + blank)
            put_story(more)
        if n % 500 == 0:
            flush("")
    flush("\n")
