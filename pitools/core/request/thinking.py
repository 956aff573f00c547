"""pi-ai's thinking levels (the thinking part of ``src/models.ts``, ``dist/models.js``).

``getSupportedThinkingLevels`` and ``clampThinkingLevel``, plus the two readings of a model's
``thinkingLevelMap`` the adapters repeat inline (``map[level] ?? level``, and the effort that
turns reasoning off).
"""

from __future__ import annotations

from typing import Any

from pitools.core.js.value import UNDEFINED

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def supported_thinking_levels(model: dict[str, Any]) -> list[str]:
    """pi-ai ``getSupportedThinkingLevels``."""
    if not model.get("reasoning"):
        return ["off"]
    level_map = model.get("thinkingLevelMap") or {}
    out = []
    for level in THINKING_LEVELS:
        mapped = level_map.get(level, UNDEFINED)
        if mapped is None:
            continue
        if level in ("xhigh", "max") and mapped is UNDEFINED:
            continue
        out.append(level)
    return out


def map_thinking_level(level_map: dict[str, Any], level: str) -> Any:
    """``thinkingLevelMap[level] ?? level``: the provider's value for a thinking level (the level
    itself when the map leaves it out or maps it to null)."""
    value = level_map.get(level, UNDEFINED)
    return level if value is None or value is UNDEFINED else value


def off_effort(level_map: dict[str, Any]) -> Any:
    """The effort sent to turn reasoning off: ``thinkingLevelMap.off``, or ``"none"`` when unset
    (callers first check that the map does not say null, which means "send nothing")."""
    off = level_map.get("off", UNDEFINED)
    return "none" if off is UNDEFINED else off


def clamp_thinking_level(model: dict[str, Any], level: str) -> str:
    """pi-ai ``clampThinkingLevel``: the nearest supported level, searching upwards first."""
    return nearest_thinking_level(supported_thinking_levels(model), level)


def nearest_thinking_level(available: list[str], level: str) -> str:
    """``level`` if ``available``, else the nearest available one, searching upwards first."""
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    at = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[at:]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:at]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"
