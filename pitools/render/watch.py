"""``pitools watch``: one line (or one JSON object) per reading of the context meter."""

from __future__ import annotations

from typing import Any

from pitools.core.js.types import JsValue
from pitools.core.views.meter import Reading


def _count(value: JsValue) -> str:
    if type(value) is int:
        return f"{value:,}"
    if type(value) is float and value.is_integer():
        return f"{int(value):,}"
    return str(value)


def meter_line(meter: Reading) -> str:
    """``context 143,210 / 200,000 (71.6%) · compacts above 183,616: 40,406 to go``.

    Plain text without session data except the model name (made safe by the caller's output)."""
    percent = meter.percent
    share = f" ({percent:.1f}%)" if percent is not None else ""
    head = f"context {_count(meter.tokens)} / {_count(meter.context_window)}{share}"
    if meter.model:
        head += f" · {meter.model}"
    if not meter.enabled:
        return f"{head} · auto-compaction off"
    threshold = f"compacts above {_count(meter.threshold)} (reserve {_count(meter.reserve_tokens)})"
    if meter.will_compact:
        return f"{head} · {threshold}: the next turn will compact first"
    return f"{head} · {threshold}: {_count(meter.tokens_to_threshold)} to go"


def meter_json(meter: Reading, path: str, how: str) -> dict[str, Any]:
    """The reading as ``watch --format json`` writes it (one object a line)."""
    return {"file": path, **meter.to_json(), "readBy": how}
