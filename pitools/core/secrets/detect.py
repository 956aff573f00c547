"""Finding secrets in one decoded string (:class:`Detector`), and the cheap raw-line gate before it."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import orjson

from pitools.core.secrets import patterns as P

#: Exact values shorter than this are refused: they would match ordinary words.
MIN_VALUE_LEN = 6

#: A base64 block: long lines of the standard alphabet, possibly wrapped (``base64`` wraps at 76).
_SURROGATE = re.compile("[\ud800-\udfff]")
_BASE64_BLOCK = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/]{20,}={0,2}(?:\r?\n[A-Za-z0-9+/]+={0,2})*")

#: Dict keys whose string value is a credential by name (``{"apiKey": "…"}`` in details, configs).
_KEY_NAME = re.compile(r"(?i)^[A-Za-z0-9_\-]*(?:" + P.KEY_WORDS + r")$")


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
            raw_forms.update(_raw_needles(v.value))
        self._raw_values = tuple(raw_forms)
        self._str_values = tuple(v.value for v in self.values)
        self._value_kinds = frozenset(v.kind for v in self.values)

    # -- the gates -------------------------------------------------------------------------------

    def line_may_hit(self, line: bytes) -> bool:
        """False only when no string of this raw JSON line (or this text line) can hold a finding."""
        return bool(self.candidate_lines(line))

    def candidate_lines(self, chunk: bytes) -> list[tuple[int, int]]:
        """``(start, end)`` of the lines of ``chunk`` (whole lines) that may hold a finding.

        One pass of the gate over the whole chunk (per-line calls cost more than the scan itself
        on a big file). A line is kept when it holds an exact value (in any JSON spelling), an
        anchor, or a run of token characters that the detectors could flag: random-looking, or
        the start of a base64 block of text (one line, or wrapped with escaped line ends) — each
        tried where the decoded string has it, one escape (``\\n``, ``\\u00e9``) further on.
        A run that is neither does not hide an anchor starting inside it: the rest of the line
        is searched for anchors once.
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
        last_end = -1  # the end of the last line decided (kept, or checked whole)
        clear_from = -1  # no anchor from here to the end of its line
        for m in P.GATE_BYTES(chunk):
            at = m.start()
            if at < last_end:
                continue
            found = m.group()
            start = chunk.rfind(b"\n", 0, at) + 1
            end = chunk.find(b"\n", at)
            end = len(chunk) if end < 0 else end + 1
            if found[:1] == b"\\":  # an escape that could hide an anchor: decide on the decoded line
                keep = self._canonical_may_hit(P.canonical_line(chunk[start:end]))
                last_end = end
            else:
                run = P.RUN_START_BYTES.match(found)
                if (
                    run is None
                    or len(found) < 20
                    or (run.end() < len(found) and found[run.end() : run.end() + 1] != b"\\")
                ):
                    keep = True  # an anchor
                elif _run_may_hit(chunk, at, end):
                    keep = True
                else:
                    keep = False
                    if not start <= clear_from < end:
                        keep = P.ANCHORS_BYTES(chunk, at, end) is not None
                        clear_from = at
            if keep:
                spans[start] = end
                last_end = end
        return sorted(spans.items())

    def _canonical_may_hit(self, canon: bytes) -> bool:
        if self._raw_values and any(v in canon for v in self._raw_values):
            return True
        if P.ANCHORS_BYTES(canon):
            return True
        return any(_run_may_hit(canon, m.start(), len(canon)) for m in _RUNS_BYTES.finditer(canon))

    def string_may_hit(self, text: str) -> bool:
        """False only when the detectors cannot flag anything in ``text`` (see :data:`P.PREFILTER_STR`)."""
        if len(text) < MIN_VALUE_LEN:
            return False
        if P.PREFILTER_STR(text):
            return True
        return any(v in text for v in self._str_values)

    # -- detection -------------------------------------------------------------------------------

    def hits(self, text: str, *, entropy: bool = True, depth: int = 0) -> list[Hit]:
        """The secrets in ``text``, non-overlapping, in order (most specific kind wins an overlap).

        A lone surrogate (a JSON ``\\ud83d`` escape without its pair) cannot go through the
        UTF-8 regular expression engine: the text is searched with each one read as U+FFFD (the
        same length, so every span still points into ``text``) and the secrets taken from
        ``text`` itself."""
        if depth == 0 and not utf8_ok(text):
            probe = _SURROGATE.sub("\ufffd", text)
            return [
                h if h.inner else Hit(h.start, h.end, h.kind, text[h.start : h.end], h.inner, h.width)
                for h in self.hits(probe, entropy=entropy, depth=depth)
            ]
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
                    # Base64 of binary data (an image, an archive) is data, not a credential: its
                    # lines are not entropy-checked. Only a real dump counts (see _binary_dump):
                    # a few random tokens on consecutive lines are still checked one by one.
                    if _binary_dump(m.group(0)):
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
            c = 0  # covered spans come in order and do not overlap; so do the runs
            for m in P.LONG_RUN.finditer(text):
                s, e = m.span()
                while c < len(covered) and covered[c][1] < e:
                    c += 1
                if c < len(covered) and covered[c][0] <= s:
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
        blockers: list[tuple[int, int]] = []
        if "[REDACTED:" in text:
            blockers = [m.span() for m in P.PLACEHOLDER.finditer(text)]
        found.sort(key=lambda item: (item[0], item[1].start, item[1].start - item[1].end))
        return _select(found, blockers, text)

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


def _select(found: list[tuple[int, Hit]], blockers: list[tuple[int, int]], text: str) -> list[Hit]:
    """The hits to report, in order: by priority, each hit that overlaps none taken before it.

    A hit overlapping only plain hits taken before it is not dropped but merged with them (one
    span, the first one's kind): two given values sharing characters (``Xk4mPq9Zr7Lw`` and
    ``r7Lw2Nc8Vb5T`` in ``Xk4mPq9Zr7Lw2Nc8Vb5T``) are redacted as one, so no part of either is
    left. Base64 blocks and placeholders already in the text are never merged. The taken spans
    are kept sorted (bisect), so this is linear in the hits however many share a string.
    """
    import bisect

    starts: list[int] = []
    ends: list[int] = []
    hits: list[Hit | None] = []  # None: a placeholder (blocks, never reported)
    for s, e in blockers:
        i = bisect.bisect_left(starts, s)
        starts.insert(i, s)
        ends.insert(i, e)
        hits.insert(i, None)
    merge: list[Hit] = []
    for _, hit in found:
        i = bisect.bisect_right(ends, hit.start)  # the first taken span ending after this start
        if i == len(starts) or starts[i] >= hit.end:
            starts.insert(i, hit.start)
            ends.insert(i, hit.end)
            hits.insert(i, hit)
            continue
        if hit.inner:
            continue
        j = i
        while j < len(starts) and starts[j] < hit.end:
            other = hits[j]
            if other is None or other.inner:
                break
            j += 1
        else:
            merge.append(hit)
            continue
        if j < len(starts) and starts[j] >= hit.end:
            merge.append(hit)
    result = [h for h in hits if h is not None]
    if not merge:
        return result
    # Union of overlapping plain spans; the kind of the hit that won the place first.
    pieces = sorted([(h.start, 0, h) for h in result] + [(h.start, 1, h) for h in merge], key=lambda t: (t[0], t[1]))
    out: list[Hit] = []
    for _, extra, h in pieces:
        last = out[-1] if out else None
        if last is not None and h.start < last.end:
            if h.inner or last.inner:
                if extra:
                    continue
                out.pop()  # a plain span merged into a block's place cannot stay
                out.append(h)
                continue
            end = max(last.end, h.end)
            out[-1] = Hit(last.start, end, last.kind, text[last.start : end])
        elif not extra or not any(bs < h.end and h.start < be for bs, be in blockers):
            out.append(h)
    return out


def _raw_needles(value: str) -> set[bytes]:
    """Byte strings one of which a raw line holding ``value`` (decoded) must contain.

    Its UTF-8 and JSON forms. A value with non-ASCII characters may be written with ``\\uXXXX``
    escapes (``\\u00fc`` for ``ü``; Pi's ``JSON.parse`` reads both): then its longest ASCII stretch
    (4+ characters; an escaped ASCII character is decoded by the escape gate first), or when it has
    none, any ``\\u`` escape at all.
    """
    out = {value.encode("utf-8", "surrogatepass")}
    out.add(orjson.dumps(value)[1:-1] if utf8_ok(value) else value.encode("ascii", "replace"))
    if not value.isascii():
        ascii_runs = re.findall(r"[\x00-\x7f]+", value)
        longest = max(ascii_runs, key=len, default="")
        out.add(orjson.dumps(longest)[1:-1] if len(longest) >= 4 else b"\\u")
    return out


#: Runs of token characters, for the decoded-line gate (``_run_may_hit`` decides each).
_RUNS_BYTES = re.compile(rb"[A-Za-z0-9+/_\-]{20,}")


def _run_may_hit(buf: bytes, at: int, line_end: int) -> bool:
    """Whether the token run at ``buf[at]`` may be flagged: a random-looking token or the start of
    a base64 block of text, read where the raw line has it and, when it starts right after an
    escape's backslash, where the decoded string has it (after ``n``/``t``… or ``uXXXX``)."""
    starts = [at]
    backslashes = 0
    while at - backslashes > 0 and buf[at - backslashes - 1] == 0x5C:
        backslashes += 1
    if backslashes % 2:
        letter = buf[at : at + 1]
        if letter in (b"b", b"f", b"n", b"r", b"t"):
            starts.append(at + 1)
        elif letter == b"u" and re.fullmatch(rb"[0-9A-Fa-f]{4}", buf[at + 1 : at + 5]):
            starts.append(at + 5)
    for a in starts:
        run = P.LONG_RUN_BYTES.match(buf, a, line_end)
        if run is not None and P.interesting_run(run.group().decode("ascii")):
            return True
        block = P.RAW_BLOCK_BYTES.match(buf, a, line_end)
        if block is not None and block.end() - a >= 20:
            raw = block.group().decode("ascii")
            if _decode_block(raw.replace("\\r", "\r").replace("\\n", "\n")) is not None:
                return True
    return False


#: Widths base64 tools wrap at are multiples of 4 (76 MIME/coreutils, 64 PEM/openssl, 60, 72).
_DUMP_MIN_WIDTH = 48
_DUMP_MIN_LINES = 8


def _binary_dump(block: str) -> bool:
    """A base64 block that is binary data, not tokens: a known file signature (PNG, JPEG, PDF,
    zip, gzip…), one line longer than a token can be, or a real wrapped dump: at least
    ``_DUMP_MIN_LINES`` full lines of one width (a multiple of 4, ``_DUMP_MIN_WIDTH`` or more)
    and a last line no longer. Three 40-character tokens on three lines are not a dump."""
    if P._BINARY_BASE64.match(block):
        return True
    lines = block.replace("\r", "").rstrip("\n").split("\n")
    if len(lines) == 1:
        return len(lines[0]) > P.ENTROPY_MAX_LEN
    width = len(lines[0])
    if width < _DUMP_MIN_WIDTH or width % 4 or len(lines) - 1 < _DUMP_MIN_LINES:
        return False
    return all(len(line) == width for line in lines[:-1]) and len(lines[-1]) <= width


def _decode_block(block: str) -> tuple[str, str] | None:
    """:func:`_decode_lines`, cached for short blocks (the same token repeated thousands of times)."""
    return _decode_short(block) if len(block) <= 512 else _decode_lines(block)


@functools.lru_cache(maxsize=2048)
def _decode_short(block: str) -> tuple[str, str] | None:
    return _decode_lines(block)


def _decode_lines(block: str) -> tuple[str, str] | None:
    """The longest leading run of lines of ``block`` that is base64 of text, and that text.

    A wrapped block may be followed by a line of ordinary words that the block pattern also
    took: the answer is the longest run of lines that decodes (as :func:`P.base64_text` judges
    it). Every length is judged in one pass (an incremental UTF-8 decoder, running counts of
    characters and unprintable ones), so a block of any size costs time in proportion to it.
    """
    import base64
    import binascii
    import codecs

    lines = block.split("\n")
    body = [line.rstrip("\r") for line in lines]
    decoder = codecs.getincrementaldecoder("utf-8")()
    chars = unprintable = length = 0
    carry = ""  # characters of an unfinished quartet
    best = 0
    for k, line in enumerate(body, 1):
        core = line.rstrip("=")
        if "=" in core or not core:
            break  # padding inside a line: no longer base64 from here on
        length += len(core)
        data = carry + core
        whole = len(data) - len(data) % 4
        carry = data[whole:]
        try:
            text = decoder.decode(base64.b64decode(data[:whole])) if whole else ""
        except (binascii.Error, UnicodeDecodeError):
            break  # not UTF-8 here: no longer run of lines can be text either
        chars += len(text)
        unprintable += _unprintable(text)
        if length >= P.BASE64_MIN and len(carry) != 1:
            state = decoder.getstate()
            try:
                tail = base64.b64decode(carry + "=" * (-len(carry) % 4)) if carry else b""
                rest = decoder.decode(tail, final=True)
            except (binascii.Error, UnicodeDecodeError):
                rest = None
            decoder.setstate(state)
            if rest is not None:
                total = chars + len(rest)
                bad = unprintable + _unprintable(rest)
                if total and total - bad >= total * 0.95:
                    best = k
        if len(line) != len(core):
            break  # padding ends the base64
    if not best:
        return None
    candidate = "\n".join(lines[:best])
    decoded = P.base64_text(candidate.replace("\r", "").replace("\n", ""))
    if decoded is None:  # padding base64_text does not take (three '='): not a block after all
        return None
    return candidate.rstrip("\r"), decoded


def _unprintable(text: str) -> int:
    if text.isprintable():
        return 0
    return sum(1 for c in text if not (c.isprintable() or c in "\n\r\t"))


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
