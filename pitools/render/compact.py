"""Human rendering of compaction plans and results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools.core.compaction.plan import (
    REGION_KEPT,
    REGION_PREFIX,
    REGION_PREVIOUS,
    REGION_SUMMARIZE,
    REGION_SUMMARIZED,
    CompactionPlan,
    RegionEntry,
)
from pitools.core.js.types import JsValue
from pitools.render.preview import clip, entry_preview, entry_tag
from pitools.render.safe import safe_text

if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {
    REGION_SUMMARIZED: "dim",
    REGION_PREVIOUS: "yellow",
    REGION_SUMMARIZE: "red",
    REGION_PREFIX: "magenta",
    REGION_KEPT: "green",
}
_TITLE = {
    REGION_SUMMARIZED: "already summarized",
    REGION_PREVIOUS: "previous compaction",
    REGION_SUMMARIZE: "to summarize",
    REGION_PREFIX: "turn prefix",
    REGION_KEPT: "kept verbatim",
}
_MEANING = {
    REGION_SUMMARIZED: "history Pi no longer sends: the previous summary stands for it (no token figure)",
    REGION_PREVIOUS: "its summary is handed to the model and updated",
    REGION_SUMMARIZE: "becomes the new summary",
    REGION_PREFIX: "start of the turn the cut splits: summarized separately",
    REGION_KEPT: "sent as is after the summary",
}
_ORDER = (REGION_SUMMARIZED, REGION_PREVIOUS, REGION_SUMMARIZE, REGION_PREFIX, REGION_KEPT)
#: Entries shown at each end of a region when the listing is collapsed (no --entries).
EDGE = 3

Piece = tuple[str, str]


def n(value: JsValue) -> str:
    """A count with thousands separators; anything else as text."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def _runs(plan: CompactionPlan) -> list[tuple[str, list[RegionEntry]]]:
    """The branch as consecutive runs of one region each, in order."""
    runs: list[tuple[str, list[RegionEntry]]] = []
    for r in plan.regions:
        if runs and runs[-1][0] == r.region:
            runs[-1][1].append(r)
        else:
            runs.append((r.region, [r]))
    return runs


def _entry_line(r: RegionEntry) -> list[Piece]:
    tokens = f"~{r.tokens:,}" if r.tokens else ""
    return [
        ("▶ " if r.is_cut else "  ", "bold red"),
        (f"{safe_text(str(r.entry_id), one_line=True):<10} ", _STYLE[r.region]),
        (f"{entry_tag(r.entry):<14}", ""),
        (f"{tokens:>9} ", "yellow"),
        (safe_text(entry_preview(r.entry, 140), one_line=True), ""),
    ]


def _cut_reason(plan: CompactionPlan) -> list[str]:
    prep = plan.preparation
    assert prep is not None
    keep = n(plan.settings.keep_recent_tokens)
    why = [f"  why: the newest ~{keep} tokens stay (keepRecentTokens), counted back from the leaf to a turn start"]
    if prep.is_split_turn:
        why.append("  split turn: the cut is inside a turn, so the turn's start (turn prefix) is summarized separately")
    return why


def render_plan(console: Console, plan: CompactionPlan, *, entries: bool = False) -> None:
    """The plan first (settings, verdict, regions, cut, previous summary, files, what Pi sends
    after), then the entries: all of them with ``entries``, else each region's first and last
    few with the middle collapsed ("… 14,200 entries …")."""
    from pitools.render.tree import LineWriter

    out = LineWriter(console)
    s = plan.settings_json
    out.line([("Compaction plan at leaf ", "bold"), (safe_text(str(plan.leaf_id), one_line=True), "bold cyan")])
    for key in ("keepRecentTokens", "reserveTokens", "contextWindow"):
        if key in s:
            out.line([(f"  {key} = {n(s[key]['value'])}  ({safe_text(str(s[key]['source']), one_line=True)})", "dim")])
    verdict = "yes" if plan.would_compact else "no"
    out.line(
        [
            (
                f"Would Pi compact now? {verdict}: context ~{n(plan.context_tokens)} tokens vs threshold "
                f"{n(plan.threshold)} (window {n(plan.context_window)} − reserve {n(plan.settings.reserve_tokens)})",
                "bold yellow" if plan.would_compact else "bold",
            )
        ]
    )
    counts: dict[str, int] = {}
    tokens: dict[str, int] = {}
    for r in plan.regions:
        counts[r.region] = counts.get(r.region, 0) + 1
        tokens[r.region] = tokens.get(r.region, 0) + r.tokens
    # The two figures differ by design: Pi's context estimate starts from the usage the provider
    # reported for the last reply (system prompt, tools and real tokenization included), while
    # its cut, hence the regions, weighs each entry by the characters / 4 estimate.
    if plan.context_from_usage:
        out.line(
            [
                (
                    "  (context: the last reply's reported usage plus characters/4 for what follows it; "
                    "the regions below: characters/4 per entry, as Pi's cut weighs them)",
                    "dim",
                )
            ]
        )
    out.line([(f"Regions on the branch ({plural(len(plan.regions), 'entry', 'entries')}):", "bold")])
    count_width = max((len(plural(c, "entry", "entries")) for c in counts.values()), default=0)
    for region in _ORDER:
        if region not in counts:
            continue
        figure = "" if region == REGION_SUMMARIZED else f"~{tokens[region]:,} tokens"
        out.line(
            [
                (f"  {_TITLE[region]:<20}", _STYLE[region]),
                (f"{plural(counts[region], 'entry', 'entries'):>{count_width}}  ", ""),
                (f"{figure:>15}  ", "yellow"),
                (_MEANING[region], "dim"),
            ]
        )
    prep = plan.preparation
    if prep is None:
        out.line([(f"Pi would not compact: {plan.reason}", "bold")])
    else:
        cut = safe_text(str(prep.first_kept_entry_id), one_line=True)
        out.line([(f"Cut at {cut}{' (split turn)' if prep.is_split_turn else ''}", "bold")])
        for line in _cut_reason(plan):
            out.line([(line, "dim")])
        if isinstance(prep.previous_summary, str):
            out.line(
                [
                    ("Previous summary (updated, not replaced): ", "bold"),
                    (clip(safe_text(prep.previous_summary, one_line=True), 160), ""),
                ]
            )
        else:
            out.line([("Previous summary: none (first compaction on this branch)", "bold")])
        read_files, modified_files = prep.file_lists()
        if read_files or modified_files:
            out.line([("Files appended to the summary:", "bold")])
            for title, files in (("read", read_files), ("modified", modified_files)):
                if files:
                    out.line([(f"  {title} ({len(files):,}):", "dim")])
                    for path in files:
                        # One path per line, never cut in a pipe: it is copied into shells and editors.
                        out.line([(f"    {safe_text(path, one_line=True)}", "")])
        after = plan.tokens_after()
        kept = counts.get(REGION_KEPT, 0)
        out.line(
            [
                ("After compaction Pi sends: ", "bold"),
                (
                    f"the summary + {plural(kept, 'kept entry', 'kept entries')} (~{n(after)} tokens); "
                    f"tokensBefore {n(prep.tokens_before)}{_frees(prep.tokens_before, after)}",
                    "",
                ),
            ]
        )
    title = "Entries" if entries else f"Entries (first and last {EDGE} of each region; --entries lists all)"
    out.line([(title + ":", "bold")])
    for region, run in _runs(plan):
        out.line([(f"── {_TITLE[region]} ({plural(len(run), 'entry', 'entries')}) ──", "bold " + _STYLE[region])])
        if entries or len(run) <= 2 * EDGE + 1:
            shown: list[RegionEntry | int] = list(run)
        else:
            cut_at = [i for i, r in enumerate(run) if r.is_cut]
            keep = set(range(EDGE)) | set(range(len(run) - EDGE, len(run))) | set(cut_at)
            shown = []
            hidden = 0
            for i, r in enumerate(run):
                if i in keep:
                    if hidden:
                        shown.append(hidden)
                        hidden = 0
                    shown.append(r)
                else:
                    hidden += 1
        for item in shown:
            if isinstance(item, int):
                out.line([(f"  … {plural(item, 'entry', 'entries')} …", "dim")])
            else:
                out.line(_entry_line(item))
    out.flush()


def _frees(before: Any, after: Any) -> str:
    if isinstance(before, int) and isinstance(after, int):
        freed = before - after
        return f", frees ~{freed:,}" if freed > 0 else " (the kept part alone is estimated at more than that)"
    return ""


def render_prompts(console: Console, requests: list[dict[str, str]]) -> None:
    from rich.text import Text

    for r in requests:
        console.print(Text(f"=== {r['kind']} request: system ===", style="bold"))
        console.print(Text(r["system"]))
        console.print(Text(f"=== {r['kind']} request: user ===", style="bold"))
        console.print(Text(r["prompt"]))


def render_applied(console: Console, d: dict[str, Any]) -> None:
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
    console.print(Text(f"Context: ~{n(d['tokensBefore'])} → ~{n(d['tokensAfter'])} tokens", style="bold"))
    if not d["leafWasLast"]:
        console.print(
            Text(
                "Note: the leaf was not the last entry of the file. Pi resumes a session from its last "
                "entry, which is now this compaction, so Pi will continue from this branch.",
                style="yellow",
            )
        )
