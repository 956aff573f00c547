"""``pitools validate``: every problem Pi 1.6.0 would have with a session file, as findings.

:func:`validate_file` loads a file the way Pi does (:func:`~pitools.core.session.open_session`,
migration included, never writing), then runs cheap checks in one pass over the entries and one
walk over the tree. Each :class:`Finding` has a stable kebab-case code (the :data:`CODES` table),
a severity and, where it has one, a line number. Bad input never raises: the worst a file can do is
produce findings, and a bug in a check becomes an ``internal-check-error`` finding.

Speed: the pydantic models of :mod:`pitools.core.model` are imported here (not by the loader) and
run only on entries that fail the fast predicate compiled from those same models; Pi's own
functions (``getSessionStats``, ``estimateTokens``...) are replayed only on those entries too,
because a crash needs data outside Pi's types.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from pitools.core.errors import PiCrashError, SessionParseError
from pitools.core.jsonout import short_json as _js
from pitools.core.jsops import prop, strict_equal
from pitools.core.jsvalue import UNDEFINED, js_date_ms
from pitools.core.load import ERROR, INFO, WARNING, gc_paused
from pitools.core.migrate import MigrationError, effective_version
from pitools.core.session import Session, open_session
from pitools.core.tree import SessionIndex, js_truthy_id, mkey

__all__ = [
    "CODES",
    "SEVERITIES",
    "CodeInfo",
    "Finding",
    "ValidationReport",
    "prepare",
    "severity_rank",
    "validate_file",
]

#: Severities from least to most serious.
SEVERITIES: tuple[str, ...] = (INFO, WARNING, ERROR)
_RANK = {INFO: 0, WARNING: 1, ERROR: 2}


def severity_rank(severity: str) -> int:
    """0 for info, 1 for warning, 2 for error."""
    return _RANK[severity]


@dataclass(frozen=True, slots=True)
class CodeInfo:
    severity: str
    summary: str


#: Every finding code, its fixed severity and what it means. The README table is built from this.
CODES: dict[str, CodeInfo] = {
    # -- reading the file (reported by pitools.core.load / session) --
    "unreadable-file": CodeInfo(ERROR, "the file cannot be opened or read"),
    "empty-file": CodeInfo(ERROR, "the file is empty; Pi would start a new session in it"),
    "missing-header": CodeInfo(ERROR, "the first JSON line is not a session header; Pi rejects the file"),
    "invalid-header": CodeInfo(ERROR, "the header has no string id; Pi rejects the file"),
    "utf8-bom": CodeInfo(ERROR, "the file starts with a byte order mark; Pi cannot parse that line"),
    "malformed-json": CodeInfo(ERROR, "a line is not valid JSON; Pi skips it"),
    "non-object-line": CodeInfo(ERROR, "a line is a JSON array, number or string; Pi keeps it as a broken entry"),
    "invalid-utf8": CodeInfo(WARNING, "invalid UTF-8, which Pi replaces with U+FFFD"),
    "falsy-line": CodeInfo(WARNING, "a line is null, false, 0 or an empty string; Pi drops it"),
    "line-too-long": CodeInfo(WARNING, "a line is longer than pitools' limit"),
    "header-not-first": CodeInfo(WARNING, "lines before the header, which Pi skips"),
    "extra-header": CodeInfo(WARNING, "a second session header, which Pi ignores"),
    "unterminated-last-line": CodeInfo(WARNING, "the last line has no newline (torn write); Pi appends one"),
    "blank-line": CodeInfo(INFO, "a blank line, which Pi skips"),
    "crlf-line-endings": CodeInfo(INFO, "CRLF line endings (Pi reads them)"),
    # -- header --
    "header-version": CodeInfo(WARNING, "the header version is not a number from 1 to 3"),
    "needs-migration": CodeInfo(INFO, "a v1/v2 session; Pi migrates it to v3 and rewrites the file on open"),
    # -- entry shapes --
    "missing-field": CodeInfo(WARNING, "a field Pi's types require is missing (an error only via pi-would-crash)"),
    "invalid-field": CodeInfo(WARNING, "a field has the wrong type or value (an error only via pi-would-crash)"),
    "invalid-timestamp": CodeInfo(WARNING, "a timestamp is not an ISO 8601 date-time"),
    "unknown-entry-type": CodeInfo(WARNING, "an entry type Pi 1.6.0 does not know; it is kept but ignored"),
    "unknown-message-role": CodeInfo(WARNING, "a message role Pi 1.6.0 does not know; it never reaches the model"),
    # -- the tree --
    "duplicate-id": CodeInfo(ERROR, "two entries share an id; Pi keeps only the last one"),
    "orphan-entry": CodeInfo(ERROR, "parentId matches no entry; Pi's path ends there"),
    "parent-cycle": CodeInfo(ERROR, "parentIds form a loop; Pi would loop forever"),
    "self-parent": CodeInfo(ERROR, "an entry is its own parent; Pi's path walk never ends"),
    "multiple-roots": CodeInfo(INFO, "more than one entry has no parent"),
    # -- references between entries --
    "compaction-missing-first-kept": CodeInfo(
        WARNING, "a compaction's firstKeptEntryId is missing or matches no entry; Pi keeps nothing before it"
    ),
    "compaction-first-kept-off-path": CodeInfo(
        WARNING, "a compaction's firstKeptEntryId is not an ancestor; Pi keeps nothing before it"
    ),
    "context-edit-missing-target": CodeInfo(WARNING, "a context_edit's targetId matches no entry"),
    "context-edit-off-branch": CodeInfo(WARNING, "a context_edit's target is not on the edit's own branch"),
    "context-edit-not-editable": CodeInfo(
        WARNING,
        "a context_edit targets something other than a user/assistant/toolResult message or custom_message",
    ),
    "context-edit-invalid-replacement": CodeInfo(
        ERROR, "a context_edit replacement is neither null nor an object with string or array content"
    ),
    "label-missing-target": CodeInfo(WARNING, "a label's targetId matches no entry"),
    "branch-summary-missing-from": CodeInfo(WARNING, "a branch_summary's fromId matches no entry"),
    # -- conversation --
    "tool-result-without-call": CodeInfo(WARNING, "a tool result answers no toolCall earlier on its path"),
    "tool-call-unanswered": CodeInfo(
        WARNING, "a tool call gets no result although the conversation goes on; Pi inserts a synthetic error"
    ),
    "timestamp-backwards": CodeInfo(INFO, "an entry's timestamp is earlier than its parent's"),
    "pi-would-crash": CodeInfo(ERROR, "Pi 1.6.0 itself throws on this data"),
    "internal-check-error": CodeInfo(ERROR, "a pitools check failed (a bug; please report it)"),
}

#: Findings reported per entry for shape problems, at most.
MAX_FIELD_FINDINGS_PER_ENTRY = 5


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: a code from :data:`CODES`, its severity, a message and where it is."""

    code: str
    severity: str
    message: str
    line: int | None = None
    entry_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "line": self.line,
            "entryId": self.entry_id,
        }


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """The immutable result of validating one file."""

    path: str
    findings: tuple[Finding, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """Findings per severity (``error``, ``warning``, ``info``; zeros included)."""
        counts = {ERROR: 0, WARNING: 0, INFO: 0}
        for f in self.findings:
            counts[f.severity] += 1
        return counts

    def failed(self, fail_on: str = ERROR) -> bool:
        """True when a finding is at least as serious as ``fail_on``."""
        floor = _RANK[fail_on]
        return any(_RANK[f.severity] >= floor for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "findings": [f.to_json() for f in self.findings], "counts": self.counts}


def validate_file(
    path: str | os.PathLike[str],
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    min_severity: str = INFO,
) -> ValidationReport:
    """Validate one session file against Pi 1.6.0's format and behaviour; never raises for bad input.

    ``select`` keeps only the given codes, ``ignore`` drops them, ``min_severity`` drops findings
    below that severity. Unknown codes or severities raise ``ValueError`` (a caller's mistake).
    """
    selected = _code_set(select, "select")
    ignored = _code_set(ignore, "ignore") or frozenset()
    if min_severity not in _RANK:
        raise ValueError(f"unknown severity {min_severity!r}; expected one of {', '.join(SEVERITIES)}")
    spath = os.fspath(path)
    checker = _Checker(spath)
    try:
        with gc_paused():  # the whole run: the checks keep allocating while entries are alive
            checker.run()
    except Exception as exc:  # the last line of defence: a report, never a traceback
        checker.internal("validate", exc)
    floor = _RANK[min_severity]
    kept = [
        f
        for f in checker.findings
        if (selected is None or f.code in selected) and f.code not in ignored and _RANK[f.severity] >= floor
    ]
    kept.sort(key=lambda f: 0 if f.line is None else f.line)
    return ValidationReport(spath, tuple(kept))


def prepare() -> None:
    """Build the models and the fast check now: forked worker processes then inherit them."""
    from pitools.core.model import entry_adapter, entry_check

    entry_check()
    entry_adapter()


def _code_set(codes: Iterable[str] | None, what: str) -> frozenset[str] | None:
    if codes is None:
        return None
    out = frozenset(codes)
    unknown = sorted(out - CODES.keys())
    if unknown:
        raise ValueError(f"--{what}: unknown code(s) {', '.join(unknown)}")
    return out


# -- helpers ------------------------------------------------------------------------------------

# ISO 8601 date or date-time as Pi writes and reads it (`new Date(...)` accepts more; we do not).
_ISO_RE = re.compile(
    r"[+-]?\d{4,6}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?)?"
)
# Pi's own format (toISOString): such strings compare chronologically as text.
_CANONICAL_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_SECONDS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_ROLES_WITH_CONTENT_EDITS = ("user", "assistant", "toolResult", "custom")
_EDITABLE_MESSAGE_ROLES = ("user", "assistant", "toolResult")
_TURN_ROLES = ("user", "assistant")


def _good_version(version: Any) -> bool:
    if type(version) is float and version.is_integer():
        version = int(version)
    return type(version) is int and 1 <= version <= 3


def _pi_format(text: str) -> bool:
    """``YYYY-MM-DDTHH:MM:SS.sssZ`` with a date every month has (so text order is time order)."""
    return (
        _CANONICAL_RE.fullmatch(text) is not None
        and "01" <= text[5:7] <= "12"
        and "01" <= text[8:10] <= "28"
        and text[11:13] < "24"
        and text[14:16] < "60"
        and text[17:19] < "60"
    )


def _iso_ok(text: str) -> bool:
    if _pi_format(text):
        return True
    if not _ISO_RE.fullmatch(text):
        return False
    ms = js_date_ms(text)
    return ms == ms  # NaN: out of JavaScript's date range


def _time_key(ts: Any) -> str | float | None:
    """A sortable form of an entry timestamp: Pi's own format as is, anything else as Date ms."""
    if type(ts) is not str:
        return None
    if _pi_format(ts):
        return ts  # toISOString() output sorts chronologically as text
    if len(ts) == 20 and _SECONDS_RE.fullmatch(ts) and _pi_format(ts[:19] + ".000Z"):
        return ts[:19] + ".000Z"
    ms = js_date_ms(ts)
    return None if ms != ms else float(ms)


def _before(a: str | float, b: str | float) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a < b
    a_ms = float(js_date_ms(a)) if isinstance(a, str) else a
    b_ms = float(js_date_ms(b)) if isinstance(b, str) else b
    return a_ms < b_ms


def _id_text(value: Any) -> str:
    return value if type(value) is str else _js(value)


class _Checker:
    """State for one run over one file; each ``_check_*`` method adds findings."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.findings: list[Finding] = []
        self.session: Session | None = None
        self.entries: Sequence[Any] = ()
        self.lines: Sequence[int] = ()
        self.index: SessionIndex | None = None
        self.show_ids = True
        #: Euler-tour times of the entries ``by_id`` holds (-1: not reachable from a root).
        self.tin: list[int] = []
        self.tout: list[int] = []
        #: Positions of entries per type, gathered by the entry pass for the reference checks.
        self.by_type: dict[str, list[int]] = {}
        self.invalid_replacement: set[int] = set()
        #: Crash report and field problems per entry shape (see ``_check_suspicious``).
        self.by_shape: dict[Any, tuple[str, list[Any]]] = {}
        #: Per entry: its timestamp in a comparable form (None: missing or not a date).
        self.time_keys: list[str | float | None] = []

    # -- plumbing ---------------------------------------------------------------------------------
    def add(self, code: str, message: str, line: int | None = None, entry: Any = None) -> None:
        eid = entry.get("id") if type(entry) is dict and self.show_ids else None
        self.findings.append(Finding(code, CODES[code].severity, message, line, eid if type(eid) is str else None))

    def internal(self, check: str, exc: BaseException, line: int | None = None) -> None:
        self.findings.append(
            Finding(
                "internal-check-error",
                ERROR,
                f"check {check!r} failed ({type(exc).__name__}: {exc}); this is a pitools bug",
                line,
            )
        )

    def guarded(self, name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as exc:
            self.internal(name, exc)

    def line_of(self, pos: int) -> int:
        return self.lines[pos]

    # -- the run ----------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            session = open_session(self.path)
        except SessionParseError as exc:
            self.add("unreadable-file", exc.message, exc.line)
            return
        except MigrationError as exc:
            self._migration_crash(exc)
            return
        self.session = session
        # The loader's own codes and severities (all listed in CODES; a test keeps them in step).
        self.findings.extend(Finding(d.code, d.severity, d.message, d.line, d.entry_id) for d in session.diagnostics)
        if not session.valid or session.header is None:
            return
        self.entries = session.entries
        self.lines = session.lines
        # v1 files get ids only from the migration: pitools' deterministic ones, not the file's.
        self.show_ids = "v1-to-v2" not in session.migration.steps
        self.guarded("header", self._check_header)
        self.guarded("entries", self._check_entries)
        self.index = SessionIndex.build(self.entries)
        self.guarded("tree", self._check_tree)
        self.guarded("walk", self._walk)
        self.guarded("references", self._check_references)

    def _migration_crash(self, exc: MigrationError) -> None:
        # The file is readable; report what the loader saw, then Pi's refusal.
        from pitools.core.load import read_session

        header_line = None
        try:
            raw = read_session(self.path)
            self.findings.extend(Finding(d.code, d.severity, d.message, d.line, d.entry_id) for d in raw.diagnostics)
            header_line = raw.lines[0] if raw.lines else None
        except SessionParseError:
            pass
        self.add("needs-migration", "a v1 session: Pi migrates it to v3 when it opens it", header_line)
        self.add("pi-would-crash", exc.message, exc.line)

    # -- header -----------------------------------------------------------------------------------
    def _check_header(self) -> None:
        assert self.session is not None and self.session.header is not None
        raw_header = self.session.raw.values[0]
        line = self.session.raw.lines[0]
        version = raw_header.get("version", UNDEFINED)
        if version is not UNDEFINED and version is not None and not _good_version(version):
            n = effective_version(version)
            if n != n:
                how = "not a number, so Pi rewrites the file on open without changing it"
            elif n >= 3:
                how = "as v3 (no migration)"
            else:
                how = f"as v{1 if n < 2 else 2} and migrates it"
            self.add(
                "header-version",
                f"version {_js(version)} is not an integer from 1 to 3; Pi reads it {how}",
                line,
            )
        steps = [s for s in self.session.migration.steps if s.startswith("v")]
        if steps:
            self.add(
                "needs-migration",
                f"a v{1 if 'v1-to-v2' in steps else 2} session: Pi migrates it ({', '.join(steps)}) "
                "and rewrites the file when it opens it",
                line,
            )
        for key, optional in (("cwd", False), ("timestamp", False), ("parentSession", True)):
            value = raw_header.get(key, UNDEFINED)
            if value is UNDEFINED:
                if not optional:
                    self.add("missing-field", f"header: `{key}` is required", line)
            elif type(value) is not str:
                self.add("invalid-field", f"header: `{key}` should be a string (got {_js(value)})", line)
        ts = raw_header.get("timestamp")
        if type(ts) is str and not _iso_ok(ts):
            self.add("invalid-timestamp", f"header timestamp {_js(ts)} is not an ISO 8601 date-time", line)

    # -- one pass over the entries ----------------------------------------------------------------
    def _check_entries(self) -> None:
        from pitools.core.model import ENTRY_TYPES, MESSAGE_ROLES, entry_check

        fast = entry_check()
        known_types = frozenset(ENTRY_TYPES)
        known_roles = frozenset(MESSAGE_ROLES)
        first_line: dict[Any, int] = {}
        by_type = self.by_type
        time_keys = self.time_keys = [None] * len(self.entries)
        for pos, entry in enumerate(self.entries):
            line = self.lines[pos]
            if type(entry) is not dict:
                continue  # the loader reported it (non-object-line)
            try:
                etype = entry.get("type", UNDEFINED)
                if type(etype) is str:
                    by_type.setdefault(etype, []).append(pos)
                    if etype not in known_types:
                        self.add("unknown-entry-type", f"unknown entry type {_js(etype)}; Pi keeps it", line, entry)
                eid = entry.get("id", UNDEFINED)
                if eid is not UNDEFINED:
                    k = mkey(eid)
                    first = first_line.get(k)
                    if first is None:
                        first_line[k] = line
                    else:
                        self.add(
                            "duplicate-id",
                            f"id {_id_text(eid)} is already used on line {first}; Pi's index keeps only the "
                            "last entry with an id, so parent links and leaves resolve to that one",
                            line,
                            entry,
                        )
                pid = entry.get("parentId", UNDEFINED)
                if js_truthy_id(pid) and strict_equal(pid, eid):
                    self.add(
                        "self-parent",
                        f"entry {_id_text(eid)} is its own parent; Pi's getTree shows it as a root, "
                        "but its path walk never ends",
                        line,
                        entry,
                    )
                ts = entry.get("timestamp", UNDEFINED)
                time_key = time_keys[pos] = _time_key(ts)
                # A text key is one of the two ISO forms _time_key recognises: valid already.
                if type(ts) is str and type(time_key) is not str and not _iso_ok(ts):
                    self.add("invalid-timestamp", f"timestamp {_js(ts)} is not an ISO 8601 date-time", line, entry)
                covered: set[tuple[str, ...]] = set()
                if etype == "message":
                    message = entry.get("message", UNDEFINED)
                    role = prop(message, "role") if type(message) is dict else UNDEFINED
                    if type(role) is str and role not in known_roles:
                        self.add(
                            "unknown-message-role",
                            f"unknown message role {_js(role)}; Pi's convertToLlm drops it",
                            line,
                            entry,
                        )
                elif etype == "compaction" and "firstKeptEntryId" not in entry:
                    covered.add(("firstKeptEntryId",))
                    self.add(
                        "compaction-missing-first-kept",
                        "compaction has no firstKeptEntryId; Pi keeps nothing from before it",
                        line,
                        entry,
                    )
                elif etype == "context_edit" and not _replacement_ok(entry):
                    covered.add(("replacement",))
                    self.invalid_replacement.add(pos)
                    self.add(
                        "context-edit-invalid-replacement",
                        f"replacement {_js(entry.get('replacement', UNDEFINED))} is neither null nor "
                        "{content: string | array}; Pi's appendContextEdit refuses that",
                        line,
                        entry,
                    )
                if not fast(entry):
                    self._check_suspicious(entry, line, covered)
            except Exception as exc:
                self.internal("entries", exc, line)

    def _check_suspicious(self, entry: dict[str, Any], line: int, covered: set[tuple[str, ...]]) -> None:
        """An entry outside Pi's types: replay Pi on it, then report the model's complaints.

        Both depend only on the entry's shape (types, empty or not, tag values), and a damaged
        file tends to repeat one shape thousands of times, so results are reused per shape.
        """
        key = (_shape(entry), frozenset(covered))
        known = self.by_shape.get(key)
        if known is None:
            from pitools.core.model import field_problems

            crashes = _pi_crashes(entry)
            if crashes:
                covered.update(_crash_paths(entry))
            crash_text = "; ".join(f"{err} (in {', '.join(where)})" for err, where in crashes.items())
            known = (crash_text, field_problems(entry, covered, MAX_FIELD_FINDINGS_PER_ENTRY))
            if len(self.by_shape) < 10_000:
                self.by_shape[key] = known
        crash_text, problems = known
        if crash_text:
            self.add("pi-would-crash", f"Pi 1.6.0 throws on this entry: {crash_text}", line, entry)
        for problem in problems:
            self.add(problem.code, problem.describe(entry), line, entry)

    # -- tree structure -----------------------------------------------------------------------------
    def _check_tree(self) -> None:
        index = self.index
        assert index is not None
        roots: list[int] = []
        for pos in sorted(index.pos_by_id.values()):
            entry = self.entries[pos]
            if type(entry) is not dict:
                continue
            pid = entry.get("parentId", UNDEFINED)
            if not js_truthy_id(pid):
                roots.append(pos)
            elif mkey(pid) not in index.by_id:
                self.add(
                    "orphan-entry",
                    f"parentId {_id_text(pid)} matches no entry; Pi's path stops here, so nothing "
                    "before it reaches the context",
                    self.line_of(pos),
                    entry,
                )
        if len(roots) > 1:
            shown = ", ".join(str(self.line_of(p)) for p in roots[:8]) + (" …" if len(roots) > 8 else "")
            self.add(
                "multiple-roots",
                f"{len(roots)} entries have no parent (lines {shown}); a path from a later root "
                "does not see the entries before it",
                self.line_of(roots[1]),
                self.entries[roots[1]],
            )
        for cycle in index.find_cycles():
            if len(cycle) < 2:
                continue  # a self-parent, reported per entry
            positions = [index.pos_by_id[mkey(i)] for i in cycle if mkey(i) in index.pos_by_id]
            first = min(positions) if positions else None
            loop = " -> ".join([*cycle, cycle[0]]) if len(cycle) <= 6 else " -> ".join([*cycle[:5], "…"])
            self.add(
                "parent-cycle",
                f"parentId loop of {len(cycle)} entries ({loop}); Pi's getBranch/buildSessionPath "
                "would loop forever on any path through it",
                None if first is None else self.line_of(first),
                None if first is None else self.entries[first],
            )

    # -- a walk over the tree: ancestry, tool calls, timestamps ---------------------------------------
    def _walk(self) -> None:
        index = self.index
        assert index is not None
        entries = self.entries
        n = len(entries)
        tin = [-1] * n
        tout = [-1] * n
        self.tin, self.tout = tin, tout
        children: dict[Any, list[int]] = {}
        roots: list[int] = []
        for pos in sorted(index.pos_by_id.values()):
            entry = entries[pos]
            pid = entry.get("parentId", UNDEFINED) if type(entry) is dict else UNDEFINED
            # Roots as Pi's getTree sees them: no parent, a missing parent, or itself as parent.
            if not js_truthy_id(pid) or mkey(pid) not in index.by_id or strict_equal(pid, entry.get("id")):
                roots.append(pos)
            else:
                children.setdefault(mkey(pid), []).append(pos)
        # tool call id -> stack of [assistant position, answered] on the current path
        open_calls: dict[str, list[list[Any]]] = {}
        declared: list[tuple[int, str, str, list[Any]]] = []
        later_turn = [False] * n
        time_keys = self.time_keys
        timer = 0
        stack: list[tuple[int, int, bool]] = [(r, -1, False) for r in reversed(roots)]
        while stack:
            pos, parent, leaving = stack.pop()
            entry = entries[pos]
            if leaving:
                tout[pos] = timer
                timer += 1
                message = _message_of(entry)
                if message is not None and message.get("role") == "assistant":
                    for call_id in _tool_call_ids(message):
                        open_calls[call_id].pop()
                if parent >= 0 and (later_turn[pos] or (message is not None and message.get("role") in _TURN_ROLES)):
                    later_turn[parent] = True
                continue
            if tin[pos] != -1:
                continue
            tin[pos] = timer
            timer += 1
            stack.append((pos, parent, True))
            if parent >= 0 and time_keys:
                self._check_time_order(pos, parent)
            message = _message_of(entry)
            if message is not None:
                role = message.get("role")
                if role == "assistant":
                    skip = message.get("stopReason") in ("error", "aborted")
                    for call_id, name in _tool_calls(message):
                        record = [pos, False]
                        open_calls.setdefault(call_id, []).append(record)
                        if not skip:
                            declared.append((pos, call_id, name, record))
                elif role == "toolResult":
                    result_id = message.get("toolCallId")
                    if type(result_id) is str:
                        pending = open_calls.get(result_id)
                        if pending:
                            pending[-1][1] = True
                        else:
                            self.add(
                                "tool-result-without-call",
                                f"tool result for call {_js(result_id)} has no matching toolCall earlier on "
                                "its path; providers reject an unmatched result",
                                self.line_of(pos),
                                entry,
                            )
            eid = entry.get("id", UNDEFINED) if type(entry) is dict else UNDEFINED
            for child in reversed(children.get(mkey(eid), ())):
                if child != pos:
                    stack.append((child, pos, False))
        for pos, call_id, name, record in declared:
            if not record[1] and later_turn[pos]:
                self.add(
                    "tool-call-unanswered",
                    f"tool call {_js(call_id)} ({name}) has no result before the conversation goes on; "
                    "Pi sends a synthetic 'No result provided' error in its place",
                    self.line_of(pos),
                    entries[pos],
                )

    def _check_time_order(self, pos: int, parent: int) -> None:
        key, parent_key = self.time_keys[pos], self.time_keys[parent]
        if key is None or parent_key is None or not _before(key, parent_key):
            return
        entry, parent_entry = self.entries[pos], self.entries[parent]
        self.add(
            "timestamp-backwards",
            f"timestamp {entry.get('timestamp')} is earlier than its parent's "
            f"({parent_entry.get('timestamp')}, line {self.line_of(parent)}); "
            "Pi's tree orders siblings by timestamp",
            self.line_of(pos),
            entry,
        )

    def is_ancestor(self, anc: int, desc: int) -> bool | None:
        """True/False when both are in the walked tree; None when unknown (cycles, duplicates)."""
        tin, tout = self.tin, self.tout
        if not tin or tin[anc] < 0 or tin[desc] < 0:
            return None
        return tin[anc] <= tin[desc] and tout[desc] <= tout[anc]

    # -- references -----------------------------------------------------------------------------------
    def _target(self, value: Any) -> int | None:
        assert self.index is not None
        if value is UNDEFINED:
            return None
        return self.index.pos_by_id.get(mkey(value))

    def _check_references(self) -> None:
        entries = self.entries
        for pos in self.by_type.get("compaction", ()):
            entry = entries[pos]
            first_kept = entry.get("firstKeptEntryId", UNDEFINED)
            if first_kept is UNDEFINED or strict_equal(first_kept, entry.get("id", UNDEFINED)):
                continue  # missing: reported already; its own id: a retain-none compaction
            target = self._target(first_kept)
            if target is None:
                self.add(
                    "compaction-missing-first-kept",
                    f"firstKeptEntryId {_id_text(first_kept)} matches no entry; Pi keeps nothing from "
                    "before the compaction",
                    self.line_of(pos),
                    entry,
                )
            elif self.is_ancestor(target, pos) is False:
                self.add(
                    "compaction-first-kept-off-path",
                    f"firstKeptEntryId {_id_text(first_kept)} (line {self.line_of(target)}) is not an "
                    "ancestor of the compaction; Pi keeps nothing from before it",
                    self.line_of(pos),
                    entry,
                )
        for pos in self.by_type.get("context_edit", ()):
            self._check_context_edit(pos)
        for pos in self.by_type.get("label", ()):
            entry = entries[pos]
            target_id = entry.get("targetId", UNDEFINED)
            if target_id is not UNDEFINED and self._target(target_id) is None:
                self.add(
                    "label-missing-target",
                    f"label targets {_id_text(target_id)}, which matches no entry",
                    self.line_of(pos),
                    entry,
                )
        for pos in self.by_type.get("branch_summary", ()):
            entry = entries[pos]
            from_id = entry.get("fromId", UNDEFINED)
            # "root": what Pi writes when the abandoned branch had no leaf.
            if type(from_id) is str and from_id != "root" and self._target(from_id) is None:
                self.add(
                    "branch-summary-missing-from",
                    f"fromId {_id_text(from_id)} matches no entry",
                    self.line_of(pos),
                    entry,
                )

    def _check_context_edit(self, pos: int) -> None:
        entry = self.entries[pos]
        line = self.line_of(pos)
        target_id = entry.get("targetId", UNDEFINED)
        if target_id is UNDEFINED:
            return  # missing-field
        target = self._target(target_id)
        if target is None:
            self.add(
                "context-edit-missing-target",
                f"targetId {_id_text(target_id)} matches no entry; the edit does nothing",
                line,
                entry,
            )
            return
        target_entry = self.entries[target]
        kind = _entry_kind(target_entry)
        if not _editable(target_entry):
            effect = (
                "Pi 1.6.0 still hides it from the context"
                if entry.get("replacement", UNDEFINED) is None
                else "Pi ignores the replacement"
            )
            self.add(
                "context-edit-not-editable",
                f"target {_id_text(target_id)} is a {kind}, which Pi's appendContextEdit refuses; {effect}",
                line,
                entry,
            )
        up = self.is_ancestor(target, pos)
        if up is False:
            self.add(
                "context-edit-off-branch",
                f"target {_id_text(target_id)} (line {self.line_of(target)}) is not on the edit's branch; "
                "Pi's appendContextEdit refuses that, and the edit applies only where both share a path",
                line,
                entry,
            )
        if pos in self.invalid_replacement and _contributes_editable_role(target_entry):
            down = self.is_ancestor(pos, target)
            if up or down:
                replacement = entry.get("replacement", UNDEFINED)
                why = (
                    "projectContextEntry reads `content` of undefined (TypeError)"
                    if replacement is UNDEFINED
                    else f"the message content becomes {_js(prop(replacement, 'content'))}, which "
                    "estimateTokens cannot iterate (TypeError: … is not iterable)"
                )
                self.add(
                    "pi-would-crash",
                    f"Pi 1.6.0 throws when it applies this edit to {_id_text(target_id)}: {why}",
                    line,
                    entry,
                )


# -- per-entry helpers ------------------------------------------------------------------------------


def _message_of(entry: Any) -> dict[str, Any] | None:
    if type(entry) is dict and entry.get("type") == "message":
        message = entry.get("message")
        if type(message) is dict:
            return message
    return None


def _tool_calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    content = message.get("content")
    if type(content) is not list:
        return []
    out = []
    for block in content:
        if type(block) is dict and block.get("type") == "toolCall":
            call_id = block.get("id")
            if type(call_id) is str:
                name = block.get("name")
                out.append((call_id, name if type(name) is str else "?"))
    return out


def _tool_call_ids(message: dict[str, Any]) -> list[str]:
    return [call_id for call_id, _ in _tool_calls(message)]


def _replacement_ok(entry: dict[str, Any]) -> bool:
    replacement = entry.get("replacement", UNDEFINED)
    if replacement is None:
        return True
    return type(replacement) is dict and type(replacement.get("content", UNDEFINED)) in (str, list)


def _entry_kind(entry: Any) -> str:
    if type(entry) is not dict:
        return "non-object entry"
    etype = entry.get("type")
    if etype == "message":
        role = prop(entry.get("message", UNDEFINED), "role") if type(entry.get("message")) is dict else None
        return f"{_id_text(role)} message" if role is not None else "message"
    return f"{_id_text(etype)} entry"


def _editable(entry: Any) -> bool:
    """``appendContextEdit``'s rule: user/assistant/toolResult messages and custom_message entries."""
    if type(entry) is not dict:
        return False
    if entry.get("type") == "custom_message":
        return True
    message = _message_of(entry)
    return message is not None and message.get("role") in _EDITABLE_MESSAGE_ROLES


def _contributes_editable_role(entry: Any) -> bool:
    """Whether ``projectContextEntry`` would swap the content of one of this entry's messages."""
    if type(entry) is not dict:
        return False
    if entry.get("type") == "custom_message":
        return True
    message = _message_of(entry)
    return message is not None and message.get("role") in _ROLES_WITH_CONTENT_EDITS


# -- replaying Pi on a suspicious entry ------------------------------------------------------------------


def _pi_crashes(entry: dict[str, Any]) -> dict[str, list[str]]:
    """Pi functions that throw on this entry alone: ``{error text: [Pi function, ...]}``."""
    from pitools.core.compaction import serialize_conversation
    from pitools.core.messages import convert_to_llm, entry_to_messages, get_current_system_message
    from pitools.core.parity import session_name
    from pitools.core.stats import session_stats, usage_breakdown
    from pitools.core.tokens import estimate_context_tokens, estimate_tokens

    crashes: dict[str, list[str]] = {}

    def attempt(where: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except PiCrashError as exc:
            crashes.setdefault(exc.message, []).append(where)

    attempt("getSessionStats", lambda: session_stats([entry]))
    attempt("getUsageCostBreakdown", lambda: usage_breakdown([entry]))
    etype = entry.get("type")
    if etype == "session_info":
        attempt("getSessionName", lambda: session_name([entry]))
    messages: list[Any] = []

    def build() -> None:
        messages.extend(entry_to_messages(entry))

    attempt("buildSessionContext", build)
    for message in messages:
        attempt("estimateTokens", partial(estimate_tokens, message))
        if prop(message, "role") == "assistant" and prop(message, "stopReason") not in ("aborted", "error"):
            attempt("getContextUsage", partial(_context_tokens, message))
    if messages:
        attempt("estimateContextTokens", lambda: estimate_context_tokens(messages))
        attempt("getCurrentSystemMessage", lambda: get_current_system_message(messages))
        attempt("serializeConversation", lambda: serialize_conversation(convert_to_llm(messages)))
        for message in messages:
            content = prop(message, "content")
            # pi-ai's transformMessages calls assistantMsg.content.flatMap(...) after a `?? []` fix-up.
            if prop(message, "role") == "assistant" and type(content) not in (
                list,
                type(None),
                type(UNDEFINED),
            ):
                error = "TypeError: assistantMsg.content.flatMap is not a function"
                crashes.setdefault(error, []).append("transformMessages")
    message = entry.get("message", UNDEFINED) if etype == "message" else UNDEFINED
    if type(message) is dict and message.get("role") != "toolResult":
        # Branch summaries read the raw message, without the content ?? [] fix-up of the context.
        attempt("prepareBranchEntries", lambda: estimate_tokens(message))
    return crashes


def _context_tokens(message: Any) -> Any:
    from pitools.core.tokens import calculate_context_tokens

    return calculate_context_tokens(prop(message, "usage"))


#: String fields whose value (not only its type) steers Pi's code or the models' Literal checks.
_SHAPE_VALUES = frozenset({"type", "role", "stopReason", "status"})


def _shape(value: Any) -> Any:
    """What Pi's code and the models can tell apart in ``value``: types, truthiness, tag values."""
    t = type(value)
    if t is dict:
        return (
            "{",
            *((k, v if k in _SHAPE_VALUES and type(v) is str else _shape(v)) for k, v in value.items()),
        )
    if t is list:
        return ("[", *(_shape(v) for v in value))
    if t is str:
        return "s" if value else "e"
    if t is int or t is float:
        # Zero is falsy; NaN and infinities come only from numbers JSON.parse overflows.
        return "0" if value == 0 else "n" if -(2.0**1023) < value < 2.0**1023 else repr(value)
    return value  # None, True, False


def _crash_paths(entry: dict[str, Any]) -> set[tuple[str, ...]]:
    """Field paths whose shape problem the crash report already explains."""
    message = entry.get("message", UNDEFINED)
    if entry.get("type") != "message":
        return set()
    if type(message) is not dict:
        return {("message",)}
    paths: set[tuple[str, ...]] = set()
    if message.get("role") == "assistant":
        if type(message.get("content")) is not list:
            paths.add(("message", "content"))
        usage = message.get("usage", UNDEFINED)
        if type(usage) is not dict or type(usage.get("cost")) is not dict:
            paths.add(("message", "usage"))
    return paths
