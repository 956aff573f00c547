"""The one shell command that takes a session, or an entry in it, back into Pi.

Pi 1.6.0 opens a session file with ``pi --session PATH``: an argument holding a ``/`` (or ending
in ``.jsonl``) is read as a path and opened with the header's cwd, continuing at the file's last
entry (the default leaf). An id or id prefix would be looked up among the sessions of the current
directory first and, found in another project, offered as a fork into this one: a path always
resumes the file itself, so every command here names the file by its (absolute) path.

An entry that is not the default leaf cannot be reached by ``pi --session`` alone: the command
first copies the branch that ends at the entry into a new session (``pitools clone PATH --leaf
ID``, Pi's ``/clone``; it prints the new file's path) and opens that one.

Every value is quoted for a POSIX shell, so a hostile file name or id stays one word and never
becomes a command. Import-light (no ``shlex``, ``re`` or ``typing``): the warm ``search`` path
builds its hits with it.
"""

from __future__ import annotations

#: What ``shlex.quote`` leaves unquoted: ``[\w@%+=:,./-]`` in ASCII.
_SHELL_SAFE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"


def shell_quote(text: str) -> str:
    """``shlex.quote(text)``: ``text`` as one word for a POSIX shell."""
    if not text:
        return "''"
    if not text.strip(_SHELL_SAFE):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def resume_command(path: str, entry_id: str | None = None, *, at_leaf: bool = True) -> str:
    """The command that resumes ``path`` in Pi, at ``entry_id`` when it is given and not the
    session's default leaf (``at_leaf=False``).

    ``path`` absolute, or relative to the directory the command is to run in (Pi resolves it
    against its working directory); a bare file name is given a ``./`` so Pi reads it as a path,
    not as an id.
    """
    if "/" not in path and "\\" not in path:
        path = "./" + path
    if entry_id is None or at_leaf:
        return f"pi --session {shell_quote(path)}"
    clone = f"pitools clone {shell_quote(path)} --leaf {shell_quote(entry_id)}"
    return f'pi --session "$({clone})"'


#: Characters of a session id shown at least (what listings showed before: two sessions made a
#: second apart share them, so :func:`short_ids` adds more where needed).
SHORT_ID = 8


def short_ids(ids: list[str], minimum: int = SHORT_ID) -> dict[str, str]:
    """Each id's shortest prefix of at least ``minimum`` characters that no other id in ``ids``
    starts with, so that ``pitools inspect PREFIX`` (and ``pi --session PREFIX``) finds that one
    session. An id that another id starts with is shown whole. Two files with the same id (a
    copied file) cannot be told apart by any prefix: they share one (the id finder names both)."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for i, sid in enumerate(ordered):
        need = minimum
        for j in (i - 1, i + 1):
            if 0 <= j < len(ordered):
                other = ordered[j]
                common = 0
                for a, b in zip(sid, other, strict=False):
                    if a != b:
                        break
                    common += 1
                need = max(need, common + 1)
        out[sid] = sid[:need]
    return out
