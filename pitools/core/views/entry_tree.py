"""Per-entry tree facts for the archive index: branches holding an entry, context, compaction.

For every entry of a session (Pi's ``getEntries()``, file order) this computes

* the leaves whose path holds it (Pi's ``getBranch(leaf)`` contains the entry). Leaves are
  numbered in depth-first order of the tree, so the leaves under an entry form one contiguous
  range ``[leaf_lo, leaf_hi)``: two integers per entry instead of a list;
* whether it is in the context Pi builds at the session's default leaf (``buildSessionPath`` →
  ``buildContextEntries``, minus entries a ``context_edit`` removes);
* whether it was *summarized away*: on the default leaf's path but before the kept part of the
  latest compaction, so the model sees only the compaction summary of it.

Entries the tree cannot reach from a root (on a ``parentId`` loop, or shadowed by a later entry
with the same id, which Pi's ``byId`` keeps instead) belong to no branch.

Only ``type``, ``id``, ``parentId``, ``message.role``, ``firstKeptEntryId``, ``targetId`` and
``replacement`` are read, so the index can recompute the facts from stored skeletons after an
append without parsing the file again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pitools.core.context.build import context_entries_from_path
from pitools.core.js.types import Entry
from pitools.core.js.value import UNDEFINED, js_truthy
from pitools.core.session.tree import SessionIndex, mkey
from pitools.errors import PitoolsError


@dataclass(slots=True)
class TreeFacts:
    """Facts parallel to the entries they were computed from."""

    #: Leaf ids in depth-first order (children in file order).
    leaves: list[str]
    leaf_lo: list[int]
    leaf_hi: list[int]
    in_context: list[bool]
    summarized: list[bool]
    default_leaf: Any

    def leaves_of(self, i: int) -> list[str]:
        return self.leaves[self.leaf_lo[i] : self.leaf_hi[i]]


def tree_facts(entries: Sequence[Entry]) -> TreeFacts:
    """Branch ranges, in-context and summarized-away flags for every entry."""
    n = len(entries)
    index = SessionIndex.build(entries)
    # Children by parent, over the entries byId holds (a shadowed duplicate is nobody's parent).
    held = [False] * n
    for pos in index.pos_by_id.values():
        held[pos] = True
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for i, entry in enumerate(entries):
        if not held[i]:
            continue
        pid = entry.get("parentId", UNDEFINED) if type(entry) is dict else UNDEFINED
        parent_pos = index.pos_by_id.get(mkey(pid)) if js_truthy(pid) else None
        if parent_pos is None or parent_pos == i:
            roots.append(i)
        else:
            children.setdefault(parent_pos, []).append(i)
    leaf_ids = set(index.leaves())
    leaves: list[str] = []
    lo = [0] * n
    hi = [0] * n
    visited = [False] * n
    # Iterative DFS: (position, children not yet entered).
    for root in roots:
        stack: list[tuple[int, int]] = [(root, 0)]
        visited[root] = True
        lo[root] = len(leaves)
        while stack:
            pos, k = stack[-1]
            kids = children.get(pos, ())
            if k < len(kids):
                stack[-1] = (pos, k + 1)
                child = kids[k]
                if visited[child]:
                    continue
                visited[child] = True
                lo[child] = len(leaves)
                stack.append((child, 0))
                continue
            stack.pop()
            if not kids:
                eid = entries[pos].get("id") if type(entries[pos]) is dict else None
                # A leaf is an id no entry names as parentId (Pi's getChildren is empty): an entry
                # whose id is "" has children there, although getBranch never walks up to it.
                if type(eid) is str and eid in leaf_ids:
                    leaves.append(eid)
            hi[pos] = len(leaves)
    in_context = [False] * n
    summarized = [False] * n
    default_leaf = index.leaf_id
    try:
        path = index.session_path(default_leaf)
        ctx = context_entries_from_path(path) if path else []
    except PitoolsError:
        # A parentId loop under the default leaf, or an entry Pi's context code throws on: Pi
        # cannot build this session's context either, so nothing is in it.
        path, ctx = [], []
    if path:
        ctx_ids = {id(e) for e in ctx}
        removed = _edited_out(ctx)
        pos_of = {id(e): i for i, e in enumerate(entries)}
        for entry in path:
            i = pos_of[id(entry)]
            if id(entry) in ctx_ids:
                in_context[i] = mkey(entry.get("id", UNDEFINED) if type(entry) is dict else UNDEFINED) not in removed
            else:
                summarized[i] = True
    return TreeFacts(leaves, lo, hi, in_context, summarized, default_leaf)


def _edited_out(ctx: Sequence[Any]) -> set[Any]:
    """Targets a ``context_edit`` in the context removes (``replacement: null``), as Pi's projection."""
    edits: dict[Any, Any] = {}
    for entry in ctx:
        if type(entry) is dict and entry.get("type") == "context_edit":
            edits[mkey(entry.get("targetId", UNDEFINED))] = entry
    return {k for k, e in edits.items() if e.get("replacement", UNDEFINED) is None}


def skeleton(entry: Entry) -> dict[str, Any]:
    """The fields :func:`tree_facts` reads, for storing and recomputing after an append."""
    if type(entry) is not dict:
        return {}
    out: dict[str, Any] = {"type": entry.get("type"), "id": entry.get("id"), "parentId": entry.get("parentId")}
    etype = out["type"]
    if etype == "message":
        message = entry.get("message")
        out["message"] = {"role": message.get("role")} if type(message) is dict else message
    elif etype == "compaction":
        out["firstKeptEntryId"] = entry.get("firstKeptEntryId", UNDEFINED)
    elif etype == "context_edit":
        out["targetId"] = entry.get("targetId", UNDEFINED)
        out["replacement"] = None if entry.get("replacement", UNDEFINED) is None else True
    return out
