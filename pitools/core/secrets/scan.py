"""Walk every string of every line of a session and report the secrets in them.

Every string counts: message text, thinking, tool-call arguments, tool results, summaries,
custom entries' ``details``, labels, session names, the header, object keys, and lines that are
not JSON at all (Pi skips them, but they are still in the file being shared). Strings are
scanned decoded, so a secret written with JSON escapes (``\\"``, ``\\/``, ``\\u0041``) is found.
Image ``data`` is never scanned (base64 pixels). Provider signatures and ids are pattern-checked
but exempt from the entropy check (they are random by design).

A :class:`Finding` names where the secret is and masks it: its kind, its first characters and
its length. The secret itself travels only inside :class:`SecretText`, whose ``repr`` and
``str`` are masked, so it cannot reach a message or a traceback by accident.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import orjson

from pitools.core.js.json.record import record_json
from pitools.core.js.types import JsonObject, JsValue
from pitools.core.secrets.detect import Detector, Hit

#: Keys whose strings are random by design: pattern-checked, never entropy-checked.
NO_ENTROPY_KEYS = frozenset(
    {
        "id",
        "parentId",
        "toolCallId",
        "responseId",
        "firstKeptEntryId",
        "fromId",
        "targetId",
        "timestamp",
        "thinkingSignature",
        "textSignature",
        "thoughtSignature",
        "signature",
        "encrypted_content",
        "parentSession",
        "cwd",
        "path",
    }
)

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]{0,63}\Z")


class SecretText:
    """A secret value that masks itself in ``repr``/``str`` (tracebacks, f-strings, logs)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"<secret {len(self.value)} chars>"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretText) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


def preview(kind: str, secret: str) -> str:
    """``kind`` plus the first characters and the length: ``github-token ghp_… (40 chars)``.

    Four characters are shown for secrets of 16 characters or more, fewer for shorter ones (a
    quarter of the length), so a short password is never half printed.
    """
    shown = 4 if len(secret) >= 16 else len(secret) // 4
    head = "".join(c if c.isprintable() and c.isascii() else "?" for c in secret[:shown])
    return f"{kind} {head}… ({len(secret)} chars)"


_PREVIEW_DETECTOR: list[Detector] = []


def mask_secrets(text: str, detector: Detector | None = None) -> str:
    """``text`` with each secret ``scan`` would report replaced by ``[`` :func:`preview` ``]``
    (kind, first characters, length): for the previews listings show (``ls``, ``usage --by
    session``, the serve list), never for data written back. A base64 block holding secrets is
    masked whole. The default detector is ``scan``'s default (patterns and entropy)."""
    if detector is None:
        if not _PREVIEW_DETECTOR:
            _PREVIEW_DETECTOR.append(Detector())
        detector = _PREVIEW_DETECTOR[0]
    hits = detector.hits(text)
    if not hits:
        return text
    out: list[str] = []
    pos = 0
    for hit in hits:
        out.append(text[pos : hit.start])
        out.append(f"[{preview(hit.kind, hit.secret)}]")
        pos = hit.end
    out.append(text[pos:])
    return "".join(out)


_FINGERPRINT_CACHE: dict[tuple[str, str], str] = {}


def fingerprint(kind: str, secret: str) -> str:
    """A stable id for a (kind, secret) pair that does not reveal the secret (for baselines).

    PBKDF2 (5,000 rounds) rather than one SHA-256, so trying a dictionary of passwords against a
    committed baseline costs thousands of times more, while a scan with thousands of distinct
    findings stays in seconds. Keep baselines of sessions with short passwords private anyway.
    """
    key = (kind, secret)
    cached = _FINGERPRINT_CACHE.get(key)
    if cached is None:
        digest = hashlib.pbkdf2_hmac(
            "sha256", secret.encode("utf-8", "surrogatepass"), b"pitools-secret:" + kind.encode(), 5000
        )
        cached = _FINGERPRINT_CACHE[key] = digest.hex()[:32]
    return cached


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: where (file, line, entry id, field path), what kind, and a masked preview."""

    file: str
    line: int
    entry_id: str | None
    field: str
    kind: str
    preview: str
    secret: SecretText = dc_field(repr=False, compare=False)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.kind, self.secret.value)

    def to_json(self) -> JsonObject:
        return record_json(self, ("file", "line", "entry_id", "field", "kind", "preview", "fingerprint"))


def field_path(parts: Iterable[str | int]) -> str:
    """``["message", "content", 2, "arguments", "command"]`` -> ``message.content[2].arguments.command``."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part == MASKED_KEY or _IDENT.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append("[" + orjson.dumps(part[:64]).decode() + "]")
    return "".join(out) or "(value)"


#: A placeholder part for an object key that itself holds a secret (never printed as is).
MASKED_KEY = "<key>"


@dataclass(slots=True)
class StringHit:
    """Hits in one string of a line: where the string is, and whether it is an object key."""

    parts: tuple[str | int, ...]
    hits: list[Hit]
    is_key: bool = False


def line_hits(value: JsValue, detector: Detector) -> list[StringHit]:
    """Every string of one parsed line that holds secrets."""
    out: list[StringHit] = []
    _walk(value, detector, [], out, True)
    return out


def _walk(value: Any, det: Detector, path: list[str | int], out: list[StringHit], entropy: bool) -> None:
    t = type(value)
    if t is str:
        hits = det.hits(value, entropy=entropy)
        if hits:
            out.append(StringHit(tuple(path), hits))
        return
    if t is dict:
        is_image = value.get("type") == "image"
        for key, item in value.items():
            if is_image and key == "data":
                continue
            key_hits = det.hits(key, entropy=False) if len(key) >= 6 else []
            path.append(MASKED_KEY if key_hits else key)
            if key_hits:
                out.append(StringHit(tuple(path), key_hits, is_key=True))
            if type(item) is str:
                hits = det.hits(item, entropy=entropy and key not in NO_ENTROPY_KEYS)
                if not hits:
                    kv = det.key_value_hit(key, item)
                    if kv is not None:
                        hits = [kv]
                if hits:
                    out.append(StringHit(tuple(path), hits))
            elif type(item) in (dict, list):
                _walk(item, det, path, out, entropy)
            path.pop()
        return
    if t is list:
        for i, item in enumerate(value):
            if type(item) in (str, dict, list):
                path.append(i)
                _walk(item, det, path, out, entropy)
                path.pop()


def entry_id_of(value: JsValue, hits: list[StringHit]) -> str | None:
    """The entry's id, unless the id itself holds a secret."""
    if type(value) is not dict or type(value.get("id")) is not str:
        return None
    if any(h.parts == ("id",) for h in hits):
        return "<redacted id>"
    return str(value["id"])


def findings_for_line(
    file: str, lineno: int, value: JsValue, hits: list[StringHit], *, raw: bool = False
) -> list[Finding]:
    eid = None if raw else entry_id_of(value, hits)
    out: list[Finding] = []
    for sh in hits:
        where = "(line)" if raw else field_path(sh.parts)
        if sh.is_key:
            where += " (key)"
        for hit in sh.hits:
            for leaf in hit.leaves():
                kind = leaf.kind
                if hit.inner:
                    kind_where = where + " (base64)"
                else:
                    kind_where = where
                out.append(
                    Finding(file, lineno, eid, kind_where, kind, preview(kind, leaf.secret), SecretText(leaf.secret))
                )
    return out


def parse_line(line: bytes) -> tuple[Any, bool]:
    """``(value, True)`` for a JSON line, ``(decoded text, False)`` for anything else."""
    from pitools.core.js.json.parse import parse_json_line

    body = line.rstrip(b"\r\n")
    try:
        value, _ = parse_json_line(body)
        return value, True
    except ValueError:
        return body.decode("utf-8", "replace"), False


def scan_lines(lines: Iterable[bytes], detector: Detector, *, file: str) -> Iterator[Finding]:
    """Findings of every line (1-based line numbers), in file order.

    Only lines the raw prefilter lets through are parsed; see :mod:`pitools.core.secrets.patterns`.
    """
    may_hit = detector.line_may_hit
    for lineno, line in enumerate(lines, 1):
        if may_hit(line):
            yield from _line_findings(line, lineno, detector, file)


def scan_chunks(chunks: Iterable[bytes], detector: Detector, *, file: str) -> Iterator[Finding]:
    """:func:`scan_lines` over a file read in big chunks, each ending at a line end (but the last).

    The gate runs once over each chunk; only the lines it points at are parsed.
    """
    lineno = 1
    for chunk in chunks:
        pos = 0
        for start, end in detector.candidate_lines(chunk):
            lineno += chunk.count(b"\n", pos, start)
            pos = start
            yield from _line_findings(chunk[start:end], lineno, detector, file)
        lineno += chunk.count(b"\n", pos)


def _line_findings(line: bytes, lineno: int, detector: Detector, file: str) -> Iterator[Finding]:
    value, is_json = parse_line(line)
    if not is_json:
        hits = detector.hits(value)
        if hits:
            yield from findings_for_line(file, lineno, None, [StringHit((), hits)], raw=True)
        return
    string_hits = line_hits(value, detector)
    if string_hits:
        yield from findings_for_line(file, lineno, value, string_hits)
