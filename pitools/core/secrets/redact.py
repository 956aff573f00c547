"""Planning a redaction: the new bytes of every line, computed without writing anything.

* Each secret becomes ``[REDACTED:<kind>:<8 hex>]``, the hex being an HMAC-SHA256 of the
  secret under a key (random per run unless given), so one secret gets one placeholder across
  the file and a reader can still follow it, but nobody can test a guess without the key.
* Only lines that change are re-serialized, with ``JSON.stringify`` semantics
  (:func:`pitools.core.js.json.encode.to_json_bytes`); every other line is passed through as the
  same bytes. Line endings are kept.
* Secrets in ids and parentIds get the same placeholder everywhere, so the tree keeps its
  shape; nothing is added, removed or reordered.
* A secret inside a base64 block of text is replaced in the decoded text and the block is
  encoded again (same line width), so the rest of the block stays readable.
* Lines that are not JSON (Pi skips them) are redacted as plain text.
* Options: ``paths`` (home folder -> ``~``, the user name -> ``user``; not in structural fields
  such as ``type``, ``customType``, ids, provider and model names), ``strip_images``
  (image blocks become a short text block), ``strip_thinking`` (thinking blocks, and with them
  their provider signatures, are removed).
"""

from __future__ import annotations

import base64
import hmac
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from pitools.core.secrets import scan as S
from pitools.core.secrets.detect import Detector, Hit, utf8_ok
from pitools.errors import PitoolsError

#: Fields that name things Pi or an extension relies on (types, ids, providers, tools): secrets in
#: them are still redacted, but ``--paths`` leaves them alone.
_STRUCTURAL_KEYS = frozenset(
    {
        "type",
        "customType",
        "role",
        "id",
        "parentId",
        "provider",
        "model",
        "modelId",
        "api",
        "toolCallId",
        "toolName",
        "stopReason",
        "mimeType",
        "timestamp",
        "firstKeptEntryId",
        "fromId",
        "targetId",
    }
)


@dataclass(frozen=True, slots=True)
class RedactOptions:
    key: bytes = field(repr=False)
    paths: bool = False
    home: str | None = None
    user: str | None = None
    strip_images: bool = False
    strip_thinking: bool = False


@dataclass(slots=True)
class RedactStats:
    findings: list[S.Finding] = field(default_factory=list)
    changed_lines: int = 0
    lines: int = 0
    images_removed: int = 0
    thinking_removed: int = 0
    paths_replaced: int = 0


class Redactor:
    """Rewrites lines; collects what it replaced in :attr:`stats`."""

    def __init__(self, detector: Detector, options: RedactOptions, *, file: str) -> None:
        self.detector = detector
        self.options = options
        self.file = file
        self.stats = RedactStats()
        self._placeholders: dict[str, str] = {}
        self._path_re: re.Pattern[str] | None = None
        self._path_triggers: tuple[bytes, ...] = ()
        if options.paths:
            self._path_re, self._path_triggers = _path_pattern(options.home, options.user)

    def placeholder(self, kind: str, secret: str) -> str:
        digest = self._placeholders.get(secret)
        if digest is None:
            mac = hmac.new(self.options.key, secret.encode("utf-8", "surrogatepass"), "sha256")
            digest = self._placeholders[secret] = mac.hexdigest()[:8]
        return f"[REDACTED:{kind}:{digest}]"

    # -- strings -------------------------------------------------------------------------------

    def _apply_hits(self, text: str, hits: list[Hit]) -> str:
        out: list[str] = []
        pos = 0
        for hit in hits:
            out.append(text[pos : hit.start])
            if hit.inner:
                out.append(self._reencode(hit))
            else:
                out.append(self.placeholder(hit.kind, hit.secret))
            pos = hit.end
        out.append(text[pos:])
        return "".join(out)

    def _reencode(self, hit: Hit) -> str:
        compact = hit.secret.replace("\r", "").replace("\n", "")
        core = compact.rstrip("=")
        decoded = base64.b64decode(core + "=" * (-len(core) % 4)).decode("utf-8")
        clean = self._apply_hits(decoded, list(hit.inner))
        encoded = base64.b64encode(clean.encode("utf-8")).decode("ascii")
        if hit.width:
            nl = "\r\n" if "\r\n" in hit.secret else "\n"
            encoded = nl.join(encoded[i : i + hit.width] for i in range(0, len(encoded), hit.width))
        return encoded

    def redact_text(self, text: str, *, entropy: bool = True) -> str:
        """``text`` with its secrets replaced (repeated until nothing is left, at most 5 times)."""
        for _ in range(5):
            hits = self.detector.hits(text, entropy=entropy)
            if not hits:
                return text
            text = self._apply_hits(text, hits)
        raise PitoolsError("a string still holds a secret after five redaction passes (a bug); nothing was written")

    def _paths(self, text: str) -> str:
        if self._path_re is None:
            return text
        new, n = self._path_re.subn(self._path_sub, text)
        self.stats.paths_replaced += n
        return new

    def _path_sub(self, m: re.Match[str]) -> str:
        return "~" if m.group("home") is not None else "user"

    # -- values ----------------------------------------------------------------------------------

    def _value(self, value: Any, entropy: bool) -> Any:
        t = type(value)
        if t is str:
            return self._paths(self.redact_text(value, entropy=entropy))
        if t is list:
            items: list[Any] = []
            for item in value:
                if type(item) is dict:
                    kind = item.get("type")
                    if kind == "image" and self.options.strip_images:
                        self.stats.images_removed += 1
                        mime = item.get("mimeType")
                        label = (
                            f"[image removed: {mime}]" if type(mime) is str and len(mime) < 100 else "[image removed]"
                        )
                        items.append({"type": "text", "text": self._value(label, entropy)})
                        continue
                    if kind == "thinking" and self.options.strip_thinking:
                        self.stats.thinking_removed += 1
                        continue
                items.append(self._value(item, entropy))
            return items
        if t is dict:
            is_image = value.get("type") == "image"
            out: dict[str, Any] = {}
            for key, item in value.items():
                new_key = self._paths(self.redact_text(key, entropy=False)) if len(key) >= 6 else key
                if is_image and key == "data":
                    out[new_key] = item
                elif type(item) is str:
                    allowed = entropy and key not in S.NO_ENTROPY_KEYS
                    new = self.redact_text(item, entropy=allowed)
                    if new is item and self.detector.key_value_hit(key, item) is not None:
                        new = self.placeholder("secret-assignment", item)
                    out[new_key] = new if key in _STRUCTURAL_KEYS else self._paths(new)
                else:
                    out[new_key] = self._value(item, entropy)
            return out
        return value

    # -- lines -----------------------------------------------------------------------------------

    def _needs_transform(self, line: bytes) -> bool:
        o = self.options
        if o.strip_images and b'"image"' in line:
            return True
        if o.strip_thinking and b'"thinking"' in line:
            return True
        return any(t in line for t in self._path_triggers)

    def redact_line(self, line: bytes, lineno: int) -> bytes:
        """The line's new bytes (the same object when nothing changes)."""
        self.stats.lines += 1
        suspicious = self.detector.line_may_hit(line)
        if not suspicious and not self._needs_transform(line):
            return line
        body = line.rstrip(b"\r\n")
        ending = line[len(body) :]
        value, is_json = S.parse_line(line)
        if suspicious:
            if is_json:
                hits = S.line_hits(value, self.detector)
                self.stats.findings.extend(S.findings_for_line(self.file, lineno, value, hits))
            else:
                text_hits = self.detector.hits(value)
                if text_hits:
                    found = [S.StringHit((), text_hits)]
                    self.stats.findings.extend(S.findings_for_line(self.file, lineno, None, found, raw=True))
        if not is_json:
            new_text = self._paths(self._redact_raw(value))
            if new_text == value:
                return line
            self.stats.changed_lines += 1
            out = new_text.encode("utf-8", "surrogatepass") + ending
            self._verify(out)
            return out
        new_value = self._value(value, True)
        if new_value == value:
            return line
        from pitools.core.js.json.encode import to_json_bytes

        self.stats.changed_lines += 1
        out = to_json_bytes(new_value) + ending
        self._verify(out)
        return out

    def _verify(self, line: bytes) -> None:
        """A rewritten line must scan clean; refuse to write anything otherwise."""
        if self.detector.line_may_hit(line):
            value, is_json = S.parse_line(line)
            left = S.line_hits(value, self.detector) if is_json else self.detector.hits(value)
            if left:
                raise PitoolsError("a rewritten line still holds a secret (a bug); nothing was written", path=self.file)

    def _redact_raw(self, text: str) -> str:
        text = self.redact_text(text)
        # The JSON-escaped forms of exact values (a broken line keeps its escapes as written).
        for v in self.detector.values:
            escaped = orjson.dumps(v.value)[1:-1].decode("utf-8") if utf8_ok(v.value) else v.value
            if escaped != v.value and escaped in text:
                text = text.replace(escaped, self.placeholder(v.kind, v.value))
        return text

    def redact_lines(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        for lineno, line in enumerate(lines, 1):
            yield self.redact_line(line, lineno)


def _path_pattern(home: str | None, user: str | None) -> tuple[re.Pattern[str] | None, tuple[bytes, ...]]:
    parts: list[str] = []
    triggers: list[bytes] = []
    if home and len(home.rstrip("/\\")) > 1:
        h = home.rstrip("/\\")
        parts.append(r"(?P<home>" + re.escape(h) + r")(?=[/\\]|$|[^A-Za-z0-9_.\-])")
        triggers.append(h.encode("utf-8"))
        triggers.append(orjson.dumps(h)[1:-1])
    if user and len(user) >= 3:
        parts.append(r"(?<![A-Za-z0-9_.\-])(?P<user>" + re.escape(user) + r")(?![A-Za-z0-9_\-])")
        triggers.append(user.encode("utf-8"))
    if not parts:
        return None, ()
    return re.compile("|".join(parts)), tuple(triggers)
