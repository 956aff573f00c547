"""The Pi mirrors as they were written before the loader had one index interface: kept only as
test oracles (``tests/golden/test_oracles.py`` compares the production code against them on
every golden session, under both keep policies of the loader).

These are the list-of-entries forms of ``getBranch``/``buildSessionPath`` (walking entry
objects through the ``byId`` map), ``buildContextEntries``, the context replay and the
compaction region layout (matching entries by identity). Production code lives in
``pitools/core/session/index.py``, ``pitools/core/context/build.py`` and
``pitools/core/compaction/plan.py``; nothing in ``pitools/`` imports this module.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from pitools.core.compaction.plan import (
    REGION_KEPT,
    REGION_PREFIX,
    REGION_PREVIOUS,
    REGION_SUMMARIZE,
    REGION_SUMMARIZED,
    RegionRow,
)
from pitools.core.compaction.prepare import CompactionPreparation
from pitools.core.context.build import (
    ProjectedEntry,
    build_projection,
    estimate_projected_context_tokens,
    latest_compaction_on,
    message_estimates,
)
from pitools.core.js import ops as jsops
from pitools.core.js.access import entry_id, parent_id
from pitools.core.js.ops import prop
from pitools.core.js.value import UNDEFINED
from pitools.core.session.index import id_text, mkey
from pitools.core.session.tree import SessionIndex, js_truthy_id
from pitools.errors import CycleError


def walk_to_root(index: SessionIndex, start: Any) -> list[Any]:
    """Entries from ``start`` up through its parents by ``byId``, leaf first; raises on a cycle."""
    out: list[Any] = []
    current = start
    by_id = index.by_id
    limit = len(by_id) + 1
    while current is not None:
        out.append(current)
        if len(out) > limit:
            _raise_cycle(index, start)
        pid = parent_id(current)
        current = by_id.get(mkey(pid)) if js_truthy_id(pid) else None
    return out


def _raise_cycle(index: SessionIndex, start: Any) -> None:
    out: list[Any] = []
    seen: set[int] = set()
    current = start
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        out.append(current)
        pid = parent_id(current)
        current = index.by_id.get(mkey(pid)) if js_truthy_id(pid) else None
    assert current is not None
    at = next(i for i, e in enumerate(out) if e is current)
    loop = [id_text(entry_id(e)) for e in out[at:]]
    raise CycleError(f"parentId cycle: {' -> '.join([*loop, loop[0]])}; Pi would loop forever on this path", cycle=loop)


def get_branch(index: SessionIndex, leaf_id: Any) -> list[Any]:
    """Pi's ``getBranch(leafId)``: root → leaf; ``[]`` for an unknown leaf."""
    if not js_truthy_id(leaf_id):
        return []
    start = index.by_id.get(mkey(leaf_id))
    if start is None:
        return []
    path = walk_to_root(index, start)
    path.reverse()
    return path


def session_path(index: SessionIndex, leaf_id: Any) -> list[Any]:
    """Pi's ``buildSessionPath``: an unknown leaf means the last entry; null means none."""
    if leaf_id is None:
        return []
    leaf = index.by_id.get(mkey(leaf_id)) if js_truthy_id(leaf_id) else None
    if leaf is None:
        if not index.entries:
            return []
        leaf = index.entries[-1]
    path = walk_to_root(index, leaf)
    path.reverse()
    return path


def _is_system_message(entry: Any) -> bool:
    return (
        type(entry) is dict
        and entry.get("type") == "message"
        and prop(entry.get("message", UNDEFINED), "role") == "system"
    )


def context_entries_from_path(path: list[Any]) -> list[Any]:
    """Pi's ``buildContextEntries`` on a list path."""
    compaction = latest_compaction_on(path)
    if compaction is None:
        return path
    comp_id = compaction.get("id", UNDEFINED)
    comp_idx = next((i for i, e in enumerate(path) if jsops.strict_equal(entry_id(e), comp_id)), -1)
    if comp_idx < 0:
        return path
    first_kept = compaction.get("firstKeptEntryId", UNDEFINED)
    start = next((i for i in range(comp_idx) if jsops.strict_equal(entry_id(path[i]), first_kept)), comp_idx)
    out = [compaction]
    out.extend(entry for entry in path[start:comp_idx] if not _is_system_message(entry))
    out.extend(path[comp_idx + 1 :])
    return out


def replay(index: SessionIndex, leaf_id: Any) -> dict[str, Any]:
    """The context replay at ``leaf_id`` on entry lists: what ``replay_context`` must give."""
    branch = get_branch(index, leaf_id)
    spath = list(branch) if branch else session_path(index, leaf_id)
    ctx = context_entries_from_path(spath)
    projection = build_projection(spath, ctx)
    estimates = message_estimates(projection)
    estimate = estimate_projected_context_tokens(projection, branch, estimates)
    return {
        "path": branch,
        "pathIds": [entry_id(e) for e in branch],
        "contextEntries": ctx,
        "projection": [(pe.source, pe.messages, pe.omitted, pe.edit) for pe in projection.entries],
        "messages": projection.messages,
        "thinkingLevel": projection.thinking_level,
        "model": projection.model,
        "tokenEstimates": estimates,
        "estimate": estimate.to_json(),
    }


def region_rows(branch: Sequence[Any], prep: CompactionPreparation | None, current: Any) -> list[RegionRow]:
    """The compaction regions of each branch entry, matching projected entries by identity."""
    if prep is None:
        projected = {id(pe.source): pe for pe in current.entries}
        out_none: list[RegionRow] = []
        for e in branch:
            pe = projected.get(id(e))
            tokens = pe.tokens() if pe is not None else 0
            region = REGION_KEPT if pe is not None else REGION_SUMMARIZED
            out_none.append((e, entry_id(e), region, tokens if type(tokens) is int else 0, False))
        return out_none
    entries = prep.projection.entries
    bounds = (
        (0, prep.boundary_start, REGION_PREVIOUS),
        (prep.boundary_start, prep.history_end, REGION_SUMMARIZE),
        (prep.history_end, prep.first_kept_index, REGION_PREFIX),
        (prep.first_kept_index, len(entries), REGION_KEPT),
    )
    first_kept = entries[prep.first_kept_index].source if prep.first_kept_index < len(entries) else None
    out: list[RegionRow] = []
    if len(entries) == len(branch) and all(map(operator.is_, [pe.source for pe in entries], branch)):
        for lo, hi, region in bounds:
            for pe in entries[lo:hi]:
                e = pe.source
                tokens = pe.tokens()
                out.append((e, entry_id(e), region, tokens if type(tokens) is int else 0, e is first_kept))
        return out
    placed: dict[int, tuple[str, ProjectedEntry]] = {}
    for lo, hi, region in bounds:
        for pe in entries[lo:hi]:
            placed[id(pe.source)] = (region, pe)
    for e in branch:
        found = placed.get(id(e))
        if found is None:
            out.append((e, entry_id(e), REGION_SUMMARIZED, 0, e is first_kept))
            continue
        region, pe = found
        tokens = pe.tokens()
        out.append((e, entry_id(e), region, tokens if type(tokens) is int else 0, e is first_kept))
    return out
