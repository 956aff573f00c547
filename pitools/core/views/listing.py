"""``pitools ls``: one summary per session file, found where Pi looks (``SessionManager.list``/``listAll``).

Each summary carries what Pi's session picker shows (``buildSessionInfo`` in
``session-manager.js``: name, first user message, message count, last activity) plus what pitools
adds: entry count, size, leaves, models, token and cost totals (``getSessionStats`` rules), and a
status telling whether Pi can open the file as is.

Pi's rules mirrored here:

* ``name``: the latest ``session_info`` entry's ``name`` trimmed, an empty one clearing it;
* ``firstMessage``: the text blocks (joined with a space) of the first user message with any text,
  else ``"(no messages)"``;
* ``modified`` (``getMessageActivityTime``): the newest user/assistant message time (the message's
  numeric ``timestamp``, else the entry's ``timestamp``), else the header ``timestamp``, else the
  file's mtime; sessions sort newest first on it;
* a file Pi's picker would leave out (no header first, or a value that makes ``buildSessionInfo``
  throw) is still listed, with ``piListed: false`` and a status.

Speed: a file is read once, through ``mmap``; long tool-result lines are recognised from their first
bytes and skipped unless they carry usage. Summaries are cached by path, size and mtime in
``$PITOOLS_CACHE_DIR`` (default ``$XDG_CACHE_HOME/pitools``, else ``~/.cache/pitools``); the
cache is an optimisation only, and any problem with it is ignored.
"""

from __future__ import annotations

import mmap
import os
import re
import stat as stat_mod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pitools.core.js import ops as jsops
from pitools.core.js.date import js_date_ms, to_iso_string
from pitools.core.js.json.parse import parse_json_line
from pitools.core.js.ops import prop
from pitools.core.js.types import Entry, JsonObject, JsValue
from pitools.core.js.value import JS_WHITESPACE, UNDEFINED
from pitools.core.session.locate import (
    SessionDirChoice,
    all_session_dirs,
    choose_session_dir,
    header_cwd_matches,
    mtime_ms,
    resolve_path,
    session_files,
)
from pitools.core.session.tree import mkey

STATUS_OK = "ok"
STATUS_MIGRATE = "needs-migration"
STATUS_INVALID = "invalid"
STATUS_ERROR = "error"

CACHE_VERSION = 1
#: Lines at least this long are first matched against the tool-result prefix and maybe skipped.
_FAST_PATH_BYTES = 256
#: The start of a ``toolResult`` or ``bashExecution`` message line as Pi's JSON.stringify writes it.
_SKIPPABLE_HEAD = re.compile(
    rb'\{"type":"message","id":"([^"\\]*)","parentId":(?:null|"([^"\\]*)"),'
    rb'"timestamp":"[^"\\]*","message":\{"role":"(?:toolResult|bashExecution)",'
)
_USAGE_KEY = b'"usage"'
_PARENT_KEY = b'"parentId":'

ProgressFn = Callable[[int, int], None]
_NO_PARENT = object()


@dataclass(slots=True)
class SummaryScan:
    """Running state of one pass over a file."""

    header: Any = None
    entries: int = 0
    messages: int = 0
    name: Any = None
    first_message: str = ""
    last_activity: Any = None
    pi_error: str | None = None
    ids_in_order: list[str] = field(default_factory=list)
    seen_ids: set[str] = field(default_factory=set)
    parent_by_id: dict[Any, Any] = field(default_factory=dict)
    models: dict[str, None] = field(default_factory=dict)
    non_object_entries: int = 0
    totals: Any = None


_iso = to_iso_string


def _note_pi_error(scan: SummaryScan, message: str) -> None:
    if scan.pi_error is None:
        scan.pi_error = message


def _text_content(content: JsValue) -> str | None:
    """Pi's ``extractTextContent``; None where Pi would throw."""
    if type(content) is str:
        return content
    if type(content) is not list or None in content:
        return None
    texts = [prop(b, "text") for b in content if prop(b, "type") == "text"]
    return jsops.join(texts, " ")


def _content_ok(content: JsValue) -> bool:
    """Whether ``extractTextContent`` would run without throwing (no text needed)."""
    return type(content) is str or (type(content) is list and None not in content)


_USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite")


def _add_usage(totals: list[Any], usage: JsValue) -> None:
    """``addUsageToTotals`` on numbers only: what Pi sums for a well-formed usage record.

    Fields that are not numbers count as 0 (Pi would throw, or concatenate strings).
    """
    if type(usage) is not dict:
        return
    for i, key in enumerate(_USAGE_KEYS):
        value = usage.get(key)
        if type(value) is int or type(value) is float:
            totals[i] += value
    cost = usage.get("cost")
    if type(cost) is dict:
        value = cost.get("total")
        if type(value) is int or type(value) is float:
            totals[4] += value


def _message_entry(scan: SummaryScan, entry: dict[str, Any]) -> None:
    scan.messages += 1
    message = entry.get("message", UNDEFINED)
    if type(message) is not dict:
        if message is None or message is UNDEFINED:
            _note_pi_error(scan, "TypeError: Cannot read properties of undefined (reading 'role')")
        return
    role = message.get("role")
    if role == "assistant":
        provider, model = message.get("provider"), message.get("model")
        if provider is not None or model is not None:
            scan.models.setdefault(f"{jsops.to_string(provider)}/{jsops.to_string(model)}", None)
        _add_usage(scan.totals, message.get("usage"))
    elif role == "toolResult":
        usage = message.get("usage")
        if jsops.truthy(usage):
            _add_usage(scan.totals, usage)
        return
    if (role != "user" and role != "assistant") or "content" not in message:
        return
    # getMessageActivityTime: the message's numeric timestamp, else the entry's.
    ts = message.get("timestamp")
    if type(ts) is not int and type(ts) is not float:
        try:
            ts = js_date_ms(entry.get("timestamp", UNDEFINED))
        except TypeError as exc:  # JSTypeError: new Date() of an object Pi cannot convert
            _note_pi_error(scan, f"TypeError: {exc}")
            return
    if ts == ts:
        scan.last_activity = max(scan.last_activity if scan.last_activity is not None else 0, ts)
    content = message["content"]
    if role == "user" and not scan.first_message:
        text = _text_content(content)
        if text is None:
            _note_pi_error(scan, "TypeError: content.filter is not a function")
        elif text:
            scan.first_message = text
    elif not _content_ok(content):
        _note_pi_error(scan, "TypeError: content.filter is not a function")


def _add_model(scan: SummaryScan, provider: JsValue, model: Any) -> None:
    """Remember ``provider/model`` (first-seen order); messages that name no model add nothing."""
    if jsops.nullish(provider) and jsops.nullish(model):
        return
    scan.models.setdefault(f"{jsops.to_string(provider)}/{jsops.to_string(model)}", None)


def _entry(scan: SummaryScan, entry: Entry) -> None:
    """Fold one parsed non-header value into the scan."""
    if type(entry) is not dict:
        scan.entries += 1
        scan.non_object_entries += 1
        # Keyed as ``undefined`` in Pi's byId; a non-object has no parentId to count.
        scan.parent_by_id[UNDEFINED] = _NO_PARENT
        return
    etype = entry.get("type")
    if etype == "session":
        return  # a second header: Pi's getEntries() leaves it out
    scan.entries += 1
    _track_id(scan, entry.get("id", UNDEFINED), entry.get("parentId", UNDEFINED))
    if etype == "message":
        _message_entry(scan, entry)
    elif etype == "session_info":
        name = entry.get("name", UNDEFINED)
        if name is None or name is UNDEFINED:
            scan.name = None
        elif type(name) is str:
            scan.name = name.strip(JS_WHITESPACE) or None
        else:
            scan.name = None
            _note_pi_error(scan, "TypeError: entry.name?.trim is not a function")
    elif etype == "model_change":
        _add_model(scan, entry.get("provider", UNDEFINED), entry.get("modelId", UNDEFINED))
    elif etype == "usage":
        _add_usage(scan.totals, entry.get("usage"))
    elif etype in ("branch_summary", "compaction") and jsops.truthy(entry.get("usage")):
        _add_usage(scan.totals, entry["usage"])


def _track_id(scan: SummaryScan, eid: Any, parent: Any) -> None:
    key = eid if type(eid) is str else mkey(eid)
    scan.parent_by_id[key] = parent if type(parent) is str else mkey(parent)
    if type(eid) is str and eid not in scan.seen_ids:
        scan.seen_ids.add(eid)
        scan.ids_in_order.append(eid)


def _skippable(buf: Any, start: int, end: int) -> re.Match[bytes] | None:
    """A long tool-result line with no usage: only its id and parentId matter."""
    if end - start < _FAST_PATH_BYTES:
        return None
    m = _SKIPPABLE_HEAD.match(buf, start, end)
    if m is None or buf.find(_USAGE_KEY, start, end) != -1:
        return None
    # A second entry on the line (a torn write fused with the next append) is not JSON, and Pi
    # skips the whole line: a raw `"parentId":` key cannot occur inside a JSON string (its quotes
    # would be escaped), so a second one means another object; let the full parse decide.
    if buf.find(_PARENT_KEY, m.end(), end) != -1:
        return None
    return m


def summarize_file(path: str, st: os.stat_result | None = None) -> JsonObject:
    """One session's summary (JSON-ready, Pi's field names)."""
    return summarize_file_scan(path, st)[0]


def summarize_file_scan(
    path: str, st: os.stat_result | None = None, *, stop: int | None = None
) -> tuple[JsonObject, SummaryScan | None]:
    """:func:`summarize_file`, and the finished scan when the file has a valid header (else None).

    ``stop``: read only the bytes before it (the size the caller indexes, in case the file grew).
    """
    try:
        st = st or os.stat(path)
    except OSError as exc:
        return _error_summary(path, None, f"cannot read file: {exc.strerror or exc}"), None
    scan = SummaryScan(totals=[0, 0, 0, 0, 0])
    header_ok = False
    first_value_seen = False
    try:
        with open(path, "rb") as fh:
            if st.st_size == 0:
                return _invalid_summary(path, st, "empty file"), None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                size = len(buf) if stop is None else min(stop, len(buf))
                header_ok, first_value_seen = _read_all(scan, buf, size)
    except (OSError, ValueError) as exc:
        return _error_summary(path, st, f"cannot read file: {getattr(exc, 'strerror', None) or exc}"), None
    if not first_value_seen:
        return _invalid_summary(path, st, "no JSON value in the file"), None
    if not header_ok:
        return _invalid_summary(path, st, "first parsed line is not a session header with a string id"), None
    return _finish(path, st, scan), scan


def summarize_values(path: str, st: os.stat_result, values: Sequence[Any]) -> JsonObject | None:
    """:func:`summarize_file` from values already parsed, or None when it must read the file itself.

    ``values`` is the loader's ``RawSession.values`` for an unmigrated file (every truthy parsed
    value, in file order): the same values :func:`summarize_file` folds, so the archive index
    parses each file once. Anything but a valid header first is left to :func:`summarize_file`.
    """
    if not values:
        return None
    header = values[0]
    if type(header) is not dict or header.get("type") != "session" or type(header.get("id")) is not str:
        return None
    scan = scan_values(values)
    return None if scan is None else _finish(path, st, scan)


# -- a summary that resumes where it stopped (the archive index's appends) ------------------------
#
# The index stores a regular session's scan state next to its summary; when Pi appends to the
# file, the state is read back, only the appended values are folded into it (the same fold, in
# file order, so even the float totals add up in the same order), and the summary is finished
# again. The ids and parents the leaf count needs are not stored here: the index has them in its
# entries table and hands them back to :func:`resume_scan`.

#: Bumped when the stored form of :func:`save_scan` changes (an older form is not resumed).
SCAN_STATE_VERSION = 1
#: The header fields :func:`_finish` reads.
_HEADER_KEYS = ("type", "id", "cwd", "timestamp", "version", "parentSession")


def scan_values(values: Sequence[Any]) -> SummaryScan | None:
    """The scan of values already parsed (see :func:`summarize_values`), or None without a valid header."""
    if not values:
        return None
    header = values[0]
    if type(header) is not dict or header.get("type") != "session" or type(header.get("id")) is not str:
        return None
    scan = SummaryScan(totals=[0, 0, 0, 0, 0])
    scan.header = header
    for k in range(1, len(values)):
        _entry(scan, values[k])
    return scan


def fold_values(scan: SummaryScan, values: Sequence[Any]) -> None:
    """Fold more values (the ones after those already scanned, every truthy parsed value in file order)."""
    for value in values:
        _entry(scan, value)


def finish_scan(path: str, st: os.stat_result, scan: SummaryScan) -> JsonObject:
    """The summary of a scan (what :func:`summarize_file` returns for a file with a valid header)."""
    return _finish(path, st, scan)


def save_scan(scan: SummaryScan) -> bytes | None:
    """The scan state :func:`resume_scan` needs, minus ids and parents; None when it cannot be stored.

    Standard-library JSON on purpose: it keeps integers of any size, -0.0, Infinity, NaN and lone
    surrogates exactly as parsed, so a resumed fold adds the very same numbers.
    """
    import json

    header = scan.header
    if type(header) is not dict:
        return None
    state = {
        "v": SCAN_STATE_VERSION,
        "header": {k: header[k] for k in _HEADER_KEYS if k in header},
        "entries": scan.entries,
        "messages": scan.messages,
        "name": scan.name,
        "firstMessage": scan.first_message,
        "lastActivity": scan.last_activity,
        "piError": scan.pi_error,
        "models": list(scan.models),
        "nonObject": scan.non_object_entries,
        "totals": scan.totals,
    }
    try:
        return json.dumps(state, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError, RecursionError):
        return None


def resume_scan(state: bytes, ids: Iterable[tuple[Any, Any]]) -> SummaryScan | None:
    """A scan rebuilt from :func:`save_scan`'s state and the scanned entries' ``(id, parentId)``
    in file order; None when the state is not one this version wrote."""
    import json

    try:
        data = json.loads(state)
        if type(data) is not dict or data.get("v") != SCAN_STATE_VERSION:
            return None
        scan = SummaryScan(
            header=data["header"],
            entries=data["entries"],
            messages=data["messages"],
            name=data["name"],
            first_message=data["firstMessage"],
            last_activity=data["lastActivity"],
            pi_error=data["piError"],
            models=dict.fromkeys(data["models"]),
            non_object_entries=data["nonObject"],
            totals=list(data["totals"]),
        )
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    for eid, parent in ids:
        _track_id(scan, eid, parent)
    return scan


def _read_all(scan: SummaryScan, buf: Any, size: int) -> tuple[bool, bool]:
    """Walk every line; returns (valid header, any value parsed)."""
    pos = 0
    while pos < size:
        nl = buf.find(b"\n", pos, size)
        end = size if nl == -1 else nl
        if scan.header is not None:
            m = _skippable(buf, pos, end)
            if m is not None:
                scan.entries += 1
                scan.messages += 1
                parent = m.group(2).decode("utf-8", "replace") if m.group(2) is not None else None
                _track_id(scan, m.group(1).decode("utf-8", "replace"), parent)
                pos = end + 1
                continue
        try:
            value, _ = parse_json_line(buf[pos:end])
        except ValueError:
            value = None
        pos = end + 1
        if not jsops.truthy(value):
            continue
        if scan.header is None:
            if type(value) is not dict or value.get("type") != "session" or type(value.get("id")) is not str:
                scan.header = value
                return False, True
            scan.header = value
            continue
        _entry(scan, value)
    return scan.header is not None, scan.header is not None


def _base(path: str, st: os.stat_result | None) -> dict[str, Any]:
    return {
        "path": path,
        "id": None,
        "cwd": None,
        "name": None,
        "firstMessage": "(no messages)",
        "created": None,
        "modified": _iso(mtime_ms(st)) if st is not None else None,
        "messageCount": 0,
        "entryCount": 0,
        "fileBytes": st.st_size if st is not None else None,
        "leafCount": 0,
        "models": [],
        "tokens": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        "cost": 0,
        "parentSession": None,
        "version": None,
        "status": STATUS_OK,
        "piListed": True,
        "problem": None,
    }


def _invalid_summary(path: str, st: os.stat_result | None, why: str) -> JsonObject:
    out = _base(path, st)
    out.update(status=STATUS_INVALID, piListed=False, problem=why + "; Pi cannot open it")
    return out


def _error_summary(path: str, st: os.stat_result | None, why: str) -> JsonObject:
    out = _base(path, st)
    out.update(status=STATUS_ERROR, piListed=False, problem=why)
    return out


def _masked(text: JsValue) -> Any:
    """A preview (the name, the first message) with the secrets ``scan`` detects masked: listings
    show it in every format (``ls``, ``usage --by session``, search hits, the serve list). Done
    here, once per summary, so the archive index keeps the masked text and a warm ``ls`` never
    loads the detector. Pi's own ``SessionInfo`` has the text unmasked."""
    if type(text) is not str or not text:
        return text
    from pitools.core.secrets.scan import mask_secrets

    return mask_secrets(text)


def _finish(path: str, st: os.stat_result, scan: SummaryScan) -> dict[str, Any]:
    from pitools.core.js.json.encode import jsonable
    from pitools.core.session.migrate import effective_version

    header = scan.header
    version = header.get("version", UNDEFINED)
    eff = effective_version(None if version is UNDEFINED else version)
    if eff < 2:
        # v1 migration chains every entry: one leaf. It throws on a bare JSON value.
        leaf_count = 1 if scan.entries else 0
    else:
        parents = {p for p in scan.parent_by_id.values() if p is not _NO_PARENT}
        leaf_count = sum(1 for i in scan.ids_in_order if mkey(i) not in parents)
    header_ms = js_date_ms(header["timestamp"]) if type(header.get("timestamp")) is str else float("nan")
    if type(scan.last_activity) in (int, float) and scan.last_activity > 0:
        modified: Any = scan.last_activity
    elif header_ms == header_ms:
        modified = header_ms
    else:
        modified = mtime_ms(st)
    t_in, t_out, t_read, t_write, t_cost = scan.totals
    out = _base(path, st)
    out.update(
        id=header["id"],
        cwd=header["cwd"] if type(header.get("cwd")) is str else "",
        name=_masked(scan.name),
        firstMessage=_masked(scan.first_message) or "(no messages)",
        created=_iso(js_date_ms(header.get("timestamp", UNDEFINED))),
        modified=_iso(modified),
        messageCount=scan.messages,
        entryCount=scan.entries,
        leafCount=leaf_count,
        models=list(scan.models),
        tokens=jsonable(
            {
                "input": t_in,
                "output": t_out,
                "cacheRead": t_read,
                "cacheWrite": t_write,
                "total": t_in + t_out + t_read + t_write,
            }
        ),
        cost=jsonable(t_cost),
        parentSession=jsonable(header.get("parentSession")),
        version=jsonable(None if version is UNDEFINED else version),
    )
    if eff < 2 and scan.non_object_entries:
        out.update(
            status=STATUS_ERROR,
            piListed=scan.pi_error is None,
            problem="a line holds a bare JSON value: Pi's v1 migration throws on it and cannot open the file",
        )
    elif eff < 3:
        out.update(status=STATUS_MIGRATE, problem="version < 3: Pi migrates (rewrites) the file when it opens it")
    if scan.pi_error is not None:
        out.update(
            piListed=False,
            problem=(out["problem"] + "; " if out["problem"] else "")
            + (f"Pi's session list skips it ({scan.pi_error})"),
        )
    return out


class CacheLike(Protocol):
    """Summaries a caller keeps between runs (``pitools ls`` keeps them in the archive index instead)."""

    hits: int

    def get(self, path: str, st: os.stat_result) -> JsonObject | None: ...

    def put(self, path: str, st: os.stat_result, summary: JsonObject) -> None: ...

    def forget_missing(self, folders: list[str], seen: set[str]) -> None: ...


class NoCache:
    """A cache that remembers nothing."""

    hits = 0

    def get(self, path: str, st: os.stat_result) -> JsonObject | None:
        return None

    def put(self, path: str, st: os.stat_result, summary: JsonObject) -> None:
        return None

    def forget_missing(self, folders: list[str], seen: set[str]) -> None:
        return None


# -- listing ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Listing:
    """The result of ``pitools ls``."""

    cwd: str
    all: bool
    choice: SessionDirChoice
    folders: list[str]
    sessions: list[dict[str, Any]]
    cache_hits: int = 0
    #: The totals row (``pitools ls`` from the archive index: fork/clone history counted once).
    totals: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "cwd": self.cwd,
            "all": self.all,
            "sessionDir": self.choice.directory,
            "sessionDirSource": self.choice.source,
            "folders": self.folders,
            "count": len(self.sessions),
            "sessions": self.sessions,
        }
        if self.totals is not None:
            out["totals"] = self.totals
        return out


def _sort_key(summary: dict[str, Any]) -> tuple[bool, str, str]:
    """Newest activity first (Pi's sortSessionInfos); files Pi cannot open go last."""
    openable = summary.get("status") not in (STATUS_INVALID, STATUS_ERROR)
    return (openable, summary.get("modified") or "", os.path.basename(summary["path"]))


def list_sessions(
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
    all_: bool = False,
    cache: CacheLike | None = None,
    progress: ProgressFn | None = None,
) -> Listing:
    """Pi's ``SessionManager.list(cwd, sessionDir)`` (or ``listAll``) with pitools' summaries.

    ``cache`` is read and updated in memory only; saving it is the caller's business
    (:func:`pitools.ops.listing.list_sessions`).
    """
    env = os.environ if env is None else env
    here = os.getcwd()
    cwd = resolve_path(cwd or here, here, env)
    choice = choose_session_dir(cwd=cwd, env=env, session_dir=session_dir)
    if all_:
        folders = [choice.configured] if choice.configured else all_session_dirs(env)
    else:
        folders = [choice.directory]
    folders = [os.path.abspath(f) for f in folders]
    files = [p for folder in folders for p in session_files(folder)]
    cache = NoCache() if cache is None else cache
    summaries: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, os.stat_result]] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError as exc:
            summaries[path] = _error_summary(path, None, f"cannot read file: {exc.strerror or exc}")
            continue
        if not stat_mod.S_ISREG(st.st_mode):
            continue
        cached = cache.get(path, st)
        if cached is None:
            todo.append((path, st))
        else:
            summaries[path] = cached
    done = len(summaries)
    if progress is not None and files:
        progress(done, len(files))
    # One process on purpose: a process pool re-imports __main__ (unsafe for library callers)
    # and measured no faster here; the skip-ahead for tool results and the cache do the work.
    for path, st in todo:
        summary = summarize_file(path, st)
        summaries[path] = summary
        cache.put(path, st, summary)
        done += 1
        if progress is not None:
            progress(done, len(files))
    sessions = [
        summary
        for path, summary in summaries.items()
        if all_ or not choice.filter_cwd or header_cwd_matches({"cwd": summary["cwd"]}, cwd, env)
    ]
    cache.forget_missing(folders, set(files))
    sessions.sort(key=_sort_key, reverse=True)
    return Listing(cwd, all_, choice, folders, sessions, cache.hits)
