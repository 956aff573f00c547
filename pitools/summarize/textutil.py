"""Small text helpers shared by the wire protocols."""

from __future__ import annotations


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates, which break JSON encoding (pi-ai ``sanitizeSurrogates``).

    Session text comes from JavaScript strings, which may hold lone surrogates; a correctly
    paired high/low surrogate is joined into the character it encodes.
    """
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")
