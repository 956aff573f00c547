"""``pitools repair`` as a use case: read the file, plan the fixes, prove the invariant, write.

The plan and the proof are pure (:mod:`pitools.core.repair`); this module only reads the file
(once, with a stamp of exactly the bytes read), picks the header's missing pieces from the file
system (the file name, its folder, a new id and the time) and writes through :mod:`pitools.store`.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pitools import store
from pitools.core.repair.invariant import InvariantReport, check_invariant_lean
from pitools.core.repair.repair import RepairOptions, RepairPlan, cwd_candidates, cwd_from_folder, plan_repair
from pitools.errors import PitoolsError


@dataclass(slots=True)
class RepairResult:
    """What ``pitools repair`` did (or would do) to one file."""

    path: str
    plan: RepairPlan
    invariant: InvariantReport | None
    bytes_before: int
    bytes_after: int | None
    lines_before: int
    lines_after: int | None
    written: str | None = None
    backup: str | None = None
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)
    #: The repaired file's bytes (None when there is nothing to write).
    data_after: bytes | None = None

    @property
    def refused(self) -> bool:
        return self.invariant is not None and not self.invariant.holds

    @property
    def healthy(self) -> bool:
        return self.plan.writable and not self.plan.remaining and not self.refused

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "healthy": self.healthy,
            "changed": self.plan.changed,
            "dryRun": self.dry_run,
            "written": self.written,
            "backup": self.backup,
            "bytesBefore": self.bytes_before,
            "bytesAfter": self.bytes_after,
            "linesBefore": self.lines_before,
            "linesAfter": self.lines_after,
            "fixes": [f.to_json() for f in self.plan.fixes],
            "remaining": [r.to_json() for r in self.plan.remaining],
            "invariant": self.invariant.to_json() if self.invariant is not None else None,
            "notes": self.notes,
        }


def _now_timestamp() -> str:
    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _pick_cwd(folder: str) -> tuple[str | None, str | None]:
    """The cwd a Pi session folder stands for; an existing directory wins among the readings."""
    naive = cwd_from_folder(folder)
    if naive is None:
        return None, None
    existing = [c for c in cwd_candidates(folder) if os.path.isdir(c)]
    if len(existing) == 1:
        return existing[0], None
    if naive.count("/") > 1 or existing:
        return (existing[0] if existing else naive), (
            "the cwd was read from the session folder name, where '-' may also have been '/' in the "
            "original path; check the header's cwd or pass --cwd"
        )
    return naive, None


def repair_file(
    path: str,
    *,
    output: str | None = None,
    in_place: bool = False,
    dry_run: bool = False,
    backup: bool = True,
    cwd: str | None = None,
    reattach: bool = False,
) -> RepairResult:
    """Plan the repair of ``path``, check the invariant and (unless ``dry_run``) write it."""
    from pitools.core.session.ids import uuid7

    try:
        data, stamp = store.read_stamped(path)
    except IsADirectoryError:
        raise PitoolsError("is a directory, not a session file", path=path) from None
    except OSError as exc:
        raise PitoolsError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    folder = Path(os.path.abspath(path)).parent.name
    notes: list[str] = []
    picked_cwd, note = (cwd, None) if cwd is not None else _pick_cwd(folder)
    options = RepairOptions(
        file_name=Path(path).name,
        folder_name=folder,
        cwd=picked_cwd,
        reattach=reattach,
        new_session_id=uuid7(),
        now_timestamp=_now_timestamp(),
    )
    from pitools.core.session.migrate import effective_version

    plan = plan_repair(data, options)
    if note and any(f.action == "rebuilt" for f in plan.fixes):
        notes.append(note)
    result = RepairResult(
        path=path,
        plan=plan,
        invariant=None,
        bytes_before=len(data),
        bytes_after=None,
        lines_before=data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
        lines_after=None,
        dry_run=dry_run,
        notes=notes,
    )
    if not plan.writable:
        return result
    if (
        not plan.changed
        and effective_version(plan.lines[0].value.get("version")) >= 3
        and sum(len(line.data) + 1 for line in plan.lines) == len(data)
    ):
        # No fix: the output would be the file itself, byte for byte (the sizes agree, and every
        # line was kept as it is), so Pi reads exactly what it reads today. Building it and
        # replaying every leaf on two copies would cost 4x the file in memory on 1 GB sessions.
        from pitools.core.session.tree import SessionIndex

        entries = [v for line in plan.lines[1:] if not (type(v := line.value) is dict and v.get("type") == "session")]
        leaves = len(SessionIndex.build(entries).leaf_positions())
        result.invariant = InvariantReport(len(entries), len(entries), leaves_compared=leaves)
        result.bytes_after = len(data)
        result.lines_after = len(plan.lines)
        return result
    new = plan.output_bytes()
    origins = plan.origins()
    result.data_after = new
    result.bytes_after = len(new)
    result.lines_after = len(plan.lines)
    # The new file and where each of its lines came from are all the check and the write need:
    # let the plan's lines go (0.3x the file on a 1 GB text-heavy session).
    plan.lines = []
    # The lean check: skeletons of both files, entries parsed again only to build a context (a
    # 1 GB text-heavy session would cost 2.3x the file per parsed copy).
    result.invariant = check_invariant_lean(data, new, origins, plan.touched, plan.removed, path=path)
    if result.refused or dry_run or not plan.changed:
        return result
    if in_place:
        made = store.atomic_replace(path, [new], expected=stamp, backup=backup)
        result.written = path
        result.backup = str(made) if made else None
    elif output and output != "-":
        store.write_new(output, [new])
        result.written = output
    return result
