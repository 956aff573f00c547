"""``compact --dry-run`` and the pure half of ``compact --apply`` on a loaded session.

:func:`plan_compaction` lays out the regions; :func:`summary_inputs` builds the requests a
:class:`~pitools.core.compaction.summarizer.Summarizer` answers; :func:`build_compaction_entry`
produces the line Pi's ``appendCompaction`` would write. Nothing here reads the network or
writes a file: :func:`pitools.ops.compaction.apply_compaction` does that.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from pitools import PI_REFERENCE_VERSION
from pitools.core.compaction.prepare import (
    CompactionPreparation,
    CompactionSettings,
    prepare_compaction,
    should_compact,
)
from pitools.core.context.build import (
    BranchKeys,
    ProjectedEntry,
    Projection,
    build_projection,
    estimate_projected_context_tokens,
    message_estimates,
)
from pitools.core.context.messages import get_current_system_message
from pitools.core.js.access import entry_id, entry_type
from pitools.core.js.date import iso_now
from pitools.core.js.json.encode import fragment, jsonable, to_json_bytes
from pitools.core.js.json.parse import gc_paused
from pitools.core.js.json.stream import JsonStream, json_chunks
from pitools.core.js.types import Entry, EntryId, JsonObject
from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import Loaded, LoadedSession
from pitools.errors import PitoolsError

if TYPE_CHECKING:  # pydantic (0.1 s of CPU to import) only when a summary is requested
    from pitools.core.compaction.summarizer import SummaryRequest

REGION_SUMMARIZED = "already-summarized"
REGION_PREVIOUS = "previous-compaction"
REGION_SUMMARIZE = "summarize"
REGION_PREFIX = "turn-prefix"
REGION_KEPT = "kept"


class RegionEntry:
    """One branch entry of the region listing, for the human view.

    The plan's rows hold stand-ins (the type only); ``source`` is the branch, and the real
    entry is read from it the first time :attr:`entry` is asked for (back from the file under
    the loader's "context" keep policy), so a listing that collapses long runs parses only the
    entries it shows.
    """

    __slots__ = ("_at", "_entry", "_source", "entry_id", "is_cut", "region", "tokens")

    def __init__(
        self,
        entry_id: EntryId,
        entry: Entry,
        region: str,
        tokens: int,
        is_cut: bool = False,
        source: Sequence[Any] | None = None,
        at: int = -1,
    ) -> None:
        self.entry_id = entry_id
        self._entry = entry
        self.region = region
        self.tokens = tokens
        self.is_cut = is_cut
        self._source = source
        self._at = at

    @property
    def entry(self) -> Entry:
        if self._source is not None:
            self._entry = self._source[self._at]
            self._source = None
        return self._entry


#: ``(entry, entry id, region, tokens, is the cut)``: one branch entry of the region listing.
RegionRow = tuple[Any, Any, str, int, bool]


@dataclass(slots=True)
class CompactionPlan:
    """Everything ``compact --dry-run`` reports."""

    leaf_id: EntryId
    settings: CompactionSettings
    settings_json: dict[str, Any]
    context_window: int
    context_tokens: Any
    preparation: CompactionPreparation | None
    reason: str | None
    #: One ``(entry, entry id, region, tokens, is the cut)`` per branch entry, in branch order.
    rows: list[RegionRow] = field(default_factory=list)
    #: ``context_tokens`` starts from a reply's reported usage (else characters/4 of every message).
    context_from_usage: bool = False
    #: Where the settings came from: agent dir, files read, project trust, warnings.
    config: dict[str, Any] = field(default_factory=dict)
    _regions: list[RegionEntry] | None = None
    #: The branch (under the "context" keep policy: parsed on access) the stand-ins in :attr:`rows` stand for.
    entries_source: Sequence[Any] | None = None

    @property
    def regions(self) -> list[RegionEntry]:
        """The region of every branch entry, as objects (made from :attr:`rows` when first read)."""
        if self._regions is None:
            source = self.entries_source
            if source is not None and len(source) == len(self.rows):
                self._regions = [
                    RegionEntry(eid, e, region, tokens, cut, source, i)
                    for i, (e, eid, region, tokens, cut) in enumerate(self.rows)
                ]
            else:
                self._regions = [RegionEntry(eid, e, region, tokens, cut) for e, eid, region, tokens, cut in self.rows]
        return self._regions

    @property
    def threshold(self) -> int:
        return self.context_window - self.settings.reserve_tokens

    @property
    def would_compact(self) -> bool:
        return should_compact(self.context_tokens, self.context_window, self.settings)

    def region_totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for _e, _eid, region, tokens, _cut in self.rows:
            totals[region] = totals.get(region, 0) + tokens
        return totals

    def tokens_after(self) -> int | None:
        """Estimated context right after compaction: the summary is not known yet, so kept only."""
        if self.preparation is None:
            return None
        return self.region_totals().get(REGION_KEPT, 0)

    def regions_json(self) -> list[dict[str, Any]]:
        """The region listing as ``JSON.stringify`` would keep it (one small object per entry)."""
        out: list[dict[str, Any]] = []
        append = out.append
        for e, eid, region, tokens, _cut in self.rows:
            etype = entry_type(e)
            if type(eid) is str and type(etype) is str:  # the usual case, already JSON-ready
                append({"entryId": eid, "type": etype, "region": region, "tokens": tokens})
            else:
                append(jsonable({"entryId": eid, "type": etype, "region": region, "tokens": tokens}))
        return out

    def to_json(self, *, fragments: bool = False) -> dict[str, Any]:
        """The plan as JSON data; ``fragments=True`` pre-serializes the (long) region listing.

        With ``fragments`` the ``regions`` value is a :class:`~pitools.core.js.json.encode.Serialized` that
        :func:`~pitools.core.js.json.encode.to_json_bytes` writes as is, instead of a list the caller's
        ``jsonable`` would copy once more (30,000 entries on a 100 MB session).
        :func:`write_plan_json` writes the same document without building it.
        """
        regions: Any = self.regions_json()
        if fragments:
            regions = fragment(regions)
        return self._document(regions, None if self.preparation is None else self.preparation.to_json())

    def json_chunks(self, extra: dict[str, Any] | None = None) -> Iterator[bytes]:
        """``to_json_bytes(self.to_json() | extra)`` in pieces, never built whole.

        The transcripts are escaped here, before the first piece (a session Pi would crash on
        raises now, not halfway through the output); messages and the region listing are
        serialized as the pieces are taken.
        """
        prep = self.preparation
        data = self._document(_region_stream(self.rows), None if prep is None else prep.to_json(stream=True))
        if extra:
            data.update(extra)
        return json_chunks(data)

    def _document(self, regions: Any, preparation: Any) -> dict[str, Any]:
        data: dict[str, Any] = {
            "pi": PI_REFERENCE_VERSION,
            "leafId": None if self.leaf_id is UNDEFINED else self.leaf_id,
            "settings": self.settings_json,
            "config": self.config,
            "shouldCompact": {
                "tokens": self.context_tokens,
                "contextWindow": self.context_window,
                "reserveTokens": self.settings.reserve_tokens,
                "threshold": self.threshold,
                "result": self.would_compact,
            },
            "preparation": preparation,
            "reason": self.reason,
            "regions": regions,
            "regionTokens": self.region_totals(),
        }
        return data


#: Region rows serialized at a time by :func:`_region_stream`.
_REGION_BATCH = 2048


def _region_stream(rows: list[RegionRow]) -> JsonStream:
    """The region listing of :meth:`CompactionPlan.regions_json` as a stream of batches."""

    def chunks() -> Iterator[bytes]:
        if not rows:
            yield b"[]"
            return
        sep = b"["
        for start in range(0, len(rows), _REGION_BATCH):
            batch = []
            usual = True
            for e, eid, region, tokens, _cut in rows[start : start + _REGION_BATCH]:
                etype = e.get("type", UNDEFINED) if type(e) is dict else UNDEFINED
                if type(eid) is not str or type(etype) is not str:
                    usual = False
                batch.append({"entryId": eid, "type": etype, "region": region, "tokens": tokens})
            raw = None
            if usual:  # strings and ints only: orjson's bytes are JavaScript's unless it refuses
                try:
                    raw = orjson.dumps(batch, option=orjson.OPT_STRICT_INTEGER)
                except TypeError:
                    raw = None
            if raw is None:
                raw = to_json_bytes(batch)
            yield sep
            yield raw[1:-1]
            sep = b","
        yield b"]"

    return JsonStream(chunks)


def plan_compaction(
    loaded: Loaded,
    leaf: EntryId,
    settings: CompactionSettings,
    *,
    context_window: int,
    settings_json: dict[str, Any] | None = None,
    branch: Sequence[Entry] | None = None,
    projection: Projection | None = None,
    keys: BranchKeys | None = None,
    estimates: list[Any] | None = None,
) -> CompactionPlan:
    """Pi's ``prepareCompaction`` on the branch at ``leaf``, with the regions laid out.

    Written once on the loader's index interface, for every keep policy: without ``branch``
    the branch, its projection and estimates come from :func:`replay_context`, which parses
    only the context's entries; the regions are laid out by id from the branch's ids and types.
    A caller that has run ``replay_context`` already passes its ``path`` as ``branch``, its
    ``projection`` and ``token_estimates`` (as ``estimates``: the costliest part of the plan on
    a long branch) and ``keys`` (the path's ids and types). A ``branch`` passed without
    ``projection`` (a list of entries) is projected here.
    """
    with gc_paused():  # only acyclic objects are made here; see gc_paused
        return _plan_compaction(
            loaded, leaf, settings, context_window, settings_json, branch, projection, keys, estimates
        )


def _plan_compaction(
    loaded: Loaded,
    leaf: EntryId,
    settings: CompactionSettings,
    context_window: int,
    settings_json: dict[str, Any] | None,
    branch: Sequence[Entry] | None,
    projection: Projection | None,
    keys: BranchKeys | None = None,
    estimates: list[Any] | None = None,
) -> CompactionPlan:
    if branch is None:
        from pitools.core.context.build import replay_context

        replay = replay_context(loaded.index, leaf)
        branch, projection, estimates = replay.path, replay.projection, replay.token_estimates
        keys = BranchKeys(replay.path_ids or [], replay.path_types)
    if not branch:
        raise PitoolsError(f"leaf {leaf!r} has no path (unknown id)", path=loaded.path)
    # For a known leaf buildSessionPath and getBranch give the same path, and Pi's re-walk of
    # it by id (reprojected_path) changes nothing: every entry on a path taken from the index
    # is the one the index holds for its id, so the ids are distinct.
    if projection is None:
        projection = build_projection(list(branch))
        estimates = None
    if estimates is None:
        estimates = message_estimates(projection)
    if keys is None:
        keys = BranchKeys([entry_id(e) for e in branch], [entry_type(e) for e in branch])
    context = estimate_projected_context_tokens(projection, keys, estimates)
    tokens = context.tokens
    prep = prepare_compaction(branch, settings, projection=projection, tokens_before=tokens)
    reason = None
    if prep is None:
        last = branch[-1]
        if entry_type(last) == "compaction":
            reason = "already compacted: the last entry on this branch is a compaction"
        else:
            reason = "nothing to compact: no messages before the kept region"
    plan = CompactionPlan(
        leaf_id=leaf,
        settings=settings,
        settings_json=settings_json or {k: {"value": v, "source": "default"} for k, v in settings.to_json().items()},
        context_window=context_window,
        context_tokens=tokens,
        preparation=prep,
        reason=reason,
        context_from_usage=context.last_usage_index is not None,
    )
    plan.rows = _region_rows(keys, prep, projection)
    plan.entries_source = branch  # the human view reads the entries it shows from the branch
    return plan


def _region_bounds(prep: CompactionPreparation) -> tuple[tuple[int, int, str], ...]:
    """``(start, end, region)`` over the projected entries: the previous compaction's tail, to
    summarize, the split turn's prefix, kept."""
    return (
        (0, prep.boundary_start, REGION_PREVIOUS),
        (prep.boundary_start, prep.history_end, REGION_SUMMARIZE),
        (prep.history_end, prep.first_kept_index, REGION_PREFIX),
        (prep.first_kept_index, len(prep.projection.entries), REGION_KEPT),
    )


#: No entry is the cut (``firstKeptEntryId`` lies past the projection): equal to no id key.
_NO_CUT = object()


def _region_rows(keys: BranchKeys, prep: CompactionPreparation | None, current: Any) -> list[RegionRow]:
    """Each branch entry's region: summarized before, the previous compaction's tail, to
    summarize, split-turn prefix, kept; with the tokens of its projected messages.

    Laid out from the branch's ids and types, matching projected entries by id: on a path
    taken from the index no two entries share an id. A row's entry is a stand-in holding only
    the entry's type (the JSON listing reads nothing else; :attr:`CompactionPlan.regions` reads
    the real entry from the branch)."""
    from pitools.core.session.index import mkey

    placed: dict[Any, tuple[str, ProjectedEntry]] = {}
    first_kept: Any = _NO_CUT
    if prep is None:
        for pe in current.entries:
            placed[mkey(pe.source_id)] = (REGION_KEPT, pe)
    else:
        entries = prep.projection.entries
        for lo, hi, region in _region_bounds(prep):
            for pe in entries[lo:hi]:
                placed[mkey(pe.source_id)] = (region, pe)
        if prep.first_kept_index < len(entries):
            first_kept = mkey(entries[prep.first_kept_index].source_id)
    out: list[RegionRow] = []
    append = out.append
    for eid, etype in zip(keys.ids, keys.types, strict=True):
        key = eid if type(eid) is str else mkey(eid)
        stand_in = {"type": etype}
        found = placed.get(key)
        if found is None:
            append((stand_in, eid, REGION_SUMMARIZED, 0, prep is not None and key == first_kept))
            continue
        region, pe = found
        tokens = pe.tokens()
        append((stand_in, eid, region, tokens if type(tokens) is int else 0, prep is not None and key == first_kept))
    return out


# -- the compaction entry --------------------------------------------------------------------


def build_compaction_entry(
    loaded: LoadedSession,
    leaf: EntryId,
    prep: CompactionPreparation,
    summary: str,
    usage: JsonObject | None,
    *,
    now: _dt.datetime | None = None,
    entry_id_: str | None = None,
) -> dict[str, Any]:
    """The entry Pi's ``appendCompaction(summary, firstKeptEntryId, tokensBefore, details, false, usage)`` writes."""
    from pitools.core.session.ids import generate_id  # secrets, hmac: only when an entry is made

    timestamp = iso_now(now)
    new_id = entry_id_ or generate_id(loaded.index.has)
    read_files, modified_files = prep.file_lists()
    projection = build_projection(loaded.index.session_path(leaf))
    system = get_current_system_message(projection.messages)
    entry: dict[str, Any] = {
        "type": "compaction",
        "id": new_id,
        "parentId": leaf,
        "timestamp": timestamp,
        "summary": summary,
        "firstKeptEntryId": prep.first_kept_entry_id,
        "tokensBefore": prep.tokens_before,
        "details": {"readFiles": read_files, "modifiedFiles": modified_files},
        "usage": usage if usage is not None else UNDEFINED,
        "fromHook": False,
    }
    if system is not None:
        from pitools.core.js.date import js_date_ms

        entry["systemMessage"] = dict(system, timestamp=js_date_ms(timestamp))
    return entry


def _reasoning(level: str | None) -> Any:
    """The session's thinking level when it is one a model can be asked for."""
    return level if level in ("minimal", "low", "medium", "high", "xhigh") else None


def summary_inputs(
    loaded: LoadedSession, leaf: EntryId, prep: CompactionPreparation, instructions: str | None = None
) -> list[SummaryRequest]:
    """The one or two summarization calls Pi's ``compact`` makes (history, then turn prefix)."""
    from pitools.core.compaction.prompts import summary_requests
    from pitools.core.compaction.summarizer import SummaryRequest
    from pitools.core.context.messages import convert_to_llm

    projection = build_projection(loaded.index.session_path(leaf))
    thinking = projection.thinking_level if isinstance(projection.thinking_level, str) else None
    out: list[SummaryRequest] = []
    for req in summary_requests(prep, instructions):
        source = prep.messages_to_summarize if req.kind == "history" else prep.turn_prefix_messages
        llm = [m for m in jsonable(convert_to_llm(source)) if isinstance(m, dict)]
        out.append(
            SummaryRequest(
                system_prompt=req.system,
                prompt=req.prompt,
                kind="history" if req.kind == "history" else "turnPrefix",
                reasoning_level=_reasoning(thinking),
                messages=llm,
                previous_summary=prep.previous_summary if isinstance(prep.previous_summary, str) else None,
                custom_instructions=instructions,
            )
        )
    return out


def compaction_line(entry: Entry) -> bytes:
    """The entry as the one JSONL line Pi appends (``JSON.stringify`` + newline)."""
    from pitools.core.js.json.encode import js_stringify

    return (js_stringify(entry) or "").encode("utf-8") + b"\n"
