"""What the HTML viewer knows that the page's script cannot work out alone: the read model.

The page embeds the session's entries as they are and renders them itself; this module adds the
facts only pitools computes exactly: each entry's parent position (Pi's ``byId`` lookup), the
tree in Pi's ``getTree`` order, labels, each entry's token estimate (``estimateTokens`` of its
projected messages) and assistant usage, and, at the leaves (within a budget), the exact context
estimate and the compaction plan (``prepareCompaction``). Context membership at any selected
entry is Pi's ``buildContextEntries``, which the page computes from the parent positions and the
raw ids and ``firstKeptEntryId`` values with JavaScript's own ``===``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pitools.core.js.value import UNDEFINED
from pitools.core.session.loaded import entry_id
from pitools.core.session.tree import js_truthy_id, labels_by_id, mkey, parent_of

if TYPE_CHECKING:
    from pitools.core.compaction.prepare import CompactionSettings
    from pitools.core.session.api import LoadedSession

#: Exact replays (context estimate + compaction plan) are made at leaves while the branches
#: walked stay under this many entries in total; beyond it, at the default and chosen leaf only.
REPLAY_BUDGET = 400_000

#: ``(provider, modelId) or None`` → ``(compaction settings, context window)``.
SettingsFor = Callable[[Any], "tuple[CompactionSettings, int]"]


@dataclass(slots=True)
class ViewerModel:
    """Column arrays over the entries (file order), plus per-leaf replays keyed by position."""

    header: dict[str, Any]
    path: str
    parent: list[int]
    order: list[int]
    indent: list[int]
    tokens: list[int | None]
    usage_tokens: list[int | None]
    labels: dict[int, str]
    default_leaf: int
    initial_leaf: int
    leaves: list[int]
    replays: dict[int, dict[str, Any]] = field(default_factory=dict)

    def meta_json(self) -> dict[str, Any]:
        """The part of the page's data that is not the entries themselves."""
        return {
            "header": self.header,
            "file": self.path,
            "parent": self.parent,
            "order": self.order,
            "indent": self.indent,
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "labels": {str(k): v for k, v in self.labels.items()},
            "defaultLeaf": self.default_leaf,
            "initialLeaf": self.initial_leaf,
            "leaves": self.leaves,
            "replays": {str(k): v for k, v in self.replays.items()},
        }


def _int_or_none(value: Any) -> int | None:
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def _tree(entries: list[Any], parent: list[int]) -> tuple[list[int], list[int]]:
    """Pi's ``getTree`` as a flat pre-order list of positions, with an indent per position that
    grows only below a branch point (as Pi's tree view draws single-child chains flush)."""
    from pitools.core.js.date import js_date_ms

    n = len(entries)
    children: list[list[int]] = [[] for _ in range(n)]
    roots: list[int] = []
    for i, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(i)

    def ts(i: int) -> float:
        e = entries[i]
        value = js_date_ms(e.get("timestamp", UNDEFINED) if type(e) is dict else UNDEFINED)
        return float("inf") if value != value else value  # NaN sorts last (a stable, total order)

    order: list[int] = []
    indent = [0] * n
    seen = [False] * n
    stack: list[tuple[int, int]] = [(r, 0) for r in reversed(sorted(roots, key=ts))]
    while True:
        while stack:
            i, level = stack.pop()
            if seen[i]:
                continue
            seen[i] = True
            order.append(i)
            indent[i] = level
            kids = children[i]
            if len(kids) > 1:
                kids.sort(key=ts)
            nxt = level + 1 if len(kids) > 1 else level
            stack.extend((k, nxt) for k in reversed(kids))
        # Entries on a parentId loop are reachable from no root: list them too (every entry has a row).
        rest = next((i for i in range(n) if not seen[i]), -1)
        if rest < 0:
            return order, indent
        stack.append((rest, 0))


def build_viewer_model(
    loaded: LoadedSession,
    initial_leaf: Any,
    settings_for: SettingsFor | None,
    *,
    budget: int = REPLAY_BUDGET,
) -> ViewerModel:
    """The viewer's read model of ``loaded``; ``initial_leaf`` is the entry selected on open."""
    from pitools.core.context.build import project_entry
    from pitools.core.context.tokens import assistant_usage, calculate_context_tokens, estimate_tokens
    from pitools.core.js import ops as jsops

    index = loaded.index
    entries = list(loaded.session.entries)
    pos_by_id = index.pos_by_id
    parent: list[int] = []
    tokens: list[int | None] = []
    usage_tokens: list[int | None] = []
    for e in entries:
        pid = parent_of(e)
        p = -1
        if js_truthy_id(pid):
            k = pid if type(pid) is str else mkey(pid)
            p = pos_by_id.get(k, -1)
            if p >= 0 and mkey(pid) == mkey(entry_id(e)):
                p = -1  # Pi's tree treats parentId === id as a root
        parent.append(p)
        total: Any = 0
        if type(e) is dict:
            message = e.get("message") if e.get("type") == "message" else None
            messages = [message] if type(message) is dict and message.get("content") is not None else None
            for m in messages if messages is not None else project_entry(e, None):
                total = jsops.add(total, estimate_tokens(m))
            usage = assistant_usage(message) if type(message) is dict else None
            usage_tokens.append(_int_or_none(calculate_context_tokens(usage)) if usage is not None else None)
        else:
            usage_tokens.append(None)
        tokens.append(_int_or_none(total))
    order, indent = _tree(entries, parent)
    labels: dict[int, str] = {}
    found = labels_by_id(entries)
    if found:
        for i, e in enumerate(entries):
            lab = found.get(mkey(entry_id(e)))
            if lab is not None and type(lab[0]) is str:
                labels[i] = lab[0]

    def position_of(leaf: Any) -> int:
        if leaf is None or leaf is UNDEFINED or not index.has(leaf):
            return -1
        return pos_by_id[mkey(leaf)]

    default_leaf = position_of(index.leaf_id)
    chosen = position_of(initial_leaf)
    if chosen < 0:
        chosen = default_leaf
    leaf_positions = [pos_by_id[leaf] for leaf in index.leaves() if leaf in pos_by_id]
    model = ViewerModel(
        header=dict(loaded.session.header or {}),
        path=loaded.path,
        parent=parent,
        order=order,
        indent=indent,
        tokens=tokens,
        usage_tokens=usage_tokens,
        labels=labels,
        default_leaf=default_leaf,
        initial_leaf=chosen,
        leaves=leaf_positions,
    )
    if settings_for is None:
        return model
    wanted = [p for p in (chosen, default_leaf) if p >= 0]
    wanted += [p for p in leaf_positions if p not in wanted]
    spent = 0
    for i, p in enumerate(wanted):
        length = _path_length(parent, p)
        if i >= 2 and spent + length > budget:
            break
        spent += length
        model.replays[p] = replay_at(loaded, entry_id(entries[p]), settings_for)
    return model


def _path_length(parent: list[int], p: int) -> int:
    n = 0
    limit = len(parent) + 1
    while p >= 0 and n < limit:
        n += 1
        p = parent[p]
    return n


def replay_at(loaded: LoadedSession, leaf: Any, settings_for: SettingsFor) -> dict[str, Any]:
    """The exact context estimate and compaction plan at ``leaf`` (what ``pitools context`` and
    ``pitools compact --dry-run`` report), in the small shape the page shows."""
    from pitools.core.compaction.plan import plan_compaction
    from pitools.core.context.build import replay_context

    replay = replay_context(loaded.index, leaf)
    model = replay.projection.model
    key = None
    if isinstance(model, dict) and isinstance(model.get("provider"), str) and isinstance(model.get("modelId"), str):
        key = (model["provider"], model["modelId"])
    settings, window = settings_for(key)
    est = replay.estimate
    out: dict[str, Any] = {
        "tokens": _int_or_none(est.tokens),
        "usageTokens": _int_or_none(est.usage_tokens),
        "trailingTokens": _int_or_none(est.trailing_tokens),
        "contextWindow": window,
        "model": list(key) if key else None,
        "contextEntries": len(replay.context_entries),
    }
    if not replay.path:
        return out
    plan = plan_compaction(
        loaded,
        leaf,
        settings,
        context_window=window,
        branch=replay.path,
        projection=replay.projection,
        estimates=replay.token_estimates,
    )
    runs: list[list[Any]] = []
    for _e, _eid, region, _tokens, _cut in plan.rows:
        if runs and runs[-1][0] == region:
            runs[-1][1] += 1
        else:
            runs.append([region, 1])
    prep = plan.preparation
    first_kept = prep.first_kept_entry_id if prep is not None else None
    out["plan"] = {
        "wouldCompact": plan.would_compact,
        "threshold": plan.threshold,
        "reserveTokens": settings.reserve_tokens,
        "keepRecentTokens": settings.keep_recent_tokens,
        "reason": plan.reason,
        "regions": runs,
        "totals": plan.region_totals(),
        "firstKeptEntryId": first_kept if type(first_kept) is str else None,
        "isSplitTurn": prep.is_split_turn if prep is not None else False,
    }
    return out
