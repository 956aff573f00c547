"""The one loader: open a session Pi would load, indexed and ready to query.

Every module outside ``core/session`` reads a session through :func:`load` (an architecture
test and the ``one-loader`` import contract hold them to it); the modules behind it are named by
role: :mod:`~pitools.core.session.lines` splits and scans lines with Pi's rules,
:mod:`~pitools.core.session.loaded` makes Pi's entries of the values (header, migration,
extra headers), :mod:`~pitools.core.session.lean` is the ``"context"`` policy and
:mod:`~pitools.core.session.tree` the ``"all"`` policy's index.

:func:`load` reads every line with Pi's rules (the same diagnostics and errors whatever it
keeps) and indexes the entries (:class:`~pitools.core.session.index.EntryIndex`). The source is
a file, a session reference or the session's bytes. Its *keep policy* says which parsed entries
stay in memory:

* ``keep="all"`` (the default): every entry stays parsed (``loaded.session.entries``), the
  index is a :class:`~pitools.core.session.tree.SessionIndex`; what most commands use.
* ``keep="context"``: only ids, parents, types, marks and byte offsets are kept for every
  entry, plus the parsed value of the entries a context replay is likely to need (those after
  the last compaction, and small ones); any other entry is read back from the file by its byte
  offset when asked for (:class:`~pitools.core.session.lean.LeanIndex`). ``context`` and
  ``compact --dry-run`` use it: on a 100 MB session it saves most of the memory. Files Pi
  migrates (v1/v2), inputs that are not regular files and bytes are loaded with ``"all"``
  (``loaded.kept`` says which policy was applied).
* ``keep="skeleton"``: every entry reduced to its ``type``, ``id`` and ``parentId`` as it is read
  (headers and compactions whole), which is all the tree and Pi's migration need; a caller parses
  an entry again from the bytes (the raw session's offsets) when it needs the rest (``repair``
  checks the file it is about to write, in memory). A function instead of a name is a caller's
  own reduction (``slim``'s skeletons keep what its check reads).
* ``keep="none"``: a :class:`Stream` of the values, none kept (``validate`` checks each one and
  drops it, also in parts of a big file; the archive index reads what was appended).

The result, :class:`Loaded`, has a documented set of views, the same under every policy:
``path``; ``session`` (:class:`~pitools.core.session.loaded.Session` for ``"all"``: ``header``,
``entries`` as Pi's ``getEntries()``, ``lines``/``offsets``, ``migration``, ``diagnostics``, and
``raw``, the :class:`~pitools.core.session.lines.RawSession` with every parsed value and where
it came from); ``index`` (:class:`~pitools.core.session.index.EntryIndex`); ``leaf(ref)``;
``synthetic_ids``; ``kept``. :class:`LoadedSession` is the type of a load that kept every entry.

Every Pi mirror (:mod:`pitools.core.context.build`, :mod:`pitools.core.compaction.plan`) is
written once on the index interface and gives the same result under either policy.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

from pitools.core.js.value import UNDEFINED
from pitools.core.session.header import accepted_header
from pitools.core.session.leaf import resolve_leaf
from pitools.core.session.lean import LeanIndex, LeanSession
from pitools.core.session.lines import (
    RawSession,
    ScannedValue,
    finish_raw,
    line_spans,
    read_session,
    read_session_bytes,
    stream_session,
)
from pitools.core.session.loaded import Session, raise_invalid, require_valid, session_from_raw
from pitools.core.session.tree import SessionIndex

if TYPE_CHECKING:
    from pitools.core.session.index import EntryIndex

__all__ = [
    "KEEP_ALL",
    "KEEP_CONTEXT",
    "AnySession",
    "Keep",
    "Loaded",
    "LoadedSession",
    "RawSession",
    "Reduce",
    "ScannedValue",
    "Session",
    "Source",
    "Stream",
    "accepted_header",
    "finish_raw",
    "kept_whole",
    "line_spans",
    "load",
]

#: The loader's keep policies for a session a command works on (see the module docstring).
Keep = Literal["all", "context"]
KEEP_ALL: Keep = "all"
KEEP_CONTEXT: Keep = "context"
#: ``Loaded.session`` under any keep policy (``"context"`` keeps no list of entries).
AnySession = Session | LeanSession


@dataclass(slots=True)
class Loaded:
    """A loaded session under any keep policy: ``session`` (header, diagnostics, lines) and
    ``index`` (:class:`~pitools.core.session.index.EntryIndex`), and ``--leaf`` references
    resolved the same way for every policy: an id, unique id prefix or label, or ``L<line>``
    (the entry on that line of the file: stable for any file, v1/v2 ones whose ids are made up
    too). Subclasses say where the entries' lines and ids are."""

    session: AnySession
    index: EntryIndex
    #: The path to show for the session instead of the one it was read from (``export --redact``
    #: reads a redacted temporary copy but names the user's file); never read from.
    shown_path: str | None = field(default=None, kw_only=True)

    def _entry_lines(self) -> Sequence[int]:
        raise NotImplementedError

    def _id_at(self, at: int) -> Any:
        raise NotImplementedError

    @property
    def kept(self) -> Keep:
        """The keep policy applied: ``"context"`` only where the file allowed it."""
        raise NotImplementedError

    @property
    def synthetic_ids(self) -> bool:
        """Whether the ids shown are pitools' stand-ins: a v1 file has none, migration made them up."""
        raise NotImplementedError

    def show_as(self, path: str | None) -> None:
        """Name ``path`` in outputs instead of the file read (see ``shown_path``)."""
        self.shown_path = path

    @property
    def path(self) -> str:
        """The session's path as outputs name it (see ``shown_path``)."""
        return str(self.session.path) if self.shown_path is None else self.shown_path

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
        from pitools.core.js.access import entry_id

        return entry_id(self.session.entries[at])

    @property
    def kept(self) -> Keep:
        return KEEP_ALL

    @property
    def synthetic_ids(self) -> bool:
        return self.session.migration.ids_assigned > 0


@dataclass(slots=True)
class _LeanLoaded(Loaded):
    """A session loaded with ``keep="context"``: an index whose dropped entries are parsed
    again from the file on demand."""

    session: LeanSession
    index: LeanIndex

    def _entry_lines(self) -> Sequence[int]:
        return self.index.lines

    def _id_at(self, at: int) -> Any:
        return self.index.ids[at]

    @property
    def kept(self) -> Keep:
        return KEEP_CONTEXT

    @property
    def synthetic_ids(self) -> bool:
        return False  # only v3 files load lean: every id is the file's own


def _line_ref(ref: str) -> int | None:
    """``L17`` (or ``l17``) -> 17."""
    if len(ref) > 1 and ref[0] in "Ll" and ref[1:].isdigit():
        return int(ref[1:])
    return None


class Stream(NamedTuple):
    """``load(path, keep="none")``: the file's values one at a time, nothing kept.

    ``raw`` (lines, diagnostics, the file-level verdict) fills in as ``values`` is consumed;
    ``validate`` checks each value and drops it, the archive index reads what was appended."""

    raw: RawSession
    values: Iterator[ScannedValue]


#: A caller's own keep policy: called on each value in file order as it is read, returns what to keep.
Reduce = Callable[[Any], Any]
Source = str | os.PathLike[str] | bytes


@overload
def load(
    source: Source | None = None,
    *,
    keep: Literal["all", "skeleton"] | Reduce = ...,
    name: str | None = None,
    strict: bool = True,
    migrate: bool = True,
    freeze: bool = True,
    tap: Callable[[bytes], object] | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
) -> LoadedSession: ...
@overload
def load(
    source: Source | None = None,
    *,
    keep: Literal["none"],
    start: int = 0,
    stop: int | None = None,
    finish: bool = True,
) -> Stream: ...
@overload
def load(
    source: Source | None = None,
    *,
    keep: Keep,
    freeze: bool = True,
    on_entry: Callable[[Any], None] | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
) -> Loaded: ...
def load(
    source: Source | None = None,
    *,
    keep: Keep | Literal["skeleton", "none"] | Reduce = "all",
    name: str | None = None,
    strict: bool = True,
    migrate: bool = True,
    freeze: bool = True,
    tap: Callable[[bytes], object] | None = None,
    start: int = 0,
    stop: int | None = None,
    finish: bool = True,
    on_entry: Callable[[Any], None] | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
) -> Loaded | Stream:
    """Open a session as Pi would (rejecting what Pi rejects) and index its entries.

    ``source`` is a session file, the session's bytes (``name`` names them in messages), or a
    session reference resolved like ``pi --session``/``--continue``
    (:func:`pitools.core.session.locate.locate_session`): a session id or unique id prefix, or
    None for the most recent session of ``cwd``. A string naming an existing file is always that
    file; an :class:`os.PathLike` (a :class:`~pathlib.Path`) always names a file, never a reference.

    ``keep`` is the keep policy (see the module docstring): ``"all"`` gives a
    :class:`LoadedSession`; ``"context"`` a lean :class:`Loaded` where the file allows it;
    ``"skeleton"`` or a function (called on each value as it is read, returning what to keep:
    ``slim`` keeps its own skeletons) a :class:`LoadedSession` of reduced entries; ``"none"`` a
    :class:`Stream` (``start``/``stop`` read only the bytes between, ``finish=False`` leaves the
    file-level verdict to :func:`~pitools.core.session.lines.finish_raw`: ``validate`` reads a big
    file in parts).

    ``strict=False`` returns a file Pi rejects instead of raising (``session.valid`` is False, no
    entries); ``migrate=False`` leaves a v1/v2 file's values as they are (``"all"`` only);
    ``tap`` sees every byte of a file read, in order, when the entries are kept (``slim`` hashes
    and counts them); ``freeze=False`` for a caller that loads many sessions in one process: a
    kept session is otherwise exempted from cyclic garbage collection (``gc.freeze``), as a
    command's one session should be (bytes never are); ``on_entry`` (``"context"`` only) is
    called with every entry as the lean scan parses it, so a caller that needs one fact of each
    entry does not parse the file again (not called when the file takes the ``"all"`` path:
    see :func:`~pitools.core.session.lean.open_lean`).
    """
    if isinstance(source, bytes):
        if keep == "none":
            raise ValueError("keep='none' streams a file; bytes are already in memory")
        # "context" re-reads dropped entries from the file: bytes are kept whole, as a pipe is.
        raw = read_session_bytes(source, name or "<bytes>", shape=_shape(keep))
        return _loaded(raw, strict=strict, migrate=migrate, freeze=False)
    path = _resolve(source, cwd=cwd, env=env, session_dir=session_dir)
    if keep == "none":
        return Stream(*stream_session(path, start=start, stop=stop, finish=finish))
    if keep == "context":
        from pitools.core.session.lean import open_lean

        lean = open_lean(path, on_entry)
        if lean is not None:
            if lean.valid or strict:
                if not lean.valid:
                    lean.index.close()
                    raise_invalid(lean.diagnostics, lean.path)
                loaded: Loaded = _LeanLoaded(lean, lean.index)
                if freeze:
                    gc.freeze()  # see _loaded
                return loaded
            lean.index.close()
    return _loaded(read_session(path, shape=_shape(keep), tap=tap), strict=strict, migrate=migrate, freeze=freeze)


def _shape(keep: str | Reduce) -> Reduce | None:
    if callable(keep):
        return keep
    return skeleton if keep == "skeleton" else None


def _loaded(raw: RawSession, *, strict: bool, migrate: bool, freeze: bool) -> LoadedSession:
    session = session_from_raw(raw, migrate=migrate)
    if strict:
        require_valid(session)
    loaded = LoadedSession(session, SessionIndex.build(session.entries))
    if freeze:
        # The parsed session holds no reference cycles and lives as long as the command: exempt
        # it from cyclic collection, which would otherwise rescan millions of objects every time
        # the work that follows allocates (a third of the time of context/compact on a big
        # session). A caller loading session after session in one process (the archive index,
        # ``dataset``) passes ``freeze=False``: each one is freed when it is done with.
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


def _resolve(
    path: str | os.PathLike[str] | None, *, cwd: str | None, env: Mapping[str, str] | None, session_dir: str | None
) -> str | os.PathLike[str]:
    if path is None or (isinstance(path, str) and not os.path.exists(path)):
        from pitools.core.session.locate import locate_session
        from pitools.core.session.refs import looks_like_path

        if path is not None and looks_like_path(path):
            return path  # a path is no reference: its messages name it as given (`./none`, not `none`)

        return locate_session(path, cwd=cwd, env=env, session_dir=session_dir).path
    return path
