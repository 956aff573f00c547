"""The per-entry pass of ``validate``: checks one entry at a time and keeps a slim record of it.

Everything the later checks need from an entry (its id and parent as hashable keys, type,
message role, tool calls, timestamp, references) is copied into :class:`Records`, a set of
parallel lists; the entry itself can then be dropped. That lets ``validate`` stream a file
(parse, check, forget), and lets two processes scan the two halves of a big file and merge
their records (:meth:`Records.extend`).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.date import js_date_ms
from pitools.core.js.json.encode import short_json as _js
from pitools.core.js.ops import prop, strict_equal
from pitools.core.js.value import UNDEFINED
from pitools.core.session.findings import Finding
from pitools.core.session.load import ScannedValue
from pitools.core.session.tree import id_text as tree_id_text
from pitools.core.session.tree import js_truthy_id
from pitools.core.validate.codes import CODES
from pitools.core.validate.pi_crashes import (
    PI_STRINGIFY_MIN_BYTES,
    Suspicion,
    context_usage_crash,
    stringify_crash,
)

#: The key of an entry without an id (and of non-object entries): Pi's ``byId`` holds the last one.
UNDEF_KEY: Any = ("undefined",)

# Ranks order the findings of one entry (one line) the way the checks run.
R_TYPE, R_DUPLICATE, R_SELF_PARENT, R_TIMESTAMP, R_KIND, R_SHAPE, R_INTERNAL = range(7)

_ROLES_WITH_CONTENT_EDITS = ("user", "assistant", "toolResult", "custom")
_EDITABLE_MESSAGE_ROLES = ("user", "assistant", "toolResult")


def id_key(value: Any, where: Any, slot: str) -> Any:
    """A hashable key with JS ``Map`` identity for an id value, that survives pickling.

    Strings, numbers and null are their own keys (``1`` and ``1.0`` are one key, as in a Map);
    booleans are tagged so ``true`` is not ``1``; an object or array is equal only to itself,
    so it gets a key no other value has (``where`` it is: file part and line, and its field).
    """
    t = type(value)
    if t is str or t is int or t is float or value is None:
        return value
    if value is UNDEFINED:
        return UNDEF_KEY
    if t is bool:
        return ("bool", value)
    return ("object", where, slot)


def id_text(value: Any) -> str:
    """An id as finding messages quote it: strings as they are, anything else as JSON."""
    return value if type(value) is str else _js(value)


# -- timestamps ---------------------------------------------------------------------------------

# ISO 8601 date or date-time as Pi writes and reads it (`new Date(...)` accepts more; we do not).
_ISO_RE = re.compile(
    r"[+-]?\d{4,6}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?)?"
)
# Pi's own format (toISOString) with a date every month has: such strings compare
# chronologically as text.
_PI_FORMAT_RE = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z"
)
_pi_format_match = _PI_FORMAT_RE.fullmatch
_SECONDS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def pi_format(text: str) -> bool:
    """``YYYY-MM-DDTHH:MM:SS.sssZ`` with a date every month has (so text order is time order)."""
    return _pi_format_match(text) is not None


def iso_ok(text: str) -> bool:
    if pi_format(text):
        return True
    if not _ISO_RE.fullmatch(text):
        return False
    ms = js_date_ms(text)
    return ms == ms  # NaN: out of JavaScript's date range


def time_key(ts: Any) -> str | float | None:
    """A sortable form of an entry timestamp: Pi's own format as is, anything else as Date ms."""
    if type(ts) is not str:
        return None
    if _pi_format_match(ts) is not None:
        return ts  # toISOString() output sorts chronologically as text
    if len(ts) == 20 and _SECONDS_RE.fullmatch(ts) and pi_format(ts[:19] + ".000Z"):
        return ts[:19] + ".000Z"
    ms = js_date_ms(ts)
    return None if ms != ms else float(ms)


def before(a: str | float, b: str | float) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a < b
    a_ms = float(js_date_ms(a)) if isinstance(a, str) else a
    b_ms = float(js_date_ms(b)) if isinstance(b, str) else b
    return a_ms < b_ms


# -- records --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Records:
    """What the tree checks need of each entry, in file order (index = entry position).

    Lists hold a value per entry; the ``dict`` fields hold values only for the entries that
    have one (tool calls, odd ids...), keyed by position.
    """

    #: Line numbers as machine integers (8 bytes each, not a 36-byte int object per entry).
    lines: array[int] = field(default_factory=lambda: array("q"))
    #: :func:`id_key` of the id and of a JS-truthy parentId (None: no parent).
    keys: list[Any] = field(default_factory=list)
    parent_keys: list[Any] = field(default_factory=list)
    #: Entry type when it is a string; None otherwise.
    types: list[str | None] = field(default_factory=list)
    #: Message role, for ``message`` entries whose message is an object with a string role.
    roles: list[str | None] = field(default_factory=list)
    #: :func:`time_key` of the timestamp, and the timestamp text where it is not that key.
    time_keys: list[str | float | None] = field(default_factory=list)
    stamps: dict[int, str] = field(default_factory=dict)
    #: Assistant messages with tool calls: (call ids skipped as error/aborted?, ((id, name), ...)).
    calls: dict[int, tuple[bool, tuple[tuple[str, str], ...]]] = field(default_factory=dict)
    #: Tool results with a string toolCallId.
    results: dict[int, str] = field(default_factory=dict)
    #: Raw id / parentId values that are not strings (for messages), and entry descriptions
    #: that the type and role do not give (non-objects, odd roles).
    odd_ids: dict[int, Any] = field(default_factory=dict)
    odd_parents: dict[int, Any] = field(default_factory=dict)
    odd_kinds: dict[int, str] = field(default_factory=dict)
    non_objects: set[int] = field(default_factory=set)
    self_parents: set[int] = field(default_factory=set)
    #: Reference checks to run once every id is known: (position, entry type, data).
    refs: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    #: False for a v1 file: its ids come from pitools' migration, not the file.
    show_ids: bool = True
    #: Replies whose usage Pi's getContextUsage throws on (once a compaction is on the branch).
    usage_crashes: dict[int, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.lines)

    def shown_id(self, pos: int) -> str | None:
        """The id a finding shows (None: not a string, or ids hidden)."""
        key = self.keys[pos]
        return key if type(key) is str and self.show_ids else None

    def stamp(self, pos: int) -> Any:
        """The entry's timestamp text, when it has a time key."""
        return self.stamps.get(pos, self.time_keys[pos])

    def id_text(self, pos: int) -> str:
        odd = self.odd_ids.get(pos, _NONE)
        return id_text(odd) if odd is not _NONE else str(self.keys[pos])

    def tree_id_text(self, pos: int) -> str:
        """The id as Pi's tree messages show it (``(no id)``, ``null``, or repr)."""
        odd = self.odd_ids.get(pos, _NONE)
        return tree_id_text(odd) if odd is not _NONE else str(self.keys[pos])

    def parent_text(self, pos: int) -> str:
        odd = self.odd_parents.get(pos, _NONE)
        return id_text(odd) if odd is not _NONE else str(self.parent_keys[pos])

    def kind(self, pos: int) -> str:
        """What the entry is, for messages: "user message", "label entry", "non-object entry"..."""
        odd = self.odd_kinds.get(pos)
        if odd is not None:
            return odd
        etype, role = self.types[pos], self.roles[pos]
        if etype == "message":
            return f"{role} message" if role is not None else "message"
        return f"{etype} entry"

    def editable(self, pos: int) -> bool:
        """``appendContextEdit``'s rule: user/assistant/toolResult messages and custom_message entries."""
        etype = self.types[pos]
        return etype == "custom_message" or (etype == "message" and self.roles[pos] in _EDITABLE_MESSAGE_ROLES)

    def contributes_editable_role(self, pos: int) -> bool:
        """Whether ``projectContextEntry`` would swap the content of one of this entry's messages."""
        etype = self.types[pos]
        return etype == "custom_message" or (etype == "message" and self.roles[pos] in _ROLES_WITH_CONTENT_EDITS)

    def extend(self, other: Records, line_shift: int = 0) -> None:
        """Append ``other``'s entries (scanned from a later part of the file) after these."""
        shift = len(self.lines)
        if line_shift:
            self.lines.extend(line + line_shift for line in other.lines)
        else:
            self.lines.extend(other.lines)
        for name in ("keys", "parent_keys", "types", "roles", "time_keys"):
            getattr(self, name).extend(getattr(other, name))
        for name in ("calls", "results", "odd_ids", "odd_parents", "odd_kinds", "stamps", "usage_crashes"):
            mine = getattr(self, name)
            for pos, value in getattr(other, name).items():
                mine[pos + shift] = value
        self.non_objects.update(pos + shift for pos in other.non_objects)
        self.self_parents.update(pos + shift for pos in other.self_parents)
        self.refs.extend((pos + shift, etype, data) for pos, etype, data in other.refs)


_NONE: Any = object()
_NOTHING_COVERED: frozenset[tuple[str, ...]] = frozenset()

#: A finding of the entry pass with its sort key: (line, rank within the entry, finding).
RankedFinding = tuple[int, int, Finding]


class Scanner:
    """Runs the per-entry checks and fills :class:`Records`; never raises for bad data."""

    def __init__(
        self,
        *,
        show_ids: bool = True,
        part: int = 0,
        suspicion: Suspicion | None = None,
        rewritten_at_open: bool = False,
    ) -> None:
        from pitools.core.session.entry_precheck import ENTRY_TYPES, MESSAGE_ROLES, check_root

        self.records = Records(show_ids=show_ids)
        self.findings: list[RankedFinding] = []
        self.show_ids = show_ids
        #: Which part of the file this scanner reads (line numbers restart in each part).
        self.part = part
        self.fast = check_root
        self.known_types = frozenset(ENTRY_TYPES)
        self.shared: dict[str, str] = {name: name for name in (*ENTRY_TYPES, *MESSAGE_ROLES)}
        self.known_roles = frozenset(MESSAGE_ROLES)
        self.suspicion = suspicion or Suspicion()
        #: Pi migrates the file when it opens it and writes every entry back.
        self.rewritten_at_open = rewritten_at_open

    def add(self, line: int, rank: int, code: str, message: str, shown_id: str | None) -> None:
        self.findings.append((line, rank, Finding(code, CODES[code].severity, message, line, shown_id)))

    def scan(self, entry: Any, line: int, size: int = 0) -> None:
        """Check one entry (not the header) and record it.

        The common case (string type, id, parentId and Pi-format timestamp) takes a straight
        path: this runs for every line of a session.
        """
        rec = self.records
        pos = len(rec.lines)
        rec.lines.append(line)
        if type(entry) is not dict:  # the loader reported it (non-object-line)
            rec.keys.append(UNDEF_KEY)
            rec.parent_keys.append(None)
            rec.types.append(None)
            rec.roles.append(None)
            rec.time_keys.append(None)
            rec.odd_ids[pos] = UNDEFINED
            rec.odd_kinds[pos] = "non-object entry"
            rec.non_objects.add(pos)
            return
        get = entry.get
        etype = get("type", UNDEFINED)
        eid = get("id", UNDEFINED)
        pid = get("parentId", UNDEFINED)
        if type(eid) is str:
            rec.keys.append(eid)
            shown = eid if self.show_ids else None
        else:
            rec.keys.append(id_key(eid, (self.part, line), "id"))
            rec.odd_ids[pos] = eid
            shown = None
        if type(pid) is str:
            # Usually the previous entry's id: keep one string object for both (memory per entry).
            if len(rec.keys) > 1 and pid == (last := rec.keys[-2]):
                pid = last
            rec.parent_keys.append(pid or None)
            self_parent = pid == eid and pid != ""
        elif js_truthy_id(pid):
            rec.parent_keys.append(id_key(pid, (self.part, line), "parentId"))
            rec.odd_parents[pos] = pid
            self_parent = strict_equal(pid, eid)
        else:
            rec.parent_keys.append(None)
            self_parent = False
        # Known type and role names are shared constants, not one string per entry.
        rec.types.append(self.shared.get(etype, etype) if type(etype) is str else None)
        ts = get("timestamp", UNDEFINED)
        if type(ts) is str and _pi_format_match(ts) is not None:
            rec.time_keys.append(ts)
            odd_stamp = False
        else:
            rec.time_keys.append(None)
            odd_stamp = type(ts) is str
        role = None
        if etype == "message":
            message = get("message", UNDEFINED)
            if type(message) is dict:
                role = message.get("role", UNDEFINED)
                if type(role) is not str:
                    if role is not None:  # a null role reads as a plain "message"
                        rec.odd_kinds[pos] = f"{id_text(role)} message"
                    role = None
                elif role == "assistant":
                    content = message.get("content")
                    if type(content) is list:
                        calls = [
                            (block["id"], name if type(name := block.get("name")) is str else "?")
                            for block in content
                            if type(block) is dict and block.get("type") == "toolCall" and type(block.get("id")) is str
                        ]
                        if calls:
                            rec.calls[pos] = (message.get("stopReason") in ("error", "aborted"), tuple(calls))
                elif role == "toolResult":
                    result_id = message.get("toolCallId")
                    if type(result_id) is str:
                        rec.results[pos] = result_id
        rec.roles.append(role if role is None else self.shared.get(role, role))
        try:
            covered: Set[tuple[str, ...]]
            if (
                self_parent
                or odd_stamp
                or type(etype) is not str
                or etype not in self.known_types
                or (etype != "message" or role not in self.known_roles)
            ):
                covered = self._unusual(entry, pos, line, etype, eid, ts, odd_stamp, self_parent, role, shown)
            else:
                covered = _NOTHING_COVERED
            too_deep = None
            if size >= PI_STRINGIFY_MIN_BYTES:  # only a long line can nest that deep
                too_deep = stringify_crash(entry, self.rewritten_at_open)
                if too_deep is not None:
                    self.add(line, R_SHAPE, "pi-would-crash", too_deep, shown)
                    # Pi's rewrite stops at the first such entry: the later ones are simply lost.
                    self.rewritten_at_open = False
            if not self.fast(entry):
                for code, message_text in self.suspicion.findings(entry, set(covered), too_deep is not None):
                    self.add(line, R_SHAPE, code, message_text, shown)
                if role == "assistant":
                    usage_crash = context_usage_crash(entry)
                    if usage_crash is not None:
                        rec.usage_crashes[pos] = usage_crash
        except Exception as exc:
            self.add(line, R_INTERNAL, "internal-check-error", internal_message("entries", exc), None)

    def _unusual(
        self,
        entry: dict[str, Any],
        pos: int,
        line: int,
        etype: Any,
        eid: Any,
        ts: Any,
        odd_stamp: bool,
        self_parent: bool,
        role: str | None,
        shown: Any,
    ) -> set[tuple[str, ...]]:
        """Every check an ordinary message does not need; returns the field paths it reported."""
        rec = self.records
        if type(etype) is str:
            if etype not in self.known_types:
                self.add(line, R_TYPE, "unknown-entry-type", f"unknown entry type {_js(etype)}; Pi keeps it", shown)
        else:
            rec.odd_kinds[pos] = f"{id_text(etype)} entry"
        if self_parent:
            rec.self_parents.add(pos)
            self.add(
                line,
                R_SELF_PARENT,
                "self-parent",
                f"entry {id_text(eid)} is its own parent; Pi's getTree shows it as a root, "
                "but its path walk never ends",
                shown,
            )
        if odd_stamp:
            key = time_key(ts)
            if key is not None:
                rec.time_keys[pos] = key
                rec.stamps[pos] = ts
            # A text key is one of the two ISO forms time_key recognises: valid already.
            if type(key) is not str and not iso_ok(ts):
                self.add(
                    line, R_TIMESTAMP, "invalid-timestamp", f"timestamp {_js(ts)} is not an ISO 8601 date-time", shown
                )
        covered: set[tuple[str, ...]] = set()
        if etype == "message":
            if role is not None and role not in self.known_roles:
                self.add(
                    line,
                    R_KIND,
                    "unknown-message-role",
                    f"unknown message role {_js(role)}; Pi's convertToLlm drops it",
                    shown,
                )
        elif etype == "compaction":
            if "firstKeptEntryId" not in entry:
                covered.add(("firstKeptEntryId",))
                self.add(
                    line,
                    R_KIND,
                    "compaction-missing-first-kept",
                    "compaction has no firstKeptEntryId; Pi keeps nothing from before it",
                    shown,
                )
            else:
                first_kept = entry["firstKeptEntryId"]
                # Its own id: a retain-none compaction.
                if not strict_equal(first_kept, eid):
                    rec.refs.append(
                        (pos, etype, {"key": id_key(first_kept, (self.part, line), "f"), "text": id_text(first_kept)})
                    )
        elif etype == "context_edit":
            self._context_edit(entry, pos, line, shown, covered)
        elif etype == "label":
            target = entry.get("targetId", UNDEFINED)
            if target is not UNDEFINED:
                rec.refs.append((pos, etype, {"key": id_key(target, (self.part, line), "t"), "text": id_text(target)}))
        elif etype == "branch_summary":
            from_id = entry.get("fromId", UNDEFINED)
            # "root": what Pi writes when the abandoned branch had no leaf.
            if type(from_id) is str and from_id != "root":
                rec.refs.append((pos, etype, {"key": from_id, "text": from_id}))
        return covered

    def _context_edit(self, entry: dict[str, Any], pos: int, line: int, shown: Any, covered: set[Any]) -> None:
        replacement = entry.get("replacement", UNDEFINED)
        valid = replacement is None or (
            type(replacement) is dict and type(replacement.get("content", UNDEFINED)) in (str, list)
        )
        if not valid:
            covered.add(("replacement",))
            self.add(
                line,
                R_KIND,
                "context-edit-invalid-replacement",
                f"replacement {_js(replacement)} is neither null nor "
                "{content: string | array}; Pi's appendContextEdit refuses that",
                shown,
            )
        target = entry.get("targetId", UNDEFINED)
        if target is UNDEFINED:
            return  # missing-field
        data: dict[str, Any] = {
            "key": id_key(target, (self.part, line), "t"),
            "text": id_text(target),
            "hides": replacement is None,
            # Whether an assistant turn keeps tool calls under this edit (a text rendering drops them).
            "keeps_calls": type(replacement) is dict
            and type(content := replacement.get("content")) is list
            and any(type(b) is dict and b.get("type") == "toolCall" for b in content),
        }
        if not valid:
            data["why"] = (
                "projectContextEntry reads `content` of undefined (TypeError)"
                if replacement is UNDEFINED
                else f"the message content becomes {_js(prop(replacement, 'content'))}, which "
                "estimateTokens cannot iterate (TypeError: … is not iterable)"
            )
        self.records.refs.append((pos, "context_edit", data))


def scan_entries(entries: Iterable[ScannedValue], scanner: Scanner, extra_headers: list[Finding]) -> None:
    """Feed every entry to ``scanner``; later ``session`` lines become extra-header findings."""
    scan = scanner.scan
    for value, line, _offset, size in entries:
        if type(value) is dict and value.get("type") == "session":
            eid = value.get("id")
            extra_headers.append(
                Finding(
                    "extra-header",
                    CODES["extra-header"].severity,
                    "a second session header; Pi ignores it",
                    line,
                    eid if isinstance(eid, str) else None,
                )
            )
            continue
        scan(value, line, size)


def internal_message(check: str, exc: BaseException) -> str:
    return f"check {check!r} failed ({type(exc).__name__}: {exc}); this is a pitools bug"
