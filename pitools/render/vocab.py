"""One vocabulary for human output: numbers, sizes, costs, plurals, times, unknown models, truncation.

- Numbers have thousands separators (``175,004``); counts agree with their noun ("1 tool call",
  "2 tool calls"). Token counts are written in full (``169,923``); tables with little room
  abbreviate them (``105.5k``, ``1.3M``, :func:`tokens_short`).
- Sizes are decimal, one rule everywhere: 1 KB = 1,000 bytes, 1 MB = 1,000,000 bytes (:func:`size`).
- Costs are US dollars with thousands separators and cents (``$1,094.91``); a cost above zero but
  under half a cent is ``<$0.01`` (:func:`money`). JSON keeps exact numbers.
- Times are shown in local time with the zone (``2026-07-29 11:01 CEST``), or relative in lists
  (``3 h ago``); JSON keeps ISO 8601 UTC.
- A model that a session does not name is "unknown model" (JSON: ``null``).
- A list cut short ends with "… N more (use --all)".
"""

from __future__ import annotations

import datetime as _dt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pitools.core.js.types import JsValue

UNKNOWN_MODEL = "unknown model"


def n(value: JsValue) -> str:
    """A count with thousands separators; anything else (Pi may add strings) as text."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _number(value: JsValue) -> bool:
    return type(value) in (int, float)


def size(value: Any) -> str:
    """Bytes in decimal units: ``812 B``, ``8.3 KB``, ``75.0 MB``, ``1.2 GB`` (1 KB = 1,000 bytes)."""
    if not _number(value):
        return "?"
    amount = float(value)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(amount) < 1000 or unit == "TB":
            return f"{int(value):,} B" if unit == "B" else f"{amount:,.1f} {unit}"
        amount /= 1000
    return f"{value} B"  # pragma: no cover


def money(value: Any) -> str:
    """A cost in US dollars: ``$1,094.91``, ``$0.08``, ``<$0.01`` (above zero, under half a cent)."""
    if not _number(value):
        return "?"
    if 0 < abs(value) < 0.005:
        return "<$0.01" if value > 0 else "-<$0.01"
    text = f"{abs(value):,.2f}"
    return f"-${text}" if value < 0 and text != "0.00" else f"${text}"


def tokens_short(value: Any) -> str:
    """A token count for narrow tables: ``812``, ``105.5k``, ``1.3M``."""
    if not _number(value):
        return "?"
    if value < 1000:
        return f"{value:g}"
    if value < 1_000_000:
        return f"{value / 1000:.1f}k"
    return f"{value / 1_000_000:.1f}M"


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 tool call``, ``2 tool calls``, ``1,204 entries`` (irregular plural in ``words``)."""
    return f"{n(count)} {word if count == 1 else (words or word + 's')}"


def model_name(provider: JsValue, model_id: JsValue) -> str:
    """``provider/model`` when both are known strings, else "unknown model"."""
    if isinstance(provider, str) and isinstance(model_id, str) and provider and model_id:
        return f"{provider}/{model_id}"
    if isinstance(model_id, str) and model_id:
        return model_id
    return UNKNOWN_MODEL


def parse_time(value: JsValue) -> _dt.datetime | None:
    """An ISO 8601 string (Pi's ``toISOString``) or epoch milliseconds, as an aware datetime."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return _dt.datetime.fromtimestamp(value / 1000, _dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value:
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=_dt.UTC)


def local_time(value: JsValue, *, seconds: bool = False) -> str:
    """Local time with the zone shown (``2026-07-29 11:01 CEST``); odd values as they are."""
    when = parse_time(value)
    if when is None:
        return "" if value is None else str(value)
    local = when.astimezone()
    return local.strftime("%Y-%m-%d %H:%M:%S %Z" if seconds else "%Y-%m-%d %H:%M %Z").strip()


def ago(value: JsValue, now: _dt.datetime | None = None) -> str:
    """Relative time for lists: ``just now``, ``5 min ago``, ``3 h ago``, ``2 d ago``, else the date."""
    when = parse_time(value)
    if when is None:
        return "" if value is None else str(value)
    from pitools.render.age import age_text

    now = now or _dt.datetime.now(_dt.UTC)
    elapsed = (now - when) // _dt.timedelta(microseconds=1)
    if elapsed < 0:
        return local_time(value)
    text = age_text(elapsed)
    if text is not None:
        return text
    return when.astimezone().strftime("%Y-%m-%d")


def more(hidden: int) -> str:
    """The marker that ends a list cut short."""
    return f"… {n(hidden)} more (use --all)"
