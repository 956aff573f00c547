"""``pitools slim``: which content no leaf's context holds any more, and its placeholders.

An entry can be slimmed only when it is on the path of some leaf and in the context of none:
every branch through it has compacted it away (Pi's ``buildContextEntries`` keeps a
compaction, the entries from its ``firstKeptEntryId`` and everything after it). Inside such an
entry, base64 images, big tool outputs and thinking blocks become one short text naming what was
removed, its size and sha256. Nothing else changes: ids, parentIds, labels, entry count and
order, and every other line stay byte-identical.

:func:`slim_fingerprints` is the proof: Pi's context and ``prepareCompaction`` at every leaf,
``inspect``'s totals and the tree, hashed, before and after.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.jsonout import to_json_bytes
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

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "entries": self.entries,
            "bytesSaved": self.bytes_saved,
            "keptInContext": self.kept_in_context,
        }


@dataclass(slots=True)
class SlimPlan:
    """Replacement lines keyed by position in ``session.entries``, with per-category totals."""

    replacements: dict[int, bytes] = field(default_factory=dict)
    totals: dict[str, CategoryTotals] = field(default_factory=dict)
    leaves: int = 0
    compacted_entries: int = 0


def placeholder(what: str, data: bytes) -> str:
    """The text that stands in for removed content: what it was, its size and sha256."""
    digest = hashlib.sha256(data).hexdigest()
    return f"[pitools slim: {what} removed, {len(data):,} bytes, sha256 {digest}]"


def leaf_entries(index: SessionIndex) -> list[Any]:
    """Entries at every leaf (string ids no parentId points to) plus Pi's default leaf."""
    from pitools.core.repair.invariant import leaf_entries as _leaves

    return _leaves(index)


def compacted_away(index: SessionIndex) -> tuple[set[int], int]:
    """``id(entry)`` of every entry on some leaf's path and in no leaf's context; and the leaf count.

    A leaf whose path loops is skipped (Pi cannot build it): its entries count as in context.
    """
    from pitools.core.context.build import context_entries_from_path
    from pitools.core.errors import CycleError

    on_path: set[int] = set()
    in_context: set[int] = set()
    leaves = leaf_entries(index)
    for leaf in leaves:
        try:
            path = index.walk_to_root(leaf)
        except CycleError:
            continue
        path.reverse()
        on_path.update(map(id, path))
        in_context.update(map(id, context_entries_from_path(path)))
    # An entry Pi cannot reach through byId (an earlier duplicate id) is never slimmed.
    held = {id(e) for e in index.by_id.values()}
    return (on_path - in_context) & held, len(leaves)


def _json_size(value: Any) -> int:
    """Length of ``JSON.stringify(value)`` (orjson directly: no copy of a big string first)."""
    import orjson

    try:
        return len(orjson.dumps(value))
    except TypeError:  # lone surrogates, huge ints...: the careful path
        return len(to_json_bytes(value))


def _image_size(block: dict[str, Any]) -> bytes:
    data = block.get("data")
    return data.encode("utf-8", "surrogatepass") if type(data) is str else b""


def _count_content(content: list[Any], role: Any, options: SlimOptions, counts: dict[str, CategoryTotals]) -> None:
    """Count the blocks :func:`_slim_content` would replace (no hashing, no copies)."""
    for block in content:
        if type(block) is not dict:
            continue
        btype = block.get("type")
        if options.images and btype == "image" and type(block.get("data")) is str and block["data"]:
            counts[IMAGES].count += 1
        elif (
            options.tool_output is not None
            and role == "toolResult"
            and btype == "text"
            and type(text := block.get("text")) is str
            and len(text) * 3 > options.tool_output
            and len(text.encode("utf-8", "surrogatepass")) > options.tool_output
        ):
            counts[TOOL_OUTPUT].count += 1
        elif options.thinking and btype == "thinking" and role == "assistant":
            counts[THINKING].count += 1


def _slim_content(
    content: list[Any], role: Any, options: SlimOptions, counts: dict[str, CategoryTotals], touched: set[str]
) -> list[Any] | None:
    changed = False
    out: list[Any] = []
    for block in content:
        new = block
        if type(block) is dict:
            btype = block.get("type")
            if options.images and btype == "image" and type(block.get("data")) is str and block["data"]:
                mime = block.get("mimeType")
                what = f"image ({mime})" if type(mime) is str and mime.isprintable() and len(mime) < 60 else "image"
                new = {"type": "text", "text": placeholder(what, _image_size(block))}
                cat = IMAGES
            elif (
                options.tool_output is not None
                and role == "toolResult"
                and btype == "text"
                and type(block.get("text")) is str
                and len(block["text"]) * 3 > options.tool_output  # cheap bound before encoding
                and len(raw := block["text"].encode("utf-8", "surrogatepass")) > options.tool_output
            ):
                new = {"type": "text", "text": placeholder("tool output", raw)}
                cat = TOOL_OUTPUT
            elif options.thinking and btype == "thinking" and role == "assistant":
                text = block.get("thinking")
                raw = text.encode("utf-8", "surrogatepass") if type(text) is str else to_json_bytes(block)
                new = {"type": "thinking", "thinking": placeholder("thinking", raw)}
                cat = THINKING
            if new is not block:
                saved = _json_size(block) - len(to_json_bytes(new))
                if saved > 0:
                    totals = counts[cat]
                    totals.count += 1
                    totals.bytes_saved += saved
                    touched.add(cat)
                    changed = True
                else:
                    new = block
        out.append(new)
    return out if changed else None


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


def slim_entry(entry: Any, options: SlimOptions, counts: dict[str, CategoryTotals]) -> Any | None:
    """The slimmed copy of ``entry``, or None when nothing in it is selected."""
    found = _candidate_content(entry)
    if found is None:
        return None
    content, role, where = found
    touched: set[str] = set()
    new_content = _slim_content(content, role, options, counts, touched)
    if new_content is None:
        return None
    for cat in touched:
        counts[cat].entries += 1
    new = dict(entry)
    if where == "message":
        message = dict(entry["message"])
        message["content"] = new_content
        new["message"] = message
    else:
        new["content"] = new_content
    return new


def plan_slim(entries: Sequence[Any], index: SessionIndex, options: SlimOptions) -> SlimPlan:
    """Replacement lines for every compacted-away entry holding selected content."""
    plan = SlimPlan(totals={c: CategoryTotals() for c in options.categories()})
    if not plan.totals:
        return plan
    away, plan.leaves = compacted_away(index)
    plan.compacted_entries = len(away)
    in_context = {c: CategoryTotals() for c in plan.totals}
    for pos, entry in enumerate(entries):
        if id(entry) in away:
            new = slim_entry(entry, options, plan.totals)
            if new is not None:
                plan.replacements[pos] = to_json_bytes(new) + b"\n"
        elif (found := _candidate_content(entry)) is not None:
            _count_content(found[0], found[1], options, in_context)
    for cat, totals in in_context.items():
        plan.totals[cat].kept_in_context = totals.count
    return plan


# -- the proof -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class SlimFingerprints:
    """Hashes of what Pi builds from a session: per leaf, plus the tree and inspect's totals."""

    leaves: dict[str, str]
    tree: str
    totals: str


def _digest(value: Any) -> str:
    return hashlib.sha256(to_json_bytes(value)).hexdigest()


class MessageHashes:
    """sha256 of each message's JSON, computed once per message object.

    Untouched entries are the very same objects before and after slimming (their lines are
    copied, not re-read), so the second pass only hashes what changed, which is the point:
    an entry slim rewrote shows up as a new object with a new hash if any context holds it.
    """

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, bytes]] = {}

    def __call__(self, message: Any) -> bytes:
        hit = self.memo.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        digest = hashlib.sha256(to_json_bytes(message)).digest()
        self.memo[id(message)] = (message, digest)
        return digest


def slim_fingerprints(session: Any, index: SessionIndex, hashes: MessageHashes | None = None) -> SlimFingerprints:
    """Context and ``prepareCompaction`` (default settings) at every leaf, the tree and totals.

    Pass the same ``hashes`` to the before and after calls to hash each unchanged message once.
    """
    from pitools.core.compaction.prepare import CompactionSettings, prepare_compaction
    from pitools.core.context.build import build_projection, context_entries_from_path
    from pitools.core.errors import CycleError, PiCrashError
    from pitools.core.session.loaded import entry_id
    from pitools.core.session.tree import flatten_tree, get_tree
    from pitools.core.views.inspect import inspect_session

    hashes = hashes or MessageHashes()
    settings = CompactionSettings()
    # prepareCompaction re-projects the path by id; with unique ids that is the path itself, so
    # the projection built for the context can be reused.
    unique_ids = len(index.by_id) == len(index.entries)
    leaves: dict[str, str] = {}
    for leaf in leaf_entries(index):
        h = hashlib.sha256()
        try:
            branch = index.walk_to_root(leaf)
            branch.reverse()
            projection = build_projection(branch, context_entries_from_path(branch))
            h.update(to_json_bytes([projection.thinking_level, projection.model]))
            for message in projection.messages:
                h.update(hashes(message))
            # prepareCompaction on the same path: its fields, and its messages by hash (the
            # serialized conversation is a function of them).
            prep = prepare_compaction(branch, settings, projection=projection if unique_ids else None)
            if prep is None:
                h.update(b"no compaction")
            else:
                h.update(
                    to_json_bytes(
                        [
                            prep.first_kept_entry_id,
                            prep.is_split_turn,
                            prep.tokens_before,
                            prep.previous_summary,
                            prep.file_ops.to_json(),
                            len(prep.messages_to_summarize),
                            len(prep.turn_prefix_messages),
                        ]
                    )
                )
                for message in (*prep.messages_to_summarize, *prep.turn_prefix_messages):
                    h.update(hashes(message))
        except (CycleError, PiCrashError) as exc:
            h.update(type(exc).__name__.encode())
        eid = entry_id(leaf)
        leaves[eid if type(eid) is str else f"#{index.position(leaf)}"] = h.hexdigest()
    tree = _digest(flatten_tree(get_tree(index)))
    data = inspect_session(session, index)
    for key in ("fileBytes", "path", "diagnostics"):
        data.pop(key, None)
    return SlimFingerprints(leaves, tree, _digest(data))


def compare_fingerprints(before: SlimFingerprints, after: SlimFingerprints) -> list[str]:
    """Every difference, as a sentence (empty: identical)."""
    out: list[str] = []
    if before.leaves.keys() != after.leaves.keys():
        out.append("the set of leaves changed")
    for leaf, h in before.leaves.items():
        if after.leaves.get(leaf) not in (None, h):
            out.append(f"leaf {leaf!r}: Pi's context or compaction plan would change")
    if before.tree != after.tree:
        out.append("the tree (ids, parents, labels, order) would change")
    if before.totals != after.totals:
        out.append("inspect's totals (counts, tokens, cost, labels) would change")
    return out


__all__ = [
    "IMAGES",
    "THINKING",
    "TOOL_OUTPUT",
    "CategoryTotals",
    "SlimFingerprints",
    "SlimOptions",
    "SlimPlan",
    "compacted_away",
    "compare_fingerprints",
    "placeholder",
    "plan_slim",
    "slim_fingerprints",
]
