"""The parts of ``pitools search`` that a warm search runs, light enough for its start-up.

:mod:`pitools.ops.search` (the library entry point) and :mod:`pitools.cli.fast_search` (the
command's warm path) both build their SQL, check their candidates and shape their hits here, so
the two cannot drift apart. Everything in this module avoids the modules that dominate a warm
search's start-up (``typing``, ``dataclasses``, ``re``, ``orjson``, ``datetime``, ``shlex``):

* the query is split and matched without a regular expression when the query is ASCII (the
  usual case), with exactly ``re``'s case-insensitive rules (a few non-ASCII letters match ASCII
  ones: Kelvin sign, dotted and dotless I, long s); other queries compile the patterns;
* a candidate line is parsed by CPython's C JSON scanner wherever its value provably equals
  orjson's, and by orjson (then the loader's parser) otherwise;
* times, shell quoting and the JSON document are written by small exact functions, each with a
  fallback to the general code for values outside what they handle.

Every shortcut is checked against the general code by tests (``tests/unit/ops/test_search_core.py``).
"""

from __future__ import annotations

import os

from pitools.core.js.isotime import to_iso_string as iso_utc
from pitools.core.js.json.lean import loads
from pitools.core.views.resume import resume_command, shell_quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, TypeAlias

    #: A value bound to a ``?`` or ``:name`` of an index query (what sqlite3 accepts).
    SqlParam: TypeAlias = str | int | float | bytes | None

SNIPPET_CONTEXT = 80
#: An entry's full-text row id is ``sid << ROWID_SHIFT | ord`` (as :mod:`pitools.ops.index` writes it).
ROWID_SHIFT = 24
ROLE_CHOICES = ("user", "assistant", "toolResult", "bashExecution", "custom", "compaction", "branchSummary")

# -- the query ----------------------------------------------------------------------------------


def split_terms(text: str) -> list[str]:
    """Words and ``"quoted phrases"``: what ``re.finditer(r'"([^"]*)"|(\\S+)', text)`` finds, stripped."""
    return [term for term, _quoted in split_query(text)]


def split_query(text: str) -> list[tuple[str, bool]]:
    """:func:`split_terms` with, for each term, whether it was quoted (a phrase matches whole words)."""
    terms: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch == '"':
            close = text.find('"', i + 1)
            if close >= 0:
                term = text[i + 1 : close].strip()
                if term:
                    terms.append((term, True))
                i = close + 1
                continue
        j = i + 1
        while j < n and not text[j].isspace():
            j += 1
        term = text[i:j].strip()
        if term:
            terms.append((term, False))
        i = j
    return terms


def tokens(term: str) -> list[str]:
    """Runs of letters and digits, lowercased: how FTS5's unicode61 tokenizer cuts text (``_`` separates)."""
    out: list[str] = []
    start = -1
    for i, ch in enumerate(term):
        if ch.isalnum():
            if start < 0:
                start = i
        elif start >= 0:
            out.append(term[start:i].lower())
            start = -1
    if start >= 0:
        out.append(term[start:].lower())
    return out


def fts_query(terms: Sequence[str]) -> str | None:
    """The FTS5 MATCH expression: every token as a prefix, all required."""
    toks: list[str] = []
    for term in terms:
        toks.extend(tokens(term))
    return " AND ".join(f'"{t}"*' for t in dict.fromkeys(toks)) if toks else None


#: Text characters that ``re.IGNORECASE`` matches to an ASCII pattern character although they
#: are not ASCII: Unicode's simple lowercase of U+0130 and U+212A is ASCII, and ``re``'s case
#: fixes pair ``i``/U+0131 and ``s``/U+017F. Everything else ASCII-matching is ASCII itself.
_FOLD = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k", **{c: chr(c + 32) for c in range(65, 91)}}


class Term:
    """One query term and how it is found in a text (``search(body)``: its span, or None).

    An ASCII term is matched here; any other term by the regular expression
    ``(?<![^\\W_])`` (only when it starts with a letter or digit) + its words joined by ``\\s+``,
    case-insensitive: the pattern both ways describe. A word matches at the start of a word
    (``compact`` finds ``compaction``); a quoted phrase (``whole``) must also end where a word ends
    (``"severity in to"`` does not match "severity in tool"), so it matches as written.
    """

    __slots__ = ("lead", "pattern", "tail", "text", "words")

    def __init__(self, text: str, whole: bool = False) -> None:
        self.text = text
        words = text.split()
        self.lead = words[0][0].isalnum()
        self.tail = whole and words[-1][-1].isalnum()
        self.pattern: Any = None
        self.words: list[str] | None = None
        if text.isascii():
            self.words = [w.lower() for w in words]
        else:
            import re

            body = r"\s+".join(re.escape(w) for w in words)
            lead = r"(?<![^\W_])" if self.lead else ""
            self.pattern = re.compile(lead + body + (r"(?![^\W_])" if self.tail else ""), re.IGNORECASE)

    def search(self, body: str, folded: list[str | None]) -> tuple[int, int] | None:
        """The first match in ``body`` (``folded`` caches its case-folded copy between terms)."""
        if self.words is None:
            m = self.pattern.search(body)
            return None if m is None else (m.start(), m.end())
        text = folded[0]
        if text is None:
            text = folded[0] = body.lower() if body.isascii() else body.translate(_FOLD)
        words = self.words
        first = words[0]
        n = len(body)
        pos = 0
        while True:
            i = text.find(first, pos)
            if i < 0:
                return None
            pos = i + 1
            if self.lead and i > 0 and _word_char(body[i - 1]):
                continue
            j = i + len(first)
            for w in words[1:]:
                k = j
                while k < n and body[k].isspace():
                    k += 1
                if k == j or not text.startswith(w, k):
                    break
                j = k + len(w)
            else:
                if self.tail and j < n and _word_char(body[j]):
                    continue
                return i, j


class RegexTerm:
    """``--regex``: one pattern run by RE2, a linear-time engine, so no pattern (``(a+)+$``,
    nested repeats) can backtrack for ever on a hostile message. RE2 has no backreferences or
    lookaround; such a pattern is refused with a message saying so. ``^``/``$`` match at line
    ends (multi-line), like the ``re.MULTILINE`` search this replaced; ``\\d``, ``\\w``, ``\\b``
    are ASCII classes."""

    __slots__ = ("pattern", "text")

    def __init__(self, text: str, *, ignore_case: bool = True) -> None:
        import re2  # type: ignore[import-not-found,unused-ignore]

        from pitools.errors import PitoolsError

        self.text = text
        options = re2.Options()
        options.case_sensitive = not ignore_case
        options.log_errors = False
        options.max_mem = 64 << 20
        try:
            self.pattern = re2.compile("(?m)" + _no_surrogates(text), options)
        except re2.error as exc:
            detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            hint = ""
            if any(k in text for k in ("(?=", "(?!", "(?<", "\\1", "\\2", "(?P=")):
                hint = " (--regex uses RE2 syntax: no lookahead, lookbehind or backreferences)"
            raise PitoolsError(f"invalid regular expression: {detail}{hint}") from None

    def search(self, body: str) -> tuple[int, int] | None:
        m = self.pattern.search(_no_surrogates(body))
        return None if m is None else (m.start(), m.end())


def _no_surrogates(text: str) -> str:
    """``text`` with lone surrogates as U+FFFD, one for one (RE2 reads UTF-8, offsets stay valid)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", "\ufffd", text)
    return text


def _word_char(ch: str) -> bool:
    """Whether ``ch`` is in ``[^\\W_]`` as a case-insensitive ``re`` pattern sees it."""
    return ch.isalnum()


def parse_terms(text: str) -> list[Term]:
    """The terms of a plain query; raises PitoolsError when there are none."""
    terms = split_query(text)
    if not terms:
        from pitools.errors import PitoolsError

        raise PitoolsError("empty search query")
    return [Term(t, quoted) for t, quoted in terms]


def find(terms: Sequence[Any], body: str) -> list[tuple[int, int]] | None:
    """The span of every term in ``body`` (all must occur), or None.

    ``terms`` are :class:`Term` objects or one :class:`RegexTerm` (``--regex``)."""
    if not body:
        return None
    folded: list[str | None] = [None]
    spans: list[tuple[int, int]] = []
    for term in terms:
        if type(term) is Term:
            span = term.search(body, folded)
        else:
            span = term.search(body)
        if span is None:
            return None
        spans.append(span)
    return spans


def snippet(body: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """A window of text around the first match, with the matches inside it (offsets in the snippet)."""
    first = min(spans)
    start = max(0, first[0] - SNIPPET_CONTEXT)
    end = min(len(body), max(first[1], first[0]) + SNIPPET_CONTEXT)
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(body) else ""
    window = body[start:end]
    shift = len(prefix) - start
    highlights = sorted((a + shift, b + shift) for a, b in spans if a >= start and b <= end)
    return prefix + window + suffix, highlights


# -- SQL --------------------------------------------------------------------------------------------

COLUMNS = (
    "e.sid, e.ord, e.eid, e.ts, e.role, e.tools, e.off, e.len, e.leaf_lo, e.leaf_hi, e.in_ctx, e.summarized, "
    "e.copied, s.path, s.header_id, s.name, s.cwd, s.modified, s.leaves, s.default_pos"
)


def project_filter(project: str) -> tuple[str, list[SqlParam]]:
    """``--project TEXT``: the session's cwd contains TEXT, ignoring case."""
    return "instr(lower(coalesce(s.cwd, '')), ?) > 0", [project.lower()]


def session_filter(session: str) -> tuple[str, list[SqlParam]]:
    """``--session REF``: the session's path, id, id prefix, or a part of its path."""
    esc = session.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return (
        "(s.path = ? OR s.header_id = ? OR s.header_id LIKE ? ESCAPE '\\' OR s.path LIKE ? ESCAPE '\\')",
        [os.path.abspath(session), session, esc + "%", "%" + esc + "%"],
    )


def filters(
    folders: Sequence[str],
    roles: Sequence[str],
    tools: Sequence[str],
    in_context: bool,
    branch: str,
    *,
    project: str | None = None,
    session: str | None = None,
) -> tuple[list[str], list[SqlParam]]:
    """The conditions of a search: folders, ``--project``, ``--session``, ``--role``, ``--tool``,
    ``--in-context``, ``--branch`` (``--cwd``, ``--since``, ``--until`` are added by ops.search)."""
    where = ["s.folder IN (" + ",".join("?" * len(folders)) + ")" if folders else "0"]
    params: list[SqlParam] = list(folders)
    for value, make in ((project, project_filter), (session, session_filter)):
        if value:
            clause, values = make(value)
            where.append(clause)
            params.extend(values)
    if roles:
        where.append("e.role IN (" + ",".join("?" * len(roles)) + ")")
        params.extend(roles)
    if tools:
        where.append("(" + " OR ".join("instr(char(31) || e.tools || char(31), ?) > 0" for _ in tools) + ")")
        params.extend(f"\x1f{t}\x1f" for t in tools)
    if in_context:
        where.append("e.in_ctx = 1")
    if branch == "current":
        where.append("e.leaf_lo <= s.default_pos AND s.default_pos < e.leaf_hi")
    return where, params


def fts_sql(
    where: Sequence[str], params: Sequence[SqlParam], shards: int, thinking: bool, fts: str
) -> tuple[str, dict[str, SqlParam]]:
    """The full-text query: candidates of every shard, newest first."""
    tables = ["fts"] + (["fts_thinking"] if thinking else [])
    union = " UNION ".join(f"SELECT rowid AS r FROM s{k}.{t} WHERE {t} MATCH :q" for k in range(shards) for t in tables)
    named = {f"p{i}": p for i, p in enumerate(params)}
    conds: list[str] = []
    i = 0
    for clause in where:
        pieces = clause.split("?")
        text = pieces[0]
        for k, piece in enumerate(pieces[1:]):
            text += f":p{i + k}" + piece
        i += len(pieces) - 1
        conds.append(text)
    cond = " AND ".join(conds)
    # A matching row stands for its own entry and for every entry whose identical long
    # text was indexed only once (``tref``, see pitools.ops.index_rows.insert_texts).
    sql = (
        f"WITH c(r) AS ({union}), m(sid, ord) AS ("
        f"SELECT c.r >> {ROWID_SHIFT}, c.r & {(1 << ROWID_SHIFT) - 1} FROM c "
        "UNION SELECT t.sid, t.ord FROM c JOIN entries t ON t.tref = c.r) "
        f"SELECT {COLUMNS} FROM m JOIN entries e ON e.sid = m.sid AND e.ord = m.ord "
        f"JOIN sessions s ON s.sid = e.sid WHERE {cond or '1'} ORDER BY e.ts DESC, e.sid DESC, e.ord DESC"
    )
    named["q"] = fts
    return sql, named


def scan_sql(where: Sequence[str]) -> str:
    """Every entry in scope, newest first (``--regex``, or no FTS5)."""
    return (
        f"SELECT {COLUMNS} FROM entries e JOIN sessions s ON s.sid = e.sid "
        f"WHERE {' AND '.join([*where, 'e.role IS NOT NULL'])} ORDER BY e.ts DESC, e.sid DESC, e.ord DESC"
    )


# -- candidates -------------------------------------------------------------------------------------


class LineReader:
    """Reads entry lines back from session files, keeping the last file open."""

    __slots__ = ("fh", "path")

    def __init__(self) -> None:
        self.path: str | None = None
        self.fh: Any = None

    def read(self, path: str, offset: int, length: int) -> bytes | None:
        try:
            if path != self.path:
                self.close()
                self.fh = open(path, "rb")  # noqa: SIM115 - kept open across calls, closed in close()
                self.path = path
            self.fh.seek(offset)
            data: bytes = self.fh.read(length)
            return data
        except OSError:
            return None

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
        self.fh = None
        self.path = None


def as_stored(text: str) -> str:
    """``text`` as the index stores it: lone surrogates as U+FFFD (pairs joined)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def check_row(
    row: Sequence[Any], terms: Sequence[Any], thinking: bool, reader: LineReader, leaves_cache: dict[int, list[Any]]
) -> dict[str, Any] | None:
    """A candidate row read back from its file: the hit (its JSON object), or None when the entry
    does not really match (or the file changed under the index)."""
    from pitools.core.views.search_text import entry_text

    (sid, _ord, eid, ts, role, tools, off, length, lo, hi, in_ctx, summarized, copied) = row[:13]
    path, hid, name, cwd, _modified, leaves_blob, default_pos = row[13:]
    data = reader.read(path, off, length)
    if data is None:
        return None
    try:
        value = loads(data)
    except ValueError:
        return None
    if type(value) is dict and type(value.get("id")) is str and eid is not None and value["id"] != eid:
        # The index stores a lone surrogate as U+FFFD (pitools.ops.index_rows.sql_text): the
        # entry's real id is the file's. Any other difference: the file changed under the index,
        # skip rather than point at the wrong entry.
        if as_stored(value["id"]) != eid:
            return None
        eid = value["id"]
    text = entry_text(value)
    body = text.text
    found = find(terms, body)
    in_thinking = False
    if found is None and thinking:
        body = text.thinking_text
        found = find(terms, body)
        in_thinking = found is not None
    if found is None:
        return None
    snip, highlights = snippet(body, found)
    if sid not in leaves_cache:
        leaves_cache[sid] = loads(leaves_blob) if leaves_blob else []
    on_current = default_pos is not None and lo <= default_pos < hi
    return {
        "session": {"path": path, "id": hid, "name": name, "cwd": cwd},
        "entryId": eid,
        "timestamp": iso_utc(ts) if ts is not None else None,
        "role": role,
        "tools": tools.split("\x1f") if tools else [],
        "snippet": snip,
        "highlights": [list(h) for h in highlights],
        "leaves": leaves_cache[sid][lo:hi],
        "onCurrentBranch": on_current,
        "inContext": bool(in_ctx),
        "summarizedAway": bool(summarized),
        "copied": bool(copied),
        "inThinking": in_thinking,
        "commands": commands(path, eid, at_leaf=on_current and hi - lo == 1 and leaves_cache[sid][lo] == eid),
    }


def collect(rows: Any, terms: Sequence[Any], thinking: bool, limit: int) -> tuple[list[dict[str, Any]], bool, int]:
    """Hits from candidate ``rows`` (newest first), at most ``limit`` (0: all), grouped by session
    (the session of the newest hit first, newest hit first inside): (hits, truncated, candidates)."""
    hits: list[dict[str, Any]] = []
    candidates = 0
    truncated = False
    reader = LineReader()
    leaves_cache: dict[int, list[Any]] = {}
    try:
        for row in rows:
            candidates += 1
            hit = check_row(row, terms, thinking, reader, leaves_cache)
            if hit is None:
                continue
            if limit and len(hits) >= limit:
                truncated = True
                break
            hits.append(hit)
    finally:
        reader.close()
    order: dict[str, int] = {}
    for h in hits:
        order.setdefault(h["session"]["path"], len(order))
    hits.sort(key=lambda h: order[h["session"]["path"]])
    return hits, truncated, candidates


def result_json(query: str, mode: str, hits: Sequence[Mapping[str, Any]], truncated: bool) -> dict[str, Any]:
    return {"query": query, "mode": mode, "count": len(hits), "truncated": truncated, "hits": hits}


# -- small exact writers --------------------------------------------------------------------------


def commands(path: str, entry_id: str | None, at_leaf: bool = False) -> list[str]:
    """The commands that go to a hit: its context at the entry, and the one command that resumes
    the session in Pi there (:func:`pitools.core.views.resume.resume_command`; ``at_leaf``: the
    entry is the session's default leaf, so ``pi --session`` alone reaches it)."""
    out = []
    if entry_id:
        out.append(f"pitools context {shell_quote(path)} --leaf {shell_quote(entry_id)}")
    out.append(resume_command(path, entry_id, at_leaf=at_leaf))
    return out


class NotPlain(Exception):
    """A value :func:`dumps` does not write (the caller uses ``to_json_bytes``)."""


def dumps(value: Any) -> bytes:
    """``to_json_bytes(value)`` for dicts with string keys, lists, strings, bools, None and ints
    of at most 2**53; raises NotPlain for anything else (floats, big ints, lone surrogates, keys
    starting with a digit: JavaScript writes or orders those in its own ways)."""
    from pitools.core.js.json.lean import plain_json

    text = plain_json(value, min_int=-(1 << 53), max_int=1 << 53, index_keys=False)
    if text is None:
        raise NotPlain
    return text.encode("utf-8")


def session_label(path: str) -> str:
    return os.path.basename(path)
