"""Human rendering of ``pitools search``, ``pitools usage`` and ``pitools index``."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def _zone(name: str) -> str:
    """``times in Europe/Paris``, ``times in UTC``, ``times in local time``."""
    return "local time" if name == "local" else name


def safe_text(text: str, *, one_line: bool = True) -> str:
    """Session text made harmless for a terminal (:func:`pitools.render.safe.safe_text`).

    On one line, a line break shows as ``⏎`` so a snippet still reads as the text it came from.
    """
    from pitools.render.safe import safe_text as _safe

    if one_line:
        text = text.replace("\r\n", "\n").replace("\n", " ⏎ ")
    return _safe(text, one_line=one_line)


def _money(x: Any) -> str:
    from pitools.render.vocab import money

    return money(x)


def _tokens(n: Any) -> str:
    from pitools.render.ls import human_tokens

    return human_tokens(n)


# -- search ---------------------------------------------------------------------------------------


def render_search(console: Console, result: dict[str, Any], now: Any = None) -> None:
    """The hits through rich (the layout: :func:`pitools.render.search_hits.segments`)."""
    from rich.text import Text

    from pitools.render.safe import unlimited
    from pitools.render.search_hits import segments

    out = Text(no_wrap=False, overflow="fold")
    for text, style in segments(result, now, None if unlimited(console) else console.width):
        out.append(text, style=style or None)
    console.print(out, soft_wrap=True)


# -- usage ----------------------------------------------------------------------------------------


_COLUMNS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "records")


def render_usage(console: Console, report: dict[str, Any]) -> None:
    """A table (one row per key, models indented under it with --breakdown), totals, and a cost bar."""
    from rich.cells import cell_len
    from rich.text import Text

    from pitools.render.ls import _fit

    period = report["by"] in ("day", "week", "month")
    # By session: a fork's or clone's copied history in its own column (counted in the parent).
    copied_column = report["by"] == "session"
    headers = [report["by"], "input", "output", "cache read", "cache write", "total", "cost"]
    headers += ["copied"] if copied_column else []

    def row_cells(key: str, sums: dict[str, Any], copied: Any = None) -> list[str]:
        out = _cells(key, sums)
        if copied_column:
            out.append(_money(copied["cost"]) if copied and copied.get("records") else "")
        return out

    body: list[tuple[list[str], str, Any]] = []
    short: dict[str, str] = {}
    if report["by"] == "session":
        from pitools.core.views.resume import short_ids

        # Id prefixes that tell the rows apart (and name one session to `pitools inspect`).
        short = short_ids([str(r["session"]["id"]) for r in report["rows"] if (r.get("session") or {}).get("id")])
    for row in report["rows"]:
        key = row["key"]
        if report["by"] == "session" and row.get("session"):
            s = row["session"]
            sid = str(s.get("id") or "")
            # The name comes masked from the index (pitools.core.views.listing: a preview).
            title = str(s["name"]) if s.get("name") else s.get("cwd") or ""
            key = f"{short.get(sid, sid[:8])} {title}".strip() or key
        body.append((row_cells(safe_text(key), row, row.get("copied")), "", row["cost"]))
        for m in row.get("models", []):
            body.append((row_cells("  " + safe_text(m["model"]), m), "dim", None))
    total = report["totals"]
    widths = [max(cell_len(h), *(cell_len(r[0][i]) for r in body), 0) for i, h in enumerate(headers)]
    widths = [max(w, cell_len(c)) for w, c in zip(widths, row_cells("total", total), strict=True)]
    widths[0] = min(widths[0], 48)
    max_cost = max((r["cost"] for r in report["rows"] if type(r["cost"]) in (int, float)), default=0) or 0
    used = sum(widths) + len(widths) - 1
    bar_width = max(0, min(40, console.width - used - 2)) if period else 0
    out = Text(no_wrap=True, overflow="ignore")
    out.append(" ".join(_fit(h, w, i > 0) for i, (h, w) in enumerate(zip(headers, widths, strict=True))), "bold")
    out.append("\n")
    for cells, style, cost in body:
        line = " ".join(_fit(c, w, i > 0) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        out.append(line, style)
        if bar_width and cost is not None and max_cost > 0 and type(cost) in (int, float):
            n = round(bar_width * cost / max_cost)
            out.append("  " + "█" * n, "green")
        out.append("\n")
    line = " ".join(_fit(c, w, i > 0) for i, (c, w) in enumerate(zip(row_cells("total", total), widths, strict=True)))
    out.append(line, "bold")
    out.append("\n")
    copied = report.get("copiedHistory") or {}
    count = report["sessions"]
    zone = _zone(report["timezone"])
    note = f"{count} {'session' if count == 1 else 'sessions'}; times in {zone}"
    if copied_column and len(report["rows"]) != count:  # forks with nothing of their own
        note = f"{len(report['rows']):,} sessions, {count:,} with usage of their own; times in {zone}"
    if copied.get("records"):
        note += (
            f"; history copied from a parent counted once, in the parent: {copied['records']:,} usage records "
            f"copied by fork/clone ({_money(copied['cost'])}) not counted again"
        )
    out.append(note, "dim")
    console.print(out, soft_wrap=True)


def _cells(key: str, sums: dict[str, Any]) -> list[str]:
    return [
        key,
        _tokens(sums["input"]),
        _tokens(sums["output"]),
        _tokens(sums["cacheRead"]),
        _tokens(sums["cacheWrite"]),
        _tokens(sums["totalTokens"]),
        _money(sums["cost"]),
    ]


def usage_csv(report: dict[str, Any]) -> str:
    """One CSV row per key (and per model inside it with --breakdown), then the totals row; by
    session also the cost each row copied from its parent (the totals row: all copied history)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    breakdown = any("models" in r for r in report["rows"])
    # By session: the cost a fork or clone copied from its parent (counted in the parent's row).
    copied = report["by"] == "session"
    writer.writerow(["key", *(["model"] if breakdown else []), *_COLUMNS, *(["copiedCost"] if copied else [])])
    for row in report["rows"]:
        extra = [row["copied"]["cost"]] if copied else []
        writer.writerow([_csv_safe(row["key"]), *([""] if breakdown else []), *(row[c] for c in _COLUMNS), *extra])
        for m in row.get("models", []):
            extra = [""] if copied else []
            writer.writerow([_csv_safe(row["key"]), _csv_safe(m["model"]), *(m[c] for c in _COLUMNS), *extra])
    extra = [report["copiedHistory"]["cost"]] if copied else []
    writer.writerow(["total", *([""] if breakdown else []), *(report["totals"][c] for c in _COLUMNS), *extra])
    return buf.getvalue()


def _csv_safe(text: str) -> str:
    """Keep a spreadsheet from running a cell as a formula (CSV injection)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


# -- index ----------------------------------------------------------------------------------------


def render_index(console: Console, data: dict[str, Any]) -> None:
    from rich.text import Text

    s = data["update"]
    out = Text()
    out.append(
        f"{s['files']} session files: {s['added']} added, {s['appended']} appended, {s['reindexed']} reindexed, "
        f"{s['removed']} removed, {s['unchanged']} unchanged"
    )
    out.append(f"\nindex: {safe_text(data['path'] or '(in memory)')}", "dim")
    if data.get("sizeBytes") is not None:
        from pitools.render.ls import human_size

        out.append(f" ({human_size(data['sizeBytes'])})", "dim")
    if not data.get("fts"):
        out.append("\nfull-text search unavailable (this Python's SQLite has no FTS5): search scans", "yellow")
    console.print(out, soft_wrap=True)
