"""Fork and clone lineage: which entries of a session are history copied from an ancestor.

Pi records where a session came from in its header's ``parentSession``:

* ``/fork`` and ``/clone`` (``SessionManager.createBranchedSession``) write the source file's path
  (``this.sessionFile``: absolute) and copy the path to the chosen entry with the *same ids*;
  labels on that path are recreated with fresh ids;
* ``pi --fork FILE`` (``SessionManager.forkFrom``) writes ``resolvePath(FILE)`` and copies every
  entry of the source, ids unchanged;
* ``/new`` after a fork from the first message, and RPC ``new_session``, write a parent path and
  copy nothing.

Pi's session picker links a child to its parent by comparing paths (``getSessionPathKey``:
``realpath``, then ``path.resolve``). :func:`resolve_parents` does the same through a caller-given
``canonical`` function (the pure core does not touch the file system), and falls back to the file
name when the archive was moved (``<timestamp>_<id>.jsonl`` is unique in practice) or to the
session id when ``parentSession`` is a bare id; a fallback is used only when it names exactly one
session.

A child entry is *copied* when an ancestor in its own lineage (parent, grandparent, … following
``parentSession`` recursively; a loop is cut before its oldest file, see :func:`_cut_loops`)
holds an entry with the same id **and** the same timestamp: copies keep both, while a new entry
whose random 8-hex id happens to equal an ancestor id almost surely has another time. Sessions
outside the lineage are never compared, so two unrelated sessions whose ids collide are not
merged.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pitools.core.js.types import Entry

#: An entry's identity across copies: (id, timestamp as written).
EntryKey = tuple[str, Any]


@dataclass(frozen=True, slots=True)
class SessionRef:
    """What lineage needs to know of one session file."""

    #: A comparison key for the file's path (``canonical(path)``), unique per session.
    key: str
    #: The header's ``id`` (may repeat across files: ``/export`` keeps it).
    session_id: Any = None
    #: The header's ``parentSession`` exactly as written (any JSON value).
    parent_session: Any = None
    #: The folder of the file, for a relative ``parentSession``.
    folder: str = ""


def default_canonical(path: str) -> str:
    """Pi's ``getSessionPathKey`` on POSIX: ``realpath`` when it resolves, then an absolute path."""
    with contextlib.suppress(OSError, ValueError):
        path = os.path.realpath(path)
    return os.path.normpath(os.path.abspath(path))


def resolve_parents(
    sessions: Sequence[SessionRef], canonical: Callable[[str], str] = default_canonical
) -> dict[str, str | None]:
    """session key → its parent's key (None: no parent, or a parent not among ``sessions``)."""
    by_key = {s.key: s for s in sessions}
    by_name: dict[str, list[str]] = {}
    by_id: dict[str, list[str]] = {}
    for s in sessions:
        by_name.setdefault(os.path.basename(s.key), []).append(s.key)
        if type(s.session_id) is str:
            by_id.setdefault(s.session_id, []).append(s.key)
    out: dict[str, str | None] = {}
    for s in sessions:
        out[s.key] = _parent_key(s, by_key, by_name, by_id, canonical)
    _cut_loops(out)
    return out


def _cut_loops(parents: dict[str, str | None]) -> None:
    """Break every ``parentSession`` loop (clone A → C, then A's header pointed at C) in place.

    In a loop each session would take the shared entries for copies of the other's, and the
    history would count zero times. The session of the loop whose file name sorts first (Pi
    names files ``<creation time>_<id>.jsonl``: the oldest) loses its parent and becomes the
    root; the others keep theirs. Every caller (usage, ls totals, the dataset, export) sees the
    same cut, whatever order the sessions come in, so shared history counts exactly once.
    """
    state: dict[str, int] = {}  # 1: on the current walk, 2: done
    for start in parents:
        if start in state:
            continue
        walk: list[str] = []
        current: str | None = start
        while current is not None and current not in state:
            state[current] = 1
            walk.append(current)
            current = parents.get(current)
        if current is not None and state[current] == 1:  # the walk closed a loop at `current`
            loop = walk[walk.index(current) :]
            root = min(loop, key=lambda k: (os.path.basename(k), k))
            parents[root] = None
        for key in walk:
            state[key] = 2


def _parent_key(
    s: SessionRef,
    by_key: Mapping[str, SessionRef],
    by_name: Mapping[str, list[str]],
    by_id: Mapping[str, list[str]],
    canonical: Callable[[str], str],
) -> str | None:
    ref = s.parent_session
    if type(ref) is not str or not ref:
        return None
    candidates: list[str] = []
    if "\x00" not in ref:
        full = ref if os.path.isabs(ref) else os.path.join(s.folder or ".", ref)
        with contextlib.suppress(OSError, ValueError):
            candidates.append(canonical(full))
    for key in candidates:
        if key in by_key and key != s.key:
            return key
    # The archive moved (another home, a copied folder): the file name still names the parent.
    name = ref.replace("\\", "/").rsplit("/", 1)[-1]
    named = [k for k in by_name.get(name, []) if k != s.key]
    if name.endswith(".jsonl") and len(named) == 1:
        return named[0]
    # A bare session id (hand-written or from another tool).
    if "/" not in ref and "\\" not in ref:
        ided = [k for k in by_id.get(ref, []) if k != s.key]
        if len(ided) == 1:
            return ided[0]
    return None


def ancestors(key: str, parents: Mapping[str, str | None]) -> list[str]:
    """The lineage above ``key``, nearest first; a ``parentSession`` loop is cut where it closes."""
    out: list[str] = []
    seen = {key}
    current = parents.get(key)
    while current is not None and current not in seen:
        out.append(current)
        seen.add(current)
        current = parents.get(current)
    return out


def descendants(keys: Iterable[str], parents: Mapping[str, str | None]) -> set[str]:
    """Every session whose lineage passes through one of ``keys`` (``keys`` included)."""
    children: dict[str, list[str]] = {}
    for child, parent in parents.items():
        if parent is not None:
            children.setdefault(parent, []).append(child)
    out: set[str] = set()
    stack = list(keys)
    while stack:
        key = stack.pop()
        if key in out:
            continue
        out.add(key)
        stack.extend(children.get(key, ()))
    return out


def entry_key(entry: Entry) -> EntryKey | None:
    """(id, timestamp) of an entry with a string id, else None."""
    if type(entry) is not dict:
        return None
    eid = entry.get("id")
    if type(eid) is not str:
        return None
    ts = entry.get("timestamp")
    return (eid, ts if type(ts) in (str, int, float) else None)


def entry_keys(entries: Iterable[Entry]) -> set[EntryKey]:
    """The (id, timestamp) keys of ``entries``."""
    out: set[EntryKey] = set()
    for entry in entries:
        k = entry_key(entry)
        if k is not None:
            out.add(k)
    return out


def copied_keys(own: Iterable[EntryKey], ancestor_keys: Sequence[set[EntryKey]]) -> set[EntryKey]:
    """The keys of ``own`` that some ancestor also holds: history copied by fork or clone."""
    if not ancestor_keys:
        return set()
    return {k for k in own if any(k in keys for keys in ancestor_keys)}


def copied_entry_ids(
    key: str,
    entries_by_session: Mapping[str, Iterable[Entry]],
    parents: Mapping[str, str | None],
) -> set[str]:
    """Ids of the entries of session ``key`` that are copies of an ancestor's entries.

    ``entries_by_session`` maps session keys to their entries (Pi's ``getEntries()``); ancestors
    missing from it (deleted, outside the archive) copy nothing, so their history counts once, in
    the child.
    """
    lineage = ancestors(key, parents)
    held = [entry_keys(entries_by_session[a]) for a in lineage if a in entries_by_session]
    own = entry_keys(entries_by_session.get(key, ()))
    return {eid for eid, _ in copied_keys(own, held)}
