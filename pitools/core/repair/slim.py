"""``pitools slim``: which content no leaf's context holds any more, and its placeholders.

An entry can be slimmed only when it is on the path of some leaf and in the context of none:
every branch through it has compacted it away (Pi's ``buildContextEntries`` keeps a
compaction, the entries from its ``firstKeptEntryId`` and everything after it). Inside such an
entry, base64 images, big tool outputs and thinking blocks become one short text naming what was
removed, its size and sha256. Nothing else changes: ids, parentIds, labels, entry count and
order, and every other line stay byte-identical.

Built for files of gigabytes, read once: while streaming, :func:`slim_candidate` computes the
replacement line of every entry holding selected content (from the parsed entry, which is then
dropped) and :func:`skeleton` keeps what the tree, the contexts' selection and ``inspect`` read
(everything but the content blocks slim may replace). :func:`plan_from_candidates` then picks the
compacted-away candidates with one walk over the tree (:func:`context_union`).
:mod:`pitools.core.repair.slim_check` proves the result before anything is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.json.record import record_json
from pitools.core.js.types import Entry, JsonObject, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.session.tree import SessionIndex

IMAGES = "images"
TOOL_OUTPUT = "toolOutput"
THINKING = "thinking"


@dataclass(frozen=True, slots=True)
class SlimOptions:
    images: bool = False
    #: Tool-result text blocks larger than this many UTF-8 bytes are replaced (None: keep them).
    tool_output: int | None = None
    thinking: bool = False

    def categories(self) -> list[str]:
        out = []
        if self.images:
            out.append(IMAGES)
        if self.tool_output is not None:
            out.append(TOOL_OUTPUT)
        if self.thinking:
            out.append(THINKING)
        return out


@dataclass(slots=True)
class CategoryTotals:
    count: int = 0
    entries: int = 0
    bytes_saved: int = 0
    #: Matching content left alone because some leaf's context still holds it.
    kept_in_context: int = 0

    def to_json(self) -> JsonObject:
        return record_json(self)


@dataclass(slots=True)
class SlimPlan:
    """Replacement lines keyed by position in ``session.entries``, with per-category totals."""

    replacements: dict[int, bytes] = field(default_factory=dict)
    totals: dict[str, CategoryTotals] = field(default_factory=dict)
    leaves: int = 0
    compacted_entries: int = 0
    #: Which entries the leaves' paths and contexts hold (the proof checks against it).
    context: ContextUnion | None = None


def placeholder(what: str, data: bytes) -> str:
    """The text that stands in for removed content: what it was, its size and sha256."""
    digest = hashlib.sha256(data).hexdigest()
    return f"[pitools slim: {what} removed, {len(data):,} bytes, sha256 {digest}]"


# -- one entry: what would change, and what must not -------------------------------------------------


@dataclass(slots=True)
class Candidate:
    """An entry holding content the options select: its slimmed line, and what that saves."""

    #: The slimmed entry, or None when no replacement saves a byte (serialized only if chosen).
    new: dict[str, Any] | None
    #: ``(category, bytes saved)`` for every block the line replaces.
    replaced: list[tuple[str, int]]
    #: The category of every block matching the options (reported as kept when in context).
    matching: list[str]


def _json_size(value: JsValue) -> int:
    """Length of ``JSON.stringify(value)`` (orjson directly: no copy of a big string first)."""
    import orjson

    try:
        return len(orjson.dumps(value))
    except TypeError:  # lone surrogates, huge ints...: the careful path
        return len(to_json_bytes(value))


def _match(block: Any, role: Any, options: SlimOptions) -> str | None:
    """The category a content block falls in under ``options``, or None."""
    if type(block) is not dict:
        return None
    btype = block.get("type")
    if options.images and btype == "image" and type(data := block.get("data")) is str and data:
        return IMAGES
    if (
        options.tool_output is not None
        and role == "toolResult"
        and btype == "text"
        and type(text := block.get("text")) is str
        and len(text) * 3 > options.tool_output  # cheap bound before encoding
        and len(text.encode("utf-8", "surrogatepass")) > options.tool_output
    ):
        return TOOL_OUTPUT
    if options.thinking and btype == "thinking" and role == "assistant":
        return THINKING
    return None


def _replacement(block: dict[str, Any], cat: str) -> dict[str, Any]:
    if cat == IMAGES:
        mime = block.get("mimeType")
        what = f"image ({mime})" if type(mime) is str and mime.isprintable() and len(mime) < 60 else "image"
        return {"type": "text", "text": placeholder(what, block["data"].encode("utf-8", "surrogatepass"))}
    if cat == TOOL_OUTPUT:
        return {"type": "text", "text": placeholder("tool output", block["text"].encode("utf-8", "surrogatepass"))}
    text = block.get("thinking")
    raw = text.encode("utf-8", "surrogatepass") if type(text) is str else to_json_bytes(block)
    return {"type": "thinking", "thinking": placeholder("thinking", raw)}


def _candidate_content(entry: Any) -> tuple[list[Any], Any, str] | None:
    """The content list slim may change in this entry, its role, and where it sits."""
    if type(entry) is not dict:
        return None
    etype = entry.get("type")
    if etype == "message":
        message = entry.get("message")
        if type(message) is dict and type(message.get("content")) is list:
            return message["content"], message.get("role"), "message"
    elif etype == "custom_message" and type(entry.get("content")) is list:
        return entry["content"], "custom", "entry"
    return None


def _with_content(entry: dict[str, Any], where: str, content: list[Any]) -> dict[str, Any]:
    new = dict(entry)
    if where == "message":
        message = dict(entry["message"])
        message["content"] = content
        new["message"] = message
    else:
        new["content"] = content
    return new


def slim_candidate(entry: Entry, options: SlimOptions) -> Candidate | None:
    """The slimmed line of ``entry`` and what it saves; None when nothing in it is selected."""
    found = _candidate_content(entry)
    if found is None:
        return None
    content, role, where = found
    matching: list[str] = []
    replaced: list[tuple[str, int]] = []
    out: list[Any] | None = None
    for i, block in enumerate(content):
        cat = _match(block, role, options)
        if cat is None:
            continue
        matching.append(cat)
        new = _replacement(block, cat)
        saved = _json_size(block) - _json_size(new)
        if saved > 0:
            if out is None:
                out = list(content)
            out[i] = new
            replaced.append((cat, saved))
    if not matching:
        return None
    return Candidate(None if out is None else _with_content(entry, where, out), replaced, matching)


def candidate_line(cand: Candidate) -> bytes:
    """The candidate's new line (``JSON.stringify`` of the slimmed entry, and ``\\n``)."""
    assert cand.new is not None
    return to_json_bytes(cand.new) + b"\n"


def skeleton(entry: Any, *, in_place: bool = False) -> Any:
    """``entry`` without the content blocks slim may replace (all that is kept in memory).

    Only the contexts read content, and slim never touches an entry a context holds. Everything
    else Pi and pitools read from an entry stays: ids, parents, types, roles, models, usage,
    labels, compaction fields, and the tool calls (``inspect`` counts them), so the tree, the
    path settings and ``inspect``'s totals can be computed, and compared, on skeletons.
    """
    found = _candidate_content(entry)
    if found is None:
        return entry
    content, _role, where = found
    calls = [b for b in content if type(b) is dict and b.get("type") == "toolCall"]
    if not in_place:
        return _with_content(entry, where, calls)
    # ``in_place``: the streaming reader drops the entry anyway (no copies of 40,000 dicts).
    if where == "message":
        entry["message"]["content"] = calls
    else:
        entry["content"] = calls
    return entry


# -- which entries some leaf's context holds ---------------------------------------------------------


def _is_system_message(entry: Entry) -> bool:
    if type(entry) is not dict or entry.get("type") != "message":
        return False
    message = entry.get("message", UNDEFINED)
    return type(message) is dict and message.get("role") == "system"


def _simple_ids(index: SessionIndex) -> bool:
    """Every entry has its own non-empty string id (then a path's ids are distinct, and ``===`` is
    ``==``). An id "" is falsy for getBranch, so its children start paths of their own, yet it is
    no leaf (Pi's getChildren finds them): the fast walk's leaves would differ from Pi's."""
    by_id = index.pos_by_id
    return len(by_id) == len(index.entries) and all(type(k) is str and k for k in by_id)


@dataclass(slots=True)
class ContextUnion:
    """Positions (in the entries) on some leaf's path, and in some leaf's context."""

    on_path: set[int]
    in_context: set[int]
    #: Positions of the leaf entries (the index's ``leaf_positions()``), those whose path loops included.
    leaves: list[int]


def context_union(index: SessionIndex) -> ContextUnion:
    """The entries on some leaf's path and those Pi's ``buildContextEntries`` keeps at some leaf.

    Pi rebuilds the context at a leaf from its whole path: the newest compaction, the entries from
    its ``firstKeptEntryId`` up to it (system messages left out) and everything after it; no
    compaction: the whole path. Done leaf by leaf that is leaves × depth steps (48 leaves of
    35,000 entries in a 1 GB session); here each leaf walks up only to its newest compaction, the
    kept entries are found by depth, and a path without compaction is marked once: about one
    step per entry, on integer positions. A leaf whose path loops is skipped (Pi cannot build
    it). Files with duplicate or non-string ids, or a parent after its child in the file, take
    the leaf-by-leaf way with Pi's own functions.
    """
    entries = index.entries
    if not _simple_ids(index):
        return _context_union_per_leaf(index)
    pos_of = index.pos_by_id
    # Parent positions (-1: a root, as Pi's walk ends there); a parent later in the file
    # (moved lines, loops) leaves the fast way.
    parents = [pos_of.get(pid, -1) if type(pid := e.get("parentId")) is str and pid else -1 for e in entries]
    n = len(entries)
    depth = [0] * n
    has_child = bytearray(n)
    for i, p in enumerate(parents):
        if p >= 0:
            if p >= i:
                return _context_union_per_leaf(index)
            depth[i] = depth[p] + 1
            has_child[p] = 1
    leaves = [i for i in range(n) if not has_child[i]]
    if n and has_child[n - 1]:
        leaves.append(n - 1)  # Pi's default leaf: the last entry
    on_path = bytearray(n)
    in_context: set[int] = set()
    closed = bytearray(n)  # the entry and all above it are in context (no compaction above)
    for leaf in leaves:
        i = leaf
        while i >= 0 and not on_path[i]:
            on_path[i] = 1
            i = parents[i]
        chain: list[int] = []
        compaction = -1
        i = leaf
        while i >= 0 and not closed[i]:
            if entries[i].get("type") == "compaction":
                compaction = i
                break
            chain.append(i)
            i = parents[i]
        in_context.update(chain)
        if compaction < 0:
            for i in chain:
                closed[i] = 1
            continue
        in_context.add(compaction)
        first_kept = entries[compaction].get("firstKeptEntryId", UNDEFINED)
        target = pos_of.get(first_kept, -1) if type(first_kept) is str else -1
        if target < 0 or depth[target] >= depth[compaction]:
            continue  # not before the compaction on this path: nothing before it is kept
        kept: list[int] = []
        i = parents[compaction]
        for _ in range(depth[compaction] - depth[target]):
            kept.append(i)
            i = parents[i]
        if kept[-1] == target:
            in_context.update(k for k in kept if not _is_system_message(entries[k]))
    return ContextUnion({i for i in range(n) if on_path[i]}, in_context, leaves)


def _context_union_per_leaf(index: SessionIndex) -> ContextUnion:
    from pitools.core.context.build import context_entries_from_path
    from pitools.errors import CycleError

    pos = {id(e): i for i, e in enumerate(index.entries)}
    leaves = index.leaf_positions()
    on_path: set[int] = set()
    in_context: set[int] = set()
    for leaf in leaves:
        try:
            at = index.walk_positions(leaf)
        except CycleError:
            continue
        at.reverse()
        on_path.update(at)
        in_context.update(pos[id(e)] for e in context_entries_from_path(index.entries_at(at)))
    return ContextUnion(on_path, in_context, leaves)


def compacted_away(index: SessionIndex, union: ContextUnion | None = None) -> tuple[set[int], int]:
    """Positions of the entries on some leaf's path and in no leaf's context; and the leaf count."""
    union = union or context_union(index)
    # An entry Pi cannot reach through byId (an earlier duplicate id) is never slimmed.
    held = set(index.pos_by_id.values())
    return (union.on_path - union.in_context) & held, len(union.leaves)


# -- the plan ---------------------------------------------------------------------------------------


def plan_from_candidates(entries: Sequence[Entry], candidates: dict[int, Candidate], options: SlimOptions) -> SlimPlan:
    """Replacement lines for the compacted-away candidates (``candidates`` keyed by entry position).

    ``entries`` may be skeletons: only the tree and the compaction fields are read here.
    """
    plan = SlimPlan(totals={c: CategoryTotals() for c in options.categories()})
    if not plan.totals:
        return plan
    index = SessionIndex.build(entries)
    plan.context = union = context_union(index)
    away, plan.leaves = compacted_away(index, union)
    plan.compacted_entries = len(away)
    totals = plan.totals
    for pos in sorted(candidates):
        cand = candidates[pos]
        if pos in away:
            if cand.new is None:
                continue
            plan.replacements[pos] = candidate_line(cand)
            for cat, saved in cand.replaced:
                totals[cat].count += 1
                totals[cat].bytes_saved += saved
            for cat in {cat for cat, _ in cand.replaced}:
                totals[cat].entries += 1
        else:
            for cat in cand.matching:
                totals[cat].kept_in_context += 1
    return plan


def candidates_of(entries: Iterable[Entry], options: SlimOptions) -> dict[int, Candidate]:
    """:func:`slim_candidate` of every entry, keyed by position."""
    out: dict[int, Candidate] = {}
    if not options.categories():
        return out
    for pos, entry in enumerate(entries):
        cand = slim_candidate(entry, options)
        if cand is not None:
            out[pos] = cand
    return out


def plan_slim(entries: Sequence[Entry], options: SlimOptions) -> SlimPlan:
    """:func:`plan_from_candidates` on parsed entries held in memory (small files, tests)."""
    return plan_from_candidates(entries, candidates_of(entries, options), options)


__all__ = [
    "IMAGES",
    "THINKING",
    "TOOL_OUTPUT",
    "Candidate",
    "CategoryTotals",
    "ContextUnion",
    "SlimOptions",
    "SlimPlan",
    "candidate_line",
    "compacted_away",
    "context_union",
    "placeholder",
    "plan_from_candidates",
    "plan_slim",
    "skeleton",
    "slim_candidate",
]
