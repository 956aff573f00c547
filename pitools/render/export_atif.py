"""ATIF trajectories (built by :mod:`pitools.core.views.atif`) as JSON bytes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pitools.core.js.jsonout import dumps


def atif_json(trajectories: Sequence[dict[str, Any]], *, single: bool) -> bytes:
    """One trajectory object (``single``), else a JSON array of trajectories; indented, newline-ended."""
    value: Any = trajectories[0] if single else list(trajectories)
    return dumps(value, indent=True) + b"\n"
