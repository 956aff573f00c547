"""A record (a dataclass) as the JSON object Pi's side would write: camelCase keys, its fields in order.

One helper for the findings, diagnostics and repair items every command prints as JSON, so their
``to_json`` methods do not each spell out the same key list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from functools import cache
from typing import Any

__all__ = ["camel", "record_json"]


@cache
def camel(name: str) -> str:
    """``entry_id`` -> ``entryId``: a Python field name as JavaScript spells the key."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def record_json(record: Any, names: Iterable[str] | None = None) -> dict[str, Any]:
    """``record``'s fields (or ``names``, in that order) as a JSON object with camelCase keys."""
    if names is None:
        names = [f.name for f in dataclasses.fields(record)]
    return {camel(name): getattr(record, name) for name in names}
