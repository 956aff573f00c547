"""Keeping credentials out of error messages.

Provider error bodies sometimes echo the key (OpenAI's "Incorrect API key provided: sk-...").
Every text that reaches an exception goes through :func:`redact`, which removes the known
secrets of the model spec and anything that looks like a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

_KEY_LIKE = re.compile(
    r"""
    \b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}          # OpenAI / Anthropic style (sk-..., sk-ant-...)
    | \bAIza[0-9A-Za-z_\-]{20,}                # Google API keys
    | \b(?:gsk|xai|hf|ghp|gho|github_pat|nvapi|fw)[-_][A-Za-z0-9_\-]{10,}
    | (?i:\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}  # bearer tokens
    | (?i:\b(?:api[_-]?key|access[_-]?token|secret|password)\b["']?\s*[:=]\s*["']?)[^\s"',;}&]{6,}
    """,
    re.VERBOSE,
)

#: Longest excerpt of a provider error message kept in an exception.
EXCERPT_CHARS = 300


def variants(secret: str) -> set[str]:
    """Every way ``secret`` can appear in a message: raw, trimmed, Python ``repr`` of the text and
    of its UTF-8 bytes (``Illegal header value b'sk-...\\n'``), JSON-escaped, URL-encoded."""
    import json
    from urllib.parse import quote, quote_plus

    forms = {secret, secret.strip()}
    for form in list(forms):
        forms.add(repr(form)[1:-1])
        forms.add(repr(form.encode("utf-8", "surrogatepass"))[2:-1])
        forms.add(json.dumps(form)[1:-1])
        forms.add(json.dumps(form, ensure_ascii=False)[1:-1])
        forms.add(quote(form, safe=""))
        forms.add(quote_plus(form, safe=""))
        raw = form.encode("utf-8", "surrogatepass")
        forms.add("".join(f"%{b:02X}" for b in raw))  # every byte escaped
        forms.add("".join(f"%{b:02x}" for b in raw))
    return {f for f in forms if len(f) >= 4}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret (in every representation) and key-looking token replaced by ``***``."""
    forms: set[str] = set()
    for secret in secrets:
        if secret:
            forms |= variants(secret)
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, MASK)
    return _KEY_LIKE.sub(_mask_match, text)


def _mask_match(match: re.Match[str]) -> str:
    found = match.group(0)
    # Keep the "api_key=" / "Bearer " lead-in so the message still says what was hidden.
    lead = re.match(r"(?i)(bearer\s+|[A-Za-z_\-]+[\"']?\s*[:=]\s*[\"']?)", found)
    if lead and not re.match(r"(?:sk|pk|rk)-|AIza", found):
        return lead.group(0) + MASK
    return MASK


def excerpt(text: str, secrets: Iterable[str] = (), limit: int = EXCERPT_CHARS) -> str:
    """A one-line, redacted, length-limited version of ``text``."""
    flat = " ".join(redact(text, secrets).split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat
