"""Shell completion (bash, zsh, fish through click): session ids for FILE, entries for --leaf.

Enable it with ``eval "$(_PITOOLS_COMPLETE=bash_source pitools)"`` (``zsh_source``,
``fish_source``; see the README). Completion must never fail or print: every error gives no
candidates.
"""

from __future__ import annotations

import os

import click
from click.shell_completion import CompletionItem

#: At most this many candidates (a huge session has 100k entry ids).
LIMIT = 200


def complete_session(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Files, plus the ids of this directory's sessions (what ``pitools inspect <id-prefix>`` takes)."""
    items: list[CompletionItem] = []
    if not incomplete or not any(sep in incomplete for sep in ("/", os.sep, ".")):
        try:
            from pitools.core.session.locate import _headers_in, choose_session_dir

            choice = choose_session_dir(session_dir=ctx.meta.get("pitools.session_dir"))
            folder = choice.configured or choice.default
            for candidate in _headers_in(folder):
                sid = candidate.id
                if isinstance(sid, str) and sid.startswith(incomplete):
                    items.append(CompletionItem(sid, help=os.path.basename(candidate.path)))
                if len(items) >= LIMIT:
                    break
        except Exception:
            items = []
    return [*items, CompletionItem(incomplete, type="file")]


def _file_from_words() -> str | None:
    """The session file on the line being completed.

    click cannot parse a line that ends in an option still waiting for its value
    (``--leaf <TAB>``), so ``ctx.params`` lacks FILE there; the shell's words (``COMP_WORDS``,
    set by click's bash, zsh and fish scripts) still have it: the first word naming a file.
    """
    import shlex

    try:
        words = shlex.split(os.environ.get("COMP_WORDS", ""))
    except ValueError:
        return None
    for word in words[2:]:
        if not word.startswith("-") and os.path.isfile(word):
            return word
    return None


def complete_leaf(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Entry ids and labels of the session named on the command line (``--leaf``, ``--at``)."""
    file = ctx.params.get("file") or _file_from_words()
    if not file:
        return []
    try:
        from pitools.core.session.load import load
        from pitools.core.session.tree import labels_by_id

        loaded = load(str(file), session_dir=ctx.meta.get("pitools.session_dir"))
        out: list[CompletionItem] = []
        for eid, (label, _ts) in labels_by_id(loaded.index.entries).items():
            if isinstance(label, str) and label.startswith(incomplete):
                out.append(CompletionItem(label, help=f"label on {eid}"))
        ids = [k for k in loaded.index.by_id if isinstance(k, str) and k.startswith(incomplete)]
        for eid in reversed(ids):  # newest first
            out.append(CompletionItem(eid))
            if len(out) >= LIMIT:
                break
        return out
    except Exception:
        return []
