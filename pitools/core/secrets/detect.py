"""Finding secrets in one decoded string (:class:`Detector`), and the cheap raw-line gate before it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import orjson

from pitools.core.secrets import patterns as P

#: Exact values shorter than this are refused: they would match ordinary words.
MIN_VALUE_LEN = 6

#: A base64 block: long lines of the standard alphabet, possibly wrapped (``base64`` wraps at 76).
_BASE64_BLOCK = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/]{20,}={0,2}(?:\r?\n[A-Za-z0-9+/]+={0,2})*")

#: Dict keys whose string value is a credential by name (``{"apiKey": "…"}`` in details, configs).
_KEY_NAME = re.compile(
    r"(?i)^[A-Za-z0-9_\-]*(?:password|passwd|secret|api_?key|access_?key|private_?key|auth_?token|access_?token|"
    r"refresh_?token|bearer_?token|client_?secret)$"
)


@dataclass(frozen=True, slots=True)
class Hit:
    """A secret at ``text[start:end]``.

    For a base64 block holding secrets, ``kind`` is ``"base64"``, the span is the block and
    ``inner`` the hits in its decoded text (``width`` is its line length, for re-encoding).
    """

    start: int
    end: int
    kind: str
    secret: str = field(repr=False)
    inner: tuple[Hit, ...] = ()
    width: int = 0

    def leaves(self) -> Iterable[Hit]:
        """The hits that are secrets themselves (inside base64 blocks too)."""
        if self.inner:
            for hit in self.inner:
                yield from hit.leaves()
        else:
            yield self


@dataclass(frozen=True, slots=True)
class ExactValue:
    kind: str
    value: str = field(repr=False)


class Detector:
    """The detectors for one run: the pattern library, the exact values, entropy on or off."""

    def __init__(self, values: Sequence[ExactValue] = (), *, entropy: bool = True, assignments: bool = True) -> None:
        seen: dict[str, ExactValue] = {}
        for v in values:
            if len(v.value) >= MIN_VALUE_LEN and v.value not in seen:
                seen[v.value] = v
        # Longest first, so a value that contains another wins the overlap.
        self.values = tuple(sorted(seen.values(), key=lambda v: -len(v.value)))
        self.entropy = entropy
        self.patterns = tuple(p for p in P.PATTERNS if assignments or p.kind != "secret-assignment")
        raw_forms: set[bytes] = set()
        for v in self.values:
            raw_forms.add(v.value.encode("utf-8", "surrogatepass"))
            raw_forms.add(orjson.dumps(v.value)[1:-1] if utf8_ok(v.value) else v.value.encode("ascii", "replace"))
        self._raw_values = tuple(raw_forms)
        self._str_values = tuple(v.value for v in self.values)
        self._value_kinds = frozenset(v.kind for v in self.values)

    # -- the gates -------------------------------------------------------------------------------

    def line_may_hit(self, line: bytes) -> bool:
        """False only when no string of this raw JSON line can hold a finding."""
        if self._raw_values and any(v in line for v in self._raw_values):
            return True
        for m in P.GATE_BYTES(line):
            found = m.group()
            if found[:1] == b"\\":  # an escape that could hide an anchor: decide on the decoded line
                return self._canonical_may_hit(P.canonical_line(line))
            if len(found) < 32 or not P.LONG_RUN_BYTES.fullmatch(found):
                return True  # an anchor
            # A long run: random-looking, or holding an anchor (a hex key such as SK… is both a run
            # and an anchor; the alternation reports it as whichever comes first).
            if P.interesting_run(found.decode("ascii")) or P.ANCHORS_BYTES(found):
                return True
        return False

    def candidate_lines(self, chunk: bytes) -> list[tuple[int, int]]:
        """``(start, end)`` of the lines of ``chunk`` (whole lines) that may hold a finding.

        The same decision as :meth:`line_may_hit`, taken with one pass of the gate over the
        whole chunk: per-line calls cost more than the scan itself on a big file.
        """
        spans: dict[int, int] = {}
        for v in self._raw_values:
            at = chunk.find(v)
            while at >= 0:
                start = chunk.rfind(b"\n", 0, at) + 1
                end = chunk.find(b"\n", at)
                end = len(chunk) if end < 0 else end + 1
                spans[start] = end
                at = chunk.find(v, end)
        last_end = -1
        for m in P.GATE_BYTES(chunk):
            at = m.start()
            if at < last_end:
                continue
            found = m.group()
            start = chunk.rfind(b"\n", 0, at) + 1
            end = chunk.find(b"\n", at)
            end = len(chunk) if end < 0 else end + 1
            if found[:1] == b"\\":
                keep = self._canonical_may_hit(P.canonical_line(chunk[start:end]))
            elif len(found) < 32 or not P.LONG_RUN_BYTES.fullmatch(found):
                keep = True
            else:
                keep = P.interesting_run(found.decode("ascii")) or bool(P.ANCHORS_BYTES(found))
            if keep:
                spans[start] = end
                last_end = end
            elif found[:1] == b"\\":
                last_end = end  # the decoded line was checked whole
        return sorted(spans.items())

    def _canonical_may_hit(self, canon: bytes) -> bool:
        if P.ANCHORS_BYTES(canon):
            return True
        if self._raw_values and any(v in canon for v in self._raw_values):
            return True
        return any(P.interesting_run(m.group().decode("ascii")) for m in P.LONG_RUN_BYTES.finditer(canon))

    def string_may_hit(self, text: str) -> bool:
        if len(text) < MIN_VALUE_LEN:
            return False
        if P.PREFILTER_STR(text):
            return True
        return any(v in text for v in self._str_values)

    # -- detection -------------------------------------------------------------------------------

    def hits(self, text: str, *, entropy: bool = True, depth: int = 0) -> list[Hit]:
        """The secrets in ``text``, non-overlapping, in order (most specific kind wins an overlap)."""
        if not self.string_may_hit(text):
            return []
        found: list[tuple[int, Hit]] = []
        for v in self.values:
            start = text.find(v.value)
            while start >= 0:
                found.append((0, Hit(start, start + len(v.value), v.kind, v.value)))
                start = text.find(v.value, start + len(v.value))
        for pattern in self.patterns:
            if not any(h in text for h in pattern.hints):
                continue
            prio = P.GENERIC_KINDS.get(pattern.kind, 1)
            for m in pattern.regex.finditer(text):
                s, e = m.span("s")
                secret = m.group("s")
                if pattern.check is not None and not pattern.check(secret):
                    continue
                found.append((prio, Hit(s, e, pattern.kind, secret)))
        covered: list[tuple[int, int]] = []
        if depth < 2 and len(text) >= P.BASE64_MIN:
            for m in _BASE64_BLOCK.finditer(text):
                found_block = _decode_block(m.group(0))
                if found_block is None:
                    # Wrapped or long base64 of binary data (an image, an archive) is data, not a
                    # credential: its lines are not entropy-checked.
                    if "\n" in m.group(0).rstrip("\r\n") or m.end() - m.start() > P.ENTROPY_MAX_LEN:
                        covered.append(m.span())
                    continue
                block, decoded = found_block
                start, end = m.start(), m.start() + len(block)
                covered.append((start, end))
                inner = tuple(self.hits(decoded, entropy=False, depth=depth + 1))
                if inner:
                    first = block.split("\n", 1)[0].rstrip("\r")
                    width = len(first) if "\n" in block else 0
                    found.append((1, Hit(start, end, "base64", block, inner, width)))
        if entropy and self.entropy:
            for m in P.LONG_RUN.finditer(text):
                s, e = m.span()
                if any(cs <= s and e <= ce for cs, ce in covered):
                    continue
                token = m.group(0).rstrip("=")
                if P.looks_random(token):
                    found.append((3, Hit(s, s + len(token), P.ENTROPY_KIND, token)))
        if depth == 0 and ("\\u00" in text or "\\/" in text):
            # JSON text inside the string (a tool printed a JSON file, PHP escapes slashes): look at
            # it decoded as well, and map what is found back onto the escaped characters.
            canonical = _canonical_text(text)
            if canonical is not None:
                decoded, index = canonical
                for hit in self.hits(decoded, entropy=entropy, depth=1):
                    mapped = Hit(index[hit.start], index[hit.end], hit.kind, hit.secret, hit.inner, hit.width)
                    prio = 0 if hit.kind in self._value_kinds else P.GENERIC_KINDS.get(hit.kind, 1)
                    found.append((prio, mapped))
        if not found:
            return []
        taken: list[Hit] = []
        if "[REDACTED:" in text:
            taken = [Hit(m.start(), m.end(), "", "") for m in P.PLACEHOLDER.finditer(text)]
        blockers = len(taken)
        found.sort(key=lambda item: (item[0], item[1].start, item[1].start - item[1].end))
        for _, hit in found:
            if all(hit.end <= t.start or hit.start >= t.end for t in taken):
                taken.append(hit)
        result = taken[blockers:]
        result.sort(key=lambda h: h.start)
        return result

    def key_value_hit(self, key: str, value: str) -> Hit | None:
        """``{"apiKey": "…"}``: the whole value, when the key names a credential."""
        if _KEY_NAME.match(key) and 8 <= len(value) <= 500 and P._assignment_value(value):
            return Hit(0, len(value), "secret-assignment", value)
        return None


def utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _decode_block(block: str) -> tuple[str, str] | None:
    """The longest leading run of lines of ``block`` that is base64 of text, and that text.

    A wrapped block may be followed by a line of ordinary words that the block pattern also
    took; lines are dropped from the end until the rest decodes.
    """
    lines = block.split("\n")
    while lines:
        candidate = "\n".join(lines)
        decoded = P.base64_text(candidate.replace("\r", "").replace("\n", ""))
        if decoded is not None:
            return candidate.rstrip("\r"), decoded
        lines.pop()
    return None


_TEXT_ESCAPE = re.compile(r"\\u00([2-7][0-9a-fA-F])|\\/")


def _canonical_text(text: str) -> tuple[str, list[int]] | None:
    """``text`` with ``\\/`` and printable ``\\u00XX`` decoded, and for each of its characters
    (plus the end) the position it came from in ``text``."""
    pieces: list[str] = []
    index: list[int] = []
    pos = 0
    for m in _TEXT_ESCAPE.finditer(text):
        pieces.append(text[pos : m.start()])
        index.extend(range(pos, m.start()))
        pieces.append("/" if m.group(1) is None else chr(int(m.group(1), 16)))
        index.append(m.start())
        pos = m.end()
    if not index:
        return None
    pieces.append(text[pos:])
    index.extend(range(pos, len(text) + 1))
    return "".join(pieces), index
