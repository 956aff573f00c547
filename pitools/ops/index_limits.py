"""What the archive index, its updater and its rows share: limits, the time-slot width, the
row id layout, and the small types passed between them.

A module of its own so that :mod:`pitools.ops.index_update` (loaded only when files changed)
and :mod:`pitools.ops.index_rows` need not import :mod:`pitools.ops.index`, which imports the
updater: no import cycle.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.json.record import record_json
from pitools.core.js.types import JsonObject

#: SQLite's busy timeout for every connection to the index.
BUSY_TIMEOUT_MS = 30_000
#: Fewer files than this (or fewer bytes) are indexed in this process.
PARALLEL_MIN_FILES = 8
PARALLEL_MIN_BYTES = 8 << 20
MAX_SHARDS = 4

ProgressFn = Callable[[int, int], None]
WarnFn = Callable[[str], None]

#: ``usage_slots`` sums the usage rows of each session per quarter hour (``q``: the time in
#: :data:`SLOT_MS` units, floored), provider, model and copied flag: a warm ``pitools usage``
#: reads these few thousand rows instead of every record. Every time zone's offset and every
#: change of offset fall on a quarter hour, so days, weeks and months in any zone add up whole
#: slots (``pitools.ops.archive`` checks, and reads ``usage`` itself when they would not).
#: ``usage_glob`` is the same over all sessions at once (no ``sid``): what a ``usage`` over the
#: whole archive, without session filters, reads.
SLOT_MS = 900_000
#: An entry's search row id is ``sid << ROWID_SHIFT | ord`` (search decodes it without loading
#: the indexing code).
ROWID_SHIFT = 24


#: A session file that is new or changed since it was indexed: (path, folder, stat, its
#: sessions row (sid, size, mtime_ns, ino, indexed_bytes, tail_hash, regular, shard) or None).
Changed = tuple[str, str, os.stat_result, "tuple[Any, ...] | None"]


#: What ``index --format json`` reports of an update (its warnings are printed apart).
_UPDATE_KEYS = ("files", "unchanged", "added", "appended", "reindexed", "removed", "bytes_read", "in_memory", "rebuilt")


@dataclass(slots=True)
class UpdateStats:
    files: int = 0
    unchanged: int = 0
    added: int = 0
    appended: int = 0
    reindexed: int = 0
    removed: int = 0
    bytes_read: int = 0
    in_memory: bool = False
    rebuilt: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        return record_json(self, _UPDATE_KEYS)
