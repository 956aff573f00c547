"""Where pitools keeps its cache (the archive index): imports only ``os`` and ``sys``, so the lean
warm search finds the index without loading the indexing code."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["RACY_COARSE_NS", "RACY_NS", "SCHEMA_VERSION", "cache_dir", "is_within"]

#: The archive index's schema version: it names the index files (``index-v7.sqlite``) and is
#: their ``user_version``. Here, not in :mod:`pitools.ops.index`, so that the warm search
#: (:mod:`pitools.cli.fast_search`) reads the one number without importing the indexing code.
SCHEMA_VERSION = 8
#: How close to the last update's start a file's mtime may be and the file still have changed
#: after it was read with the same size and mtime: the kernel stamps mtimes from a coarse clock
#: (a few ms), and a file system with whole-second times (FAT: 2 s) is coarser still
#: (:func:`pitools.ops.index.racy`; the warm search applies the same windows).
RACY_NS = 50_000_000
RACY_COARSE_NS = 2_000_000_000


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
