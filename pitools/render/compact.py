"""Human rendering of compaction plans and results."""

from __future__ import annotations

from typing import Any

from pitools.core.compaction.plan import (
    REGION_KEPT,
    REGION_PREFIX,
    REGION_PREVIOUS,
    REGION_SUMMARIZE,
    REGION_SUMMARIZED,
    CompactionPlan,
)
from pitools.render.preview import entry_preview, entry_tag

_STYLE = {
    REGION_SUMMARIZED: "dim",
    REGION_PREVIOUS: "yellow",
    REGION_SUMMARIZE: "red",
    REGION_PREFIX: "magenta",
    REGION_KEPT: "green",
}
_TITLE = {
    REGION_SUMMARIZED: "already summarized (behind the previous compaction)",
    REGION_PREVIOUS: "previous compaction (its summary is updated)",
    REGION_SUMMARIZE: "to summarize",
    REGION_PREFIX: "turn prefix (summarized separately: the cut splits this turn)",
    REGION_KEPT: "kept verbatim",
}


def render_plan(console: Any, plan: CompactionPlan) -> None:
    from rich.text import Text

    s = plan.settings_json
    console.print(Text(f"Compaction plan at leaf {plan.leaf_id}", style="bold"))
    for key in ("keepRecentTokens", "reserveTokens", "contextWindow"):
        if key in s:
            console.print(Text(f"  {key} = {s[key]['value']}  ({s[key]['source']})", style="dim"))
    verdict = "yes" if plan.would_compact else "no"
    console.print(
        Text(
            f"Would Pi compact now? {verdict}: context ~{plan.context_tokens} tokens vs threshold "
            f"{plan.threshold} (window {plan.context_window} − reserve {plan.settings.reserve_tokens})",
            style="bold yellow" if plan.would_compact else "bold",
        )
    )
    current = None
    for r in plan.regions:
        if r.region != current:
            current = r.region
            console.print(Text(f"── {_TITLE[current]} ──", style="bold " + _STYLE[current]))
        line = Text("▶ " if r.is_cut else "  ", style="bold red")
        line.append(f"{r.entry_id!s:<10} ", style=_STYLE[r.region])
        line.append(f"{entry_tag(r.entry):<14}")
        line.append(f"{'~' + str(r.tokens) if r.tokens else '':>8} ", style="yellow")
        line.append(entry_preview(r.entry, 140))
        console.print(line, overflow="ellipsis", no_wrap=True)
    totals = plan.region_totals()
    console.print(
        Text(
            "Totals: " + ", ".join(f"{_TITLE[k].split(' (')[0]} ~{v}" for k, v in totals.items()),
            style="bold",
        )
    )
    prep = plan.preparation
    if prep is None:
        console.print(Text(f"Pi would not compact: {plan.reason}", style="bold"))
        return
    console.print(
        Text(
            f"Cut at {prep.first_kept_entry_id}{' (split turn)' if prep.is_split_turn else ''}; "
            f"tokensBefore {prep.tokens_before}; after compaction: summary + ~{plan.tokens_after()} kept tokens "
            f"(frees ~{_freed(prep.tokens_before, plan.tokens_after())})",
            style="bold",
        )
    )
    read_files, modified_files = prep.file_lists()
    if read_files or modified_files:
        console.print(Text("Files appended to the summary:"))
        for title, files in (("read", read_files), ("modified", modified_files)):
            if files:
                console.print(Text(f"  {title} ({len(files)}):", style="dim"))
                for path in files:
                    # One path per line, never wrapped: it is copied into shells and editors.
                    console.print(Text(f"    {path}"), no_wrap=True, overflow="ellipsis")
    if isinstance(prep.previous_summary, str):
        console.print(Text("Updates the previous summary (repeated compaction).", style="dim"))


def _freed(before: Any, after: Any) -> Any:
    if isinstance(before, int) and isinstance(after, int):
        return before - after
    return "?"


def render_prompts(console: Any, requests: list[dict[str, str]]) -> None:
    from rich.text import Text

    for r in requests:
        console.print(Text(f"=== {r['kind']} request: system ===", style="bold"))
        console.print(Text(r["system"]))
        console.print(Text(f"=== {r['kind']} request: user ===", style="bold"))
        console.print(Text(r["prompt"]))


def render_applied(console: Any, d: dict[str, Any]) -> None:
    from rich.text import Text

    e = d["entry"]
    console.print(
        Text(
            f"Appended compaction {e['id']} to {d['writtenTo']} (summarized with {d['model']})",
            style="bold green",
        )
    )
    if d["backup"]:
        console.print(Text(f"Backup: {d['backup']}", style="dim"))
    console.print(Text(f"Context: ~{d['tokensBefore']} → ~{d['tokensAfter']} tokens", style="bold"))
    if not d["leafWasLast"]:
        console.print(
            Text(
                "Note: the leaf was not the last entry of the file. Pi resumes a session from its last "
                "entry, which is now this compaction, so Pi will continue from this branch.",
                style="yellow",
            )
        )
