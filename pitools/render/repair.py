"""Render the results of ``pitools repair`` and ``pitools slim`` for people (JSON is their ``to_json``)."""

from __future__ import annotations

from typing import Any

from pitools.render.vocab import plural


def _every_leaf(count: int) -> str:
    """``all 3 leaves``; ``the only leaf`` (never ``all 1 leaves``)."""
    return "the only leaf" if count == 1 else f"all {count:,} leaves"


def safe(text: str) -> str:
    """Session data made printable on one line: control characters shown as escapes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _where(item: dict[str, Any]) -> str:
    parts = []
    if item.get("line") is not None:
        parts.append(f"line {item['line']}")
    if item.get("entryId"):
        parts.append(f"entry {safe(item['entryId'])}")
    return ", ".join(parts) or "file"


def repair_lines(result: dict[str, Any]) -> list[str]:
    """The human report of one ``repair`` run (``RepairResult.to_json()``)."""
    path = safe(result["path"])
    fixes, remaining = result["fixes"], result["remaining"]
    out: list[str] = []
    if not fixes and not remaining:
        out.append(f"{path}: nothing to repair; Pi reads this file as it is")
        return out
    out.append(f"{path}: {len(fixes)} fix{'es' if len(fixes) != 1 else ''}")
    for f in fixes:
        out.append(f"  {_where(f)}: {f['code']} ({f['action']}): {safe(f['message'])}")
    if remaining:
        out.append(f"not fixed ({len(remaining)}):")
        for r in remaining:
            out.append(f"  {_where(r)}: {r['code']}: {safe(r['message'])}")
    inv = result.get("invariant")
    if inv is not None:
        if inv["holds"]:
            out.append(
                f"checked: of the {inv['entriesBefore']} entries Pi reads today, none is lost or changed beyond "
                f"the fixes above; Pi's context is unchanged at {plural(inv['leavesCompared'], 'leaf', 'leaves')} "
                f"and builds at {plural(inv['leavesRestored'], 'repaired leaf', 'repaired leaves')}"
            )
        else:
            out.append("REFUSED: the repair would change what Pi reads; nothing was written:")
            out.extend(f"  {safe(v)}" for v in inv["violations"])
    for note in result.get("notes", []):
        out.append(f"note: {safe(note)}")
    if result["bytesAfter"] is not None and fixes:
        out.append(f"size: {result['bytesBefore']:,} → {result['bytesAfter']:,} bytes")
    if result["written"] and result["written"] != "-":
        out.append(
            f"written to {safe(result['written'])}"
            + (f" (backup: {safe(result['backup'])})" if result.get("backup") else "")
        )
    elif fixes and not (inv is not None and not inv["holds"]) and result["bytesAfter"] is not None:
        out.append("dry run: nothing written" if result["dryRun"] else "nothing written: use -o OUT or --in-place")
    return out


def _size(n: int) -> str:
    from pitools.render.vocab import size

    return size(n)


def slim_lines(result: dict[str, Any]) -> list[str]:
    """The human report of one ``slim`` run (``SlimResult.to_json()``)."""
    path = safe(result["path"])
    out: list[str] = []
    saved = result["bytesSaved"]
    before, after = result["bytesBefore"], result["bytesAfter"]
    if not result["categories"]:
        out.append(f"{path}: choose what to slim: --images, --tool-output BYTES and/or --thinking")
        return out
    if saved == 0:
        out.append(f"{path}: nothing to slim ({_size(before)}): no selected content is compacted away on every branch")
    else:
        pct = 100 * saved / before if before else 0
        out.append(f"{path}: {_size(before)} → {_size(after)} (saves {_size(saved)}, {pct:.1f}%)")
    for name, cat in result["categories"].items():
        out.append(
            f"  {name}: {cat['count']:,} replaced in {cat['entries']:,} entr{'y' if cat['entries'] == 1 else 'ies'}, "
            f"{_size(cat['bytesSaved'])} saved"
            + (f" ({cat['keptInContext']:,} still in some context, kept)" if cat.get("keptInContext") else "")
        )
    inv = result.get("invariant")
    if inv is not None:
        if inv["holds"]:
            how = "replayed before and after" if inv.get("check") == "full" else "no context holds a replaced entry"
            out.append(
                f"checked: context and compaction plan identical at {_every_leaf(inv['leaves'])} ({how}); "
                "tree and totals identical"
            )
        else:
            out.append("REFUSED: slimming would change what Pi builds; nothing was written:")
            out.extend(f"  {safe(v)}" for v in inv["violations"])
    if saved:
        out.append(
            "cost: the removed content is gone from the file (a placeholder names its size and sha256); "
            "branching in Pi's /tree from inside the compacted history shows the placeholders"
        )
    if result["written"] and result["written"] != "-":
        out.append(f"written to {safe(result['written'])}")
        if result.get("backup"):
            out.append(
                f"backup kept: {safe(result['backup'])} ({_size(before)}, the whole original): no disk space "
                "is freed until you delete it (--no-backup keeps none)"
            )
        elif result["written"] == result["path"]:
            out.append("no backup kept (--no-backup)")
    elif saved and not (inv is not None and not inv["holds"]):
        out.append("dry run: nothing written" if result["dryRun"] else "nothing written: use -o OUT or --in-place")
    return out
