"""Whether a stream gets colour (the rules are in :mod:`pitools.cli.output`'s docstring): a module
of its own, importing nothing, so the lean warm search decides exactly as the output layer does."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["wants_color"]


def _set(env: Mapping[str, str], name: str) -> bool:
    return bool(env.get(name, ""))


def wants_color(mode: str, isatty: bool, env: Mapping[str, str]) -> bool:
    """Whether a stream gets colour under ``--color mode`` (rules in the module docstring)."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    if _set(env, "NO_COLOR"):
        return False
    if _set(env, "FORCE_COLOR") and env.get("FORCE_COLOR") != "0":
        return True
    if env.get("TERM") == "dumb":
        return False
    return isatty
