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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, cast

from pitools.core.js.types import JsonObject
from pitools.ops import search_core
from pitools.ops.archive import Scope, _session_filters, time_range
from pitools.ops.index import ArchiveIndex
from pitools.ops.index_limits import ROWID_SHIFT, ProgressFn, WarnFn
from pitools.ops.queries import SearchQuery
from pitools.ops.search_core import SNIPPET_CONTEXT, Term, find, snippet

if TYPE_CHECKING:
    import datetime

assert ROWID_SHIFT == search_core.ROWID_SHIFT  # search decodes the row ids the index writes

__all__ = [
    "SNIPPET_CONTEXT",
    "Hit",
    "HitSession",
    "Query",
    "SearchResult",
    "parse_query",
    "search",
    "search_archive",
    "session_label",
]


@dataclass(slots=True)
class Query:
    terms: list[str]
    #: :class:`~pitools.ops.search_core.Term` objects, or one :class:`~pitools.ops.search_core.RegexTerm`.
    patterns: list[Any]
    fts: str | None


def parse_query(text: str, *, regex: bool = False, ignore_case: bool = True) -> Query:
    """Split ``text`` into words and quoted phrases (or compile it as one regular expression)."""
    if regex:
        return Query([text], [search_core.RegexTerm(text, ignore_case=ignore_case)], None)
    if not ignore_case:
        raise ValueError("plain queries always ignore case")
    terms = search_core.parse_terms(text)
    return Query([t.text for t in terms], list(terms), search_core.fts_query([t.text for t in terms]))


class HitSession(TypedDict):
    path: str
    id: str | None
    name: str | None
    cwd: str | None


class Hit(TypedDict):
    """One search hit, in the JSON shape ``search --format json`` prints; made once, by
    :func:`pitools.ops.search_core.check_row`, for both the click command and the warm search."""

    session: HitSession
    entryId: str | None
    timestamp: str | None
    role: str | None
    tools: list[str]
    snippet: str
    highlights: list[list[int]]
    leaves: list[str]
    onCurrentBranch: bool
    inContext: bool
    summarizedAway: bool
    copied: bool
    inThinking: bool
    #: ``pitools context`` and ``pi --session`` command lines that open the hit.
    commands: list[str]


@dataclass(slots=True)
class SearchResult:
    query: str
    mode: str
    hits: list[Hit]
    truncated: bool
    candidates: int

    def to_json(self) -> JsonObject:
        return search_core.result_json(self.query, self.mode, self.hits, self.truncated)


def search(index: ArchiveIndex, scope: Scope, query: SearchQuery, *, tz: datetime.tzinfo | None = None) -> SearchResult:
    """``query``'s hits in ``scope``, newest first, each checked against its file (``tz``: the
    zone of ``query.where``'s dates, UTC when None)."""
    import datetime as _dt

    parsed = parse_query(query.text, regex=query.regex)
    where_ = query.where
    where, params = search_core.filters(
        scope.folders,
        query.roles,
        query.tools,
        query.in_context,
        query.branch,
        project=where_.project,
        session=where_.session,
    )
    if where_.cwd:  # the folder filter comes first in both; the others are ANDed, their order is free
        more, more_params = _session_filters(scope, cwd=where_.cwd)
        where += more[1:]
        params += more_params[len(scope.folders) :]
    lo, hi = time_range(where_.since, where_.until, tz or _dt.UTC)
    if lo is not None:
        where.append("e.ts >= ?")
        params.append(lo)
    if hi is not None:
        where.append("e.ts < ?")
        params.append(hi)
    use_fts = not query.regex and parsed.fts is not None and index.fts
    if use_fts:
        assert parsed.fts is not None
        sql, named = search_core.fts_sql(where, params, index.shard_count(), query.thinking, parsed.fts)
        cursor = index.conn.execute(sql, named)
    else:
        cursor = index.conn.execute(search_core.scan_sql(where), params)
    hits, truncated, candidates = search_core.collect(cursor, parsed.patterns, query.thinking, query.limit)
    mode = "regex" if query.regex else ("fts" if use_fts else "scan")
    return SearchResult(query.text, mode, cast(list[Hit], hits), truncated, candidates)


def search_archive(
    query: SearchQuery, *, progress: ProgressFn | None = None, warn: WarnFn | None = None
) -> SearchResult:
    """``pitools search``: bring the index up to date for the archive in scope, then :func:`search` it."""
    from pitools.ops.archive import archive_scope, local_timezone, query_index

    say = warn or (lambda _m: None)
    # The zone only reads --since/--until: without them (and without --timezone to check) the
    # usual search skips loading zoneinfo and the system's zone file.
    tz = local_timezone(query.where.timezone)[0] if query.where.has_time else None
    scope = archive_scope(session_dir=query.session_dir, all_=True)

    def run(index: ArchiveIndex) -> SearchResult:
        if not index.fts and not query.regex:
            say("this Python's SQLite has no FTS5: scanning every entry instead")
        return search(index, scope, query, tz=tz)

    return query_index(scope, run, progress=progress, warn=say)


def session_label(path: str) -> str:
    return search_core.session_label(path)


# Kept for callers of the former module-level helpers.
_find = find
_snippet = snippet
_Term = Term
