"""Session format migrations: Pi's ``migrateToCurrentVersion`` as ordered, named, pure steps.

Each step takes the list of parsed values (header included, file order) and returns a new list;
the input is never mutated, so callers can compare before and after. Differences from Pi,
all deliberate:

* New ids are deterministic instead of ``randomUUID().slice(0, 8)``: the k-th non-header entry
  (k = 1, 2, ... in file order) gets ``format(k, "08x")``. This is the rule the reference
  oracle uses, so a migrated file can be compared with Pi's result id for id, and migrating the
  same file twice gives the same ids.
* A bare JSON primitive line (``42``, ``"s"``, ``true``) makes Pi's v1 migration throw
  ``TypeError: Cannot create property 'id' on number '42'`` and refuse the file. pitools raises
  :class:`MigrationError` with the line number instead of a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.access import entry_type
from pitools.core.js.value import js_to_number
from pitools.errors import PiCrashError

CURRENT_VERSION = 3


class MigrationError(PiCrashError):
    """Pi 1.6.0 cannot migrate this file (its migration throws)."""

    pi_error: str = ""


@dataclass(slots=True)
class MigrationReport:
    """What a migration changed, in terms a user can check."""

    version_before: Any = None
    steps: list[str] = field(default_factory=list)
    ids_assigned: int = 0
    roles_renamed: int = 0
    indices_converted: int = 0
    indices_dropped: int = 0
    indices_kept: int = 0
    #: Positions (in the value list) whose JSON changed and must be re-serialized.
    changed: set[int] = field(default_factory=set)

    @property
    def needed(self) -> bool:
        return bool(self.steps) or bool(self.changed)

    def to_json(self) -> dict[str, Any]:
        return {
            "versionBefore": self.version_before,
            "steps": list(self.steps),
            "idsAssigned": self.ids_assigned,
            "rolesRenamed": self.roles_renamed,
            "indicesConverted": self.indices_converted,
            "indicesDropped": self.indices_dropped,
            "indicesKeptAsIs": self.indices_kept,
            "changedEntries": len(self.changed),
        }


def header_version(values: Sequence[Any]) -> Any:
    """The raw ``version`` of the first ``session`` value (``None`` when absent)."""
    for v in values:
        if type(v) is dict and v.get("type") == "session":
            return v.get("version")
    return None


def effective_version(raw_version: Any) -> float:
    """``header.version ?? 1`` as a number, the way Pi compares it."""
    return 1.0 if raw_version is None else js_to_number(raw_version)


def migrate_v1_to_v2(values: list[Any], report: MigrationReport, lines: Sequence[int] | None = None) -> list[Any]:
    """v1 → v2: give every entry an id and chain parentId; convert ``firstKeptEntryIndex``."""
    out = [dict(v) if type(v) is dict else v for v in values]
    prev_id: str | None = None
    k = 0
    for pos, entry in enumerate(out):
        if entry_type(entry) == "session":
            entry["version"] = 2
            report.changed.add(pos)
            continue
        if type(entry) is not dict:
            line = lines[pos] if lines is not None else None
            kind = {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}.get(
                type(entry), "value"
            )
            from pitools.core.js.value import js_to_string

            pi_error = f"TypeError: Cannot create property 'id' on {kind} '{js_to_string(entry)}'"
            err = MigrationError(
                f"line holds a bare JSON {kind}; Pi 1.6.0's v1 migration fails on it ({pi_error}) and refuses the file",
                line=line,
            )
            err.pi_error = pi_error
            raise err
        k += 1
        entry["id"] = format(k, "08x")
        entry["parentId"] = prev_id
        prev_id = entry["id"]
        report.ids_assigned += 1
        report.changed.add(pos)
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            index = entry["firstKeptEntryIndex"]
            if isinstance(index, (int, float)) and not isinstance(index, bool):
                target = None
                if isinstance(index, int) or (isinstance(index, float) and index.is_integer()):
                    i = int(index)
                    if 0 <= i < len(out):
                        target = out[i]
                # Pi reads the target's id *now*: a forward reference still has no id.
                if target and entry_type(target) != "session" and type(target) is dict and "id" in target:
                    entry["firstKeptEntryId"] = target["id"]
                    report.indices_converted += 1
                else:
                    report.indices_dropped += 1
                del entry["firstKeptEntryIndex"]
            else:
                report.indices_kept += 1
    return out


def migrate_v2_to_v3(values: list[Any], report: MigrationReport) -> list[Any]:
    """v2 → v3: the message role ``hookMessage`` becomes ``custom``."""
    out = list(values)
    for pos, entry in enumerate(out):
        etype = entry_type(entry)
        if etype == "session":
            entry = dict(entry)
            entry["version"] = 3
            out[pos] = entry
            report.changed.add(pos)
        elif etype == "message":
            msg = entry.get("message")
            if type(msg) is dict and msg.get("role") == "hookMessage":
                entry = dict(entry)
                entry["message"] = dict(msg, role="custom")
                out[pos] = entry
                report.roles_renamed += 1
                report.changed.add(pos)
    return out


Step = Callable[[list[Any], MigrationReport], list[Any]]


def migrate_values(values: list[Any], lines: Sequence[int] | None = None) -> tuple[list[Any], MigrationReport]:
    """Pi's ``migrateToCurrentVersion``: returns the migrated values and a report.

    ``report.needed`` mirrors Pi's return value (``true`` when Pi would rewrite the file).
    A v3 (or newer, or string ``"3"``) file comes back unchanged with no steps.
    """
    raw_version = header_version(values)
    report = MigrationReport(version_before=raw_version)
    version = effective_version(raw_version)
    if version >= CURRENT_VERSION:
        return values, report
    out = values
    if version < 2:
        out = migrate_v1_to_v2(out, report, lines)
        report.steps.append("v1-to-v2")
    if version < 3:
        out = migrate_v2_to_v3(out, report)
        report.steps.append("v2-to-v3")
    if not report.steps:
        # e.g. version "abc": every comparison with NaN is false, yet Pi reports a migration
        # (and rewrites the file) without changing anything.
        report.steps.append("none (version is not a number)")
    return out, report
