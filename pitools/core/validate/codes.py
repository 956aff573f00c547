"""Finding codes, findings and reports of ``pitools validate`` (no checks here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pitools.core.session.load import ERROR, INFO, WARNING

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
    # -- reading the file (reported by pitools.core.session.load / session) --
    "unreadable-file": CodeInfo(ERROR, "the file cannot be opened or read"),
    "empty-file": CodeInfo(ERROR, "the file is empty; Pi would start a new session in it"),
    "missing-header": CodeInfo(ERROR, "the first JSON line is not a session header; Pi rejects the file"),
    "invalid-header": CodeInfo(ERROR, "the header has no string id; Pi rejects the file"),
    "utf8-bom": CodeInfo(ERROR, "the file starts with a byte order mark; Pi cannot parse that line"),
    "malformed-json": CodeInfo(ERROR, "a line is not valid JSON; Pi skips it"),
    "unparsed-line": CodeInfo(ERROR, "Pi reads this line (JSON.parse accepts it), pitools could not"),
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
    "tolerated-missing-field": CodeInfo(
        INFO, "a field Pi's types require is missing, but Pi 1.6.0 works without it (see TOLERATED_FIELDS)"
    ),
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


#: Required fields whose absence Pi 1.6.0 copes with, and how (checked against the reference).
#: A missing one is reported as ``tolerated-missing-field`` (info), not ``missing-field``.
TOLERATED_FIELDS: dict[tuple[str, ...], str] = {
    ("message", "usage", "totalTokens"): (
        "calculateContextTokens uses usage.totalTokens || input + output + cacheRead + cacheWrite"
    ),
}

#: How the severities are graded: by what Pi 1.6.0 does with the problem.
GRADING = {
    INFO: "Pi tolerates it: nothing goes wrong, but the file differs from what Pi writes",
    WARNING: "Pi misbehaves: it reads the file, but skips, ignores or misplaces something",
    ERROR: "Pi crashes, rejects the file or drops data",
}

#: How to fix findings of a code (default: :data:`DEFAULT_FIX`).
FIXES: dict[str, str] = {
    "needs-migration": "run `pitools migrate FILE --in-place` (or let Pi migrate it on open)",
    "header-version": "set the header's version to 3 after checking the file with `pitools migrate --check`",
    "utf8-bom": "remove the first three bytes (EF BB BF) of the file",
    "crlf-line-endings": "nothing needed; convert to LF to match what Pi writes",
    "blank-line": "nothing needed; delete the blank line to match what Pi writes",
    "unterminated-last-line": "nothing needed if the last entry is complete; Pi appends a newline on its next write",
    "malformed-json": "repair or delete the line (a torn write usually leaves only the last line broken)",
    "duplicate-id": "give one of the entries a new id (and update the parentIds that meant it)",
    "orphan-entry": "point parentId at the entry it follows, or null for a new root",
    "parent-cycle": "break the loop: one entry of the cycle must point at an entry outside it (or null)",
    "self-parent": "point the entry's parentId at the entry it follows",
    "timestamp-backwards": "nothing needed: Pi does not sort by timestamp",
    "tolerated-missing-field": "nothing needed; add the field to match what Pi writes",
    "internal-check-error": "report it: this is a bug in pitools (run with --debug for the traceback)",
}
DEFAULT_FIX = (
    "edit the entry by hand (pitools validate names the line), or run `pitools repair` where available; "
    "keep a copy first"
)


def explain(code: str) -> dict[str, str]:
    """What a code means, what Pi does with it, and how to fix it (``validate --explain``)."""
    info = CODES[code]
    return {
        "code": code,
        "severity": info.severity,
        "meaning": info.summary,
        "piBehaviour": GRADING[info.severity],
        "fix": FIXES.get(code, DEFAULT_FIX),
    }


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
