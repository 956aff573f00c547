"""Render a :class:`~pitools.core.views.branches.BranchList` as a rich table or JSON."""

from __future__ import annotations

import re
from typing import Any

from pitools.core.js.value import UNDEFINED
from pitools.core.session.loaded import entry_id, entry_type
from pitools.core.views.branches import Branch, BranchList, js_text, safe_value
from pitools.render.preview import entry_preview, entry_tag, message_preview
from pitools.render.safe import safe_text

_ISO = re.compile(r"^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)")


def _plain(value: Any) -> Any:
    return None if value is UNDEFINED else safe_value(value)


def _text(value: str) -> str:
    # One line, and shown safe (controls, bidi characters and lone surrogates escaped).
    return safe_text(value, one_line=True)


def divergent_preview(branch: Branch, limit: int = 200) -> str | None:
    if branch.divergent_user is None:
        return None
    return message_preview(branch.divergent_user.get("message"), limit)


def branch_json(branch: Branch) -> dict[str, Any]:
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


def branches_json(result: BranchList, session_name: Any) -> dict[str, Any]:
    """The ``pitools branches --format json`` object (schemas/output/branches.schema.json)."""
    return {
        "sessionName": _plain(session_name),
        "defaultLeafId": _plain(result.default_leaf_id),
        "entryCount": result.entry_count,
        "branchCount": len(result.branches),
        "branches": [branch_json(b) for b in result.branches],
    }


def _when(value: Any) -> str:
    if value is None or value is UNDEFINED:
        return ""
    text = js_text(value)
    m = _ISO.match(text)
    return f"{m.group(1)} {m.group(2)}" if m else _text(text)


def _id(value: Any) -> str:
    if value is None or value is UNDEFINED:
        return "—"
    return _text(value) if type(value) is str else _text(repr(safe_value(value)))


def render_branches(console: Any, result: BranchList, session_name: Any) -> None:
    """Human view: a header line and one table row per leaf (★ marks Pi's default leaf)."""
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    head = Text("Branches · ", style="bold")
    if session_name is None or session_name is UNDEFINED:
        head.append("(no name)", style="dim")
    else:
        head.append(_text(js_text(session_name)), style="bold cyan")
    head.append(
        f" · {len(result.branches)} {'leaf' if len(result.branches) == 1 else 'leaves'}"
        f" of {result.entry_count} entries",
        style="dim",
    )
    head.append(f" · ★ Pi's default leaf {_id(result.default_leaf_id)}", style="dim")
    console.print(head, no_wrap=True, overflow="ellipsis")

    rows: list[list[Any]] = []
    for b in result.branches:
        marker = "★" if b.is_default_leaf else ""
        if b.error is not None and b.entry_count is None:
            rows.append(
                [
                    marker,
                    _id(b.leaf_id),
                    "",
                    "",
                    _when(b.timestamp),
                    "",
                    "",
                    "",
                    Text(_text(f"error: {b.error}"), style="red"),
                ]
            )
            continue
        story = Text()
        user = divergent_preview(b)
        story.append("user: " if user is not None else "user: —", style="dim")
        story.append(_text(user or ""))
        story.append("\nleaf: ", style="dim")
        if b.leaf is not None:
            story.append(f"{entry_tag(b.leaf)}: ", style="dim")
            story.append(_text(entry_preview(b.leaf, 200)))
        if not b.is_leaf:
            story.append(" (entries hang below it)", style="dim")
        if b.error is not None:
            story.append(f" ({_text(b.error)})", style="red")
        rows.append(
            [
                marker,
                _id(b.leaf_id),
                str(b.entry_count),
                str(b.depth),
                _when(b.timestamp),
                _id(None if b.fork is None else entry_id(b.fork)),
                "" if b.tokens is None else js_text(b.tokens),
                "" if b.label is None else _text(js_text(b.label)),
                story,
            ]
        )
    headers = ["", "leaf", "entries", "depth", "last activity", "forks at", "~tokens", "label"]
    from pitools.render.safe import unlimited

    # Fill a terminal's width; in a pipe every column keeps its full content instead.
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", expand=not unlimited(console))
    for n, title in enumerate(headers):
        # Fixed columns keep their full width; the last column takes what is left.
        width = max([len(title)] + [cell_len(r[n]) for r in rows if isinstance(r[n], str)])
        if title == "label":
            width = min(width, 16)
        table.add_column(
            title,
            no_wrap=True,
            min_width=width,
            overflow="ellipsis",
            justify="right" if title in ("entries", "depth", "~tokens") else "left",
            style={"leaf": "cyan", "~tokens": "yellow", "label": "yellow", "forks at": ""}.get(title, ""),
        )
    table.add_column("divergent user message / leaf", no_wrap=True, overflow="ellipsis", ratio=1)
    for r in rows:
        table.add_row(*r)
    console.print(table)
