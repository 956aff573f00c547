"""Finding codes, findings and reports of ``pitools validate`` (no checks here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pitools.core.session.findings import ERROR, INFO, WARNING, Finding

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


#: Every finding code, its fixed severity and what it means. The table in docs/validate.md is checked against this.
CODES: dict[str, CodeInfo] = {
    # -- reading the file (reported by the loader: pitools.core.session.lines / loaded) --
    "unreadable-file": CodeInfo(ERROR, "the file cannot be opened or read"),
    "empty-file": CodeInfo(INFO, "the file is empty; Pi starts a new session in it"),
    "missing-header": CodeInfo(ERROR, "the first JSON line is not a session header; Pi rejects the file"),
    "invalid-header": CodeInfo(ERROR, "the header has no string id; Pi rejects the file"),
    "utf8-bom": CodeInfo(ERROR, "the file starts with a byte order mark; Pi cannot parse that line"),
    "malformed-json": CodeInfo(ERROR, "a line is not valid JSON; Pi skips it"),
    "unparsed-line": CodeInfo(
        ERROR, "a line nested too deep for pitools to parse; Pi parses it, then throws wherever it serializes it"
    ),
    "non-object-line": CodeInfo(
        ERROR,
        "a line is a JSON array, number or string; Pi keeps it as an entry without an id "
        "(a warning when it is neither the first value nor the last entry of a v2/v3 file)",
    ),
    "invalid-utf8": CodeInfo(WARNING, "invalid UTF-8, which Pi replaces with U+FFFD"),
    "falsy-line": CodeInfo(INFO, "a line is null, false, 0 or an empty string; Pi skips it"),
    "line-too-long": CodeInfo(INFO, "a line is longer than pitools' limit (Pi reads it)"),
    "header-not-first": CodeInfo(INFO, "blank or unparsable lines before the header, which Pi skips"),
    "extra-header": CodeInfo(WARNING, "a second session header, which Pi ignores"),
    "unterminated-last-line": CodeInfo(INFO, "the last line has no newline; Pi reads it and appends one"),
    "blank-line": CodeInfo(INFO, "a blank line, which Pi skips"),
    "crlf-line-endings": CodeInfo(INFO, "CRLF line endings (Pi reads them)"),
    # -- header --
    "header-version": CodeInfo(WARNING, "the header version is not a number from 1 to 3"),
    "header-version-mismatch": CodeInfo(
        ERROR, "the header says v1 (version 1, 0, null or none) but the entries have ids; Pi re-ids and flattens them"
    ),
    "needs-migration": CodeInfo(INFO, "a v1/v2 session; Pi migrates it to v3 and rewrites the file on open"),
    # -- entry shapes --
    "missing-field": CodeInfo(WARNING, "a field Pi's types require is missing (an error only via pi-would-crash)"),
    "tolerated-missing-field": CodeInfo(
        INFO, "a field Pi's types require is missing, but Pi 1.6.0 works without it (see TOLERATED_FIELDS)"
    ),
    "invalid-field": CodeInfo(WARNING, "a field has the wrong type or value (an error only via pi-would-crash)"),
    "invalid-timestamp": CodeInfo(INFO, "a timestamp is not an ISO 8601 date-time"),
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
    "label-missing-target": CodeInfo(INFO, "a label's targetId matches no entry"),
    "branch-summary-missing-from": CodeInfo(INFO, "a branch_summary's fromId matches no entry"),
    # -- conversation --
    "tool-result-without-call": CodeInfo(WARNING, "a tool result answers no toolCall earlier on its path"),
    "tool-call-unanswered": CodeInfo(
        INFO, "a tool call gets no result although the conversation goes on; Pi inserts a synthetic error"
    ),
    "timestamp-backwards": CodeInfo(
        INFO,
        "an entry's timestamp is earlier than its parent's (labels excepted: /clone re-creates them with old times)",
    ),
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

#: What Pi 1.6.0 does with each code: the reason for its severity (``validate --explain``).
#: Checked against the reference (session-manager.js, messages.js, pi-ai's transform-messages.js)
#: and the oracle on the golden files named here.
PI_BEHAVIOUR: dict[str, str] = {
    "unreadable-file": "Pi cannot open the file, so the session cannot be resumed",
    "empty-file": (
        "Pi writes a fresh session header into the empty file and carries on; nothing is lost "
        "(golden gen-s0029_broken-empty)"
    ),
    "missing-header": (
        "loadEntriesFromFile returns nothing and Pi refuses the file ('not a valid pi session'); "
        "the whole session is unusable (golden gen-s0011_broken-noheader)"
    ),
    "invalid-header": (
        "a header without a string id is not a header to Pi: it refuses the file (golden gen-s0023_broken-badheaderid)"
    ),
    "utf8-bom": (
        "JSON.parse fails on the first line, so the header is lost and Pi refuses the file "
        "(golden gen-s0033_broken-bom)"
    ),
    "malformed-json": (
        "Pi skips the line: the entry on it is gone, and entries whose parentId named it lose their path "
        "(golden broken-malformed-lines)"
    ),
    "unparsed-line": (
        "Pi parses the line (JSON.parse has no depth limit), but V8's JSON.stringify gives up at about 4,114 "
        "levels: estimating tokens, sending the request and compacting throw RangeError once the "
        "entry is on the context path, and so does any rewrite of the file (a migration). pitools parses "
        "100,000 levels (lines past 4,114 levels where Pi stringifies them are pi-would-crash) and reports "
        "this only when memory runs out, far past that depth (scripts/pi_probe_deep.mjs, 200,000 levels)"
    ),
    "non-object-line": (
        "Pi keeps the value as an entry without an id. As the first value Pi rejects the file "
        "(golden nonobject-first-line); as the last entry it becomes Pi's leaf and the context is empty "
        "(golden nonobject-last-line); in a v1 file the migration throws (golden gen-s0045_v1-primitive): "
        "errors. Elsewhere it joins no path and /tree shows an extra root without an id, contexts and "
        "stats unchanged (golden nonobject-middle-line): a warning"
    ),
    "invalid-utf8": (
        "Pi decodes the bytes as U+FFFD: the text it shows and sends differs from the file, and any "
        "rewrite (a migration) stores the replacement characters"
    ),
    "falsy-line": (
        "Pi skips the line; it holds no entry, so nothing is lost (golden gen-s0018_broken-selfparent+nonobject)"
    ),
    "line-too-long": "Pi has no line limit and reads it; only pitools' limit is exceeded",
    "header-not-first": (
        "Pi skips blank and unparsable lines before the header and loads the session "
        "(golden gen-s0021_broken-garbagefirst+secondheader+dupidcycle); the skipped lines have their own findings"
    ),
    "extra-header": (
        "Pi uses the first header and ignores later ones: the id, cwd and version of a second session "
        "appended to the file are silently dropped and its entries join the first session"
    ),
    "unterminated-last-line": (
        "Pi parses the last line as it is and appends the missing newline when it opens the file "
        "(golden gen-s0008_broken-crlf+unterminated); a torn line is reported as malformed-json"
    ),
    "blank-line": "Pi skips blank lines",
    "crlf-line-endings": "JSON.parse accepts the trailing CR as whitespace; Pi reads the lines unchanged",
    "header-version": (
        "Pi compares the version with 3 as JavaScript does: a string '3' or a future version is not "
        "migrated (goldens gen-s0040, gen-s0048); a version below 2 is migrated as v1, which damages a "
        "file whose entries already have ids (header-version-mismatch)"
    ),
    "header-version-mismatch": (
        "Pi's v1 migration gives every entry a new id and makes each entry's parent the line before it, "
        "then rewrites the file: branches merge into one chain, the leaves and each path's context change, "
        "and ids named by compactions, labels and summaries match nothing (golden header-version-mismatch)"
    ),
    "needs-migration": "Pi migrates v1/v2 to v3 when it opens the file and rewrites it; nothing is lost",
    "missing-field": (
        "Pi reads entries without validation and uses the missing field as undefined, which some code paths "
        "misread; where Pi throws, pi-would-crash is reported as well, and fields Pi has a fallback for are "
        "tolerated-missing-field instead"
    ),
    "tolerated-missing-field": (
        "Pi 1.6.0 has a fallback for this field (see TOLERATED_FIELDS) and works as if it were there"
    ),
    "invalid-field": "Pi uses the value as it is; where that throws, pi-would-crash is reported as well",
    "invalid-timestamp": (
        "Pi only reads entry timestamps for display and the session list, and falls back to the message "
        "time or the file's mtime (golden gen-s0040_broken-versionstring+missingid+badtimestamps)"
    ),
    "unknown-entry-type": "Pi keeps the entry in the tree but never puts it into the context: what it meant is ignored",
    "unknown-message-role": "the message is on Pi's path, but convertToLlm drops it: the model never sees it",
    "duplicate-id": (
        "Pi's id index keeps only the last entry with the id, so children of the first one follow the "
        "other entry's path and part of the conversation drops out (golden broken-duplicate-ids)"
    ),
    "orphan-entry": (
        "Pi's path walk stops at the missing parent: everything before it drops out of the context "
        "(golden broken-orphan)"
    ),
    "parent-cycle": (
        "getBranch and buildSessionPath walk the loop forever and the process runs out of memory (golden broken-cycle)"
    ),
    "self-parent": (
        "getTree shows the entry as a root, but buildSessionPath walks it forever "
        "(golden gen-s0018_broken-selfparent+nonobject)"
    ),
    "multiple-roots": "getTree shows each root; paths from every leaf still work",
    "compaction-missing-first-kept": (
        "buildContextEntries never meets firstKeptEntryId, so the retained tail before the compaction "
        "drops out of the context; the summary remains"
    ),
    "compaction-first-kept-off-path": (
        "buildContextEntries looks for firstKeptEntryId on the path only, so the retained tail drops out "
        "of the context; the summary remains"
    ),
    "context-edit-missing-target": "the edit matches no context entry and Pi silently ignores it",
    "context-edit-off-branch": (
        "Pi applies an edit only where its target is in the same context: ignored on the edit's branch, applied"
        " on the paths through both (an edit above its target)"
    ),
    "context-edit-not-editable": (
        "projectContextEntry leaves summaries and other roles unchanged, except that a null replacement "
        "hides them from the context"
    ),
    "context-edit-invalid-replacement": (
        "the edited message gets undefined or non-list content and Pi throws when it estimates tokens "
        "or compacts (golden gen-s0048_broken-futureversion+badedit: 'assistant.content is not iterable')"
    ),
    "label-missing-target": "Pi records the label for an id nothing has; it shows nowhere and nothing breaks",
    "branch-summary-missing-from": (
        "Pi only copies fromId into the summary message and never looks it up; the summary still reaches the model"
    ),
    "tool-result-without-call": (
        "Pi sends the result as it is; providers reject a tool result that answers no call. Not reported once"
        " a context_edit hides it on every path below it (what pitools heal writes; an edit above it counts"
        " unless a compaction between them drops the edit): Pi's projection applies the edit, the raw entry"
        " stays in the file"
    ),
    "tool-call-unanswered": (
        "pi-ai's transformMessages adds a 'No result provided' error result for the call, which is how Pi "
        "handles an interrupted tool call"
    ),
    "timestamp-backwards": "Pi orders entries by parentId, never by time",
    "pi-would-crash": (
        "Pi 1.6.0 throws on this data in the function the message names (stats, compaction, token "
        "estimates), so that part of Pi fails on the session; a reply without usage also breaks "
        "getContextUsage, but only at leaves whose branch holds a compaction while their context holds the "
        "reply (golden parity-usage-missing); tool-call arguments or toolsAdded nested 4,114 "
        "levels or more make V8's JSON.stringify throw in estimateTokens, and so does any entry that deep in "
        "a v1/v2 file, which Pi truncates and rewrites when it opens it, losing that entry and every later "
        "one (scripts/pi_probe_deep.mjs --bisect)"
    ),
    "internal-check-error": "unknown: the pitools check itself failed",
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
    "header-version-mismatch": (
        "before Pi opens the file, set the header's version to the one the entries were written in "
        "(3 for entries with id and parentId); keep a copy first"
    ),
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
    "empty-file": "nothing needed; Pi starts a new session in it (delete the file if it is not meant to be one)",
    "falsy-line": "nothing needed; `pitools repair` removes the line to match what Pi writes",
    "line-too-long": "nothing needed for Pi; raise pitools' limit if a command refuses the line",
    "header-not-first": "nothing needed for Pi; `pitools repair` removes the skipped lines",
    "invalid-timestamp": "nothing needed; write an ISO 8601 UTC time (as Pi does) so lists sort right",
    "label-missing-target": "nothing needed; delete the label entry if it is not wanted",
    "branch-summary-missing-from": "nothing needed; Pi never looks fromId up",
    "tool-call-unanswered": "nothing needed: Pi answers the call with an error result itself",
    "multiple-roots": "nothing needed; every root is a start Pi can show and resume",
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
        "piBehaviour": PI_BEHAVIOUR[code],
        "grading": GRADING[info.severity],
        "fix": FIXES.get(code, DEFAULT_FIX),
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
