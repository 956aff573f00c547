"""A loaded session: Pi's ``SessionManager`` state after ``setSessionFile``, without any writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

from pitools.core.session.findings import ERROR, Diagnostic
from pitools.core.session.header import extra_header
from pitools.core.session.lines import RawSession
from pitools.core.session.migrate import MigrationError, MigrationReport, migrate_values


@dataclass(slots=True)
class Session:
    """Entries as Pi sees them after loading and migrating, with their file positions.

    ``entries`` is Pi's ``getEntries()``: every parsed value except ``session`` headers, in
    file order, after migration. ``lines``/``offsets``/``positions`` are parallel to it
    (``positions`` indexes ``raw.values``).
    """

    path: str
    raw: RawSession
    header: dict[str, Any] | None
    entries: list[Any]
    lines: list[int]
    offsets: list[int]
    positions: list[int]
    migration: MigrationReport
    diagnostics: list[Diagnostic] = field(default_factory=list)
    migrated_values: list[Any] | None = None

    @property
    def valid(self) -> bool:
        return self.raw.valid

    @property
    def version_before(self) -> Any:
        return self.migration.version_before

    @property
    def needs_migration(self) -> bool:
        return self.migration.needed


def session_from_raw(raw: RawSession, *, migrate: bool = True) -> Session:
    """Pi's ``SessionManager`` state for values already read (header check, migration, later
    headers skipped): a file Pi rejects comes back with ``valid=False`` and no entries; a v1 file
    Pi's migration cannot handle raises :class:`MigrationError` (a one-line, user-facing error).
    Callers outside this package use :func:`pitools.core.session.load.load`."""
    diags = list(raw.diagnostics)
    if not raw.valid:
        return Session(
            path=raw.path,
            raw=raw,
            header=None,
            entries=[],
            lines=[],
            offsets=[],
            positions=[],
            migration=MigrationReport(),
            diagnostics=diags,
        )
    values = raw.values
    report = MigrationReport(version_before=values[0].get("version"))
    migrated_values: list[Any] | None = None
    if migrate:
        try:
            values, report = migrate_values(raw.values, raw.lines)
        except MigrationError as exc:
            exc.path = raw.path
            raise
        if report.needed:
            migrated_values = values
    else:
        from pitools.core.session.migrate import effective_version

        if effective_version(report.version_before) < 3:
            report.steps.append("pending")
    header = values[0]
    # Later session lines are rare: find them first, then slice (C speed) when there are none.
    extra = [pos for pos in range(1, len(values)) if type(v := values[pos]) is dict and v.get("type") == "session"]
    if not extra:
        entries = values[1:]
        lines = raw.lines[1:]
        offsets = raw.offsets[1:]
        positions = list(range(1, len(values)))
    else:
        entries, lines, offsets, positions = [], [], [], []
        skip = set(extra)
        for pos in range(1, len(values)):
            if pos in skip:
                diags.append(extra_header(values[pos], raw.lines[pos], raw.offsets[pos]))
                continue
            entries.append(values[pos])
            lines.append(raw.lines[pos])
            offsets.append(raw.offsets[pos])
            positions.append(pos)
    return Session(
        path=raw.path,
        raw=raw,
        header=header,
        entries=entries,
        lines=lines,
        offsets=offsets,
        positions=positions,
        migration=report,
        diagnostics=diags,
        migrated_values=migrated_values,
    )


def require_valid(session: Session) -> Session:
    """Raise a one-line error when Pi would reject the file."""
    if not session.valid:
        raise_invalid(session.diagnostics, session.path)
    return session


def raise_invalid(diagnostics: list[Diagnostic], path: str) -> NoReturn:
    """The one-line error for a file Pi rejects, from its diagnostics."""
    from pitools.errors import SessionParseError

    # An empty file has only an info diagnostic (Pi starts a new session in it); it still
    # names the reason.
    first = next((d for d in diagnostics if d.severity == ERROR), None) or next(iter(diagnostics), None)
    msg = first.message if first else "not a Pi session"
    raise SessionParseError(msg, path=path, line=first.line if first else None)
