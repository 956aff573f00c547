"""``pitools migrate``'s human report."""

from __future__ import annotations

from typing import Any

from pitools.render.vocab import plural


def migrate_text(r: dict[str, Any], check: bool) -> str:
    """What ``migrate`` did (or would do, or ``--check`` found), a line and its details."""
    rep = r["report"]
    if r.get("note"):
        return f"{r['path']}: {r['note']}"
    if not r["needed"]:
        copied = f"; wrote an identical copy to {r['written']}" if r["written"] else ""
        return f"{r['path']}: already version {r['versionBefore']}; nothing to migrate{copied}"
    parts = [f"{r['path']}: version {r['versionBefore'] if r['versionBefore'] is not None else '1 (none)'} → 3"]
    details = []
    if rep["idsAssigned"]:
        details.append(f"{plural(rep['idsAssigned'], 'entry', 'entries')} given ids")
    if rep["rolesRenamed"]:
        details.append(f"{plural(rep['rolesRenamed'], 'hookMessage role')} renamed to custom")
    if rep["indicesConverted"]:
        details.append(f"{plural(rep['indicesConverted'], 'compaction index', 'compaction indices')} converted")
    if rep["indicesDropped"]:
        details.append(
            f"{plural(rep['indicesDropped'], 'compaction index', 'compaction indices')} dropped "
            "(target missing, as Pi does)"
        )
    if rep["indicesKeptAsIs"]:
        details.append(
            f"{plural(rep['indicesKeptAsIs'], 'non-numeric compaction index', 'non-numeric compaction indices')} "
            "kept as is (as Pi does)"
        )
    if details:
        parts.append("  " + "; ".join(details))
    if check:
        parts.append("  migration needed (nothing written)")
    elif r["written"]:
        parts.append(f"  written to {r['written']}" + (f" (backup: {r['backup']})" if r["backup"] else ""))
    else:
        parts.append("  nothing written: use -o OUT or --in-place")
    return "\n".join(parts)
