"""``Date#toISOString`` by integer arithmetic: no imports, so the lean search path can use it.

One implementation for every caller (``core.js.date``, the usage view, the search hits): a
millisecond time in Date's range prints as ``YYYY-MM-DDTHH:MM:SS.mmmZ``, with four year digits
for years 0–9999 and a sign plus six digits otherwise (``+010000-01-01T00:00:00.000Z``,
``-000001-12-31T…``), exactly as JavaScript does; outside the range (or NaN) JavaScript throws
a RangeError, and this returns None.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: ``new Date(t)`` is valid for |t| <= 8.64e15 ms (±100,000,000 days around 1970).
MAX_TIME_MS = 8.64e15
MS_PER_DAY = 86_400_000


def civil_from_days(z: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month 1-12, day) of ``z`` days after 1970-01-01."""
    # Howard Hinnant's days-to-civil algorithm, with Python's floor division for negatives.
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def to_iso_string(ms: Any) -> str | None:
    """``new Date(ms).toISOString()``; None where JavaScript throws (NaN, out of range, not a number)."""
    if type(ms) is not int and type(ms) is not float:
        return None
    if ms != ms or abs(ms) > MAX_TIME_MS:
        return None
    t = int(ms)  # TimeClip truncates toward zero
    days, rest = divmod(t, MS_PER_DAY)
    year, month, day = civil_from_days(days)
    seconds, millis = divmod(rest, 1000)
    ytext = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
    return (
        f"{ytext}-{month:02d}-{day:02d}T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{millis:03d}Z"
    )
