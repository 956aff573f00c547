"""Small entry points shared by commands: open a session Pi would load, ready to query."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pitools.core.leaf import resolve_leaf
from pitools.core.session import Session, open_session, require_valid
from pitools.core.tree import SessionIndex


@dataclass(slots=True)
class LoadedSession:
    session: Session
    index: SessionIndex

    @property
    def path(self) -> str:
        return self.session.path

    def leaf(self, ref: str | None) -> Any:
        return resolve_leaf(self.index, ref, path=self.session.path)


def load(path: str | os.PathLike[str]) -> LoadedSession:
    """Open ``path`` as Pi would (rejecting what Pi rejects) and index its entries."""
    session = require_valid(open_session(path))
    return LoadedSession(session, SessionIndex.build(session.entries))
