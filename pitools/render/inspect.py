"""Human rendering of ``pitools inspect``."""

from __future__ import annotations

from typing import Any


def _n(value: Any) -> str:
    """A count with thousands separators; odd values (Pi adds strings as strings) as they are."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _money(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def render_inspect(console: Any, d: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    h = d["header"]
    title = Text(f"Session {h['id']}", style="bold")
    if d["name"]:
        title.append(f"  “{d['name']}”", style="bold cyan")
    console.print(title)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim")
    grid.add_column()
    version = h["version"] if h["version"] is not None else "1 (none)"
    grid.add_row("file", Text(f"{d['path']} ({d['fileBytes']:,} bytes, {d['lineCount']:,} lines)"))
    grid.add_row("cwd", Text(str(h["cwd"])))
    grid.add_row("created", Text(str(h["timestamp"])))
    grid.add_row(
        "version",
        Text(f"{version}" + ("  (needs migration: pitools migrate)" if d["needsMigration"] else "")),
    )
    if h["parentSession"]:
        grid.add_row("forked from", Text(str(h["parentSession"])))
    grid.add_row(
        "entries",
        Text(f"{d['entryCount']:,} ({d['uniqueIds']:,} unique ids): {_fmt_counts(d['entryTypes'])}"),
    )
    grid.add_row("messages", Text(_fmt_counts(d["messageRoles"])))
    grid.add_row("roots", Text(", ".join(map(str, d["roots"])) or "none"))
    grid.add_row("default leaf", Text(str(d["defaultLeaf"])))
    leaves = "; ".join(f"{x['id']} (depth {x['depth']}, {x['timestamp']})" for x in d["leaves"][:12])
    if len(d["leaves"]) > 12:
        leaves += f"; … {len(d['leaves']) - 12} more"
    grid.add_row(f"leaves ({len(d['leaves'])})", Text(leaves or "none"))
    if d["labels"]:
        grid.add_row("labels", Text(", ".join(f"{k}={v['label']!r}" for k, v in d["labels"].items())))
    if d["compactions"]:
        grid.add_row(
            "compactions",
            Text(
                "; ".join(
                    f"{c['id']} keeps from {c['firstKeptEntryId']} (was {c['tokensBefore']} tokens)"
                    for c in d["compactions"]
                )
            ),
        )
    if d["branchSummaries"]:
        grid.add_row(
            "branch summaries",
            Text(", ".join(f"{b['id']} (from {b['fromId']})" for b in d["branchSummaries"])),
        )
    grid.add_row("models", Text(", ".join(f"{k} ×{v}" for k, v in d["models"].items()) or "none"))
    if d["thinkingLevels"]:
        grid.add_row("thinking", Text(_fmt_counts(d["thinkingLevels"])))
    s = d["stats"]
    if True:
        t = s["tokens"]
        grid.add_row(
            "usage",
            Text(
                f"{_n(t['total'])} tokens (in {_n(t['input'])}, out {_n(t['output'])}, "
                f"cache read {_n(t['cacheRead'])}, "
                f"cache write {_n(t['cacheWrite'])}), cost ${_money(s['cost'])}; {s['toolCalls']} tool calls"
            ),
        )
        if "piError" in s:
            grid.add_row(
                "",
                Text(
                    f"(Pi's own stats would fail here: {s['piError']}; entries without usage skipped)",
                    style="yellow",
                ),
            )
    if isinstance(d["usageBreakdown"], list):
        for row in d["usageBreakdown"]:
            grid.add_row("", Text(f"  {row['key']}: {_n(row['tokens'])} tokens, ${_money(row['cost'])}"))
    diag = d["diagnostics"]
    style = "red" if diag["error"] else ("yellow" if diag["warning"] else "green")
    grid.add_row(
        "file diagnostics",
        Text(
            f"{diag['error']} errors, {diag['warning']} warnings, {diag['info']} info while reading "
            "(pitools validate runs every check)",
            style=style,
        ),
    )
    console.print(grid)
