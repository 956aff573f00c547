"""``migrate``: bring a session to v3 and write it (in place or to a new file) through the store."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pitools import store
from pitools.core.session.load import load
from pitools.core.session.loaded import Session
from pitools.core.session.migrate_file import migrated_lines
from pitools.errors import PitoolsError


@dataclass(slots=True)
class MigrationPlan:
    """A loaded session and whether writing it would change anything."""

    session: Session
    #: The stamp taken before the first read (``--in-place`` only).
    before: store.FileStamp | None
    needed: bool
    #: The header version is not a number: Pi rewrites the file unchanged; nothing to do.
    pointless: bool

    def lines(self) -> Iterator[bytes]:
        return migrated_lines(self.session)


def plan_migration(path: str, *, in_place: bool = False) -> MigrationPlan:
    """Read ``path`` (stamping it first when it will be replaced) and decide whether to migrate."""
    before = store.stamp(path) if in_place else None
    session = load(Path(path)).session
    report = session.migration
    # A header version that is not a number makes Pi "migrate" (rewrite the file unchanged) on
    # every open; there is nothing pitools could change, so it is reported, not written.
    pointless = report.steps == ["none (version is not a number)"]
    return MigrationPlan(session, before, report.needed and not pointless, pointless)


def write_in_place(plan: MigrationPlan, *, backup: bool = True) -> Path | None:
    """Replace the file atomically with its migrated form; returns the backup path (or None)."""
    assert plan.before is not None, "plan_migration(in_place=True) stamps the file"
    return store.atomic_replace(plan.session.path, plan.lines(), expected=plan.before, backup=backup)


def write_copy(plan: MigrationPlan, output: str, *, overwrite: bool = False) -> None:
    """Write the migrated session to ``output`` (an existing file only with ``overwrite``).

    When nothing needs migrating the copy is byte-identical to the source.
    """
    store.write_new(output, plan.lines() if plan.needed else _file_chunks(plan.session.path), overwrite=overwrite)


def _file_chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            yield chunk


def migrate(
    path: str,
    *,
    output: str | None,
    in_place: bool,
    check: bool,
    backup: bool,
    force: bool,
    to_stdout: Callable[[Iterator[bytes]], None],
) -> dict[str, Any]:
    """``pitools migrate``: plan, then write what was asked (``--in-place``, ``-o OUT``, ``-o -``
    through ``to_stdout``; nothing with ``check`` or neither), and return the result as data."""
    if output and output != "-" and not force and os.path.lexists(output):
        raise PitoolsError("already exists; pass --force to replace it, or choose another path", path=output)
    plan = plan_migration(path, in_place=in_place)
    report = plan.session.migration
    pointless, needed = plan.pointless, plan.needed
    written: str | None = None
    made: Any = None
    if needed and not check:
        if in_place:
            made = write_in_place(plan, backup=backup)
            written = path
        elif output == "-":
            to_stdout(plan.lines())
            written = "-"
        elif output:
            write_copy(plan, output, overwrite=force)
            written = output
    elif output and output != "-" and not check and not pointless:
        # Nothing to migrate, but a file was asked for: an identical copy.
        write_copy(plan, output, overwrite=force)
        written = output
    elif output == "-" and not needed:
        # Nothing to migrate: the output is the file itself.
        to_stdout(_file_chunks(path))
        written = "-"
    return {
        "path": path,
        "needed": needed,
        "note": (
            f"header version {report.version_before!r} is not a number: Pi rewrites this file unchanged "
            "every time it opens it; set the version to 3 to stop that"
            if pointless
            else None
        ),
        "versionBefore": report.version_before,
        "versionAfter": 3 if needed else report.version_before,
        "report": report.to_json(),
        "written": written,
        "backup": str(made) if made else None,
    }
