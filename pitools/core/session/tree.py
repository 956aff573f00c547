"""The entry tree: Pi's ``byId`` index, leaf, ``getBranch``/``buildSessionPath`` and ``getTree``.

Entry ids are looked up with JavaScript ``Map`` semantics: the *last* entry with a given id
wins, ``"5"`` and ``5`` are different keys, objects are keyed by identity. All walks are
iterative and cycle-checked: where Pi's parent walk would grow an array forever, pitools raises
:class:`CycleError` naming the entries of the loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

from pitools.core.js.value import js_truthy
from pitools.core.session.loaded import UNDEFINED, entry_id, entry_type
from pitools.errors import CycleError

_BOOL = object()
_OBJ = object()


def mkey(value: Any) -> Any:
    """A hashable key with JS ``Map`` (SameValueZero) identity for an id value."""
    t = type(value)
    if t is str or t is int or t is float or value is None or value is UNDEFINED:
        return value
    if t is bool:
        return (_BOOL, value)
    return (_OBJ, id(value))


#: Truthiness of a parentId/leafId: plain JavaScript truthiness (:func:`~pitools.core.js.value.js_truthy`).
js_truthy_id = js_truthy


def parent_of(entry: Any) -> Any:
    return entry.get("parentId", UNDEFINED) if type(entry) is dict else UNDEFINED


def id_text(value: Any) -> str:
    """A printable form of any id value, for messages."""
    if type(value) is str:
        return value
    if value is UNDEFINED:
        return "(no id)"
    if value is None:
        return "null"
    return repr(value)


@dataclass(slots=True)
class SessionIndex:
    """Pi's ``byId`` map plus derived structure over ``entries`` (file order)."""

    entries: Sequence[Any]
    by_id: dict[Any, Any] = field(default_factory=dict)
    #: Position in ``entries`` of the entry ``by_id`` holds for each key.
    pos_by_id: dict[Any, int] = field(default_factory=dict)
    leaf_id: Any = None

    @classmethod
    def build(cls, entries: Sequence[Any]) -> SessionIndex:
        index = cls(entries=entries)
        by_id = index.by_id
        pos = index.pos_by_id
        for i, entry in enumerate(entries):
            eid = entry.get("id", UNDEFINED) if type(entry) is dict else UNDEFINED
            k = eid if type(eid) is str else mkey(eid)  # a string is its own key (the usual case)
            by_id[k] = entry
            pos[k] = i
        index.leaf_id = entry_id(entries[-1]) if entries else None
        return index

    def get(self, id_value: Any) -> Any:
        return self.by_id.get(mkey(id_value))

    def has(self, id_value: Any) -> bool:
        return mkey(id_value) in self.by_id

    def label_entries(self) -> list[Any]:
        """Every ``label`` entry (file order): what ``--leaf LABEL`` is resolved against."""
        return [e for e in self.entries if type(e) is dict and e.get("type") == "label"]

    def position(self, entry: Any) -> int:
        """File position of an entry object held by the index."""
        return self.pos_by_id[mkey(entry_id(entry))]

    # -- walks -------------------------------------------------------------------------
    def walk_to_root(self, start: Any) -> list[Any]:
        """Entries from ``start`` up through its parents, leaf first; raises on a cycle.

        A path visits each entry of ``by_id`` at most once, so a walk longer than ``by_id`` has
        met a loop: only then is it repeated with the bookkeeping that names the loop.
        """
        out: list[Any] = []
        append = out.append
        current = start
        by_id = self.by_id
        limit = len(by_id) + 1
        while current is not None:
            append(current)
            if len(out) > limit:
                self._raise_cycle(start)
            pid = current.get("parentId", UNDEFINED) if type(current) is dict else UNDEFINED
            if type(pid) is str:  # the usual case, inlined: a string is its own key
                current = by_id.get(pid) if pid else None
            else:
                current = by_id.get(mkey(pid)) if js_truthy_id(pid) else None
        return out

    def _raise_cycle(self, start: Any) -> None:
        out: list[Any] = []
        seen: set[int] = set()
        current = start
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            out.append(current)
            pid = parent_of(current)
            current = self.by_id.get(mkey(pid)) if js_truthy_id(pid) else None
        if current is None:  # pragma: no cover - only called once a walk outgrew byId
            return
        loop = [id_text(entry_id(e)) for e in out[_index_of(out, current) :]]
        raise CycleError(
            f"parentId cycle: {' -> '.join([*loop, loop[0]])}; Pi would loop forever on this path",
            cycle=loop,
        )

    def get_branch(self, leaf_id: Any) -> list[Any]:
        """Pi's ``SessionManager.getBranch(leafId)``: root → leaf; ``[]`` for an unknown leaf."""
        if not js_truthy_id(leaf_id):
            return []
        start = self.get(leaf_id)
        if start is None:
            return []
        path = self.walk_to_root(start)
        path.reverse()
        return path

    def session_path(self, leaf_id: Any) -> list[Any]:
        """Pi's ``buildSessionPath``: like ``get_branch`` but an unknown leaf means the last entry.

        ``leaf_id=None`` (JSON null) gives ``[]``; ``UNDEFINED`` or an id that matches nothing
        falls back to the last entry in the file, as Pi does.
        """
        if leaf_id is None:
            return []
        leaf = self.get(leaf_id) if js_truthy_id(leaf_id) else None
        if leaf is None:
            if not self.entries:
                return []
            leaf = self.entries[-1]
        path = self.walk_to_root(leaf)
        path.reverse()
        return path

    # -- structure ---------------------------------------------------------------------
    def leaves(self) -> list[str]:
        """String ids (file order, deduplicated) that no entry's parentId points to."""
        parents: set[Any] = set()
        for entry in self.by_id.values():
            if type(entry) is dict:
                parents.add(mkey(entry.get("parentId", UNDEFINED)))
        out: list[str] = []
        seen: set[str] = set()
        for entry in self.entries:
            eid = entry_id(entry)
            if type(eid) is not str or eid in seen:
                continue
            seen.add(eid)
            if eid not in parents:
                out.append(eid)
        return out

    def depths(self) -> dict[int, int | None]:
        """Depth of every entry ``by_id`` holds (``id(entry)`` → depth), in one memoised pass.

        The root has depth 0; entries on or above a parentId cycle get ``None``.
        """
        depth: dict[int, int | None] = {}
        by_id = self.by_id
        for start in by_id.values():
            if id(start) in depth:
                continue
            trail: list[Any] = []
            on_trail: set[int] = set()
            current = start
            base: int | None = -1
            while current is not None:
                key = id(current)
                if key in depth:
                    base = depth[key]
                    break
                if key in on_trail:
                    base = None
                    break
                on_trail.add(key)
                trail.append(current)
                pid = parent_of(current)
                current = by_id.get(mkey(pid)) if js_truthy_id(pid) else None
            for e in reversed(trail):
                base = None if base is None else base + 1
                depth[id(e)] = base
        return depth

    def children_map(self) -> dict[Any, list[Any]]:
        """parent key → child entries (file order), over the entries ``by_id`` holds."""
        children: dict[Any, list[Any]] = {}
        for entry in self.by_id.values():
            children.setdefault(mkey(parent_of(entry)), []).append(entry)
        return children

    def find_cycles(self) -> list[list[str]]:
        """Every distinct parentId loop (each as a list of ids), found without recursion."""
        state: dict[int, int] = {}  # id(entry) -> 1 visiting / 2 done
        cycles: list[list[str]] = []
        by_id = self.by_id
        for start in by_id.values():
            if state.get(id(start)) == 2:
                continue
            trail: list[Any] = []
            on_trail: set[int] = set()
            current = start
            while current is not None and state.get(id(current)) != 2:
                ident = id(current)
                if ident in on_trail:
                    i = _index_of(trail, current)
                    cycles.append([id_text(entry_id(e)) for e in trail[i:]])
                    break
                on_trail.add(ident)
                trail.append(current)
                pid = parent_of(current)
                current = by_id.get(mkey(pid)) if js_truthy_id(pid) else None
            for e in trail:
                state[id(e)] = 2
        return cycles


def _index_of(items: list[Any], target: Any) -> int:
    for i, item in enumerate(items):
        if item is target:
            return i
    return 0


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
        pid = parent_of(entry)
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
