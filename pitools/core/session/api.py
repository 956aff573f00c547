"""Small entry points shared by commands: open a session Pi would load, ready to query."""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pitools.core.session.leaf import resolve_leaf
from pitools.core.session.loaded import Session, open_session, require_valid
from pitools.core.session.tree import SessionIndex


@dataclass(slots=True)
class LoadedSession:
    session: Session
    index: SessionIndex

    @property
    def path(self) -> str:
        return self.session.path

    def leaf(self, ref: str | None) -> Any:
        return resolve_leaf(self.index, ref, path=self.session.path)


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
    if path is None or (isinstance(path, str) and not os.path.exists(path)):
        from pitools.core.session.locate import resolve_session_ref

        path = resolve_session_ref(path, cwd=cwd, env=env, session_dir=session_dir)
    session = require_valid(open_session(path))
    loaded = LoadedSession(session, SessionIndex.build(session.entries))
    # The parsed session holds no reference cycles and lives as long as the command: exempt it
    # from cyclic collection, which would otherwise rescan millions of objects every time the
    # work that follows allocates (a third of the time of context/compact on a big session).
    gc.freeze()
    return loaded
