"""ATIF trajectories (built by :mod:`pitools.core.views.atif`) as JSON bytes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pitools.core.js.jsonout import indent_json, to_json_bytes


def atif_json(trajectories: Sequence[dict[str, Any]], *, single: bool) -> bytes:
    """One trajectory object (``single``), else a JSON array of trajectories; indented, newline-ended.

    Written as ``JSON.stringify(value, null, 2)`` would (JavaScript number forms and key order).
    """
    value: Any = trajectories[0] if single else list(trajectories)
    return indent_json(to_json_bytes(value)) + b"\n"
