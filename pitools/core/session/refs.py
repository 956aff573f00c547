"""How a session reference reads: a path, or an id or id prefix to look up.

Its own module, with no imports, so that a command given a file path decides that without loading
the session finder (:mod:`pitools.core.session.locate`, which reads Pi's settings to look ids up).
"""

from __future__ import annotations


def looks_like_path(ref: str) -> bool:
    """Pi's test in ``resolveSessionPath``: a separator, or a ``.jsonl`` ending."""
    return "/" in ref or "\\" in ref or ref.endswith(".jsonl")
