"""The entry tree: Pi's ``byId`` index, leaf, ``getBranch``/``buildSessionPath`` and ``getTree``.

Entry ids are looked up with JavaScript ``Map`` semantics: the *last* entry with a given id
wins, ``"5"`` and ``5`` are different keys, objects are keyed by identity. All walks are
iterative and cycle-checked: where Pi's parent walk would grow an array forever, pitools raises
:class:`CycleError` naming the entries of the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, cmp_to_key
from typing import Any

from pitools.core.js.access import entry_id, entry_type, parent_id
from pitools.core.js.value import UNDEFINED, js_truthy
from pitools.core.session.index import PositionWalks, entry_mark, id_text, mkey

__all__ = ["SessionIndex", "TreeNode", "get_tree", "id_text", "js_truthy_id", "labels_by_id", "mkey"]

#: Truthiness of a parentId/leafId: plain JavaScript truthiness (:func:`~pitools.core.js.value.js_truthy`).
js_truthy_id = js_truthy


def _member_list(member: str) -> Callable[[SessionIndex], list[Any]]:
    """An :class:`~pitools.core.session.index.EntryIndex` list: ``member`` of every entry, in file
    order (``UNDEFINED`` where the entry has none or is not an object)."""

    def made(index: SessionIndex) -> list[Any]:
        return [e.get(member, UNDEFINED) if type(e) is dict else UNDEFINED for e in index.entries]

    return made


@dataclass
class SessionIndex(PositionWalks):
    """Pi's ``byId`` map over ``entries`` (file order): the loader's "keep everything" index
    (:class:`~pitools.core.session.index.EntryIndex`), whose entries are all parsed and held.
    The walks and structure are :class:`~pitools.core.session.index.PositionWalks`'; the few
    entry-returning methods here map their positions back to entries."""

    entries: Sequence[Any]
    #: Position in ``entries`` of the entry Pi's ``byId`` holds for each id key.
    pos_by_id: dict[Any, int] = field(default_factory=dict)
    leaf_id: Any = None
    _marks: bytearray | None = None
    _crashes: int = 0
    _by_id: dict[Any, Any] | None = None

    @classmethod
    def build(cls, entries: Sequence[Any]) -> SessionIndex:
        index = cls(entries=entries)
        pos = index.pos_by_id
        for i, entry in enumerate(entries):
            eid = entry.get("id", UNDEFINED) if type(entry) is dict else UNDEFINED
            pos[eid if type(eid) is str else mkey(eid)] = i  # a string is its own key (the usual case)
        index.leaf_id = entry_id(entries[-1]) if entries else None
        return index

    @property
    def by_id(self) -> dict[Any, Any]:
        """Pi's ``byId`` itself: id key → entry (made from ``pos_by_id`` when first asked for)."""
        if self._by_id is None:
            entries = self.entries
            self._by_id = {k: entries[p] for k, p in self.pos_by_id.items()}
        return self._by_id

    # -- the EntryIndex interface --------------------------------------------------------
    def __len__(self) -> int:
        return len(self.entries)

    @property
    def known_parents(self) -> list[int] | None:
        return None  # every parent is resolved through byId as the walk goes

    # The EntryIndex lists, made from the entries the first time they are asked for (the class
    # has no __slots__, so each is then a plain instance attribute).
    ids = cached_property(_member_list("id"))
    parents = cached_property(_member_list("parentId"))
    types = cached_property(_member_list("type"))

    @property
    def marks(self) -> bytearray:
        if self._marks is None:
            marks = bytearray(len(self.entries))
            crashes = 0
            for i, (etype, entry) in enumerate(zip(self.types, self.entries, strict=True)):
                if etype == "message" or etype == "model_change" or etype == "thinking_level_change":
                    mark = entry_mark(etype, entry)
                    marks[i] = mark
                    crashes += mark == 3
            self._marks = marks
            self._crashes = crashes
        return self._marks

    @property
    def crashes(self) -> int:
        self.marks  # noqa: B018 - counted with the marks
        return self._crashes

    def entries_at(self, positions: Sequence[int], *, keep: bool = True) -> list[Any]:
        """The entries at ``positions`` (every entry is held: nothing is read again)."""
        entries = self.entries
        return [entries[p] for p in positions]

    def entry(self, pos: int) -> Any:
        return self.entries[pos]

    def entries_seq(self, positions: list[int]) -> Sequence[Any]:
        """The entries at ``positions`` as a list (they are all held already)."""
        return self.entries_at(positions)

    def forget_values(self) -> None:
        """Nothing to let go: the entries are the loaded session's own."""

    # -- entry objects, for callers that want them (the walks are PositionWalks') -------
    def get(self, id_value: Any) -> Any:
        """The entry Pi's ``byId`` holds for ``id_value`` (None when unknown)."""
        pos = self.position_of(id_value)
        return None if pos is None else self.entries[pos]

    def get_branch(self, leaf_id: Any) -> list[Any]:
        """Pi's ``SessionManager.getBranch(leafId)``: root → leaf; ``[]`` for an unknown leaf."""
        return self.entries_at(self.branch_positions(leaf_id))

    def session_path(self, leaf_id: Any) -> list[Any]:
        """Pi's ``buildSessionPath`` (:meth:`~pitools.core.session.index.PositionWalks.session_path_positions`)."""
        return self.entries_at(self.session_path_positions(leaf_id))


# -- getTree ------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class TreeNode:
    entry: Any
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: Any = None


def labels_by_id(entries: Iterable[Any]) -> dict[Any, tuple[Any, Any]]:
    """Pi's ``labelsById``/``labelTimestampsById``: latest label per target; a falsy label clears."""
    labels: dict[Any, tuple[Any, Any]] = {}
    for entry in entries:
        if type(entry) is dict and entry.get("type") == "label":
            target = mkey(entry.get("targetId", UNDEFINED))
            label = entry.get("label")
            if label:
                labels[target] = (label, entry.get("timestamp", UNDEFINED))
            else:
                labels.pop(target, None)
    return labels


def get_tree(index: SessionIndex, *, max_nodes: int | None = None) -> list[TreeNode]:
    """Pi's ``SessionManager.getTree()``: roots with children sorted by timestamp.

    With duplicate ids Pi links one node in several places (and can loop forever when a node
    becomes its own descendant); the returned structure reproduces the links, and walkers must
    guard against revisits.
    """
    from pitools.core.js.date import js_date_ms

    labels = labels_by_id(index.entries)
    node_map: dict[Any, TreeNode] = {}
    for entry in index.entries:
        k = mkey(entry_id(entry))
        lab = labels.get(k)
        node_map[k] = TreeNode(entry, [], lab[0] if lab else None, lab[1] if lab else None)
    roots: list[TreeNode] = []
    for entry in index.entries:
        eid = entry_id(entry)
        node = node_map[mkey(eid)]
        pid = parent_id(entry)
        if pid is None or _js_strict_equal(pid, eid):
            roots.append(node)
            continue
        parent = node_map.get(mkey(pid))
        if parent is not None:
            parent.children.append(node)
        else:
            roots.append(node)

    def ts(node: TreeNode) -> float:
        return js_date_ms(node.entry.get("timestamp", UNDEFINED) if type(node.entry) is dict else UNDEFINED)

    def cmp(a: TreeNode, b: TreeNode) -> int:
        d = ts(a) - ts(b)
        if d < 0:
            return -1
        if d > 0:
            return 1
        return 0

    key = cmp_to_key(cmp)
    stack = list(roots)
    sorted_nodes: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in sorted_nodes:
            continue
        sorted_nodes.add(id(node))
        if len(node.children) > 1:
            node.children.sort(key=key)
        stack.extend(node.children)
    return roots


def _js_strict_equal(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    if a is UNDEFINED or b is UNDEFINED:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def flatten_tree(roots: list[TreeNode]) -> list[dict[str, Any]]:
    """DFS pre-order listing (the reference oracle's shape): revisited nodes are marked."""
    flat: list[dict[str, Any]] = []
    seen: set[int] = set()
    stack = [(r, 0) for r in reversed(roots)]
    while stack:
        node, depth = stack.pop()
        eid = entry_id(node.entry)
        if id(node) in seen:
            flat.append({"id": eid, "depth": depth, "revisit": True})
            continue
        seen.add(id(node))
        item: dict[str, Any] = {
            "id": eid,
            "type": entry_type(node.entry),
            "depth": depth,
            "children": [entry_id(c.entry) for c in node.children],
        }
        if node.label is not None:
            item["label"] = node.label
            item["labelTimestamp"] = node.label_timestamp
        flat.append(item)
        for child in reversed(node.children):
            stack.append((child, depth + 1))
    return flat
