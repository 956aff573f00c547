"""Human rendering of ``pitools inspect``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools.core.js.types import JsValue
from pitools.render.safe import safe_text
from pitools.render.vocab import local_time, model_name, more, n, plural

if TYPE_CHECKING:
    from rich.console import Console

#: Items per list before "… N more (use --all)".
LIST_LIMIT = 12


def _money(value: JsValue) -> str:
    """A cost by the one rule of :func:`pitools.render.vocab.money` (``$1,094.91``)."""
    from pitools.render.vocab import money

    return money(value)


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {n(v)}" for k, v in counts.items()) or "none"


def _cap(items: list[str], all_: bool, sep: str = "; ") -> str:
    """Items joined, cut at LIST_LIMIT (unless ``all_``) with the same marker everywhere."""
    if not items:
        return "none"
    if all_ or len(items) <= LIST_LIMIT:
        return sep.join(items)
    return sep.join(items[:LIST_LIMIT]) + f"{sep}{more(len(items) - LIST_LIMIT)}"


def _model(m: dict[str, Any]) -> str:
    name = model_name(m["provider"], m["modelId"])
    count = m["assistantMessages"]
    return f"{name} ×{n(count)}" if count else f"{name} (switched to, no replies)"


def render_inspect(console: Console, d: dict[str, Any], *, all_: bool = False) -> None:
    from rich.table import Table
    from rich.text import Text

    def t(text: JsValue, style: str = "") -> Any:
        return Text(safe_text(str(text)), style=style)

    h = d["header"]
    title = t(f"Session {h['id']}", "bold")
    if d["name"]:
        title.append(safe_text(f"  “{d['name']}”", one_line=True), style="bold cyan")
    console.print(title)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim")
    grid.add_column()
    version = h["version"] if h["version"] is not None else "1 (the header has no version field)"
    shown = "- (stdin)" if d["path"] == "-" else d["path"]
    grid.add_row("file", t(f"{shown} ({n(d['fileBytes'])} bytes, {plural(d['lineCount'], 'line')})"))
    grid.add_row("cwd", t(h["cwd"]))
    grid.add_row("created", t(local_time(h["timestamp"], seconds=True)))
    grid.add_row(
        "version",
        t(f"{version}" + ("  (needs migration: pitools migrate)" if d["needsMigration"] else "")),
    )
    if h["parentSession"]:
        grid.add_row("forked from", t(h["parentSession"]))
    grid.add_row(
        "entries",
        t(f"{n(d['entryCount'])} ({n(d['uniqueIds'])} unique ids): {_fmt_counts(d['entryTypes'])}"),
    )
    grid.add_row("messages", t(_fmt_counts(d["messageRoles"])))
    grid.add_row("roots", t(_cap([str(r) for r in d["roots"]], all_, ", ")))
    grid.add_row("default leaf", t(d["defaultLeaf"]))
    leaves = [f"{x['id']} (depth {n(x['depth'])}, {local_time(x['timestamp'])})" for x in d["leaves"]]
    grid.add_row(f"leaves ({n(len(d['leaves']))})", t(_cap(leaves, all_)))
    if d["labels"]:
        labels = [f"{k}={v['label']!r}" for k, v in d["labels"].items()]
        grid.add_row("labels", t(_cap(labels, all_, ", ")))
    if d["compactions"]:
        compactions = [
            f"{c['id']} keeps from {c['firstKeptEntryId']} (was {n(c['tokensBefore'])} tokens)"
            for c in d["compactions"]
        ]
        grid.add_row(f"compactions ({n(len(compactions))})", t(_cap(compactions, all_)))
    if d["branchSummaries"]:
        summaries = [f"{b['id']} (from {b['fromId']})" for b in d["branchSummaries"]]
        grid.add_row("branch summaries", t(_cap(summaries, all_, ", ")))
    grid.add_row("models", t(_cap([_model(m) for m in d["models"]], all_, ", ")))
    if d["thinkingLevels"]:
        grid.add_row("thinking", t(_fmt_counts(d["thinkingLevels"])))
    s = d["stats"]
    tk = s["tokens"]
    grid.add_row(
        "usage",
        t(
            f"{n(tk['total'])} tokens (in {n(tk['input'])}, out {n(tk['output'])}, "
            f"cache read {n(tk['cacheRead'])}, "
            f"cache write {n(tk['cacheWrite'])}), cost {_money(s['cost'])}; {plural(s['toolCalls'], 'tool call')}"
        ),
    )
    fork = d.get("fork")
    if fork:
        own, copied = fork["own"], fork["copied"]
        grid.add_row(
            "",
            t(
                f"own {n(own['tokens'])} tokens, {_money(own['cost'])}; copied from the parent "
                f"{n(copied['tokens'])} tokens, {_money(copied['cost'])} (Pi's stats count both; "
                "usage counts the copied part once, in the parent)"
            ),
        )
    if "piError" in s:
        at = s.get("piErrorAt")
        if at:
            where = f"{d['path']}:{at['line']}" + (f" (entry {at['entryId']})" if at["entryId"] is not None else "")
            said = f"Pi 1.6.0 throws on {where} in {', '.join(at['functions'])}: {at['error']}"
        else:
            said = f"Pi's own stats would fail here: {s['piError']}"
        grid.add_row("", t(f"({said}; these totals skip what Pi cannot read)", "yellow"))
    if isinstance(d["usageBreakdown"], list):
        for row in d["usageBreakdown"]:
            grid.add_row("", t(f"  {row['key']}: {n(row['tokens'])} tokens, {_money(row['cost'])}"))
    diag = d["diagnostics"]
    style = "red" if diag["error"] else ("yellow" if diag["warning"] else "green")
    grid.add_row(
        "file diagnostics",
        t(
            f"{plural(diag['error'], 'error')}, {plural(diag['warning'], 'warning')}, {n(diag['info'])} info "
            "while reading (pitools validate runs every check)",
            style,
        ),
    )
    console.print(grid)
    resume = d.get("resume")
    if resume:  # not wrapped: a command copied from the terminal must stay whole
        lines = [f"resume in Pi: {resume['session']}"]
        others = [(k, v) for k, v in resume["leaves"].items() if k != d["defaultLeaf"]]
        for leaf, command in others if all_ else others[:1]:
            lines.append(f"at leaf {leaf}: {command}")
        if len(others) > 1 and not all_:
            lines.append(f"  {more(len(others) - 1)}: the same with each leaf's id")
        console.print(t("\n".join(lines), "dim"), soft_wrap=True)
