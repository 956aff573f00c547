"""``pitools ls`` with its on-disk summary cache (core's listing plus the one file it keeps)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pitools import store
from pitools.core.views.listing import CACHE_VERSION, Listing, ProgressFn
from pitools.core.views.listing import list_sessions as _list_sessions


def cache_dir(env: Mapping[str, str]) -> str:
    """``$PITOOLS_CACHE_DIR``, else ``$XDG_CACHE_HOME/pitools``, else ``~/.cache/pitools``."""
    explicit = env.get("PITOOLS_CACHE_DIR")
    if explicit:
        return explicit
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(xdg, "pitools")
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache", "pitools")


class SummaryCache:
    """Summaries keyed by path, size and mtime, kept in one JSON file; failures are ignored."""

    def __init__(self, directory: str | None) -> None:
        self.file = os.path.join(directory, f"ls-v{CACHE_VERSION}.json") if directory else None
        self.items: dict[str, Any] = {}
        self.dirty = False
        self.hits = 0
        if self.file:
            self._load(self.file)

    def _load(self, file: str) -> None:
        import orjson

        from pitools import __version__

        try:
            with open(file, "rb") as fh:
                data = orjson.loads(fh.read())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("pitools") == __version__ and isinstance(data.get("items"), dict):
            self.items = data["items"]

    def get(self, path: str, st: os.stat_result) -> dict[str, Any] | None:
        item = self.items.get(path)
        if isinstance(item, dict) and item.get("size") == st.st_size and item.get("mtimeNs") == st.st_mtime_ns:
            self.hits += 1
            summary = item.get("summary")
            return summary if isinstance(summary, dict) else None
        return None

    def put(self, path: str, st: os.stat_result, summary: dict[str, Any]) -> None:
        if self.file:
            self.items[path] = {"size": st.st_size, "mtimeNs": st.st_mtime_ns, "summary": summary}
            self.dirty = True

    def forget_missing(self, folders: list[str], seen: set[str]) -> None:
        """Drop entries for files that were in the scanned folders but are gone now."""
        prefixes = tuple(os.path.join(f, "") for f in folders)
        for path in list(self.items):
            if path.startswith(prefixes) and path not in seen:
                del self.items[path]
                self.dirty = True

    def save(self) -> None:
        """Write the cache file through the store; a failure only costs the next run time."""
        if not (self.file and self.dirty):
            return
        import orjson

        from pitools import __version__

        try:
            data = orjson.dumps({"pitools": __version__, "items": self.items})
        except TypeError:
            return
        store.write_own_file(self.file, data)


def list_sessions(
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
    all_: bool = False,
    use_cache: bool = True,
    progress: ProgressFn | None = None,
) -> Listing:
    """Core's :func:`~pitools.core.views.listing.list_sessions`, with the summary cache loaded and saved."""
    env = os.environ if env is None else env
    cache = SummaryCache(cache_dir(env) if use_cache else None)
    result = _list_sessions(cwd=cwd, env=env, session_dir=session_dir, all_=all_, cache=cache, progress=progress)
    cache.save()
    return result
