"""The one loader: open a session Pi would load, indexed and ready to query.

:func:`load` reads every line with Pi's rules (the same diagnostics and errors whatever it
keeps) and indexes the entries (:class:`~pitools.core.session.index.EntryIndex`). Its *keep
policy* says which parsed entries stay in memory:

* ``keep="all"`` (the default): every entry stays parsed (``loaded.session.entries``), the
  index is a :class:`~pitools.core.session.tree.SessionIndex`; what most commands use.
* ``keep="context"``: only ids, parents, types, marks and byte offsets are kept for every
  entry, plus the parsed value of the entries a context replay is likely to need (those after
  the last compaction, and small ones); any other entry is read back from the file by its byte
  offset when asked for (:class:`~pitools.core.session.lean.LeanIndex`). ``context`` and
  ``compact --dry-run`` use it: on a 100 MB session it saves most of the memory. Files Pi
  migrates (v1/v2) and inputs that are not regular files are loaded with ``"all"``.

:func:`load_bytes` is the same loader on bytes in memory (``repair`` checks the file it is about
to write before writing it), with a third policy, ``keep="skeleton"``: every entry reduced to its
``type``, ``id`` and ``parentId`` as it is read (headers and compactions whole), which is all the
tree and Pi's migration need; a caller parses an entry again from the bytes (the raw session's
offsets) when it needs the rest.

Every Pi mirror (:mod:`pitools.core.context.build`, :mod:`pitools.core.compaction.plan`) is
written once on the index interface and gives the same result under either policy.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from pitools.core.js.value import UNDEFINED
from pitools.core.session.leaf import resolve_leaf
from pitools.core.session.lean import LeanIndex, LeanSession
from pitools.core.session.load import read_session_bytes
from pitools.core.session.loaded import Session, open_session, raise_invalid, require_valid, session_from_raw
from pitools.core.session.tree import SessionIndex

if TYPE_CHECKING:
    from pitools.core.session.index import EntryIndex

#: The loader's keep policies (see the module docstring).
Keep = Literal["all", "context"]
KEEP_ALL: Keep = "all"
KEEP_CONTEXT: Keep = "context"


class Loaded:
    """A loaded session under any keep policy: ``session`` (header, diagnostics, lines) and
    ``index`` (:class:`~pitools.core.session.index.EntryIndex`), and ``--leaf`` references
    resolved the same way for every policy: an id, unique id prefix or label, or ``L<line>``
    (the entry on that line of the file: stable for any file, v1/v2 ones whose ids are made up
    too). Subclasses say where the entries' lines and ids are."""

    __slots__ = ()
    session: Session | LeanSession
    index: EntryIndex

    def _entry_lines(self) -> Sequence[int]:
        raise NotImplementedError

    def _id_at(self, at: int) -> Any:
        raise NotImplementedError

    @property
    def path(self) -> str:
        return str(self.session.path)

    def leaf(self, ref: str | None) -> Any:
        """The entry ``ref`` names (see the class)."""
        if ref is not None and not self.index.has(ref):
            line = _line_ref(ref)
            if line is not None:
                return self.entry_id_at_line(line, ref)
        return resolve_leaf(self.index, ref, path=self.session.path)

    def entry_id_at_line(self, line: int, ref: str) -> Any:
        import bisect

        from pitools.errors import LeafError

        lines = self._entry_lines()
        at = bisect.bisect_left(lines, line)
        if at < len(lines) and lines[at] == line:
            return self._id_at(at)
        total = self.session.raw.line_count
        if line > total:
            why = f"the file has {total:,} {'line' if total == 1 else 'lines'}"
        else:
            why = f"line {line:,} of the file holds no entry (the header, a blank line or an unreadable one)"
        raise LeafError(f"--leaf {ref!r}: {why}", path=self.session.path)


@dataclass(slots=True)
class LoadedSession(Loaded):
    """A session loaded keeping everything: every parsed entry in ``session.entries``."""

    session: Session
    index: SessionIndex

    def _entry_lines(self) -> Sequence[int]:
        return self.session.lines

    def _id_at(self, at: int) -> Any:
        from pitools.core.session.loaded import entry_id

        return entry_id(self.session.entries[at])

    @property
    def synthetic_ids(self) -> bool:
        """Whether the ids shown are pitools' stand-ins: a v1 file has none, migration made them up."""
        return self.session.migration.ids_assigned > 0


@dataclass(slots=True)
class LeanLoaded(Loaded):
    """A session loaded with ``keep="context"``: an index whose dropped entries are parsed
    again from the file on demand."""

    session: LeanSession
    index: LeanIndex

    def _entry_lines(self) -> Sequence[int]:
        return self.index.lines

    def _id_at(self, at: int) -> Any:
        return self.index.ids[at]

    @property
    def synthetic_ids(self) -> bool:
        return False  # only v3 files load lean: every id is the file's own


def _line_ref(ref: str) -> int | None:
    """``L17`` (or ``l17``) -> 17."""
    if len(ref) > 1 and ref[0] in "Ll" and ref[1:].isdigit():
        return int(ref[1:])
    return None


@overload
def load(
    path: str | os.PathLike[str] | None = None,
    *,
    keep: Literal["all"] = ...,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
) -> LoadedSession: ...
@overload
def load(
    path: str | os.PathLike[str] | None = None,
    *,
    keep: Keep,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
    on_entry: Callable[[Any], None] | None = None,
) -> Loaded: ...
def load(
    path: str | os.PathLike[str] | None = None,
    *,
    keep: Keep = KEEP_ALL,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
    on_entry: Callable[[Any], None] | None = None,
) -> Loaded:
    """Open a session as Pi would (rejecting what Pi rejects) and index its entries.

    ``path`` is a session file, or a session reference resolved like ``pi --session``/``--continue``
    (:func:`pitools.core.session.locate.locate_session`): a session id or unique id prefix, or None for the
    most recent session of ``cwd``. A string naming an existing file is always that file.
    ``keep`` is the keep policy (see the module docstring): ``"all"`` gives a
    :class:`LoadedSession`; ``"context"`` a :class:`LeanLoaded` where the file allows it, calling
    ``on_entry`` with every entry as the scan parses it (see :func:`~pitools.core.session.lean.open_lean`;
    not called when the file takes the "all" policy).
    """
    path = _resolve(path, cwd=cwd, env=env, session_dir=session_dir)
    if keep == "context":
        from pitools.core.session.lean import open_lean

        lean = open_lean(path, on_entry)
        if lean is not None:
            if not lean.valid:
                lean.index.close()
                raise_invalid(lean.diagnostics, lean.path)
            loaded: Loaded = LeanLoaded(lean, lean.index)
            gc.freeze()  # see below
            return loaded
    session = require_valid(open_session(path))
    loaded = LoadedSession(session, SessionIndex.build(session.entries))
    # The parsed session holds no reference cycles and lives as long as the command: exempt it
    # from cyclic collection, which would otherwise rescan millions of objects every time the
    # work that follows allocates (a third of the time of context/compact on a big session).
    gc.freeze()
    return loaded


#: Entry types the "skeleton" policy keeps whole (the header; a compaction, for Pi's migration
#: of its index and for where a context starts).
SKELETON_WHOLE = frozenset({"session", "compaction"})


def kept_whole(etype: Any) -> bool:
    """Whether the "skeleton" policy keeps an entry of type ``etype`` whole."""
    # A type can be any JSON value; an array or object is unhashable, so test the type first.
    return type(etype) is str and etype in SKELETON_WHOLE


def skeleton(value: Any) -> Any:
    """An entry as the "skeleton" policy keeps it: ``type``, ``id`` and ``parentId`` (those it has)."""
    if type(value) is not dict:
        return value
    etype = value.get("type", UNDEFINED)
    if kept_whole(etype):
        return value
    out: dict[str, Any] = {}
    if etype is not UNDEFINED:
        out["type"] = etype
    if "id" in value:
        out["id"] = value["id"]
    if "parentId" in value:
        out["parentId"] = value["parentId"]
    return out


def load_bytes(data: bytes, path: str = "<bytes>", *, keep: Literal["all", "skeleton"] = "all") -> LoadedSession:
    """:func:`load` on a session held in memory (``path`` names it in messages).

    Raises :class:`~pitools.errors.SessionParseError` when Pi would reject it and
    :class:`~pitools.core.session.migrate.MigrationError` when Pi's migration throws on it.
    ``keep="skeleton"`` keeps only the skeleton of each entry (see the module docstring); the
    raw session (``session.raw``) says where each one's line is in ``data``.
    """
    raw = read_session_bytes(data, path, shape=skeleton if keep == "skeleton" else None)
    session = require_valid(session_from_raw(raw))
    return LoadedSession(session, SessionIndex.build(session.entries))


def _resolve(
    path: str | os.PathLike[str] | None, *, cwd: str | None, env: Mapping[str, str] | None, session_dir: str | None
) -> str | os.PathLike[str]:
    if path is None or (isinstance(path, str) and not os.path.exists(path)):
        from pitools.core.session.locate import resolve_session_ref
        from pitools.core.session.refs import looks_like_path

        if path is not None and looks_like_path(path):
            return path  # a path is no reference: its messages name it as given (`./none`, not `none`)

        return resolve_session_ref(path, cwd=cwd, env=env, session_dir=session_dir)
    return path
