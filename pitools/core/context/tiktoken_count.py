"""Optional real token counts with tiktoken, working offline or failing with a clear message."""

from __future__ import annotations

import os
from typing import Any

from pitools.core.errors import PitoolsError

KNOWN = ("o200k_base", "cl100k_base", "p50k_base", "r50k_base")


def _encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is a dependency
        raise PitoolsError("--tokenizer needs the tiktoken package") from None
    try:
        return tiktoken.get_encoding(name)
    except ValueError:
        raise PitoolsError(f"unknown tokenizer {name!r}; choose one of {', '.join(KNOWN)}") from None
    except Exception as exc:  # network failure while downloading the encoding file
        cache = os.environ.get("TIKTOKEN_CACHE_DIR") or "the tiktoken cache"
        raise PitoolsError(
            f"tokenizer {name!r} is not available offline ({type(exc).__name__}); its encoding file must be "
            f"in {cache} (set TIKTOKEN_CACHE_DIR to a folder holding it)"
        ) from None


def count_messages(messages: list[Any], name: str) -> list[int]:
    """Token count of each message's text as the named encoding splits it."""
    from pitools.core.js.value import js_stringify

    enc = _encoding(name)
    out = []
    for m in messages:
        text = js_stringify(m) or ""
        out.append(len(enc.encode(text, disallowed_special=())))
    return out
