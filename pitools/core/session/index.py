"""The one index interface every Pi mirror is written against, and the walks written once on it.

A loaded session is indexed by entry *position* (file order, headers excluded). Whatever the
loader's keep policy (:mod:`pitools.core.session.load`: keep every parsed entry, or keep only
the recent context and re-read the rest by byte offset), the index offers the same things:

* parallel lists ``ids``, ``parents``, ``types`` (``UNDEFINED`` where an entry lacks the field
  or is not an object) and ``marks`` (what an entry means to ``getSessionContextSettings``);
* ``pos_by_id``: Pi's ``byId`` map as id key (:func:`~pitools.core.session.tree.mkey`) →
  position of the *last* entry with that id; ``leaf_id``: Pi's default leaf;
* ``entries_at(positions)`` / ``entry(pos)``: the parsed entries (read back from the file when
  the policy dropped them), ``entries_seq(positions)``: a sequence of them for a long path,
  ``forget_values()``: let go of parsed values a caller no longer needs (a no-op when
  everything is kept, as the entries are the session's own);
* the walks and structure (:class:`PositionWalks`), each Pi rule written once on positions:
  the parent walk (``walk_positions``, with a :class:`~pitools.errors.CycleError` where Pi
  would loop forever), ``getBranch`` and ``buildSessionPath``, the leaves (``getTree``'s, and
  those plus the default leaf), children, depths, parentId loops, and a memoised fold over
  every path (``fold_positions``).

:class:`~pitools.core.session.tree.SessionIndex` (keep everything) and
:class:`~pitools.core.session.lean.LeanIndex` (keep the recent context) both implement it;
``core/context/build.py`` and ``core/compaction/plan.py`` only use this interface.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pitools.core.js.types import Entry, EntryId
from pitools.core.js.value import UNDEFINED, js_truthy
from pitools.errors import CycleError

_BOOL = object()
_OBJ = object()

T = TypeVar("T")


def mkey(value: Any) -> Any:
    """A hashable key with JS ``Map`` (SameValueZero) identity for an id value."""
    t = type(value)
    if t is str or t is int or t is float or value is None or value is UNDEFINED:
        return value
    if t is bool:
        return (_BOOL, value)
    return (_OBJ, id(value))


def id_text(value: Any) -> str:
    """A printable form of any id value, for messages."""
    if type(value) is str:
        return value
    if value is UNDEFINED:
        return "(no id)"
    if value is None:
        return "null"
    return repr(value)


#: ``marks`` values: what an entry means to Pi's ``getSessionContextSettings``.
MARK_NONE = 0
MARK_THINKING = 1  # a thinking_level_change entry
MARK_MODEL = 2  # a model_change entry or an assistant message
MARK_CRASH = 3  # a message entry whose message is null/missing: reading its role throws in Pi


def entry_mark(etype: Any, value: Any) -> int:
    """The mark of an entry whose ``type`` is ``etype`` (``value``: the parsed entry)."""
    if etype == "message":
        message = value.get("message", UNDEFINED)
        if type(message) is dict:
            return MARK_MODEL if message.get("role") == "assistant" else MARK_NONE
        return MARK_CRASH if message is None or message is UNDEFINED else MARK_NONE
    if etype == "model_change":
        return MARK_MODEL
    if etype == "thinking_level_change":
        return MARK_THINKING
    return MARK_NONE


class EntryIndex(Protocol):
    """What every Pi mirror may ask of a loaded session (see the module docstring)."""

    @property
    def ids(self) -> Sequence[EntryId]: ...
    @property
    def parents(self) -> Sequence[EntryId]: ...
    @property
    def types(self) -> Sequence[Any]: ...
    @property
    def marks(self) -> Sequence[int]: ...
    @property
    def crashes(self) -> int: ...
    @property
    def pos_by_id(self) -> dict[EntryId, int]: ...

    leaf_id: EntryId

    def __len__(self) -> int: ...
    def has(self, id_value: EntryId) -> bool: ...
    def position_of(self, id_value: EntryId) -> int | None: ...
    def branch_positions(self, leaf_id: EntryId) -> list[int]: ...
    def session_path_positions(self, leaf_id: EntryId) -> list[int]: ...
    def entries_at(self, positions: Sequence[int], *, keep: bool = True) -> list[Entry]: ...
    def entry(self, pos: int) -> Entry: ...
    def entries_seq(self, positions: list[int]) -> Sequence[Entry]: ...
    def label_entries(self) -> list[Entry]: ...
    def leaves(self) -> list[str]: ...
    def leaf_positions(self) -> list[int]: ...
    def children_positions(self) -> dict[Any, list[int]]: ...
    def depths(self) -> dict[int, int | None]: ...
    def find_cycles(self) -> list[list[str]]: ...
    def fold_positions(self, step: Callable[[T, int], T], root: T) -> Callable[[int], T | None]: ...
    def walk_positions(self, start: int) -> list[int]: ...
    def parent_position(self, pos: int) -> int | None: ...
    def forget_values(self) -> None: ...


class PositionWalks:
    """Pi's parent walks on positions, for any index with ``ids``, ``parents``,
    ``pos_by_id`` and ``known_parents`` (each entry's parent position where the loader resolved
    it for good: -1 no parent, -2 resolve through ``pos_by_id``; None: always resolve)."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def ids(self) -> Sequence[Any]: ...
        @property
        def parents(self) -> Sequence[Any]: ...
        @property
        def pos_by_id(self) -> dict[Any, int]: ...
        @property
        def types(self) -> Sequence[Any]: ...
        @property
        def known_parents(self) -> list[int] | None: ...

        leaf_id: Any

        def entries_at(self, positions: Sequence[int], *, keep: bool = True) -> list[Any]: ...

    def has(self, id_value: Any) -> bool:
        return mkey(id_value) in self.pos_by_id

    def position_of(self, id_value: Any) -> int | None:
        """Position of the entry Pi's ``byId`` holds for ``id_value`` (None when unknown)."""
        return self.pos_by_id.get(mkey(id_value))

    def parent_position(self, pos: int) -> int | None:
        """Where Pi's walk goes from ``pos``: the entry ``byId`` holds for its parentId."""
        pid = self.parents[pos]
        if type(pid) is str:
            return self.pos_by_id.get(pid) if pid else None
        return self.pos_by_id.get(mkey(pid)) if js_truthy(pid) else None

    def walk_positions(self, start: int) -> list[int]:
        """Positions from ``start`` up through the parents, leaf first.

        A path visits each entry of ``byId`` at most once, so a walk longer than ``byId`` has
        met a loop: only then is it repeated with the bookkeeping that names it
        (:class:`~pitools.errors.CycleError`), where Pi would loop forever.
        """
        out: list[int] = []
        append = out.append
        by_id = self.pos_by_id
        parents = self.parents
        limit = len(by_id) + 1
        known = self.known_parents
        current: int | None = start
        while current is not None:
            append(current)
            if known is not None:
                # A parent resolved by the loader lies before its child: no loop can go
                # through it, so only the links resolved here need the cycle check.
                up = known[current]
                if up >= 0:
                    current = up
                    continue
                if up == -1:
                    break
            if len(out) > limit:
                self._raise_cycle(start)
            pid = parents[current]
            if type(pid) is str:  # the usual case, inlined: a string is its own key
                current = by_id.get(pid) if pid else None
            else:
                current = by_id.get(mkey(pid)) if js_truthy(pid) else None
        return out

    def _raise_cycle(self, start: int) -> None:
        out: list[int] = []
        seen: set[int] = set()
        current: int | None = start
        while current is not None and current not in seen:
            seen.add(current)
            out.append(current)
            current = self.parent_position(current)
        if current is None:  # pragma: no cover - only called once a walk outgrew byId
            return
        loop = [id_text(self.ids[p]) for p in out[out.index(current) :]]
        raise CycleError(
            f"parentId cycle: {' -> '.join([*loop, loop[0]])}; Pi would loop forever on this path",
            cycle=loop,
        )

    def branch_positions(self, leaf_id: Any) -> list[int]:
        """Pi's ``getBranch(leafId)`` as positions, root → leaf; ``[]`` for an unknown leaf."""
        if not js_truthy(leaf_id):
            return []
        start = self.position_of(leaf_id)
        if start is None:
            return []
        path = self.walk_positions(start)
        path.reverse()
        return path

    def session_path_positions(self, leaf_id: Any) -> list[int]:
        """Pi's ``buildSessionPath`` as positions: like :meth:`branch_positions`, but
        ``UNDEFINED`` or an id that matches nothing falls back to the last entry, and
        ``leaf_id=None`` (JSON null) gives ``[]``."""
        if leaf_id is None:
            return []
        start = self.position_of(leaf_id) if js_truthy(leaf_id) else None
        if start is None:
            if not self.ids:
                return []
            start = len(self.ids) - 1
        path = self.walk_positions(start)
        path.reverse()
        return path

    # -- structure -----------------------------------------------------------------------
    def leaves(self) -> list[str]:
        """``getTree``'s leaves with string ids: ids (file order, deduplicated) that no parentId
        of an entry ``byId`` holds points to."""
        parents = self.parents
        pointed = {mkey(parents[p]) for p in self.pos_by_id.values()}
        out: list[str] = []
        seen: set[str] = set()
        for eid in self.ids:
            if type(eid) is not str or eid in seen:
                continue
            seen.add(eid)
            if eid not in pointed:
                out.append(eid)
        return out

    def leaf_positions(self) -> list[int]:
        """Positions of every leaf (:meth:`leaves`), then of Pi's default leaf (the entry ``byId``
        holds for ``leaf_id``, else the last entry), each once: every context Pi can open."""
        by_id = self.pos_by_id
        out = [by_id[leaf] for leaf in self.leaves()]  # a string id is its own key
        if self.ids:
            default = self.position_of(self.leaf_id)
            out.append(len(self.ids) - 1 if default is None else default)
        return list(dict.fromkeys(out))

    def children_positions(self) -> dict[Any, list[int]]:
        """Parent key (:func:`mkey` of a parentId) → positions of the children, over the entries
        ``byId`` holds (in ``byId``'s order)."""
        children: dict[Any, list[int]] = {}
        parents = self.parents
        for p in self.pos_by_id.values():
            children.setdefault(mkey(parents[p]), []).append(p)
        return children

    def label_entries(self) -> list[Any]:
        """Every ``label`` entry (file order): what ``--leaf LABEL`` is resolved against."""
        return self.entries_at([i for i, t in enumerate(self.types) if t == "label"], keep=False)

    def fold_positions(self, step: Callable[[T, int], T], root: T) -> Callable[[int], T | None]:
        """``of(pos)``: ``step`` folded over the path from the root down to ``pos`` (starting
        from ``root``) along Pi's parent walk, or None when the walk from ``pos`` runs into a
        parentId loop.

        Results are memoised per position, so folding every entry of a session follows each
        link once in all, not once per entry (depths, path summaries of every leaf).
        """
        memo: dict[int, T | None] = {}
        by_id = self.pos_by_id
        parents = self.parents

        def of(start: int) -> T | None:
            trail: list[int] = []
            on_trail: set[int] = set()
            current: int | None = start
            base: T | None = root
            while current is not None:
                if current in memo:
                    base = memo[current]
                    break
                if current in on_trail:
                    base = None
                    break
                on_trail.add(current)
                trail.append(current)
                pid = parents[current]
                if type(pid) is str:
                    current = by_id.get(pid) if pid else None
                else:
                    current = by_id.get(mkey(pid)) if js_truthy(pid) else None
            for p in reversed(trail):
                if base is not None:
                    base = step(base, p)
                memo[p] = base
            return base

        return of

    def depths(self) -> dict[int, int | None]:
        """Depth of every entry ``byId`` holds (position → depth), in one memoised pass: the
        root has depth 0, entries on or above a parentId loop get None."""
        of = self.fold_positions(lambda depth, _pos: depth + 1, -1)
        return {p: of(p) for p in self.pos_by_id.values()}

    def find_cycles(self) -> list[list[str]]:
        """Every distinct parentId loop among the entries ``byId`` holds, each as its ids."""
        done = bytearray(len(self.ids))
        ids = self.ids
        cycles: list[list[str]] = []
        for start in self.pos_by_id.values():
            if done[start]:
                continue
            trail: list[int] = []
            on_trail: set[int] = set()
            current: int | None = start
            while current is not None and not done[current]:
                if current in on_trail:
                    cycles.append([id_text(ids[p]) for p in trail[trail.index(current) :]])
                    break
                on_trail.add(current)
                trail.append(current)
                current = self.parent_position(current)
            for p in trail:
                done[p] = 1
        return cycles
