"""``Date#toISOString`` of a time in milliseconds: a module of its own, light to import (search)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

__all__ = ["iso_utc"]


def iso_utc(ms: Any) -> str | None:
    """``new Date(ms).toISOString()``; None for NaN or out-of-range times (where JS throws)."""
    if type(ms) not in (int, float) or ms != ms or abs(ms) > 8.64e15:
        return None
    try:
        when = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC) + _dt.timedelta(milliseconds=int(ms // 1))
    except OverflowError:
        return None
    if not 1 <= when.year <= 9999:
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
