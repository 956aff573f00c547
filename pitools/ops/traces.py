"""``export --format otlp|atif``: load a session, pick its branches, build traces or trajectories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitools.core.js.types import Entry, EntryId, JsonObject
from pitools.core.session.load import LoadedSession

if TYPE_CHECKING:
    from pitools.core.views.otel import TraceData


def branch_leaves(loaded: LoadedSession, leaf_ref: str | None, all_: bool) -> list[EntryId]:
    """The leaf ids to export: every leaf with ``all_``, else the one ``--leaf`` names (or Pi's default)."""
    if all_:
        return list(loaded.index.leaves())
    leaf = loaded.leaf(leaf_ref)
    return [leaf] if leaf is not None else []


#: How many parentSession links to follow up from one session (a loop is cut earlier).
MAX_ANCESTORS = 64


def copied_entry_ids(loaded: LoadedSession) -> set[str]:
    """Ids of the entries this session copied from its ancestors (fork/clone history).

    Follows ``parentSession`` up through the files that exist (the lineage module's rules decide
    what is a parent and what is a copy); an ancestor that is missing or unreadable copies nothing.
    """
    import os
    from pathlib import Path

    from pitools.core.session.load import load
    from pitools.core.views import lineage

    own_key = lineage.default_canonical(loaded.path)
    refs = [_ref(own_key, loaded.session.header)]
    entries_by_session: dict[str, Any] = {own_key: loaded.session.entries}
    parent = (loaded.session.header or {}).get("parentSession")
    folder = os.path.dirname(own_key)
    while type(parent) is str and parent and "\x00" not in parent and len(refs) <= MAX_ANCESTORS:
        path = parent if os.path.isabs(parent) else os.path.join(folder, parent)
        key = lineage.default_canonical(path)
        # Only regular files: the path comes from session text (a FIFO or a device could hang us).
        if key in entries_by_session or not os.path.isfile(key):
            break
        try:
            session = load(Path(key), strict=False, freeze=False).session
        except Exception:  # a damaged ancestor copies nothing
            break
        if not session.valid:
            break
        refs.append(_ref(key, session.header))
        entries_by_session[key] = session.entries
        parent = (session.header or {}).get("parentSession")
        folder = os.path.dirname(key)
    if len(refs) == 1:
        return set()
    parents = lineage.resolve_parents(refs)
    return lineage.copied_entry_ids(own_key, entries_by_session, parents)


def fork_split(loaded: LoadedSession) -> dict[str, Any] | None:
    """A fork's or clone's totals split into **own** (what it added) and **copied from the parent**.

    Pi's stats (``inspect``'s totals, ``ls``'s rows) count the copied history too; ``usage`` and
    the archive totals count it once, in the parent. None when nothing is copied (no parent file).
    """
    from pitools.core.js.access import entry_id
    from pitools.core.views.stats import session_stats

    header = loaded.session.header or {}
    if not header.get("parentSession"):
        return None
    copied = copied_entry_ids(loaded)
    if not copied:
        return None
    entries = loaded.session.entries
    mine = [e for e in entries if not (type(e) is dict and entry_id(e) in copied)]
    theirs = [e for e in entries if type(e) is dict and entry_id(e) in copied]

    def part(part_entries: list[Any]) -> dict[str, Any]:
        stats = session_stats(part_entries, strict=False)
        return {"entries": len(part_entries), "tokens": stats.totals.tokens, "cost": stats.totals.cost}

    return {"parentSession": header.get("parentSession"), "own": part(mine), "copied": part(theirs)}


def _ref(key: str, header: Entry | None) -> Any:
    import os

    from pitools.core.views.lineage import SessionRef

    header = header or {}
    return SessionRef(key, header.get("id"), header.get("parentSession"), os.path.dirname(key))


def _branches(loaded: LoadedSession, leaf_ref: str | None, all_: bool) -> list[list[Any]]:
    out = []
    for leaf in branch_leaves(loaded, leaf_ref, all_):
        branch = loaded.index.get_branch(leaf)
        if branch:
            out.append(branch)
    return out


def build_traces(loaded: LoadedSession, leaf_ref: str | None, all_: bool, *, legacy: bool = False) -> list[TraceData]:
    from pitools.core.views.otel import branch_trace

    header = loaded.session.header or {}
    copied = copied_entry_ids(loaded)
    return [branch_trace(header, b, copied=copied, legacy=legacy) for b in _branches(loaded, leaf_ref, all_)]


def build_trajectories(
    loaded: LoadedSession, leaf_ref: str | None, all_: bool, *, images: bool = True
) -> list[JsonObject]:
    from pitools.core.views.atif import branch_trajectory

    header = loaded.session.header or {}
    copied = copied_entry_ids(loaded)
    return [branch_trajectory(header, b, copied=copied, images=images) for b in _branches(loaded, leaf_ref, all_)]
