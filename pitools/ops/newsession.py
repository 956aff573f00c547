"""Writing a new session file (fork, clone, ``export --format jsonl``) through the store."""

from __future__ import annotations

import os
from typing import Any

from pitools import store
from pitools.core.errors import PitoolsError
from pitools.core.session.fork import NewSession, new_session_dir


def write_session(new: NewSession, target: str | os.PathLike[str], *, make_folders: bool = True) -> str:
    """Write ``new`` to ``target`` (refusing to overwrite), creating missing folders like Pi."""
    folder = os.path.dirname(os.fspath(target))
    if folder and make_folders:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise PitoolsError(f"cannot create folder: {exc.strerror or exc}", path=folder) from None
    store.write_new(target, new.lines())
    new.target = os.fspath(target)
    return new.target


def write_where_pi_would(new: NewSession, source: str, output: str | None, *, session_dir: Any = None) -> str:
    """Write ``new`` to ``output``, else to the folder Pi would pick; returns the path written."""
    if output:
        return write_session(new, output)
    folder = new_session_dir(source, session_dir=session_dir)
    return write_session(new, os.path.join(folder, new.file_name))


def write_new_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write an export (Markdown, HTML) to a new file; never replaces an existing one."""
    store.write_new(path, [data])
