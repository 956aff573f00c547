"""Where pitools keeps its cache (the archive index): imports only ``os`` and ``sys``, so the lean
warm search finds the index without loading the indexing code."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["cache_dir", "is_within"]


def cache_dir(env: Mapping[str, str], platform: str = sys.platform) -> str:
    """``$PITOOLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/pitools``, else the platform's cache folder."""
    explicit = env.get("PITOOLS_CACHE_DIR")
    if explicit:
        return explicit
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(xdg, "pitools")
    home = env.get("HOME") or os.path.expanduser("~")
    if platform == "darwin":
        return os.path.join(home, "Library", "Caches", "pitools")
    if platform == "win32" and env.get("LOCALAPPDATA"):
        return os.path.join(env["LOCALAPPDATA"], "pitools", "Cache")
    return os.path.join(home, ".cache", "pitools")


def is_within(folder: str, root: str) -> bool:
    """Whether ``folder`` is ``root`` or inside it, symlinks resolved on both sides."""
    here = os.path.realpath(folder)
    top = os.path.realpath(root)
    return here == top or here.startswith(top.rstrip(os.sep) + os.sep)
