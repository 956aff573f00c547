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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from pitools.ops import search_core
from pitools.ops.archive import Scope, _session_filters, time_range
from pitools.ops.index import ArchiveIndex
from pitools.ops.index_limits import ROWID_SHIFT
from pitools.ops.search_core import SNIPPET_CONTEXT, Term, find, snippet

assert ROWID_SHIFT == search_core.ROWID_SHIFT  # search decodes the row ids the index writes

__all__ = ["SNIPPET_CONTEXT", "Hit", "HitSession", "Query", "SearchResult", "parse_query", "search", "session_label"]


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
    :func:`pitools.ops.search_core.check_row`, for both the click path and the click-free one."""

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

    def to_json(self) -> dict[str, Any]:
        return search_core.result_json(self.query, self.mode, self.hits, self.truncated)


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
    where, params = search_core.filters(
        scope.folders, roles, tools, in_context, branch, project=project, session=session
    )
    if cwd:  # the folder filter comes first in both; the others are ANDed, their order is free
        more, more_params = _session_filters(scope, cwd=cwd)
        where += more[1:]
        params += more_params[len(scope.folders) :]
    tzinfo = tz or _dt.UTC
    lo, hi = time_range(since, until, tzinfo)
    if lo is not None:
        where.append("e.ts >= ?")
        params.append(lo)
    if hi is not None:
        where.append("e.ts < ?")
        params.append(hi)
    use_fts = not regex and query.fts is not None and index.fts
    if use_fts:
        assert query.fts is not None
        sql, named = search_core.fts_sql(where, params, index.shard_count(), thinking, query.fts)
        cursor = index.conn.execute(sql, named)
    else:
        cursor = index.conn.execute(search_core.scan_sql(where), params)
    hits, truncated, candidates = search_core.collect(cursor, query.patterns, thinking, limit)
    mode = "regex" if regex else ("fts" if use_fts else "scan")
    return SearchResult(text, mode, cast(list[Hit], hits), truncated, candidates)


def session_label(path: str) -> str:
    return search_core.session_label(path)


# Kept for callers of the former module-level helpers.
_find = find
_snippet = snippet
_Term = Term
