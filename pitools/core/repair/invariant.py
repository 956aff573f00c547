"""The promise ``pitools repair`` checks before it writes, with the core that replays Pi's context.

* Nothing Pi reads today is lost: every entry Pi loads from the damaged file is still there with
  the same value, unless a reported fix changed or removed it.
* At every leaf whose path no fix touches, Pi builds exactly the context it builds today.
* At every leaf whose path a fix touches (or that Pi cannot build today), Pi now builds a context
  without throwing or looping.

Entries are matched by where they came from (source line, piece of a split line), not by id:
renamed duplicates and v1 files (whose ids come from Pi's migration) stay comparable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.context.build import build_projection
from pitools.core.errors import CycleError, PiCrashError
from pitools.core.js.jsonout import to_json_bytes
from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import RawSession, read_session_bytes
from pitools.core.session.loaded import Session, entry_id, session_from_raw
from pitools.core.session.migrate import MigrationError
from pitools.core.session.tree import SessionIndex

Origin = tuple[int | None, int]


@dataclass(slots=True)
class InvariantReport:
    """What was compared, and every way the promise failed (empty: it holds)."""

    entries_before: int = 0
    entries_after: int = 0
    leaves_compared: int = 0
    leaves_restored: int = 0
    violations: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return not self.violations

    def to_json(self) -> dict[str, Any]:
        return {
            "holds": self.holds,
            "entriesBefore": self.entries_before,
            "entriesAfter": self.entries_after,
            "leavesCompared": self.leaves_compared,
            "leavesRestored": self.leaves_restored,
            "violations": self.violations,
        }


@dataclass(slots=True)
class _Loaded:
    raw: RawSession
    session: Session | None
    index: SessionIndex | None


def _load(data: bytes, path: str) -> _Loaded:
    raw = read_session_bytes(data, path)
    if not raw.valid:
        return _Loaded(raw, None, None)
    try:
        session = session_from_raw(raw)
    except MigrationError:
        return _Loaded(raw, None, None)  # Pi throws while migrating: it reads nothing
    return _Loaded(raw, session, SessionIndex.build(session.entries))


def context_fingerprint(index: SessionIndex, start: Any) -> bytes:
    """Pi's context (messages, thinking level, model) at an entry, as bytes; or why it fails."""
    try:
        path = index.walk_to_root(start)
        path.reverse()
        projection = build_projection(path)
        return to_json_bytes([projection.messages, projection.thinking_level, projection.model])
    except CycleError:
        return b"!cycle"
    except PiCrashError as exc:
        return b"!crash " + exc.message.encode("utf-8", "replace")


def leaf_entries(index: SessionIndex) -> list[Any]:
    """The entries at every leaf (``getTree`` leaves with string ids), plus Pi's default leaf."""
    out = [index.get(leaf) for leaf in index.leaves()]
    if index.entries:
        default = index.get(index.leaf_id) if index.has(index.leaf_id) else None
        out.append(default if default is not None else index.entries[-1])
    seen: set[int] = set()
    unique = []
    for e in out:
        if e is not None and id(e) not in seen:
            seen.add(id(e))
            unique.append(e)
    return unique


def _normalized_line(data: bytes, offset: int, length: int, first: bool) -> bytes:
    line = data[offset : offset + length]
    if first and line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    return line[:-1] if line.endswith(b"\r") else line


def check_invariant(
    before: bytes,
    after: bytes,
    origins: Sequence[Origin],
    touched: set[int],
    removed: set[int],
    *,
    path: str = "<session>",
) -> InvariantReport:
    """Compare what Pi reads from ``before`` and ``after``; ``origins[k]`` is where after-line k+1 came from."""
    report = InvariantReport()
    old = _load(before, path)
    new = _load(after, path)
    if new.session is None or new.index is None:
        report.violations.append("Pi would not load the repaired file")
        return report
    report.entries_after = len(new.session.entries)
    if old.session is None or old.index is None:
        # Pi reads nothing from the damaged file today: every leaf is restored; each must build.
        for leaf in leaf_entries(new.index):
            report.leaves_restored += 1
            if context_fingerprint(new.index, leaf) == b"!cycle":
                report.violations.append(f"the repaired file still loops at leaf {entry_id(leaf)!r}")
        return report
    o_sess, o_idx, n_sess, n_idx = old.session, old.index, new.session, new.index
    report.entries_before = len(o_sess.entries)
    after_pos: dict[Origin, int] = {}
    for k, line in enumerate(n_sess.lines):
        after_pos[origins[line - 1]] = k
    # 1. Nothing Pi reads today is lost (entries; the header is checked by Pi loading the file).
    first_line = old.raw.lines[0] if old.raw.lines else 0
    for k, line in enumerate(o_sess.lines):
        if line in touched or line in removed:
            continue
        j = after_pos.get((line, 0))
        if j is None:
            report.violations.append(f"line {line}: an entry Pi reads today is missing from the repaired file")
            continue
        pos_o = o_sess.positions[k]
        pos_n = n_sess.positions[j]
        a = _normalized_line(before, old.raw.offsets[pos_o], old.raw.lengths[pos_o], old.raw.lines[pos_o] == first_line)
        b = _normalized_line(after, new.raw.offsets[pos_n], new.raw.lengths[pos_n], False)
        if a != b:
            report.violations.append(f"line {line}: an entry Pi reads today changed without a reported fix")
    # 2./3. Contexts at every leaf Pi has today.
    old_lines = set(o_sess.lines)
    for leaf in leaf_entries(o_idx):
        k = o_idx.position(leaf) if o_idx.has(entry_id(leaf)) else len(o_sess.entries) - 1
        line = o_sess.lines[k]
        j = after_pos.get((line, 0))
        if j is None:
            if line not in removed:
                report.violations.append(f"line {line}: the leaf is missing from the repaired file")
            continue
        target = n_sess.entries[j]
        before_fp = context_fingerprint(o_idx, leaf)
        after_fp = context_fingerprint(n_idx, target)
        try:
            path_lines = {o_sess.lines[o_idx.position(e)] for e in o_idx.walk_to_root(leaf) if o_idx.has(entry_id(e))}
        except CycleError:
            path_lines = None
        # An entry on the new path that Pi did not read before (a split line's piece, an entry
        # now reachable) or that a fix changed makes this a restored leaf, not an unchanged one.
        new_path_ok = _only_old_entries(n_idx, n_sess, target, origins, old_lines, touched)
        if path_lines is not None and not (path_lines & touched) and new_path_ok and not before_fp.startswith(b"!"):
            report.leaves_compared += 1
            if before_fp != after_fp:
                report.violations.append(
                    f"line {line}: Pi's context at leaf {_show(entry_id(leaf))} would change, "
                    "though no fix touches its path"
                )
        else:
            report.leaves_restored += 1
            if after_fp == b"!cycle" or (after_fp.startswith(b"!crash") and not before_fp.startswith(b"!")):
                report.violations.append(
                    f"line {line}: Pi cannot build the context at leaf {_show(entry_id(leaf))} after the repair"
                )
    for leaf in leaf_entries(n_idx):
        if context_fingerprint(n_idx, leaf) == b"!cycle":
            report.violations.append(f"the repaired file still loops at leaf {_show(entry_id(leaf))}")
    return report


def _only_old_entries(
    index: SessionIndex, session: Session, start: Any, origins: Sequence[Origin], old_lines: set[int], touched: set[int]
) -> bool:
    try:
        path = index.walk_to_root(start)
    except CycleError:
        return False
    for e in path:
        if not index.has(entry_id(e)):
            return False
        origin = origins[session.lines[index.position(e)] - 1]
        if origin[1] != 0 or origin[0] is None or origin[0] not in old_lines or origin[0] in touched:
            return False
    return True


def _show(value: Any) -> str:
    return repr(value) if value is not UNDEFINED else "(no id)"
