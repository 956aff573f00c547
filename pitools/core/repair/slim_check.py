"""The proof ``pitools slim`` runs before it writes: Pi builds the same thing at every leaf.

The promise (issue 15): the context at every leaf, ``prepareCompaction`` at every leaf,
``inspect``'s totals and the tree are identical before and after. The slimmed file differs from
the original only in the replaced lines (every other line is copied byte for byte), so it is
enough to show that nothing Pi reads from a replaced entry changes. :func:`check_slim` does that
on the entries exactly as Pi will parse the new lines:

1. **Outside the content, nothing changed.** The skeleton of each new entry (everything but the
   content blocks slim may replace: ids, parents, type, role, model, usage, timestamps, tool
   calls...) is byte-identical to the old one. The tree, the leaves, every path, the thinking
   level and model Pi recovers along a path, the ids and types the token estimate looks up, and
   every total ``inspect`` reports read only these fields.
2. **No context holds a replaced entry.** Pi reads message content only from the context
   entries (``buildContextEntries``: ``buildSessionProjection`` projects them, and
   ``prepareCompaction`` re-projects the same path, so its messages to summarize, turn prefix,
   cut point, token counts and file lists come from them too). With the skeletons identical, every
   path and every leaf's context entries are the original's, as
   :func:`~pitools.core.repair.slim.context_union` finds them (it equals Pi's
   ``buildContextEntries`` run leaf by leaf: tested on every golden session); none may be a
   replaced entry.

Neither step trusts the plan's selection, so a wrong plan (one that touches an entry some context
still holds, or changes a field outside the content) is refused. The cost is about one step per
entry, instead of a full replay of every leaf, before and after (leaves × path length: 48 × 35,000
entries on a 1 GB session).

:func:`slim_fingerprints` is the full replay (context and ``prepareCompaction`` at every leaf,
the tree and ``inspect``'s totals, hashed), for ``pitools slim --full-check`` and the tests that
confirm the structural proof against it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pitools.core.js.access import entry_id
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.types import Entry, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.repair.slim import ContextUnion, SlimPlan, context_union, skeleton
from pitools.core.session.tree import SessionIndex, id_text


def _show(entry: Entry) -> str:
    eid = entry_id(entry)
    return repr(eid) if type(eid) is str else "(no id)" if eid is UNDEFINED else id_text(eid)


def check_slim(
    entries: Sequence[Entry],
    plan: SlimPlan,
    after: Mapping[int, Any],
    lines: Sequence[int] | None = None,
    union: ContextUnion | None = None,
) -> list[str]:
    """Every way the slimmed session would differ for Pi (empty: the promise holds).

    ``entries`` are the entries before (or their :func:`~pitools.core.repair.slim.skeleton`),
    ``after[pos]`` the value Pi parses from ``plan.replacements[pos]``; ``lines`` (parallel to
    ``entries``) names lines in the messages. ``union`` is :func:`context_union` of ``entries``
    if the caller has it (the plan computes it: the same function of the same skeletons gives
    the same sets, so computing it again would only cost time); the plan's selection itself is
    never used.
    """
    out: list[str] = []

    def where(pos: int) -> str:
        return f"line {lines[pos]}" if lines is not None else f"entry #{pos}"

    for pos in sorted(plan.replacements):
        value = after.get(pos)
        if value is None:
            out.append(f"{where(pos)}: the new line is missing or does not parse")
            continue
        if not _same_json(skeleton(value), skeleton(entries[pos])):
            out.append(f"{where(pos)}: a field outside the replaced content would change")
    if not plan.replacements:
        return out
    # The skeletons are identical (checked above), so the tree, every path and every leaf's
    # context entries are the original's: computed afresh here, not taken from the plan.
    if union is None:
        union = context_union(SessionIndex.build(entries))
    for pos in sorted(plan.replacements):
        if pos in union.in_context:
            out.append(
                f"{where(pos)}: entry {_show(entries[pos])} is in the context Pi builds at some leaf; "
                "replacing its content would change what Pi sends"
            )
    return out


def _same_json(a: Any, b: Any) -> bool:
    """``JSON.stringify(a) === JSON.stringify(b)`` (orjson first: fast, and equal text is equal)."""
    import orjson

    try:
        if orjson.dumps(a) == orjson.dumps(b):
            return True
    except TypeError:  # lone surrogates, integers beyond 64 bits: only the careful writer
        pass
    # orjson writes some numbers differently from JavaScript (1.0 vs 1), so differing text is
    # decided by the writer that speaks JSON.stringify.
    return to_json_bytes(a) == to_json_bytes(b)


# -- the full replay ---------------------------------------------------------------------------------


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

    Untouched entries are the very same objects before and after slimming, so the second pass
    only hashes what changed: an entry slim rewrote shows up as a new object with a new hash if
    any context holds it.
    """

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, bytes]] = {}

    def __call__(self, message: JsValue) -> bytes:
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
    from pitools.core.session.tree import flatten_tree, get_tree
    from pitools.core.validate.pi_crashes import first_crash
    from pitools.core.views.inspect import inspect_session
    from pitools.errors import CycleError, PiCrashError

    hashes = hashes or MessageHashes()
    settings = CompactionSettings()
    # prepareCompaction re-projects the path by id; with unique ids that is the path itself, so
    # the projection built for the context can be reused.
    unique_ids = len(index.pos_by_id) == len(index.entries)
    leaves: dict[str, str] = {}
    for leaf in index.leaf_positions():
        h = hashlib.sha256()
        try:
            at = index.walk_positions(leaf)
            at.reverse()
            branch = index.entries_at(at)
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
        eid = index.ids[leaf]
        leaves[eid if type(eid) is str else f"#{leaf}"] = h.hexdigest()
    tree = _digest(flatten_tree(get_tree(index)))
    data = inspect_session(session, index, first_crash)
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
    "MessageHashes",
    "SlimFingerprints",
    "check_slim",
    "compare_fingerprints",
    "slim_fingerprints",
]
