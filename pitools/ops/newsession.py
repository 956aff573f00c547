"""Writing a new session file (fork, clone, ``export --format jsonl``) through the store."""

from __future__ import annotations

import os
from collections.abc import Callable

from pitools import store
from pitools.core.session.fork import NewSession
from pitools.core.session.locate import SOURCE_OPTION, choose_session_dir
from pitools.errors import PitoolsError


def write_session(
    new: NewSession, target: str | os.PathLike[str], *, make_folders: bool = True, overwrite: bool = False
) -> str:
    """Write ``new`` to ``target`` (refusing to overwrite unless ``overwrite``), creating missing folders like Pi."""
    folder = os.path.dirname(os.fspath(target))
    if folder and make_folders:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise PitoolsError(f"cannot create folder: {exc.strerror or exc}", path=folder) from None
    store.write_new(target, new.lines(), overwrite=overwrite)
    new.target = os.fspath(target)
    return new.target


def write_where_pi_would(
    new: NewSession,
    source: str,
    output: str | None,
    *,
    session_dir: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> str:
    """Write ``new`` to ``output`` or ``--session-dir`` (folders created: the user named them), else
    to the folder Pi would pick, which pitools never creates (README); returns the path written.

    A ``sessionDir`` setting of an untrusted project is ignored (``warn`` hears why).
    """
    if output:
        return write_session(new, output)
    choice = choose_session_dir(session_dir=session_dir)
    if choice.ignored_setting and warn is not None:
        warn(choice.ignored_setting)
    folder = choice.configured or os.path.dirname(os.path.abspath(os.fspath(source)))
    if choice.source == SOURCE_OPTION:  # --session-dir on the command line: the user's own choice, like -o
        return write_session(new, os.path.join(folder, new.file_name))
    if not os.path.isdir(folder):
        raise PitoolsError(
            f"the session folder does not exist and pitools does not create session folders ({choice.source}); "
            "create it, or write elsewhere with -o",
            path=folder,
        )
    return write_session(new, os.path.join(folder, new.file_name), make_folders=False)
