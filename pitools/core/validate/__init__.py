"""``pitools validate``: every problem Pi 1.6.0 would have with a session file, as findings.

:func:`validate_file` reads a file the way Pi does (migration included, never writing) in one
streaming pass: each line is parsed, checked on its own (:mod:`.scan`) and reduced to a slim
record, so memory stays small and nothing is held that a later check does not need. The checks
that need the whole file (ids, the parent tree, tool-call pairing along paths, references)
then run on the records (:mod:`.structure`). Each :class:`Finding` has a stable kebab-case code
(the :data:`CODES` table), a severity and, where it has one, a line number. Bad input never
raises: the worst a file can do is produce findings, and a bug in a check becomes an
``internal-check-error`` finding.

Speed: the per-entry shape check is a generated predicate (:mod:`pitools.core.session.entry_precheck`);
pydantic, for its precise messages, and Pi's own functions (``getSessionStats``,
``estimateTokens``...) are imported and run only for the entries that predicate rejects
(:mod:`.pi_crashes`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from pitools.core.js.json.encode import short_json as _js
from pitools.core.js.json.parse import gc_paused
from pitools.core.js.value import UNDEFINED
from pitools.core.session.findings import ERROR, INFO, WARNING, Diagnostic, Finding
from pitools.core.session.load import RawSession, ScannedValue, accepted_header, finish_raw, load
from pitools.core.session.migrate import MigrationError, effective_version
from pitools.core.validate.codes import CODES, SEVERITIES, CodeInfo, ValidationReport, severity_rank
from pitools.core.validate.parts import PartResult, ShareParts, merge_part, scan_part, split_points
from pitools.core.validate.pi_crashes import MAX_FIELD_FINDINGS_PER_ENTRY
from pitools.core.validate.scan import RankedFinding, Scanner, internal_message, iso_ok, scan_entries
from pitools.core.validate.structure import Structure
from pitools.errors import SessionParseError

__all__ = [
    "CODES",
    "MAX_FIELD_FINDINGS_PER_ENTRY",
    "SEVERITIES",
    "CodeInfo",
    "Finding",
    "ValidationReport",
    "prepare",
    "severity_rank",
    "validate_file",
]

_RANK = {INFO: 0, WARNING: 1, ERROR: 2}


def validate_file(
    path: str | os.PathLike[str],
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    min_severity: str = INFO,
    share: ShareParts | None = None,
) -> ValidationReport:
    """Validate one session file against Pi 1.6.0's format and behaviour; never raises for bad input.

    ``select`` keeps only the given codes, ``ignore`` drops them, ``min_severity`` drops findings
    below that severity. Unknown codes or severities raise ``ValueError`` (a caller's mistake).
    ``share`` (``pitools.ops.parallel.share_work``: this module starts no process) lets a big
    file's parts be scanned by other processes while this one scans the first (see
    :mod:`.parts`); the report is the same.
    """
    selected = _code_set(select, "select")
    ignored = _code_set(ignore, "ignore") or frozenset()
    if min_severity not in _RANK:
        raise ValueError(f"unknown severity {min_severity!r}; expected one of {', '.join(SEVERITIES)}")
    spath = os.fspath(path)
    run = _Run(spath)
    try:
        with gc_paused():  # the whole run: nothing it allocates forms reference cycles
            run.run(share)
    except Exception as exc:  # the last line of defence: a report, never a traceback
        run.internal("validate", exc)
    floor = _RANK[min_severity]
    kept = [
        f
        for f in run.findings()
        if (selected is None or f.code in selected) and f.code not in ignored and _RANK[f.severity] >= floor
    ]
    kept.sort(key=lambda f: 0 if f.line is None else f.line)
    return ValidationReport(spath, tuple(kept))


def prepare() -> None:
    """Import what every file needs now, so forked worker processes inherit it.

    The pydantic models are not built here: only files with broken entries need them, and
    each worker builds them (in parallel) the first time it meets one.
    """
    import pitools.core.session.entry_precheck  # noqa: F401


def _code_set(codes: Iterable[str] | None, what: str) -> frozenset[str] | None:
    if codes is None:
        return None
    out = frozenset(codes)
    unknown = sorted(out - CODES.keys())
    if unknown:
        raise ValueError(f"--{what}: unknown code(s) {', '.join(unknown)}")
    return out


def _finding(d: Diagnostic) -> Finding:
    # The code table decides the severity, as for every other finding.
    return Finding(d.code, CODES[d.code].severity, d.message, d.line, d.entry_id)


#: What Pi 1.6.0 does with a non-object line that is neither the first value nor the last entry
#: of a v2/v3 file it accepts (golden nonobject-middle-line): the one case graded below error.
_NON_OBJECT_INSIDE = "; it joins no path: Pi's /tree shows it as an extra root without an id, nothing else changes"
_NON_OBJECT_LAST = "; as the last entry it is Pi's leaf, so the resumed session's context is empty"


class _Run:
    """One run over one file. Findings are kept per phase, in the order the phases report."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.loader: list[Diagnostic] = []
        self.extra_headers: list[Finding] = []
        self.header: list[Finding] = []
        self.entries: list[RankedFinding] = []
        self.late: list[Finding] = []  # tree, walk, references, internal errors
        #: Line of the last entry of a file Pi accepts (None: Pi rejects it, or no entries).
        self.last_entry_line: int | None = None
        #: Pi migrates the file from v1 (its migration throws on a non-object entry).
        self.migrates_v1 = False

    def findings(self) -> list[Finding]:
        ranked = sorted(self.entries, key=lambda item: (item[0], item[1]))
        return [
            *map(self._loader_finding, self.loader),
            *self.extra_headers,
            *self.header,
            *(f for _, _, f in ranked),
            *self.late,
        ]

    def add(self, into: list[Finding], code: str, message: str, line: int | None = None) -> None:
        into.append(Finding(code, CODES[code].severity, message, line))

    def _loader_finding(self, d: Diagnostic) -> Finding:
        """A loader finding; a ``non-object-line`` is graded by where it is (see ``PI_BEHAVIOUR``)."""
        finding = _finding(d)
        if d.code != "non-object-line" or self.last_entry_line is None or d.line is None:
            return finding  # Pi rejects the file (or it could not be read): data is lost
        if d.line == self.last_entry_line:
            return replace(finding, message=d.message + _NON_OBJECT_LAST)
        if self.migrates_v1:  # Pi's v1 migration throws on it (golden gen-s0045_v1-primitive)
            return finding
        return replace(finding, severity=WARNING, message=d.message + _NON_OBJECT_INSIDE)

    def internal(self, check: str, exc: BaseException, line: int | None = None) -> None:
        self.late.append(Finding("internal-check-error", ERROR, internal_message(check, exc), line))

    def guarded(self, name: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:
            self.internal(name, exc)
            return None

    def run(self, share: ShareParts | None = None) -> None:
        try:
            bounds = split_points(self.path) if share is not None else None
            if bounds is None:
                raw, values = load(Path(self.path), keep="none")
                self.loader = raw.diagnostics
                scanner = self._scan(values)
            else:
                assert share is not None
                scanner = self._scan_split(bounds, share)
        except SessionParseError as exc:
            self.loader, self.extra_headers, self.header, self.entries = [], [], [], []
            self.add(self.late, "unreadable-file", exc.message, exc.line)
            return
        except MigrationError as exc:
            self._migration_crash(exc)
            return
        if scanner is None:
            return
        lines = scanner.records.lines
        self.last_entry_line = lines[-1] if len(lines) else None
        structure = Structure(scanner.records)
        self.entries.extend(self.guarded("entries", structure.duplicates) or ())
        checks = (
            ("tree", structure.tree),
            ("walk", structure.walk),
            ("references", structure.references),
            ("context usage", structure.context_usage),
        )
        for name, check in checks:
            self.late.extend(self.guarded(name, check) or ())

    def _scan_split(self, bounds: list[int], share: ShareParts) -> Scanner | None:
        """Scan part 0 here while ``share`` has parts 1.. scanned (elsewhere), then merge them."""
        path = self.path

        def first() -> tuple[RawSession, Scanner | None]:
            raw, values = load(Path(path), keep="none", stop=bounds[1], finish=False)
            self.loader = raw.diagnostics
            return raw, self._scan(values)

        (raw, scanner), parts = share(
            range(1, len(bounds) - 1),
            lambda i: scan_part(path, bounds[i], bounds[i + 1]),
            first=first,
            encode=PartResult.to_wire,
            decode=PartResult.from_wire,
        )
        records, findings = (scanner.records, scanner.findings) if scanner is not None else (None, [])
        for i in range(1, len(bounds) - 1):
            merge_part(raw, records, findings, self.extra_headers, parts[i])
        finish_raw(raw)
        return scanner

    def _scan(self, values: Iterator[ScannedValue]) -> Scanner | None:
        """Read every value; check and record the entries when Pi accepts the file."""
        first = next(values, None)
        if first is None or not accepted_header(first[0]):
            for _ in values:  # the loader still reports every line
                pass
            return None
        header, header_line = first[0], first[1]
        version = header.get("version")
        shaped: list[int] = []
        if effective_version(version) >= 3:
            steps: list[str] = []
            entries: Iterable[ScannedValue] = values
        else:
            from pitools.core.session.migrate import migrate_values

            scanned = [first, *values]
            self.migrates_v1 = effective_version(version) < 2
            if self.migrates_v1:
                shaped = _lines_with_ids(scanned[1:])
            migrated, report = migrate_values([v[0] for v in scanned], [v[1] for v in scanned])
            steps = report.steps
            # The migrated entries keep their lines' numbers and offsets; the header is checked apart.
            entries = [(value, *where) for value, (_, *where) in zip(migrated[1:], scanned[1:], strict=True)]
        self.guarded("header", lambda: self._check_header(header, header_line, steps, shaped))
        # v1 files get ids only from the migration: pitools' deterministic ones, not the file's.
        # Pi migrates any file it does not read as v3 (a version that is not a number too) and
        # writes it back at once (SessionManager._rewriteFile).
        rewritten = not effective_version(version) >= 3
        scanner = Scanner(show_ids="v1-to-v2" not in steps, rewritten_at_open=rewritten)
        scan_entries(entries, scanner, self.extra_headers)
        self.entries = scanner.findings
        return scanner

    def _migration_crash(self, exc: MigrationError) -> None:
        # The file is readable; report what the loader saw, then Pi's refusal.
        header_line = None
        try:
            raw = load(Path(self.path), strict=False, migrate=False).session.raw
            self.loader = raw.diagnostics
            header_line = raw.lines[0] if raw.lines else None
        except SessionParseError:
            self.loader = []
        self.extra_headers, self.header, self.entries = [], [], []
        self.add(self.late, "needs-migration", "a v1 session: Pi migrates it to v3 when it opens it", header_line)
        self.add(self.late, "pi-would-crash", exc.message, exc.line)

    # -- header -----------------------------------------------------------------------------------
    def _check_header(
        self, raw_header: dict[str, Any], line: int, migration_steps: list[str], shaped: list[int]
    ) -> None:
        """``shaped``: lines of entries that already carry an id or parentId in a file Pi reads as v1."""
        out = self.header
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
                out, "header-version", f"version {_js(version)} is not an integer from 1 to 3; Pi reads it {how}", line
            )
        if shaped:
            said = "no version" if version is UNDEFINED else f"version {_js(version)}"
            self.add(
                out,
                "header-version-mismatch",
                f"the header has {said}, so Pi migrates the file as v1, but {len(shaped):,} "
                f"{'entry already has' if len(shaped) == 1 else 'entries already have'} an id or parentId "
                f"(first at line {shaped[0]}): Pi replaces every id, chains all entries into one branch "
                "and writes that back to the file",
                line,
            )
        steps = [s for s in migration_steps if s.startswith("v")]
        if steps:
            self.add(
                out,
                "needs-migration",
                f"a v{1 if 'v1-to-v2' in steps else 2} session: Pi migrates it ({', '.join(steps)}) "
                "and rewrites the file when it opens it",
                line,
            )
        for key, optional in (("cwd", False), ("timestamp", False), ("parentSession", True)):
            value = raw_header.get(key, UNDEFINED)
            if value is UNDEFINED:
                if not optional:
                    self.add(out, "missing-field", f"header: `{key}` is required", line)
            elif type(value) is not str:
                self.add(out, "invalid-field", f"header: `{key}` should be a string (got {_js(value)})", line)
        ts = raw_header.get("timestamp")
        if type(ts) is str and not iso_ok(ts):
            self.add(out, "invalid-timestamp", f"header timestamp {_js(ts)} is not an ISO 8601 date-time", line)


def _lines_with_ids(scanned: Iterable[ScannedValue]) -> list[int]:
    """Lines of the entries Pi's v1 migration would re-id that already have an id or parentId."""
    return [
        line
        for value, line, *_ in scanned
        if type(value) is dict and value.get("type") != "session" and ("id" in value or "parentId" in value)
    ]


def _good_version(version: Any) -> bool:
    if type(version) is float and version.is_integer():
        version = int(version)
    return type(version) is int and 1 <= version <= 3
