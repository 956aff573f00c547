"""Fresh ids for new entries and sessions, the way Pi makes them.

One generator for every writer (fork, clone, compaction): Pi's ``generateId`` for entry ids and
pi-ai's ``uuidv7()`` for session ids.
"""

from __future__ import annotations

import datetime as _dt
import secrets
import uuid
from collections.abc import Callable, Container
from typing import Any


def generate_id(taken: Container[Any] | Callable[[str], bool]) -> str:
    """Pi's ``generateId``: 8 hex characters not already used, else a full random UUID.

    ``taken`` is a container of used ids or a predicate telling whether an id is used.
    """
    is_taken = taken if callable(taken) else taken.__contains__
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if not is_taken(candidate):
            return candidate
    # Pi falls back to a whole randomUUID() when 100 draws collide.
    return str(uuid.uuid4())


def uuid7(now: _dt.datetime | None = None) -> str:
    """A UUIDv7 string shaped like pi-ai's ``uuidv7()``: 48-bit Unix milliseconds, then randomness."""
    when = (now or _dt.datetime.now(_dt.UTC)).astimezone(_dt.UTC)
    millis = int(when.timestamp() * 1000) & ((1 << 48) - 1)
    raw = bytearray(millis.to_bytes(6, "big") + secrets.token_bytes(10))
    raw[6] = 0x70 | (raw[6] & 0x0F)
    raw[8] = 0x80 | (raw[8] & 0x3F)
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
