"""Human rendering of ``pitools navigate``: the plan of a tree navigation and what was written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools.core.compaction.branch import NavigationPlan
from pitools.core.js.types import Entry, JsValue
from pitools.render.compact import n, plural
from pitools.render.preview import clip, entry_preview, entry_tag
from pitools.render.safe import safe_text

if TYPE_CHECKING:
    from rich.console import Console

#: Entries shown at each end of the summarized span when it is long (``--entries`` lists all).
EDGE = 4


def _id(value: JsValue) -> str:
    if value is None:
        return "(root: no parent)"
    return safe_text(str(value), one_line=True)


def render_plan(console: Console, plan: NavigationPlan, *, entries: bool = False) -> None:
    """What Pi's ``navigateTree`` would do, most important first: where the leaf lands, what gets
    summarized within which budget, the files, the editor text; then the summarized entries."""
    from pitools.render.tree import LineWriter

    out = LineWriter(console)
    out.line(
        [
            ("Navigate from ", "bold"),
            (_id(plan.from_id), "bold cyan"),
            (" to ", "bold"),
            (_id(plan.target_id), "bold cyan"),
        ]
    )
    if plan.noop:
        out.line([("The target is the current leaf: Pi does nothing (no summary, no move).", "bold")])
        out.flush()
        return
    out.line([("  common ancestor: ", ""), (_id(plan.common_ancestor_id), "cyan")])
    landing = _id(plan.new_leaf_id)
    if plan.editor_text is not None:
        out.line(
            [
                ("  new leaf: ", ""),
                (landing, "bold cyan"),
                ("  (the target is a user/custom message: Pi re-opens it in the editor)", "dim"),
            ]
        )
        shown = clip(safe_text(plan.editor_text, one_line=True), 300)
        out.line([("  editor text: ", ""), (shown or "(empty)", "")])
    else:
        out.line([("  new leaf: ", ""), (landing, "bold cyan"), ("  (the target itself)", "dim")])
    sources = plan.budget_sources
    budget = plan.token_budget
    budget_text = "no limit (NaN)" if isinstance(budget, float) and budget != budget else f"{n(budget)} tokens"
    detail = ""
    if sources:
        detail = (
            f"  (window {n(sources.get('contextWindow', {}).get('value'))}, "
            f"{safe_text(str(sources.get('contextWindow', {}).get('source')), one_line=True)}; "
            f"− reserve {n(sources.get('reserveTokens', {}).get('value'))}, "
            f"{safe_text(str(sources.get('reserveTokens', {}).get('source')), one_line=True)})"
        )
    out.line([("  token budget: ", ""), (budget_text, "yellow"), (detail, "dim")])
    if not plan.entries:
        out.line([("Nothing to summarize: the current leaf is on the target's path.", "bold")])
    elif plan.prepare_failed:
        out.line([(f"Branch being left: {plural(len(plan.entries), 'entry', 'entries')}", "bold")])
        error = safe_text(plan.prompt_error or "", one_line=True)
        out.line([(f"  Pi 1.6.0 throws preparing the branch summary: {error}", "red")])
        out.line([("  --summarize fails here; navigating without a summary works (Pi moves the leaf)", "dim")])
    if plan.entries and not plan.prepare_failed:
        kept = len(plan.prepared.messages)
        out.line(
            [
                (f"Branch being left: {plural(len(plan.entries), 'entry', 'entries')}", "bold"),
                (
                    f"; the summary request gets {plural(kept, 'message')} (~{n(plan.prepared.total_tokens)} tokens)",
                    "",
                ),
            ]
        )
        if kept == 0:
            out.line([("  none of them is a message: Pi writes 'No content to summarize' and asks no model", "dim")])
        if plan.prompt_error:
            out.line(
                [(f"  Pi 1.6.0 throws building the request: {safe_text(plan.prompt_error, one_line=True)}", "red")]
            )
        read_files, modified_files = plan.prepared.file_lists()
        for title, files in (("read", read_files), ("modified", modified_files)):
            if files:
                out.line([(f"  files {title} ({len(files):,}):", "dim")])
                for path in files:
                    out.line([(f"    {safe_text(str(path), one_line=True)}", "")])
        title = "Entries summarized" + ("" if entries else f" (first and last {EDGE}; --entries lists all)")
        out.line([(title + ":", "bold")])
        rows: list[Entry | None] = list(plan.entries)
        hidden = 0
        if not entries and len(rows) > 2 * EDGE + 1:
            hidden = len(rows) - 2 * EDGE
            rows = [*rows[:EDGE], None, *rows[-EDGE:]]
        for entry in rows:
            if entry is None:
                out.line([(f"  … {plural(hidden, 'entry', 'entries')} …", "dim")])
                continue
            eid = safe_text(str(entry.get("id") if isinstance(entry, dict) else "?"), one_line=True)
            out.line(
                [
                    (f"  {eid:<10} ", "red"),
                    (f"{entry_tag(entry):<14}", ""),
                    (safe_text(entry_preview(entry, 140), one_line=True), ""),
                ]
            )
    out.flush()


def render_prompt(console: Console, system: str, prompt: str | None) -> None:
    """The exact request, whole (session text made safe for the terminal)."""
    from rich.text import Text

    if prompt is None:
        console.print(Text("(no request: nothing to summarize)", style="dim"))
        return
    console.print(Text("=== branch summary request: system ===", style="bold"))
    console.print(Text(safe_text(system)))
    console.print(Text("=== branch summary request: user ===", style="bold"))
    console.print(Text(safe_text(prompt)))


def render_applied(console: Console, data: dict[str, Any]) -> None:
    """What ``navigate --summarize``/``--label`` wrote."""
    from rich.text import Text

    where = safe_text(str(data["writtenTo"]), one_line=True)
    for entry in data["entries"]:
        eid = safe_text(str(entry["id"]), one_line=True)
        if entry["type"] == "branch_summary":
            parent = _id(entry["parentId"])
            model = safe_text(str(data["model"]), one_line=True) if data["model"] else "no model (nothing to summarize)"
            console.print(
                Text(f"Appended branch summary {eid} under {parent} to {where} ({model})", style="bold green")
            )
        else:
            label = safe_text(str(entry["label"]), one_line=True)
            console.print(Text(f"Appended label {eid}: {label!r} on {_id(entry['targetId'])}", style="bold green"))
    if data["backup"]:
        console.print(Text(f"Backup: {safe_text(str(data['backup']), one_line=True)}", style="dim"))
    summary = any(e["type"] == "branch_summary" for e in data["entries"])
    tail = ", with the branch summary in its context" if summary else ""
    console.print(Text(f"Pi resumes this session at {_id(data['leafId'])} (the last entry){tail}.", style="bold"))
