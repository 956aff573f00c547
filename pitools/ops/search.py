"""``pitools search``: full-text search over the archive index, checked against the files.

The query is plain text, not FTS syntax: words and ``"quoted phrases"``. An entry matches when
every term occurs in its searchable text (:mod:`pitools.core.views.search_text`), ignoring
case, a word matching at the start of a word (``compact`` finds ``compaction``), a phrase
matching with any run of whitespace between its words.

The index (FTS5, tokens only, no text) narrows the candidates; each candidate is then read back
from its session file at the byte offset the index stored, and the terms are checked on the real
text, which also gives the snippet. ``--regex`` skips the index and scans the text of every entry
in scope (slower, but sees the whole of very long tool outputs, of which the index keeps only the
head and the tail).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.errors import PitoolsError
from pitools.ops.archive import Scope, _session_filters, parse_time
from pitools.ops.index import ROWID_SHIFT, ArchiveIndex

SNIPPET_CONTEXT = 80
#: Runs of letters and digits: how FTS5's unicode61 tokenizer cuts text (``_`` separates).
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(slots=True)
class Query:
    terms: list[str]
    patterns: list[re.Pattern[str]]
    fts: str | None


def parse_query(text: str, *, regex: bool = False, ignore_case: bool = True) -> Query:
    """Split ``text`` into words and quoted phrases (or compile it as one regular expression)."""
    flags = re.IGNORECASE if ignore_case else 0
    if regex:
        try:
            return Query([text], [re.compile(text, flags | re.MULTILINE)], None)
        except re.error as exc:
            raise PitoolsError(f"invalid regular expression: {exc}") from None
    terms: list[str] = []
    for m in re.finditer(r'"([^"]*)"|(\S+)', text):
        term = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
        if term:
            terms.append(term)
    if not terms:
        raise PitoolsError("empty search query")
    patterns = []
    tokens: list[str] = []
    for term in terms:
        words = term.split()
        body = r"\s+".join(re.escape(w) for w in words)
        lead = r"(?<![^\W_])" if _TOKEN.match(words[0]) else ""
        patterns.append(re.compile(lead + body, flags))
        tokens.extend(t.lower() for t in _TOKEN.findall(term))
    fts = " AND ".join(f'"{t}"*' for t in dict.fromkeys(tokens)) if tokens else None
    return Query(terms, patterns, fts)


@dataclass(slots=True)
class Hit:
    path: str
    session_id: str | None
    name: str | None
    cwd: str | None
    modified: str | None
    entry_id: str | None
    timestamp: str | None
    role: str | None
    tools: list[str]
    snippet: str
    highlights: list[tuple[int, int]]
    leaves: list[str]
    in_context: bool
    summarized_away: bool
    on_current_branch: bool
    copied: bool
    in_thinking: bool
    line_offset: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def commands(self) -> list[str]:
        quoted = shlex.quote(self.path)
        out = []
        if self.entry_id:
            out.append(f"pitools context {quoted} --leaf {shlex.quote(self.entry_id)}")
        out.append(f"pi --session {quoted}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "session": {"path": self.path, "id": self.session_id, "name": self.name, "cwd": self.cwd},
            "entryId": self.entry_id,
            "timestamp": self.timestamp,
            "role": self.role,
            "tools": self.tools,
            "snippet": self.snippet,
            "highlights": [list(h) for h in self.highlights],
            "leaves": self.leaves,
            "onCurrentBranch": self.on_current_branch,
            "inContext": self.in_context,
            "summarizedAway": self.summarized_away,
            "copied": self.copied,
            "inThinking": self.in_thinking,
            "commands": self.commands(),
        }


@dataclass(slots=True)
class SearchResult:
    query: str
    mode: str
    hits: list[Hit]
    truncated: bool
    candidates: int

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "count": len(self.hits),
            "truncated": self.truncated,
            "hits": [h.to_json() for h in self.hits],
        }


def _iso(ms: Any) -> str | None:
    from pitools.core.views.isotime import iso_utc

    return iso_utc(ms) if ms is not None else None


def search(
    index: ArchiveIndex,
    scope: Scope,
    text: str,
    *,
    regex: bool = False,
    thinking: bool = False,
    roles: Sequence[str] = (),
    tools: Sequence[str] = (),
    project: str | None = None,
    cwd: str | None = None,
    session: str | None = None,
    since: str | None = None,
    until: str | None = None,
    in_context: bool = False,
    branch: str = "all",
    limit: int = 50,
    tz: Any = None,
) -> SearchResult:
    """Hits newest first, at most ``limit`` (0: no limit), each checked against its file."""
    import datetime as _dt

    query = parse_query(text, regex=regex)
    where, params = _session_filters(scope, project=project, cwd=cwd, session=session)
    tzinfo = tz or _dt.UTC
    if since:
        where.append("e.ts >= ?")
        params.append(parse_time(since, tzinfo))
    if until:
        where.append("e.ts < ?")
        params.append(parse_time(until, tzinfo, end=True))
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
    cols = (
        "e.sid, e.ord, e.eid, e.ts, e.role, e.tools, e.off, e.len, e.leaf_lo, e.leaf_hi, e.in_ctx, e.summarized, "
        "e.copied, s.path, s.header_id, s.name, s.cwd, s.modified, s.leaves, s.default_pos"
    )
    use_fts = not regex and query.fts is not None and index.fts
    if use_fts:
        tables = ["fts"] + (["fts_thinking"] if thinking else [])
        union = " UNION ".join(
            f"SELECT rowid AS r FROM s{k}.{t} WHERE {t} MATCH :q" for k in range(index.shard_count()) for t in tables
        )
        named = {f"p{i}": p for i, p in enumerate(params)}
        cond = " AND ".join(_named(w, i0) for w, i0 in _numbered(where))
        # A matching row stands for its own entry and for every entry whose identical long
        # text was indexed only once (``tref``, see pitools.ops.index_rows.insert_texts).
        sql = (
            f"WITH c(r) AS ({union}), m(sid, ord) AS ("
            f"SELECT c.r >> {ROWID_SHIFT}, c.r & {(1 << ROWID_SHIFT) - 1} FROM c "
            "UNION SELECT t.sid, t.ord FROM c JOIN entries t ON t.tref = c.r) "
            f"SELECT {cols} FROM m JOIN entries e ON e.sid = m.sid AND e.ord = m.ord "
            f"JOIN sessions s ON s.sid = e.sid WHERE {cond or '1'} ORDER BY e.ts DESC, e.sid DESC, e.ord DESC"
        )
        named["q"] = query.fts
        cursor = index.conn.execute(sql, named)
    else:
        where.append("e.role IS NOT NULL")
        sql = (
            f"SELECT {cols} FROM entries e JOIN sessions s ON s.sid = e.sid WHERE {' AND '.join(where)} "
            "ORDER BY e.ts DESC, e.sid DESC, e.ord DESC"
        )
        cursor = index.conn.execute(sql, params)
    hits: list[Hit] = []
    candidates = 0
    truncated = False
    reader = _LineReader()
    leaves_cache: dict[int, list[str]] = {}
    try:
        for row in cursor:
            candidates += 1
            hit = _check(row, query, thinking, reader, leaves_cache)
            if hit is None:
                continue
            if limit and len(hits) >= limit:
                truncated = True
                break
            hits.append(hit)
    finally:
        reader.close()
    # Grouped by session (the session of the newest hit first), newest hit first inside.
    order: dict[str, int] = {}
    for h in hits:
        order.setdefault(h.path, len(order))
    hits.sort(key=lambda h: order[h.path])
    return SearchResult(text, "regex" if regex else ("fts" if use_fts else "scan"), hits, truncated, candidates)


def _numbered(where: list[str]) -> Iterator[tuple[str, int]]:
    i = 0
    for w in where:
        yield w, i
        i += w.count("?")


def _named(clause: str, start: int) -> str:
    parts = clause.split("?")
    out = parts[0]
    for k, part in enumerate(parts[1:]):
        out += f":p{start + k}" + part
    return out


class _LineReader:
    """Reads entry lines back from session files, keeping the last file open."""

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


def _check(
    row: Sequence[Any], query: Query, thinking: bool, reader: _LineReader, leaves_cache: dict[int, list[str]]
) -> Hit | None:
    import orjson

    from pitools.core.views.search_text import entry_text

    (sid, _ord, eid, ts, role, tools, off, length, lo, hi, in_ctx, summarized, copied) = row[:13]
    path, hid, name, cwd, modified, leaves_blob, default_pos = row[13:]
    data = reader.read(path, off, length)
    if data is None:
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        # What orjson refuses and JSON.parse reads (invalid UTF-8, lone surrogates, huge
        # numbers, any depth): the loader's parser, loaded only then.
        from pitools.core.session.load import parse_json_line

        try:
            value, _ = parse_json_line(data)
        except ValueError:
            return None
    if type(value) is dict and type(value.get("id")) is str and eid is not None and value["id"] != eid:
        return None  # the file changed under the index: skip rather than point at the wrong entry
    text = entry_text(value)
    found = _find(query, text.text)
    in_thinking = False
    if found is None and thinking:
        found = _find(query, text.thinking_text)
        in_thinking = found is not None
    if found is None:
        return None
    body, spans = found
    snippet, highlights = _snippet(body, spans)
    if sid not in leaves_cache:
        leaves_cache[sid] = orjson.loads(leaves_blob) if leaves_blob else []
    all_leaves = leaves_cache[sid]
    on_current = default_pos is not None and lo <= default_pos < hi
    return Hit(
        path=path,
        session_id=hid,
        name=name,
        cwd=cwd,
        modified=modified,
        entry_id=eid,
        timestamp=_iso(ts),
        role=role,
        tools=tools.split("\x1f") if tools else [],
        snippet=snippet,
        highlights=highlights,
        leaves=all_leaves[lo:hi],
        in_context=bool(in_ctx),
        summarized_away=bool(summarized),
        on_current_branch=on_current,
        copied=bool(copied),
        in_thinking=in_thinking,
        line_offset=off,
    )


def _find(query: Query, body: str) -> tuple[str, list[tuple[int, int]]] | None:
    if not body:
        return None
    spans: list[tuple[int, int]] = []
    for pattern in query.patterns:
        m = pattern.search(body)
        if m is None:
            return None
        spans.append((m.start(), m.end()))
    return body, spans


def _snippet(body: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
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


def session_label(path: str) -> str:
    return os.path.basename(path)
