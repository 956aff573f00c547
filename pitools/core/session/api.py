"""Small entry points shared by commands: open a session Pi would load, ready to query."""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pitools.core.session.leaf import resolve_leaf
from pitools.core.session.lean import LeanIndex, LeanSession
from pitools.core.session.loaded import Session, open_session, raise_invalid, require_valid
from pitools.core.session.tree import SessionIndex


class _LeafRefs:
    """``--leaf`` references, the same for a full and a lean load: an id, unique id prefix or
    label, or ``L<line>`` (the entry on that line of the file: stable for any file, v1/v2 ones
    whose ids are made up too). Subclasses say where the entries' lines and ids are."""

    __slots__ = ()
    session: Any
    index: Any

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
        raise LeafError(
            f"--leaf {ref!r}: line {line:,} of the file holds no entry (the header, a blank line or an unreadable one)",
            path=self.session.path,
        )


@dataclass(slots=True)
class LoadedSession(_LeafRefs):
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
class LeanLoaded(_LeafRefs):
    """:class:`LoadedSession` for a lean load (:func:`load_lean`): the same leaf references,
    an index whose entries are parsed again on demand."""

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


def load(
    path: str | os.PathLike[str] | None = None,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
) -> LoadedSession:
    """Open a session as Pi would (rejecting what Pi rejects) and index its entries.

    ``path`` is a session file, or a session reference resolved like ``pi --session``/``--continue``
    (:func:`pitools.core.session.locate.locate_session`): a session id or unique id prefix, or None for the
    most recent session of ``cwd``. A string naming an existing file is always that file.
    """
    path = _resolve(path, cwd=cwd, env=env, session_dir=session_dir)
    session = require_valid(open_session(path))
    loaded = LoadedSession(session, SessionIndex.build(session.entries))
    # The parsed session holds no reference cycles and lives as long as the command: exempt it
    # from cyclic collection, which would otherwise rescan millions of objects every time the
    # work that follows allocates (a third of the time of context/compact on a big session).
    gc.freeze()
    return loaded


def _resolve(
    path: str | os.PathLike[str] | None, *, cwd: str | None, env: Mapping[str, str] | None, session_dir: str | None
) -> str | os.PathLike[str]:
    if path is None or (isinstance(path, str) and not os.path.exists(path)):
        from pitools.core.session.locate import resolve_session_ref

        return resolve_session_ref(path, cwd=cwd, env=env, session_dir=session_dir)
    return path


def load_lean(
    path: str | os.PathLike[str] | None = None,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
) -> LoadedSession | LeanLoaded:
    """:func:`load` for commands that need the full value of only a few entries (``context``).

    Every line is still parsed and checked with Pi's rules (the same diagnostics and errors),
    but only ids, parents and types are kept for most entries; the others are parsed again
    from the file when asked for (:mod:`pitools.core.session.lean`). Files that need migration
    and inputs that are not regular files load the full way (a :class:`LoadedSession`).
    """
    path = _resolve(path, cwd=cwd, env=env, session_dir=session_dir)
    from pitools.core.session.lean import open_lean

    lean = open_lean(path)
    if lean is None:
        return load(path)
    if not lean.valid:
        lean.index.close()
        raise_invalid(lean.diagnostics, lean.path)
    loaded = LeanLoaded(lean, lean.index)
    gc.freeze()  # see load()
    return loaded
