"""Which entries of a session were copied from its parent by Pi's /fork or /clone.

Interim rule until the archive index's lineage module lands: Pi's ``createBranchedSession``
keeps each copied entry's id, so an entry is copied history when its id also names an entry of
the parent file (the header's ``parentSession``). A missing or unreadable parent means nothing
can be told apart, and nothing is marked.
"""

from __future__ import annotations

import os
from typing import Any

from pitools.core.session.loaded import entry_id, open_session


def copied_ids(loaded: Any) -> set[str]:
    header = loaded.session.header or {}
    parent = header.get("parentSession")
    # Only a regular file: the path comes from the session text (a FIFO or device could hang us).
    if type(parent) is not str or not parent or not os.path.isfile(parent):
        return set()
    try:
        parent_session = open_session(parent, migrate=True)
    except Exception:  # the parent is damaged or unmigratable: mark nothing
        return set()
    parent_ids = {e for e in map(entry_id, parent_session.entries) if type(e) is str}
    return {e for e in map(entry_id, loaded.session.entries) if type(e) is str and e in parent_ids}
