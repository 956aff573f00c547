"""Render a :class:`~pitools.core.views.branches.TreeView`: Pi's ``/tree`` lines, or shallow JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools import PI_REFERENCE_VERSION
from pitools.core.js.access import entry_type
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.types import JsonObject, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.views.branches import TreeRow, TreeView, js_text, safe_value
from pitools.render.safe import UNLIMITED_WIDTH, safe_text
from pitools.render.vocab import plural

if TYPE_CHECKING:
    from rich.console import Console

#: rich styles for Pi's theme colours (theme.fg("accent"), "success", "muted", ...).
_PREFIX_STYLE = {
    "user": "bold cyan",
    "assistant": "green",
    "muted": "green",
    "error": "green",
    "branch-summary": "yellow",
    "custom": "magenta",
}
_TEXT_STYLE = {
    "tool": "bright_black",
    "dim": "dim",
    "muted": "bright_black",
    "error": "red",
    "compaction": "bold magenta",
}


def _plain(value: JsValue) -> Any:
    return None if value is UNDEFINED else value


def _clean(text: str) -> str:
    """One line, safe: controls (newlines in names, escapes in tool output), bidi characters and
    lone surrogates are shown escaped (``\\x1b``), never passed to the terminal."""
    return safe_text(text, one_line=True)


def _id_text(value: JsValue) -> str:
    if type(value) is str:
        return value
    return "(no id)" if value is UNDEFINED else repr(safe_value(value))


# -- JSON ---------------------------------------------------------------------------------------


def node_json(row: TreeRow) -> JsonObject:
    """The fields of one node (without ``chain``/``children``)."""
    entry = row.entry
    data: dict[str, Any] = {"id": safe_value(_plain(row.id)), "type": safe_value(_plain(entry_type(entry)))}
    msg = entry.get("message") if type(entry) is dict else None
    if entry_type(entry) == "message" and type(msg) is dict and msg.get("role", UNDEFINED) is not UNDEFINED:
        data["role"] = safe_value(msg["role"])
    if row.node.label is not None:
        data["label"] = safe_value(row.node.label)
        data["labelTimestamp"] = safe_value(_plain(row.node.label_timestamp))
    data["timestamp"] = safe_value(entry.get("timestamp")) if type(entry) is dict else None
    data["preview"] = row.preview
    data["onPath"] = row.on_path
    data["isLeaf"] = row.is_leaf
    if row.revisit:
        data["revisit"] = True
    return data


def _open_object(data: dict[str, Any]) -> bytes:
    # `{...}` without its closing brace, so more members can follow.
    return to_json_bytes(data)[:-1]


def tree_json(view: TreeView, session_name: JsValue) -> bytes:
    """The ``pitools tree --format json`` document (schemas/output/tree.schema.json).

    A run of single-child descendants is a flat ``chain`` list, and ``children`` appear only
    where the tree forks, so nesting grows with the number of forks, not with the length of the
    session. The document is written piecewise with an explicit stack: no recursion anywhere.
    """
    rows = view.rows
    head = {
        "pi": PI_REFERENCE_VERSION,
        "sessionName": _plain(session_name),
        "leafId": safe_value(_plain(view.leaf_id)),
        "filter": view.filter,
        "entryCount": view.entry_count,
        "shownCount": len(rows),
        "revisits": view.revisits,
        "unreachable": [safe_value(_plain(u)) for u in view.unreachable],
    }
    out: list[bytes] = [_open_object(head), b',"roots":']
    roots = [i for i, r in enumerate(rows) if r.parent is None]
    # Work items: bytes to write, or ("run", row) / ("runs", [rows]) to expand.
    stack: list[Any] = [("runs", roots)]
    while stack:
        item = stack.pop()
        if type(item) is bytes:
            out.append(item)
            continue
        kind, value = item
        if kind == "runs":
            out.append(b"[")
            stack.append(b"]")
            for n, idx in enumerate(reversed(value)):
                stack.append(("run", idx))
                if n != len(value) - 1:
                    stack.append(b",")
            continue
        chain: list[int] = []
        end = value
        while len(rows[end].children) == 1:
            end = rows[end].children[0]
            chain.append(end)
        out.append(_open_object(node_json(rows[value])))
        out.append(b',"chain":[' + b",".join(to_json_bytes(node_json(rows[c])) for c in chain) + b'],"children":')
        stack.append(b"}")
        stack.append(("runs", rows[end].children))
    out.append(b"}\n")
    return b"".join(out)


# -- human --------------------------------------------------------------------------------------


#: Prefixes already drawn, keyed by what decides them (see :func:`tree_prefix`).
PrefixCache = dict[tuple[int, int, int, str], str]


def tree_prefix(view: TreeView, row: TreeRow, cache: PrefixCache | None = None) -> str:
    """Pi's gutter/connector prefix: three columns per display level, ``├⊟``/``└─`` at forks.

    Every level is one of four 3-cell pieces, so the prefix is ``3 * display`` cells wide. Rows
    of one linear run share their gutters tuple, indent and connector, hence their prefix: with
    ``cache`` each distinct prefix is drawn once (a tree forked 200 levels deep would otherwise
    cost 200 steps on each of its rows).
    """
    display = max(0, row.indent - 1) if view.multiple_roots else row.indent
    connector = row.show_connector and not row.is_virtual_root_child
    connector_at = display - 1 if connector else -1
    glyph = (("└" if row.is_last else "├") + ("⊟" if _foldable(view, row) else "─")) if connector_at >= 0 else ""
    if cache is not None:
        key = (id(row.gutters), display, connector_at, glyph)
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = _draw_prefix(row, display, connector_at, glyph)
        return hit
    return _draw_prefix(row, display, connector_at, glyph)


def _draw_prefix(row: TreeRow, display: int, connector_at: int, glyph: str) -> str:
    gutters: dict[int, bool] = {}
    for g in row.gutters:
        gutters.setdefault(g.position, g.show)  # Pi's gutters.find(): the first one wins
    parts: list[str] = []
    for level in range(display):
        if level in gutters:
            parts.append("│  " if gutters[level] else "   ")
        elif level == connector_at:
            parts.append(glyph + " ")
        else:
            parts.append("   ")
    return "".join(parts)


def _foldable(view: TreeView, row: TreeRow) -> bool:
    # Pi marks a segment start that has visible children with ⊟ (it can be folded there).
    if not row.children:
        return False
    if row.parent is None:
        return True
    return len(view.rows[row.parent].children) > 1


Piece = tuple[str, str]  # (text, rich style)


def tree_line(
    view: TreeView, row: TreeRow, id_width: int, selected: bool, cache: PrefixCache | None = None
) -> list[Piece]:
    """One row: id column, Pi's cursor, tree prefix, path marker, label, then Pi's text."""
    pieces: list[Piece] = []
    if id_width:
        ident = _clean(_id_text(row.id))
        if _cells(ident) > id_width:  # a UUID-length id: keep the column straight
            ident = _cut(ident, id_width - 1) + "…"
        pieces.append((ident + " " * (id_width - _cells(ident) + 1), "dim"))
    pieces.append(("› " if selected else "  ", "bold cyan"))
    prefix = tree_prefix(view, row, cache)
    if prefix:
        pieces.append((prefix, "dim"))
    if row.on_path:
        pieces.append(("• ", "cyan"))
    if row.node.label is not None:
        pieces.append((f"[{_clean(js_text(row.node.label))}] ", "yellow"))
    if row.prefix:
        pieces.append((_clean(row.prefix), _PREFIX_STYLE.get(row.style, "")))
    pieces.append((_clean(row.text), _TEXT_STYLE.get(row.style, "")))
    if row.revisit:
        pieces.append(("  ↺ repeated", "bold red"))
    return pieces


class LineWriter:
    """Writes one-line pieces to a console's file, cut to its width with a visible ``…``.

    The console is a rich console, or (no colour) the output layer's light stand-in with the
    same ``width``/``file``/``color_system``/``no_color``, so rich is not even imported.
    Callers make the text safe themselves (``safe_text``): nothing here escapes it.

    ``Console.print`` costs tens of microseconds per line, far too slow for a 100k-entry tree,
    so lines are measured, cut and styled here with rich's own cell widths and styles.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.width = max(1, int(console.width))
        system = console.color_system
        self.system = None
        if system is not None and not console.no_color:
            from rich.color import ColorSystem

            self.system = _SYSTEMS[system](ColorSystem)
        self.styles: dict[str, Any] = {}
        self.buffer: list[str] = []

    def line(self, pieces: list[Piece]) -> None:
        if self.width < UNLIMITED_WIDTH:  # no width limit (a pipe): nothing to measure or cut
            pieces = fit(pieces, self.width)
        if self.system is None:
            self.buffer.append("".join(text for text, _ in pieces))
        else:
            self.buffer.append("".join(self._styled(text, style) for text, style in pieces))
        if len(self.buffer) >= 2000:
            self.flush()

    def _styled(self, text: str, style: str) -> str:
        if not style or not text:
            return text
        parsed = self.styles.get(style)
        if parsed is None:
            from rich.style import Style

            parsed = self.styles[style] = Style.parse(style)
        return str(parsed.render(text, color_system=self.system))

    def flush(self) -> None:
        if self.buffer:
            self.console.file.write("\n".join(self.buffer) + "\n")
            self.buffer.clear()
        self.console.file.flush()


_SYSTEMS = {
    "standard": lambda cs: cs.STANDARD,
    "256": lambda cs: cs.EIGHT_BIT,
    "truecolor": lambda cs: cs.TRUECOLOR,
    "windows": lambda cs: cs.WINDOWS,
}


def _cells(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return int(cell_len(text))


def fit(pieces: list[Piece], width: int) -> list[Piece]:
    """Cut a line to ``width`` terminal cells, ending with ``…`` when something was cut."""
    widths = [_cells(text) for text, _ in pieces]
    if sum(widths) <= width:
        return pieces
    budget = width - 1
    out: list[Piece] = []
    for (text, style), w in zip(pieces, widths, strict=True):
        if w <= budget:
            out.append((text, style))
            budget -= w
            continue
        out.append((_cut(text, budget), style))
        out.append(("…", style))
        break
    return out


def pack(items: list[list[Piece]], width: int, sep: str = "  ") -> list[list[Piece]]:
    """Items (each a few pieces, kept together) on as few lines as fit ``width`` cells, ``sep``
    between items on a line: a header that does not fit breaks between its parts, not inside
    one (an item wider than the line is cut by :meth:`LineWriter.line`)."""
    lines: list[list[Piece]] = []
    used = 0
    for item in items:
        size = sum(_cells(text) for text, _ in item)
        if lines and used + len(sep) + size <= width:
            lines[-1] += [(sep, ""), *item]
            used += len(sep) + size
        else:
            lines.append(list(item))
            used = size
    return lines


def _cut(text: str, cells: int) -> str:
    if text.isascii():
        return text[: max(0, cells)]
    from rich.cells import get_character_cell_size

    used = 0
    for i, ch in enumerate(text):
        used += get_character_cell_size(ch)
        if used > cells:
            return text[:i]
    return text


def display_level(view: TreeView, row: TreeRow) -> int:
    """How many levels of forks ``row`` is drawn in (the prefix is three cells per level)."""
    return max(0, row.indent - 1) if view.multiple_roots else row.indent


def render_tree(
    console: Console,
    view: TreeView,
    session_name: JsValue,
    *,
    leaf_note: str,
    show_ids: bool = True,
    depth: int | None = None,
) -> None:
    """Human view: a header, one line per visible entry as Pi draws it, then notes on broken links.

    ``depth`` (``--depth``): rows more than that many fork levels in are left out; each run of
    them is one ``… N entries deeper`` line where it starts (a subtree's rows are consecutive).
    """
    out = LineWriter(console)
    name = (
        ("(no name)", "dim")
        if session_name is None or session_name is UNDEFINED
        else (_clean(js_text(session_name)), "bold cyan")
    )
    out.line([("Session tree · ", "bold"), name])
    deep = 0 if depth is None else sum(1 for r in view.rows if display_level(view, r) > depth)
    info = f"{len(view.rows) - deep:,} of {view.entry_count:,} entries shown · filter {view.filter}"
    if depth is not None:
        info += f" · --depth {depth:,} ({deep:,} deeper left out)"
    out.line([(_clean(info + f" · leaf {leaf_note}"), "dim")])
    if not view.rows:
        out.line([("  No entries found", "dim")])
    id_width = min(12, max((_cells(_clean(_id_text(r.id))) for r in view.rows), default=0)) if show_ids else 0
    cache: PrefixCache = {}
    deeper: list[int] = []  # the run of rows deeper than --depth being skipped

    def hidden_note() -> None:
        first = view.rows[deeper[0]]
        pad = " " * (id_width + 1) if id_width else ""
        selected = view.selected is not None and deeper[0] <= view.selected <= deeper[-1]
        note = f"… {plural(len(deeper), 'entry', 'entries')} deeper" + (" (the leaf among them)" if selected else "")
        out.line([(pad + "  ", ""), (tree_prefix(view, first, cache), "dim"), (note, "dim")])
        deeper.clear()

    for i, row in enumerate(view.rows):
        if depth is not None and display_level(view, row) > depth:
            deeper.append(i)
            continue
        if deeper:
            hidden_note()
        out.line(tree_line(view, row, id_width, i == view.selected, cache))
    if deeper:
        hidden_note()
    if view.revisits:
        out.line(
            [
                (
                    f"↺ {plural(view.revisits, 'node')} reached twice: duplicate (or missing) ids link one "
                    "node in several places (Pi's /tree would repeat them, or hang on a loop)",
                    "red",
                )
            ]
        )
    if view.unreachable:
        shown = ", ".join(_clean(_id_text(u)) for u in view.unreachable[:8])
        hidden = (
            f", … {len(view.unreachable) - 8:,} more (--format json lists all)" if len(view.unreachable) > 8 else ""
        )
        out.line(
            [
                (
                    f"{plural(len(view.unreachable), 'entry', 'entries')} in or below a parentId cycle, where no "
                    f"root reaches them (Pi's /tree leaves them out): {shown}{hidden}",
                    "red",
                )
            ]
        )
    out.flush()
