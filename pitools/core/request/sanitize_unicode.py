"""pi-ai's ``sanitizeSurrogates`` (``src/utils/sanitize-unicode.ts``, ``dist/utils/sanitize-unicode.js``).

Every adapter runs text through it before it goes into a body: an unpaired UTF-16 surrogate
(possible in a JavaScript string, so in a session file) would make the provider's JSON invalid.
:func:`join_surrogate_pairs` is pitools' own step after it, for the HTTP client that encodes the
body as UTF-8.
"""

from __future__ import annotations


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a UTF-16 surrogate code point (paired or not).

    Runs on every text of a request body: ``isascii()`` settles plain text at once, and strict
    UTF-8 encoding, which fails on surrogates and nothing else, scans the rest several times
    faster than a regular expression."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def sanitize_surrogates(text: str) -> str:
    """pi-ai ``sanitizeSurrogates``: drop unpaired UTF-16 surrogates (pairs are one code point here)."""
    if not has_surrogates(text):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        o = ord(ch)
        if 0xD800 <= o <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(ch + text[i + 1])  # a pair kept as two halves stays a pair
            i += 2
            continue
        if not 0xD800 <= o <= 0xDFFF:
            out.append(ch)
        i += 1
    return "".join(out)


def join_surrogate_pairs(text: str) -> str:
    """``text`` with each paired high/low surrogate joined into the character it encodes, so it
    can be encoded as UTF-8 (run :func:`sanitize_surrogates` first: lone ones become U+FFFD)."""
    if not has_surrogates(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
