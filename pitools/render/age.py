"""How long ago, in words: the buckets every list uses (no imports, so the warm search can use it)."""

from __future__ import annotations

_MINUTE = 60_000_000  # microseconds
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR


def age_text(elapsed_us: int) -> str | None:
    """``just now``, ``5 min ago``, ``3 h ago`` or ``2 d ago`` for an age (in microseconds, not
    negative) under 14 days; None from then on (lists show the date)."""
    if elapsed_us < _MINUTE:
        return "just now"
    if elapsed_us < _HOUR:
        return f"{elapsed_us // _MINUTE} min ago"
    if elapsed_us < _DAY:
        return f"{elapsed_us // _HOUR} h ago"
    if elapsed_us < _DAY * 14:
        return f"{elapsed_us // _DAY} d ago"
    return None
