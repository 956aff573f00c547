"""``pitools repair``: from a damaged session's bytes to a list of fixes and the repaired lines.

The plan is computed in memory from the file's bytes (:func:`plan_repair`); nothing is written
here. Every change is a :class:`RepairItem` naming the ``validate`` code it resolves, the source
line, the entry id and what was done. Lines no fix touches keep their exact bytes (a BOM or a
CRLF ending is the only thing taken off them, and only when that is the fix being reported).

Pi's rules this follows (``loadEntriesFromFile`` / ``SessionManager`` in Pi 1.6.0): lines are
split on ``\\n``; blank and unparsable lines are skipped; falsy values are dropped; the first
parsed value must be a ``session`` header with a string id or the whole file is rejected; ids
resolve through a ``Map`` (the last entry with an id wins); a parent walk that meets a loop never
ends. :func:`check_invariant` then proves, with the same core that replays Pi's context, that
the repair loses nothing Pi reads today.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from pitools.core.js.json.encode import short_json, to_json_bytes
from pitools.core.js.json.parse import parse_json_line
from pitools.core.js.json.record import record_json
from pitools.core.js.types import Entry, JsonObject, JsValue
from pitools.core.js.value import JS_WHITESPACE, UNDEFINED, js_truthy
from pitools.core.session.load import line_spans

_BOM = b"\xef\xbb\xbf"
#: Content-block types: an object with one of these is part of a message, never an entry.
_BLOCK_TYPES = frozenset({"text", "image", "thinking", "redacted_thinking", "toolCall"})
#: Give up splitting a line after this many decode attempts (a hostile line full of braces).
_MAX_SPLIT_ATTEMPTS = 4000
#: Pi's session file name: ``<timestamp with : and . as ->_<session id>.jsonl``.
_FILE_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)_([^/\\]+)\.jsonl$")
#: Pi's session folder for a cwd: ``--home-me-proj--``.
_SESSION_DIR_RE = re.compile(r"^--(.+)--$")


@dataclass(frozen=True, slots=True)
class RepairItem:
    """One fix made (or one problem left): the ``validate`` code, where, and what was done."""

    code: str
    action: str
    message: str
    line: int | None = None
    entry_id: str | None = None

    def to_json(self) -> JsonObject:
        return record_json(self, ("code", "action", "line", "entry_id", "message"))


@dataclass(slots=True)
class OutLine:
    """One line of the repaired file and where it came from."""

    #: Source line number (1-based); None for a header pitools built.
    origin: int | None
    #: 0, or the position of this object within a split (fused) source line.
    piece: int
    #: The line's bytes without its newline (a view into the file's bytes when unchanged).
    data: bytes | memoryview
    #: The parsed value (what Pi reads).
    value: Any
    #: True when the value differs from the source line's (not only its BOM/CRLF/split).
    edited: bool = False
    #: True when ``value`` holds only the entry's ``id`` and ``parentId`` (the keys the tree
    #: fixes read); :func:`full_value` parses ``data`` again when a fix needs the whole entry.
    lean: bool = False


def full_value(line: OutLine) -> Any:
    """The whole parsed value of a line (parsed again from its bytes when only a skeleton is kept)."""
    return _parse(line.data) if line.lean else line.value


def _skeleton(value: dict[str, Any]) -> dict[str, Any]:
    """The keys the tree fixes read (``id``, ``parentId``; only when present), same objects."""
    out: dict[str, Any] = {}
    if "id" in value:
        out["id"] = value["id"]
    if "parentId" in value:
        out["parentId"] = value["parentId"]
    return out


@dataclass(slots=True)
class RepairPlan:
    """The result of planning a repair: the fixes, what remains, and the new lines."""

    lines: list[OutLine]
    fixes: list[RepairItem] = field(default_factory=list)
    remaining: list[RepairItem] = field(default_factory=list)
    #: Source lines whose value a fix changed (their paths are "touched").
    touched: set[int] = field(default_factory=set)
    #: Source lines whose entry was removed by a fix.
    removed: set[int] = field(default_factory=set)
    #: False when there is nothing to write (no header could be made).
    writable: bool = True

    @property
    def changed(self) -> bool:
        return bool(self.fixes)

    def output_bytes(self) -> bytes:
        return b"\n".join([*(line.data for line in self.lines), b""])

    def origins(self) -> list[tuple[int | None, int]]:
        return [(line.origin, line.piece) for line in self.lines]


@dataclass(frozen=True, slots=True)
class RepairOptions:
    """What the caller knows about the file (all optional)."""

    #: The file's name (for Pi's ``<timestamp>_<id>.jsonl`` pattern).
    file_name: str | None = None
    #: The name of the folder the file is in (for Pi's ``--path-with-dashes--`` pattern).
    folder_name: str | None = None
    #: ``--cwd``: the header's cwd when a header must be rebuilt.
    cwd: str | None = None
    #: ``--reattach``: link each orphan to the previous entry in file order.
    reattach: bool = False
    #: Id for a rebuilt header when the file name has none (a UUIDv7 from the caller).
    new_session_id: str | None = None
    #: Timestamp for a rebuilt header when no entry has one.
    now_timestamp: str | None = None


def preview(data: bytes, limit: int = 120) -> str:
    """A short, printable rendering of dropped bytes for the report."""
    text = data[: limit * 4].decode("utf-8", "replace")
    text = text.encode("unicode_escape").decode("ascii") if any(not c.isprintable() for c in text) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- fused lines ---------------------------------------------------------------------------------


def _entry_like(value: JsValue) -> bool:
    """An object that can be a session entry (not a content block or other nested value)."""
    if type(value) is not dict:
        return False
    etype = value.get("type")
    if type(etype) is not str:
        return False
    if etype == "session":
        return True
    return etype not in _BLOCK_TYPES and ("timestamp" in value or "parentId" in value)


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


class _Budget:
    def __init__(self) -> None:
        self.left = _MAX_SPLIT_ATTEMPTS

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _decode_at(text: str, pos: int, budget: _Budget) -> tuple[Any, int] | None:
    if not budget.take():
        return None
    try:
        return _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None


def _last_object(text: str, end: int, budget: _Budget) -> int | None:
    """Start of an entry-like object that ends exactly at ``end``, searching backwards."""
    k = text.rfind("{", 0, end)
    while k >= 0:
        got = _decode_at(text, k, budget)
        if got is None and budget.left < 0:
            return None
        if got is not None and got[1] == end and _entry_like(got[0]):
            return k
        k = text.rfind("{", 0, k)
    return None


def split_fused(line: bytes) -> tuple[list[bytes], bytes] | None:
    """Split a line that is two or more JSON objects back to back (a torn write, then an append).

    Returns ``(pieces, torn)``: each piece is the exact bytes of one entry-like object Pi can
    parse, in order, and ``torn`` the bytes that are not part of any (a torn prefix; may be
    empty). None when the line holds no complete entry.
    """
    text = line.decode("utf-8", "surrogateescape")
    budget = _Budget()
    tail: list[tuple[int, int]] = []
    end = len(text.rstrip(JS_WHITESPACE))
    # From the end: the appended objects, each ending where the next begins.
    while end > 0:
        start = _last_object(text, end, budget)
        if start is None:
            break
        tail.append((start, end))
        end = len(text[:start].rstrip(JS_WHITESPACE))
    tail.reverse()
    # From the start of what is left: complete objects written before the torn one.
    head: list[tuple[int, int]] = []
    pos = len(text) - len(text.lstrip(JS_WHITESPACE))
    while pos < end:
        got = _decode_at(text, pos, budget)
        if got is None or got[1] > end or not _entry_like(got[0]):
            break
        head.append((pos, got[1]))
        pos = got[1]
        while pos < end and text[pos] in JS_WHITESPACE:
            pos += 1
    spans = head + tail
    if not spans:
        return None
    torn = text[pos:end] if pos < end else ""
    pieces = [text[a:b].encode("utf-8", "surrogateescape") for a, b in spans]
    if len(pieces) == 1 and not torn:
        return None  # one object and nothing else: not a fused line (it did not parse for another reason)
    for piece in pieces:
        try:
            value, _ = parse_json_line(piece)
        except ValueError:
            return None
        if type(value) is not dict:
            return None
    return pieces, torn.encode("utf-8", "surrogateescape")


# -- the line pass ---------------------------------------------------------------------------------


def _truthy_json(value: JsValue) -> bool:
    if value is None or value is False:
        return False
    if type(value) in (int, float):
        return bool(value != 0)
    return not (type(value) is str and value == "")


def _byte_lines(data: bytes) -> Iterator[tuple[memoryview, bool]]:
    """Each line of ``data`` without its ``\n`` (a view: no copy), and whether it had one."""
    view = memoryview(data)
    size = len(data)
    for start, end in line_spans(data):
        yield view[start:end], end < size


def _parse(line: bytes | memoryview) -> Any:
    """``parse_json_line`` on a view: orjson reads it in place; the careful path gets bytes."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return parse_json_line(bytes(line))[0]


def _scan_lines(
    data: bytes, plan: RepairPlan, crashes_of: Callable[[dict[str, Any]], dict[str, list[str]]] | None = None
) -> None:
    # Lines are views into ``data`` (which the caller keeps). With ``crashes_of`` (the lean
    # plan) each entry is checked for Pi crashes while it is parsed, and only the skeleton of
    # an entry that does not crash is kept: a 1 GB text-heavy session's parsed entries cost
    # about 2.3x the file in Python objects, its skeletons about 0.2x.
    if crashes_of is not None:
        from pitools.core.session.entry_precheck import check_root
    fixes = plan.fixes
    crlf_lines: list[int] = []
    lineno = 0
    last = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    for line, had_nl in _byte_lines(data):
        lineno += 1
        if len(line) and line[-1] == 13:  # "\r"
            line = line[:-1]
            if had_nl:
                crlf_lines.append(lineno)
        if lineno == 1 and line[: len(_BOM)] == _BOM:
            line = line[len(_BOM) :]
            fixes.append(RepairItem("utf8-bom", "removed", "byte order mark removed (Pi could not parse line 1)", 1))
        torn_tail = lineno == last and not had_nl
        try:
            value = _parse(line)
        except ValueError:
            _unparsable(bytes(line), lineno, torn_tail, plan)
            continue
        if torn_tail:
            fixes.append(
                RepairItem(
                    "unterminated-last-line", "terminated", "the last line parses; its newline was added", lineno
                )
            )
        if type(value) is not dict:
            if not _truthy_json(value):
                fixes.append(
                    RepairItem("falsy-line", "removed", f"line {short_json(value)} removed (Pi drops it)", lineno)
                )
                continue
            fixes.append(
                RepairItem(
                    "non-object-line",
                    "removed",
                    f"line holding {short_json(value)} removed (not an entry; Pi kept it as a broken one)",
                    lineno,
                )
            )
            plan.removed.add(lineno)
            continue
        if crashes_of is not None and value.get("type") != "session" and (check_root(value) or not crashes_of(value)):
            # Nothing for _fix_crashes to do here (it skips check_root failures too).
            plan.lines.append(OutLine(lineno, 0, line, _skeleton(value), lean=True))
            continue
        plan.lines.append(OutLine(lineno, 0, line, value))
    if crlf_lines:
        fixes.append(
            RepairItem(
                "crlf-line-endings",
                "rewritten",
                f"{len(crlf_lines)} line(s) ended in CRLF; they now end in LF",
                crlf_lines[0],
            )
        )


def _unparsable(line: bytes, lineno: int, torn_tail: bool, plan: RepairPlan) -> None:
    fixes = plan.fixes
    text = line.decode("utf-8", "replace")
    if not text.strip(JS_WHITESPACE):
        fixes.append(RepairItem("blank-line", "removed", "blank line removed", lineno))
        return
    split = split_fused(line)
    code = "unterminated-last-line" if torn_tail else "malformed-json"
    if split is None:
        what = "torn last line" if torn_tail else "line that is not valid JSON"
        fixes.append(
            RepairItem(
                code,
                "removed",
                f"{what} removed ({len(line)} bytes, Pi skips it): {preview(line)}",
                lineno,
            )
        )
        return
    pieces, torn = split
    for i, piece in enumerate(pieces):
        value, _ = parse_json_line(piece)
        plan.lines.append(OutLine(lineno, i, piece, value))
    ids = [v if type(v := parse_json_line(p)[0].get("id")) is str else None for p in pieces]
    shown = ", ".join(i or "(no id)" for i in ids)
    msg = f"fused line split into {len(pieces)} entr{'y' if len(pieces) == 1 else 'ies'} ({shown})"
    if torn.strip():
        msg += f"; a torn prefix of {len(torn)} bytes that is not JSON was dropped: {preview(torn)}"
    fixes.append(RepairItem(code, "split", msg, lineno, ids[-1]))


# -- the header ----------------------------------------------------------------------------------


def _is_header(value: JsValue) -> bool:
    return type(value) is dict and value.get("type") == "session"


def cwd_from_folder(folder_name: str | None) -> str | None:
    """The cwd Pi's session folder name stands for (``--home-me-proj--`` → ``/home/me/proj``).

    Pi's encoding turns ``/``, ``\\`` and ``:`` into ``-``, so a cwd with dashes in it decodes
    ambiguously: the caller may prefer a candidate that exists (:func:`cwd_candidates`).
    """
    if not folder_name:
        return None
    m = _SESSION_DIR_RE.match(folder_name)
    if not m:
        return None
    return "/" + m.group(1).replace("-", "/")


def cwd_candidates(folder_name: str, limit: int = 4096) -> list[str]:
    """Every cwd that encodes to ``folder_name`` (each ``-`` read as ``/`` or ``-``), up to ``limit``."""
    m = _SESSION_DIR_RE.match(folder_name)
    if not m:
        return []
    parts = m.group(1).split("-")
    out = [parts[0]]
    for part in parts[1:]:
        out = [p + sep + part for p in out for sep in ("/", "-")]
        if len(out) > limit:
            return []
    return ["/" + p for p in out]


def _session_id_from_name(file_name: str | None) -> tuple[str, str] | None:
    if not file_name:
        return None
    m = _FILE_NAME_RE.match(file_name)
    if not m:
        return None
    stamp = m.group(1)
    # 2026-03-02T08-00-00-000Z -> 2026-03-02T08:00:00.000Z
    iso = f"{stamp[:13]}:{stamp[14:16]}:{stamp[17:19]}.{stamp[20:23]}Z"
    return m.group(2), iso


def infer_version(values: Iterable[Any]) -> int:
    """The header version a set of entries implies: no ids → 1; a ``hookMessage`` role → 2; else 3.

    One pass over ``values`` (an iterable: the lean plan parses each line again only for this).
    """
    any_entry = any_id = hook = False
    for v in values:
        if type(v) is not dict or v.get("type") == "session":
            continue
        any_entry = True
        any_id = any_id or "id" in v
        message = v.get("message")
        if v.get("type") == "message" and type(message) is dict and message.get("role") == "hookMessage":
            hook = True
    if any_entry and not any_id:
        return 1
    return 2 if hook else 3


def _fix_header(plan: RepairPlan, options: RepairOptions) -> None:
    lines = plan.lines
    if not lines:
        plan.remaining.append(RepairItem("missing-header", "none", "no JSON entry in the file: nothing to repair"))
        plan.writable = False
        return
    at = next((i for i, line in enumerate(lines) if _is_header(line.value)), None)
    named = _session_id_from_name(options.file_name)
    if at is not None:
        header_line = lines[at]
        if at > 0:
            lines.insert(0, lines.pop(at))
            plan.fixes.append(
                RepairItem(
                    "missing-header",
                    "moved",
                    f"the session header (line {header_line.origin}) moved first; Pi rejected the file "
                    f"because {at} parsed entr{'y' if at == 1 else 'ies'} came before it",
                    header_line.origin,
                )
            )
        if type(header_line.value.get("id")) is not str:
            new_id = named[0] if named else options.new_session_id
            if new_id is None:
                plan.remaining.append(
                    RepairItem("invalid-header", "none", "the header has no string id and none was given", at)
                )
                plan.writable = False
                return
            header = dict(header_line.value)
            old = header.get("id", UNDEFINED)
            header["id"] = new_id
            if old is UNDEFINED:
                header = _reorder_header(header)
            header_line.value = header
            header_line.data = to_json_bytes(header)
            header_line.edited = True
            source = "the file name" if named else "a new id"
            plan.fixes.append(
                RepairItem(
                    "invalid-header",
                    "rewritten",
                    f"header id {short_json(old) if old is not UNDEFINED else '(missing)'} → {new_id!r} ({source})",
                    header_line.origin,
                    new_id,
                )
            )
        return
    # No header at all: build one.
    cwd = options.cwd
    cwd_source = "--cwd"
    if cwd is None:
        cwd = cwd_from_folder(options.folder_name)
        cwd_source = "the session folder name"
    if cwd is None:
        plan.remaining.append(
            RepairItem(
                "missing-header",
                "none",
                "the file has no session header and is not in a Pi session folder: rerun with --cwd DIR "
                "(the project directory of this session) to rebuild it",
            )
        )
        plan.writable = False
        return
    session_id = named[0] if named else options.new_session_id
    if session_id is None:
        plan.remaining.append(RepairItem("missing-header", "none", "no session id for the rebuilt header"))
        plan.writable = False
        return
    timestamp = next(
        (ts for line in lines if type(v := full_value(line)) is dict and type(ts := v.get("timestamp")) is str),
        None,
    )
    if timestamp is None:
        timestamp = named[1] if named else options.now_timestamp
    version = infer_version(full_value(line) for line in lines)
    header = {"type": "session", "version": version, "id": session_id, "timestamp": timestamp, "cwd": cwd}
    lines.insert(0, OutLine(None, 0, to_json_bytes(header), header, edited=True))
    plan.fixes.append(
        RepairItem(
            "missing-header",
            "rebuilt",
            f"session header rebuilt: id {session_id!r} ({'file name' if named else 'new'}), version {version} "
            f"(inferred), cwd {cwd!r} (from {cwd_source}), timestamp {timestamp!r}",
            None,
            session_id,
        )
    )


def _reorder_header(header: Entry) -> dict[str, Any]:
    order = ["type", "version", "id", "timestamp", "cwd"]
    out = {k: header[k] for k in order if k in header}
    out.update((k, v) for k, v in header.items() if k not in out)
    return out


# -- entries -----------------------------------------------------------------------------------------


def _set(line: OutLine, value: dict[str, Any], plan: RepairPlan) -> None:
    line.value = value
    line.data = to_json_bytes(value)
    line.edited = True
    line.lean = False
    if line.origin is not None:
        plan.touched.add(line.origin)


def _id_of(value: JsValue) -> str | None:
    eid = value.get("id") if type(value) is dict else None
    return eid if type(eid) is str else None


_ZERO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def _crash_candidates(entry: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Small changes that may stop Pi throwing on ``entry``, each with a description."""
    etype = entry.get("type")
    out: list[tuple[dict[str, Any], str]] = []
    if etype == "session_info" and "name" in entry and type(entry["name"]) is not str and entry["name"] is not None:
        new = dict(entry)
        new["name"] = json.dumps(entry["name"], ensure_ascii=False)
        out.append((new, "session_info name made a string"))
    if etype != "message":
        return out
    message = entry.get("message", UNDEFINED)
    if type(message) is not dict:
        new = dict(entry)
        new["type"] = "custom"
        new["customType"] = "pitools-repair"
        out.append((new, "a message entry without a message object became a `custom` entry (Pi shows nothing for it)"))
        return out
    new_message = dict(message)
    notes: list[str] = []
    role = message.get("role")
    content = message.get("content", UNDEFINED)
    if role in ("assistant", "toolResult", "user") and type(content) is not list:
        if type(content) is str and role != "user":
            new_message["content"] = [{"type": "text", "text": content}]
            notes.append("string content → one text block")
        elif type(content) is dict:
            new_message["content"] = [content]
            notes.append("object content → a one-block array")
        elif content is None or content is UNDEFINED:
            if role != "assistant":
                new_message["content"] = []
                notes.append("missing content → []")
        elif type(content) is not str:
            new_message["content"] = [{"type": "text", "text": json.dumps(content, ensure_ascii=False)}]
            notes.append(f"{type(content).__name__} content → one text block holding its JSON")
    if role == "assistant":
        usage = message.get("usage", UNDEFINED)
        if type(usage) is not dict:
            new_message["usage"] = {
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": dict(_ZERO_COST),
            }
            notes.append("missing usage → zero usage")
        elif type(usage.get("cost")) is not dict:
            new_usage = dict(usage)
            new_usage["cost"] = dict(_ZERO_COST)
            new_message["usage"] = new_usage
            notes.append("missing usage.cost → zero cost")
    if notes:
        new = dict(entry)
        new["message"] = new_message
        out.append((new, "; ".join(notes)))
    return out


def _fix_crashes(
    entries: list[OutLine], plan: RepairPlan, crashes_of: Callable[[dict[str, Any]], dict[str, list[str]]]
) -> None:
    from pitools.core.session.entry_precheck import check_root

    for line in entries:
        value = line.value
        if line.lean or type(value) is not dict or check_root(value):
            continue  # a lean line was checked while it was read
        crashes = crashes_of(value)
        if not crashes:
            continue
        what = "; ".join(crashes)
        for candidate, note in _crash_candidates(value):
            if not crashes_of(candidate):
                _set(line, candidate, plan)
                plan.fixes.append(
                    RepairItem("pi-would-crash", "rewritten", f"{note} (Pi threw: {what})", line.origin, _id_of(value))
                )
                break
        else:
            plan.remaining.append(
                RepairItem(
                    "pi-would-crash",
                    "none",
                    f"Pi 1.6.0 throws on this entry ({what}); no safe change found, left as is",
                    line.origin,
                    _id_of(value),
                )
            )


def _dedupe_id(base: str, origin: int | None, piece: int, taken: set[str]) -> str:
    seed = f"{base}\0{origin}\0{piece}"
    n = 0
    while True:
        candidate = hashlib.sha256(f"{seed}\0{n}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
        if candidate not in taken:
            taken.add(candidate)
            return candidate
        n += 1


def _fix_duplicates(entries: list[OutLine], plan: RepairPlan) -> None:
    last: dict[str, int] = {}
    for i, line in enumerate(entries):
        eid = _id_of(line.value)
        if eid is not None:
            last[eid] = i
    taken = set(last)
    for i, line in enumerate(entries):
        eid = _id_of(line.value)
        if eid is None or last[eid] == i:
            continue
        new_id = _dedupe_id(eid, line.origin, line.piece, taken)
        value = dict(full_value(line))
        value["id"] = new_id
        _set(line, value, plan)
        keeper = entries[last[eid]]
        plan.fixes.append(
            RepairItem(
                "duplicate-id",
                "renamed",
                f"id {eid!r} renamed to {new_id!r}: line {keeper.origin} has the same id and Pi resolves it "
                "to that later entry, so references keep pointing there",
                line.origin,
                eid,
            )
        )


def _fix_cycles(entries: list[OutLine], plan: RepairPlan) -> None:
    from pitools.core.session.tree import SessionIndex

    for line in entries:
        value = line.value
        eid = _id_of(value)
        if eid is not None and value.get("parentId") == eid:
            new = dict(full_value(line))
            new["parentId"] = None
            _set(line, new, plan)
            plan.fixes.append(
                RepairItem("self-parent", "cut", "parentId pointed to the entry itself; set to null", line.origin, eid)
            )
    index = SessionIndex.build([line.value for line in entries])
    cycles = index.find_cycles()
    if not cycles:
        return
    children = index.children_positions()
    for loop_ids in cycles:
        positions = [p for i in loop_ids if (p := index.position_of(i)) is not None]
        if not positions:
            continue
        cut = _choose_cut(positions, entries, children)
        line = entries[cut]
        new = dict(full_value(line))
        old_parent = new.get("parentId")
        new["parentId"] = None
        _set(line, new, plan)
        plan.fixes.append(
            RepairItem(
                "parent-cycle",
                "cut",
                f"parentIds looped ({_loop_text(loop_ids)}); the link to {short_json(old_parent)} "
                "was cut, so this entry starts the longest chain",
                line.origin,
                _id_of(line.value),
            )
        )


def _loop_text(ids: list[str], limit: int = 8) -> str:
    if len(ids) <= limit:
        return " -> ".join([*ids, ids[0]])
    return " -> ".join(ids[:limit]) + f" -> … ({len(ids)} entries) -> {ids[0]}"


def _choose_cut(positions: list[int], entries: list[OutLine], children: dict[Any, list[int]]) -> int:
    """The loop member that, made a root, leaves the deepest tree (ties: earliest in the file)."""
    from pitools.core.session.tree import mkey

    if len(positions) > 200:
        return min(positions)
    best: tuple[int, int] | None = None
    for pos in sorted(positions):
        depth = 0
        seen = {pos}
        frontier = [pos]
        while frontier:
            nxt = []
            for node in frontier:
                for child in children.get(mkey(entries[node].value.get("id")), ()):
                    if child not in seen:
                        seen.add(child)
                        nxt.append(child)
            if nxt:
                depth += 1
            frontier = nxt
        if best is None or depth > best[0]:
            best = (depth, pos)
    assert best is not None
    return best[1]


def _fix_orphans(entries: list[OutLine], plan: RepairPlan, reattach: bool) -> None:
    from pitools.core.session.tree import mkey

    known = {mkey(line.value.get("id", UNDEFINED)) for line in entries if type(line.value) is dict}
    previous: str | None = None
    for line in entries:
        value = line.value
        if type(value) is not dict:
            continue
        pid = value.get("parentId", UNDEFINED)
        if js_truthy(pid) and mkey(pid) not in known:
            eid = _id_of(value)
            if reattach:
                new = dict(full_value(line))
                new["parentId"] = previous
                _set(line, new, plan)
                target = f"the previous entry {previous!r}" if previous else "null (no entry before it)"
                plan.fixes.append(
                    RepairItem(
                        "orphan-entry",
                        "reattached",
                        f"parentId {short_json(pid)} matched no entry; linked to {target}",
                        line.origin,
                        eid,
                    )
                )
            else:
                plan.remaining.append(
                    RepairItem(
                        "orphan-entry",
                        "none",
                        f"parentId {short_json(pid)} matches no entry; Pi's path ends here "
                        "(rerun with --reattach to link it to the previous entry)",
                        line.origin,
                        eid,
                    )
                )
        eid = _id_of(value)
        if eid is not None:
            previous = eid


# -- the plan ----------------------------------------------------------------------------------------


def plan_repair(
    data: bytes,
    options: RepairOptions | None = None,
    *,
    crashes_of: Callable[[dict[str, Any]], dict[str, list[str]]] | None = None,
    lean: bool = True,
) -> RepairPlan:
    """Every fix for a damaged session, and the repaired lines (nothing written).

    ``crashes_of`` replays the Pi functions that may throw on one entry (default: the ones
    ``validate`` uses for ``pi-would-crash``). With ``lean`` (the default) a line keeps only
    its entry's ``id``/``parentId`` unless a fix needs more (:attr:`OutLine.lean`); the plan is
    the same either way (tested on every golden repair case and fuzzed inputs).
    """
    from pitools.core.session.migrate import effective_version

    options = options or RepairOptions()
    if crashes_of is None:
        from pitools.core.validate.pi_crashes import pi_crashes

        crashes_of = pi_crashes
    plan = RepairPlan(lines=[])
    if not data:
        plan.remaining.append(RepairItem("empty-file", "none", "the file is empty: nothing to repair"))
        plan.writable = False
        return plan
    _scan_lines(data, plan, crashes_of if lean else None)
    _fix_header(plan, options)
    if not plan.writable:
        return plan
    entries = [line for line in plan.lines[1:] if not _is_header(line.value)]
    _fix_crashes(entries, plan, crashes_of)
    if effective_version(plan.lines[0].value.get("version")) >= 2:
        # v1 entries get their ids from Pi's migration, so only v2/v3 trees can be wrong.
        _fix_duplicates(entries, plan)
        _fix_cycles(entries, plan)
        _fix_orphans(entries, plan, options.reattach)
    plan.fixes.sort(key=lambda f: (f.line is not None, f.line or 0))
    return plan
