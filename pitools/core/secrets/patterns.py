"""The secret formats ``pitools scan`` knows, and the fast prefilter in front of them.

Two stages, because a session is mostly harmless text and the detectors are many:

1. :data:`PREFILTER` — one combined pattern run over each raw line (bytes) with RE2 (a DFA: a few
   hundred MB/s whatever the number of alternatives). It matches every anchor a detector needs
   (token prefixes, ``PRIVATE KEY``, ``eyJ``, ``user:pass@``, ``password=``…) and long runs of
   token characters (for the entropy check and base64 blocks). A line it does not match cannot
   hold a finding and is never parsed. CPython's ``re`` reaches ~10-25 MB/s on the same
   alternation, hence google-re2; without it, ``re`` is used (same results, slower).
2. :data:`PATTERNS` — one precise regular expression per kind, run only on the decoded strings
   of the lines that passed, each behind a cheap substring check of its own.

Formats were checked against the providers' documentation and public scanners (detect-secrets,
gitleaks); detect-secrets itself was measured at ~1 MB/s on a session (its plugins run every
regex on every line), which is why the patterns are written here.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Pattern:
    """One kind of secret: ``regex``'s group ``s`` is the secret (the whole match if it has none)."""

    kind: str
    regex: re.Pattern[str]
    #: Substrings one of which every match contains (a cheap ``in`` test before the regex).
    hints: tuple[str, ...]
    description: str
    #: Extra test on the secret (False drops the match).
    check: Callable[[str], bool] | None = None


def _p(kind: str, pattern: str, hints: tuple[str, ...], description: str, check: Any = None, flags: int = 0) -> Pattern:
    return Pattern(kind, re.compile(pattern, flags), hints, description, check)


# Token characters on either side of a prefixed key: a key must not be the tail of a longer word.
_B = r"(?<![A-Za-z0-9_\-])"
_E = r"(?![A-Za-z0-9_\-])"

_PLACEHOLDER_WORDS = re.compile(
    r"(?i)^(?:x+|\*+|\.+|-+|<[^>]*>|\{[^}]*\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_]+%?|"
    r"(?:your|my|the|some|example|sample|dummy|fake|test|changeme|redacted|placeholder|secret|password|"
    r"passwd|pass|token|api[_-]?key|key|value|none|null|undefined|true|false)[_\-]?\w{0,12})$"
)


#: settings.api_key, this.token, options?.apiKey, --reserve-tokens: code, not a value.
_CODE_VALUE = re.compile(r"[A-Za-z_$][\w$]*\??\.[A-Za-z_$]|-")
#: ANTHROPIC_AUTH_TOKEN = "ANTHROPIC_AUTH_TOKEN": the name of a variable.
_ENV_NAME_VALUE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\Z")
_DIGIT = re.compile(r"[0-9]")
#: Base64 of binary files (PNG, JPEG, GIF, WebP, PDF, zip, gzip): data, not a credential.
_BINARY_BASE64 = re.compile(r"iVBORw0KGgo|/9j/|R0lGOD|UklGR|JVBERi0|UEsDB|H4sI")


_KEYWORD_IN_VALUE = re.compile(r"(?i)token|secret|passw|api_?key")
_WORDISH = re.compile(r"[A-Z]?[a-z]{4,}|[A-Z]{4,}")
_SEQUENCE = re.compile(
    r"(?:ABCDEF|BCDEFG|CDEFGH|DEFGHI|abcdef|bcdefg|cdefgh|defghi|012345|123456|234567|345678|456789)"
)


def _not_placeholder(value: str) -> bool:
    return not _PLACEHOLDER_WORDS.match(value) and not value.startswith("[REDACTED:")


def _assignment_value(value: str) -> bool:
    """A keyword assignment's value looks like a credential, not code or prose."""
    if not _not_placeholder(value):
        return False
    if any(c in value for c in "()[]{}<>`") or value.startswith(("$", "%", "@", "/", "~", "./", "#")):
        return False
    if value.lower() in {"required", "optional", "string", "str", "bool", "int", "env", "os.environ"}:
        return False
    if _CODE_VALUE.match(value) or _ENV_NAME_VALUE.match(value) or any(m in value for m in ("...", "…", "xxx", "XXX")):
        return False
    if not _DIGIT.search(value):  # identifiers and words (clearTimeout, options): code, not credentials
        return False
    # A value naming itself (isOAuthToken:isOAuthToken2, X_TOKEN="x-token"): a name, not a value.
    if _KEYWORD_IN_VALUE.search(value):
        return False
    classes = sum(1 for test in (str.islower, str.isupper, str.isdigit) if any(test(c) for c in value)) + any(
        not c.isalnum() for c in value
    )
    return classes >= 2 and len(set(value)) >= 5


PATTERNS: tuple[Pattern, ...] = (
    # Cloud and code hosting
    _p(
        "aws-access-key-id",
        _B + r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16})" + _E,
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        "AWS access key id",
    ),
    _p(
        "aws-secret-access-key",
        r"(?i:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key|aws_?secret)[\"'\\]*\s*[:=]\s*[\"'\\]*"
        r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        ("ecret", "ECRET"),
        "AWS secret access key (after its variable name)",
    ),
    _p(
        "github-token",
        _B + r"(?P<s>gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{50,251})" + _E,
        ("gh", "github_pat_"),
        "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
    ),
    _p(
        "gitlab-token",
        _B + r"(?P<s>gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas)-[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,})",
        ("gl", "GR1348941"),
        "GitLab token (glpat-, gldt-, runner tokens …)",
    ),
    _p(
        "slack-token",
        _B + r"(?P<s>xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9][A-Za-z0-9\-]{8,})",
        ("xox",),
        "Slack token (xoxb-, xoxp-, xoxa- …)",
    ),
    _p(
        "slack-webhook",
        r"(?P<s>https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,})",
        ("hooks.slack.com",),
        "Slack incoming-webhook URL",
    ),
    _p(
        "stripe-key",
        _B + r"(?P<s>(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,})" + _E,
        ("k_live_", "k_test_"),
        "Stripe secret or restricted key",
    ),
    _p(
        "twilio-api-key",
        _B + r"(?P<s>SK[0-9a-f]{32})" + _E,
        ("SK",),
        "Twilio API key (SK + 32 hex)",
    ),
    _p(
        "sendgrid-key",
        _B + r"(?P<s>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})" + _E,
        ("SG.",),
        "SendGrid API key",
    ),
    _p(
        "npm-token",
        _B + r"(?P<s>npm_[A-Za-z0-9]{36})" + _E,
        ("npm_",),
        "npm access token",
    ),
    _p(
        "pypi-token",
        _B + r"(?P<s>pypi-AgE[A-Za-z0-9_\-]{50,})",
        ("pypi-",),
        "PyPI API token",
    ),
    _p(
        "azure-storage-key",
        r"(?i:AccountKey)=(?P<s>[A-Za-z0-9+/]{86}==)",
        ("ccountKey",),
        "Azure storage account key (in a connection string)",
    ),
    _p(
        "telegram-bot-token",
        r"(?<![0-9])(?P<s>[0-9]{8,10}:AA[0-9A-Za-z_\-]{33})" + _E,
        (":AA",),
        "Telegram bot token",
    ),
    _p(
        "private-key",
        r"(?P<s>-----BEGIN[A-Z0-9 _\-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END[A-Z0-9 _\-]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,\-]*))",
        ("PRIVATE KEY",),
        "PEM private key block",
    ),
    _p(
        "jwt",
        _B + r"(?P<s>eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)" + _E,
        ("eyJ",),
        "JSON Web Token",
    ),
    _p(
        "basic-auth",
        r"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:@/\"'<>\\]{1,100}:(?P<s>[^\s:@/\"'<>\\]{3,200})@[A-Za-z0-9\[]",
        ("://",),
        "password in a URL (scheme://user:password@host)",
        _not_placeholder,
    ),
    # Model providers (Pi's catalogue); the more specific sk- forms come first.
    _p(
        "anthropic-key",
        _B + r"(?P<s>sk-ant-[A-Za-z0-9_\-]{20,})",
        ("sk-ant-",),
        "Anthropic API key or OAuth token (sk-ant-)",
    ),
    _p(
        "openrouter-key",
        _B + r"(?P<s>sk-or-[A-Za-z0-9_\-]{20,})",
        ("sk-or-",),
        "OpenRouter key (sk-or-)",
    ),
    _p(
        "openai-key",
        _B
        + r"(?P<s>sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})"
        + _E,
        ("sk-",),
        "OpenAI key (sk-proj-, sk-svcacct-, sk-admin-, legacy sk-…T3BlbkFJ…)",
    ),
    _p(
        "deepseek-key",
        _B + r"(?P<s>sk-[0-9a-f]{32})" + _E,
        ("sk-",),
        "DeepSeek key (sk- + 32 hex)",
    ),
    _p(
        "sk-api-key",
        _B + r"(?P<s>sk-[A-Za-z0-9]{32,})" + _E,
        ("sk-",),
        "other sk- API key (OpenAI legacy, Moonshot/Kimi and similar)",
    ),
    _p(
        "google-api-key",
        _B + r"(?P<s>AIza[0-9A-Za-z_\-]{35})" + _E,
        ("AIza",),
        "Google API key (AIza…)",
    ),
    _p(
        "google-oauth-token",
        _B + r"(?P<s>ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[0-9A-Za-z_\-]{20,})",
        ("ya29.", "GOCSPX-"),
        "Google OAuth access token or client secret",
    ),
    _p(
        "huggingface-token",
        _B + r"(?P<s>hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,})" + _E,
        ("hf_", "api_org_"),
        "Hugging Face token (hf_)",
    ),
    _p("groq-key", _B + r"(?P<s>gsk_[A-Za-z0-9]{40,})" + _E, ("gsk_",), "Groq key (gsk_)"),
    _p("xai-key", _B + r"(?P<s>xai-[A-Za-z0-9]{40,})" + _E, ("xai-",), "xAI key (xai-)"),
    _p("cerebras-key", _B + r"(?P<s>csk-[A-Za-z0-9]{32,})" + _E, ("csk-",), "Cerebras key (csk-)"),
    _p("fireworks-key", _B + r"(?P<s>fw_[A-Za-z0-9]{20,})" + _E, ("fw_",), "Fireworks key (fw_)"),
    _p("perplexity-key", _B + r"(?P<s>pplx-[A-Za-z0-9]{40,})" + _E, ("pplx-",), "Perplexity key (pplx-)"),
    _p("nvidia-key", _B + r"(?P<s>nvapi-[A-Za-z0-9_\-]{40,})" + _E, ("nvapi-",), "NVIDIA NIM key (nvapi-)"),
    _p("replicate-token", _B + r"(?P<s>r8_[A-Za-z0-9]{30,})" + _E, ("r8_",), "Replicate token (r8_)"),
    _p(
        "together-key",
        _B + r"(?P<s>tgp_v1_[A-Za-z0-9_\-]{30,})" + _E,
        ("tgp_v1_",),
        "Together AI key (tgp_v1_)",
    ),
    _p(
        "aws-bedrock-key",
        _B + r"(?P<s>ABSK[A-Za-z0-9+/]{60,}={0,2})",
        ("ABSK",),
        "Amazon Bedrock API key (ABSK…)",
    ),
    # Generic: a credential-named variable assigned a credential-looking value (.env files, configs).
    _p(
        "secret-assignment",
        r"(?i:\b[A-Za-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api_?key|access_?key|private_?key|"
        r"auth_?key|client_?secret))[\"'\\]*[ \t]*(?::=|=|:)[ \t]*[\"'\\]*"
        r"(?P<s>[^\s\"'\\,;]{8,200})",
        ("ass", "ASS", "wd", "WD", "ecret", "ECRET", "oken", "OKEN", "ey", "EY"),
        "value assigned to a variable named like a password, secret, token or key",
        _assignment_value,
    ),
)

#: Priority when two findings overlap: the lower wins (exact values first, generic last).
GENERIC_KINDS = {"secret-assignment": 2, "high-entropy": 3}

ENTROPY_KIND = "high-entropy"
BASE64_MIN = 40
ENTROPY_MIN_LEN = 32
ENTROPY_MAX_LEN = 200
ENTROPY_BITS = 4.2

#: Runs of token characters: entropy candidates and base64 blocks.
LONG_RUN = re.compile(r"[A-Za-z0-9+/_\-]{32,}={0,2}")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]+={0,2}")
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9\-]{1,40}:[0-9a-f]{8}\]")

# The prefilter: every detector's anchor (see the module doc). The keyword branch also wants a
# value of 8+ plain characters ending at a delimiter (or 200 of them: the detector takes at most
# 200), so code such as `token: string` or `token = getToken()` does not wake it. Each piece is
# written for two texts: a raw JSON line (``raw``: a quote is ``\"``, a backslash ``\\``, a tab
# ``\t``, any character may be ``\uXXXX``) and a decoded string (``str``). Each must accept
# everything the detector's own pattern accepts; the differential fuzz test
# (tests/fuzz/test_fuzz_secrets.py) checks that the prefilter never drops a flagged line.
_ANCHOR_SOURCE = (
    r"AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9]|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas)-"
    r"|GR1348941|xox[abposre]-|hooks\.slack\.com|[rs]k_(?:live|test)_|SK[0-9a-f]{32}|SG\.|npm_|pypi-"
    r"|(?i:accountkey)=|:AA|PRIVATE KEY|eyJ|sk-|AIza|ya29\.|GOCSPX-|hf_|api_org_|gsk_|xai-|csk-|fw_|pplx-"
    r"|nvapi-|r8_|tgp_v1_|ABSK|://[^\s/\"@]{1,100}:[^\s/\"@]{1,200}@"
    r"|(?i:aws_?secret|secret_?access_?key)"
    r"|(?i:pass(?:wd|word)|pwd|secret|token|api_?key|access_?key|private_?key|auth_?key|client_?secret)"
    r"[A-Za-z0-9_\-]*{quote}{ws}(?::=|[:=]){ws}{quote}(?:{value}{{8,}}(?:[\s\"'\\,;]|$)|{value}{{200}})"
)
#: The plain characters of a keyword assignment's value (the detector refuses brackets in it).
_VALUE_CHAR = r"[^\s\"'\\,;()\[\]{}<>`]"
_LONG_SOURCE = r"[A-Za-z0-9+/_\-]{32,}"
#: Key names whose string value is a credential by name (detect.py's key check ends with one).
KEY_WORDS = (
    r"password|passwd|secret|api_?key|access_?key|private_?key|auth_?token|access_?token|refresh_?token"
    r"|bearer_?token|client_?secret"
)
# In a raw line a quote inside a string is escaped (\"), but a line that is not JSON has bare ones,
# so both are taken ("totalTokens": 12 still does not wake the keyword branch: its value is short).
# A JSON key naming a credential with a string value ({"apiKey": "…"}) is its own branch.
_RAW_SOURCE = (
    _ANCHOR_SOURCE.replace("{quote}", r"[\"'\\]*")
    .replace("{ws}", r"(?:[ \t]|\\t)*")
    .replace("{value}", r"(?:" + _VALUE_CHAR + r"|\\u[0-9A-Fa-f]{4})")
    .replace("{{", "{")
    .replace("}}", "}")
    + r"|(?i:"
    + KEY_WORDS
    + r')"[ \t\r]*:[ \t\r]*"'
)
_STR_SOURCE = (
    _ANCHOR_SOURCE.replace("{quote}", r"[\"'\\]*")
    .replace("{ws}", r"[ \t]*")
    .replace("{value}", _VALUE_CHAR)
    .replace("{{", "{")
    .replace("}}", "}")
    + "|"
    + _LONG_SOURCE
    # A wrapped base64 block may have lines shorter than a long run.
    + r"|[A-Za-z0-9+/]{20,}={0,2}\r?\n[A-Za-z0-9+/]"
    # JSON text inside the string: the detector also looks at it decoded.
    + r"|\\u00[2-7][0-9A-Fa-f]|\\/"
)


# Escapes JSON text may use for characters Pi never escapes (see canonical_line).
_ESCAPE_SOURCE = r"\\u00[2-7][0-9A-Fa-f]|\\/"
#: The first line of a wrapped base64 block too short for a long run, and the escaped line end
#: after it (a longer first line is a long run).
_WRAP_SOURCE = r"[A-Za-z0-9+/]{20,31}={0,2}(?:\\r)?\\n[A-Za-z0-9+/]"
# One pass over a raw line: anchors first (leftmost-first alternation: an anchor beats a run
# starting at the same place), then escapes worth decoding, then base64 lines and long runs.
_GATE_SOURCE = _RAW_SOURCE + "|" + _ESCAPE_SOURCE + "|" + _WRAP_SOURCE + "|" + _LONG_SOURCE


def _compile_prefilter() -> tuple[Callable[..., Any], Callable[..., Any], Callable[[str], Any]]:
    try:
        import re2  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - google-re2 is a dependency; kept for odd platforms
        return (
            re.compile(_GATE_SOURCE.encode()).finditer,
            re.compile(_RAW_SOURCE.encode()).search,
            re.compile(_STR_SOURCE).search,
        )
    options = re2.Options()
    options.max_mem = 64 << 20
    options.log_errors = False
    return (
        re2.compile(_GATE_SOURCE.encode(), options).finditer,
        re2.compile(_RAW_SOURCE.encode(), options).search,
        re2.compile(_STR_SOURCE, options).search,
    )


#: ``GATE_BYTES(line)``: matches of anchors, escapes, base64 lines and long runs in a raw line;
#: ``ANCHORS_BYTES(line, pos, endpos)``: anchors only; ``PREFILTER_STR(text)``: anchors or runs in a
#: decoded string.
GATE_BYTES, ANCHORS_BYTES, PREFILTER_STR = _compile_prefilter()
LONG_RUN_BYTES = re.compile(_LONG_SOURCE.encode())
#: A run of token characters or a base64 line at the start of a gate match (not an anchor).
RUN_START_BYTES = re.compile(rb"[A-Za-z0-9+/_\-]+")
#: A base64 block in a raw line: lines joined by escaped line ends.
RAW_BLOCK_BYTES = re.compile(rb"[A-Za-z0-9+/]+={0,2}(?:(?:\\r)?\\n[A-Za-z0-9+/]+={0,2})*")


def interesting_run(run: str) -> bool:
    """A long token run worth a closer look: random-looking, or a base64 block of text."""
    return looks_random(run.rstrip("=")) or (len(run) >= BASE64_MIN and base64_text(run) is not None)


#: Escapes JSON text may use for characters Pi never escapes; a line holding one is canonicalised
#: before the prefilter, so ``gh\u0070_…`` or ``https:\/\/u:p@h`` cannot slip past it.
_ESCAPE = re.compile(rb"(?:\\\\)*\\u00([2-7][0-9a-fA-F])|(?:\\\\)*\\/")


def _unescape(m: re.Match[bytes]) -> bytes:
    hexpart = m.group(1)
    return b"/" if hexpart is None else bytes([int(hexpart, 16)])


def canonical_line(line: bytes) -> bytes:
    """``line`` with ``\\/`` and printable ``\\u00XX`` escapes decoded (only for the prefilter)."""
    if b"\\u00" in line or b"\\/" in line:
        return _ESCAPE.sub(_unescape, line)
    return line


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text``."""
    from collections import Counter

    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in Counter(text).values())


_DIGEST_PREFIX = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)|md5)[-_:]")


def looks_random(token: str) -> bool:
    """A high-entropy token: upper, lower and digits mixed, not hex, not an identifier."""
    if not (ENTROPY_MIN_LEN <= len(token) <= ENTROPY_MAX_LEN):
        return False
    return _looks_random(token)


#: Cached: a string repeating one token thousands of times costs one check, not thousands.
@functools.lru_cache(maxsize=4096)
def _looks_random(token: str) -> bool:
    if _DIGEST_PREFIX.match(token):  # Subresource-integrity digests (package-lock.json): public hashes
        return False
    if _BINARY_BASE64.match(token):
        return False
    # Identifiers, minified or not (normalizeHeaderValue2, _X509CertificateParser): mostly words.
    if sum(len(w) for w in _WORDISH.findall(token)) > len(token) * 0.35:
        return False
    # Alphabets and counting sequences (ABCDEFGH…, 0123456789…) written out in code.
    if _SEQUENCE.search(token):
        return False
    # Upper, lower and digits all present (str methods: C speed, no per-character Python loop).
    if token.lower() == token or token.upper() == token or not _DIGIT.search(token):
        return False
    # snake_case / kebab-case / path-like identifiers: long runs of letters between separators.
    parts = [p for p in re.split(r"[_\-/+.]", token) if p]
    if len(parts) >= 3 and sum(len(p) for p in parts if p.isalpha()) >= len(token) * 0.6:
        return False
    return shannon_entropy(token) >= ENTROPY_BITS


def base64_text(run: str) -> str | None:
    """The text a base64 run decodes to, when it is base64 of printable UTF-8 text."""
    import base64
    import binascii

    core = run.rstrip("=")
    if len(core) < BASE64_MIN or not _BASE64_RUN.fullmatch(run):
        return None
    padded = core + "=" * (-len(core) % 4)
    try:
        data = base64.b64decode(padded, validate=True)
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not text:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return text if printable >= len(text) * 0.95 else None
