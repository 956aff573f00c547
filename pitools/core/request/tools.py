"""Small pi-ai helpers the OpenAI adapters share: transcript tool placement, ``shortHash``, cache keys."""

from __future__ import annotations

from typing import Any

from pitools.core.js.access import get
from pitools.core.request.transcript import current_tools, initial_system_message

PROMPT_CACHE_KEY_MAX = 64


def _imul(a: int, b: int) -> int:
    return ((a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)) & 0xFFFFFFFF


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """pi-ai ``shortHash`` (a 53-bit cyrb-style hash over UTF-16 code units, base 36)."""
    from pitools.core.js.value import _code_units

    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    for ch in _code_units(text):
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


def clamp_prompt_cache_key(key: str | None) -> Any:
    """pi-ai ``clampOpenAIPromptCacheKey``: at most 64 code points."""
    from pitools.core.js.value import UNDEFINED

    if key is None:
        return UNDEFINED
    return key if len(key) <= PROMPT_CACHE_KEY_MAX else key[:PROMPT_CACHE_KEY_MAX]


def _last_non_additive(systems: list[Any]) -> int:
    declared: set[Any] = set()
    last = -1
    for index, message in enumerate(systems):
        removed = get(message, "toolsRemoved")
        if type(removed) is list and removed:
            last = index
        added = get(message, "toolsAdded")
        for tool in added if type(added) is list else []:
            name = get(tool, "name")
            if name in declared:
                last = index
            declared.add(name)
    return last


def resolve_transcript_tools(messages: list[Any], support: str) -> tuple[list[Any], int]:
    """pi-ai ``resolveTranscriptTools``: (tools for the request field, system messages folded into it)."""
    systems = [m for m in messages if get(m, "role") == "system"]
    if support == "none":
        return current_tools(systems), len(systems)
    if support == "changes":
        return [], 0
    folded = max(1 if initial_system_message(messages) else 0, _last_non_additive(systems) + 1)
    return current_tools(systems[:folded]), folded
