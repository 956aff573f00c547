"""Generated lines holding secrets in the shapes that once slipped past the prefilter (issue 27).

:func:`secret_line` returns one raw session line (bytes) built from a random source: a secret
shape (a keyword assignment with a long or path-prefixed name, a JSON key naming a credential,
a base64 block of text right after an escape or wrapped at any width, random tokens alone or
several on consecutive lines, provider tokens, URL passwords, exact values with non-ASCII
characters) wrapped in hostile context (escaped newlines and tabs, ``\\u00XX`` escapes, paths,
quotes, backslashes) and encoded the ways JSON allows (raw UTF-8, ``\\uXXXX`` for non-ASCII,
``\\/``, ASCII letters as ``\\u00XX``), or a line that is not JSON at all.

:func:`oracle_findings` is what the detectors say about a line with every prefilter bypassed.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import orjson

from pitools.core.secrets.detect import Detector, ExactValue

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
KEYWORDS = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "accessKey",
    "private_key",
    "auth_key",
    "client_secret",
    "auth_token",
    "refresh_token",
    "bearer_token",
    "aws_secret_access_key",
]
PREFIXES = [
    "",
    "\n",
    "\t",
    "\r\n",
    "\\",
    '"',
    "'",
    "é",
    "ü ",
    "\u2028",
    " ",
    "x=",
    "/usr/local/lib/python3/site-packages/",
    "TF_VAR_database_master_",
    "export ",
    "abc_",
    "--",
    "a" * 40,
    "\x00",
    "[REDACTED:x:0123abcd] ",
]
VALUES_NON_ASCII = ["Grüße-Pa55wört", "пароль-Секрет-42", "日本語パスワード99", "mañana-Tok3n-ß"]
PROVIDER = ["ghp_", "github_pat_", "glpat-", "xoxb-", "sk_live_", "npm_", "AKIA", "sk-ant-", "sk-proj-", "hf_", "AIza"]


def _token(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    while True:
        t = "".join(rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in t) and any(c.islower() for c in t) and any(c.isupper() for c in t):
            return t


def _credential(rng: random.Random) -> str:
    n = rng.choice([8, 9, 12, 16, 24, 40, 199, 200, 201, 230])
    value = _token(rng, n, ALNUM + "!#%&*+./:=?@^_~-")
    if rng.random() < 0.15:
        at = rng.randrange(len(value))
        value = value[:at] + rng.choice("é()[]{}<>`ü") + value[at:]
    return value


def _assignment(rng: random.Random) -> str:
    name = rng.choice(["", "DB_", "TF_VAR_database_master_", "my.", "x-", rng.choice(ALNUM) * rng.randint(1, 40)])
    keyword = rng.choice(KEYWORDS)
    keyword = rng.choice([keyword, keyword.upper(), keyword.title()])
    quote = "".join(rng.choice(["", '"', "'", "\\"]) for _ in range(rng.randint(0, 3)))
    ws = rng.choice(["", " ", "\t", "  ", " \t"])
    op = rng.choice(["=", ":", ":=", " = ", ": "])
    value = _credential(rng)
    end = rng.choice(["", "\n", " ", '"', ";", ",", "'", "\\n", "(x)"])
    return f"{name}{keyword}{quote}{ws}{op}{ws}{quote}{value}{end}"


def _base64_text(rng: random.Random) -> str:
    secret = rng.choice(
        [
            f"password={_token(rng, 14)}",
            f"ghp_{_token(rng, 36)}",
            f"token: {_token(rng, 20)}",
            f"AKIA{''.join(rng.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567') for _ in range(16))}",
        ]
    )
    text = (
        rng.choice(["", "config:\n", "some words before it " * rng.randint(0, 4)])
        + secret
        + rng.choice(["", "\n", " end"])
    )
    block = base64.b64encode(text.encode()).decode()
    if rng.random() < 0.3:
        block = block.rstrip("=")
    if rng.random() < 0.6:
        width = rng.choice([20, 21, 22, 23, 28, 33, 40, 60, 64, 76])
        nl = rng.choice(["\n", "\r\n"])
        block = nl.join(block[i : i + width] for i in range(0, len(block), width))
    return block


def _tokens_on_lines(rng: random.Random) -> str:
    n = rng.randint(1, 5)
    length = rng.choice([32, 40, 44, 60, 76])
    return "\n".join(_token(rng, length) for _ in range(n))


def _shape(rng: random.Random, values: list[str]) -> tuple[str, str | None]:
    """``(text, json_key)``: a string holding a secret, or a key naming a credential (then the
    text is the key's value)."""
    kind = rng.randrange(8)
    if kind == 0:
        return _assignment(rng), None
    if kind == 1:
        key = rng.choice(["", "db", "x_", "my-", "AWS"]) + rng.choice(KEYWORDS)
        return _credential(rng), key
    if kind == 2:
        return _base64_text(rng), None
    if kind == 3:
        return _tokens_on_lines(rng), None
    if kind == 4:
        p = rng.choice(PROVIDER)
        return p + _token(rng, rng.choice([20, 36, 40])), None
    if kind == 5:
        return f"https://user:{_credential(rng)[:30]}@example.com/x", None
    if kind == 6:
        return rng.choice(values), None
    return _assignment(rng) + rng.choice(PREFIXES) + _base64_text(rng), None


def _encode(rng: random.Random, value: Any) -> bytes:
    mode = rng.randrange(5)
    if mode == 0:
        return orjson.dumps(value)
    if mode == 1:
        return json.dumps(value, separators=(",", ":")).encode()  # non-ASCII as \\uXXXX
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=rng.random() < 0.5)
    if mode == 2:
        return raw.replace("/", "\\/").encode("utf-8", "surrogatepass")
    # Some ASCII letters inside strings as \\u00XX (a JSON writer may escape anything).
    out: list[str] = []
    in_string = False
    skip = 0  # characters still belonging to an escape
    for c in raw:
        if skip:
            skip = 4 if (skip == -1 and c == "u") else max(skip - 1, 0)
            out.append(c)
            continue
        if in_string and c.isalnum() and c.isascii() and rng.random() < 0.08:
            out.append(f"\\u{ord(c):04{rng.choice('xX')}}")
            continue
        out.append(c)
        if c == "\\":
            skip = -1
        elif c == '"':
            in_string = not in_string
    return "".join(out).encode("utf-8", "surrogatepass")


def secret_line(rng: random.Random, values: list[str]) -> bytes:
    """One raw line (without its newline) with a secret in one of the shapes above."""
    text, key = _shape(rng, values)
    prefix = rng.choice(PREFIXES) if rng.random() < 0.7 else ""
    suffix = rng.choice(["", "\n", " and more", "\\", "\t", "é"])
    if key is None:
        text = prefix + text + suffix
    if rng.random() < 0.1:
        return (text if key is None else f"{key}={text}").replace("\n", " ").encode("utf-8", "surrogatepass")
    where = rng.randrange(4)
    if key is not None:
        value: Any = {"type": "custom", "id": "e1", "data": {key: text, "other": 1}}
    elif where == 0:
        value = {
            "type": "message",
            "id": "e1",
            "message": {"role": "toolResult", "content": [{"type": "text", "text": text}]},
        }
    elif where == 1:
        value = {
            "type": "message",
            "id": "e1",
            "message": {"role": "assistant", "content": [{"type": "toolCall", "arguments": {"command": text}}]},
        }
    elif where == 2:
        value = {"type": "session_info", "id": "e1", "name": text}
    else:
        value = {"type": "custom", "id": "e1", "data": [text, {"k": text}]}
    return _encode(rng, value)


class _Oracle(Detector):
    """The detectors with the string prefilter bypassed: every string gets every detector."""

    def string_may_hit(self, text: str) -> bool:
        return True


def detectors(values: list[str]) -> tuple[Detector, Detector]:
    """``(the real detector, the oracle)`` over the same exact values."""
    exact = [ExactValue("given-value", v) for v in values]
    return Detector(exact), _Oracle(exact)


def oracle_findings(oracle: Detector, line: bytes) -> list[tuple[str, str]]:
    from pitools.core.secrets.scan import _line_findings

    return sorted((f.field, f.kind) for f in _line_findings(line, 1, oracle, "f"))
