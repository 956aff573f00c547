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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from pitools.core.context.build import Projection, build_projection
from pitools.core.js.access import entry_id
from pitools.core.js.json.encode import to_json_bytes
from pitools.core.js.json.record import record_json
from pitools.core.js.types import EntryId, JsonObject, JsValue
from pitools.core.js.value import UNDEFINED
from pitools.core.session.load import LoadedSession, RawSession, kept_whole, load
from pitools.core.session.loaded import Session
from pitools.core.session.tree import SessionIndex
from pitools.errors import CycleError, PiCrashError, PitoolsError

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

    def to_json(self) -> JsonObject:
        return {"holds": self.holds, **record_json(self)}


def _load(data: bytes, path: str, keep: Literal["all", "skeleton"] = "all") -> LoadedSession | None:
    """The file as Pi loads it (the one loader, on bytes); None when Pi reads nothing from it
    (it rejects the file, or its migration throws)."""
    try:
        return load(data, name=path, keep=keep)
    except PitoolsError:
        return None


def _fingerprint(projection: Callable[[], Projection]) -> bytes:
    """Pi's context (messages, thinking level, model) as bytes; or why building it fails."""
    try:
        p = projection()
        return to_json_bytes([p.messages, p.thinking_level, p.model])
    except CycleError:
        return b"!cycle"
    except PiCrashError as exc:
        return b"!crash " + exc.message.encode("utf-8", "replace")


def context_fingerprint(index: SessionIndex, start: int) -> bytes:
    """Pi's context (messages, thinking level, model) at the entry at position ``start``, as
    bytes; or why it fails."""

    def projection() -> Projection:
        path = index.walk_positions(start)
        path.reverse()
        return build_projection(index.entries_at(path))

    return _fingerprint(projection)


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
    keep: Literal["all", "skeleton"] = "all",
) -> InvariantReport:
    """Compare what Pi reads from ``before`` and ``after``; ``origins[k]`` is where after-line k+1 came from.

    ``keep`` is the loader's keep policy for both files: ``"all"`` holds every entry parsed and
    builds the context at every leaf; ``"skeleton"`` (``repair`` on any file) holds skeletons and
    builds only the contexts it cannot prove unchanged (see :func:`_compare_skeletons`). The
    promise fails under one exactly when it fails under the other.
    """
    report = InvariantReport()
    new = _load(after, path, keep)
    if new is None:
        report.violations.append("Pi would not load the repaired file")
        return report
    report.entries_after = len(new.session.entries)
    old = _load(before, path, keep)
    if old is None:
        # Pi reads nothing from the damaged file today: every leaf is restored; each must build.
        for leaf in new.index.leaf_positions():
            report.leaves_restored += 1
            if _loops(new.index, leaf):
                report.violations.append(f"the repaired file still loops at leaf {new.index.ids[leaf]!r}")
        return report
    o_sess, n_sess = old.session, new.session
    report.entries_before = len(o_sess.entries)
    # 1. Nothing Pi reads today is lost or changed, byte for byte (the header is checked by Pi
    # loading the file).
    after_pos = _entries_kept(report, before, o_sess.raw, o_sess, after, n_sess.raw, n_sess, origins, touched, removed)
    # 2./3. Contexts at every leaf Pi has today.
    if keep == "skeleton":
        _compare_skeletons(report, _lean(before, old), _lean(after, new), after_pos, origins, touched, removed)
    else:
        _compare_parsed(report, old, new, after_pos, origins, touched, removed)
    return report


#: :func:`check_invariant` on skeletons, what ``repair`` runs (memory: see :func:`_compare_skeletons`).
check_invariant_lean = partial(check_invariant, keep="skeleton")


def _compare_parsed(
    report: InvariantReport,
    old: LoadedSession,
    new: LoadedSession,
    after_pos: dict[Origin, int],
    origins: Sequence[Origin],
    touched: set[int],
    removed: set[int],
) -> None:
    """Steps 2 and 3 with every entry parsed: the context at every leaf, before and after."""
    o_sess, o_idx, n_sess, n_idx = old.session, old.index, new.session, new.index
    old_lines = set(o_sess.lines)
    for leaf, line, target in _leaf_targets(report, o_idx, o_sess, n_sess, after_pos, removed):
        before_fp = context_fingerprint(o_idx, leaf)
        after_fp = context_fingerprint(n_idx, target)
        try:
            path_lines = {o_sess.lines[p] for p in o_idx.walk_positions(leaf)}  # a leaf is held by byId
        except CycleError:
            path_lines = None
        # An entry on the new path that Pi did not read before (a split line's piece, an entry
        # now reachable) or that a fix changed makes this a restored leaf, not an unchanged one.
        new_path_ok = _only_old_entries(n_idx, n_sess, target, origins, old_lines, touched)
        untouched = path_lines is not None and not (path_lines & touched)
        _judge_leaf(report, line, o_idx.ids[leaf], untouched and new_path_ok, before_fp, after_fp)
    for leaf in n_idx.leaf_positions():
        if context_fingerprint(n_idx, leaf) == b"!cycle":
            report.violations.append(f"the repaired file still loops at leaf {_show(n_idx.ids[leaf])}")


def _leaf_targets(
    report: InvariantReport,
    o_idx: SessionIndex,
    o_sess: Session,
    n_sess: Session,
    after_pos: dict[Origin, int],
    removed: set[int],
) -> Iterator[tuple[int, int, int]]:
    """Each leaf Pi has today (its position), its line, and the position of the entry it became
    in the repaired file; a leaf that is gone without the repair removing its line is a
    violation (and is skipped)."""
    for leaf in o_idx.leaf_positions():
        line = o_sess.lines[leaf]
        j = after_pos.get((line, 0))
        if j is None:
            if line not in removed:
                report.violations.append(f"line {line}: the leaf is missing from the repaired file")
            continue
        yield leaf, line, j


def _only_old_entries(
    index: SessionIndex, session: Session, start: int, origins: Sequence[Origin], old_lines: set[int], touched: set[int]
) -> bool:
    try:
        path = index.walk_positions(start)
    except CycleError:
        return False
    ids = index.ids
    for p in path:
        # The entry byId holds for the id (``start`` may be an earlier duplicate of it).
        held = index.position_of(ids[p])
        if held is None:
            return False
        origin = origins[session.lines[held] - 1]
        if origin[1] != 0 or origin[0] is None or origin[0] not in old_lines or origin[0] in touched:
            return False
    return True


def _entries_kept(
    report: InvariantReport,
    before: bytes,
    old_raw: RawSession,
    o_sess: Any,
    after: bytes,
    new_raw: RawSession,
    n_sess: Any,
    origins: Sequence[Origin],
    touched: set[int],
    removed: set[int],
) -> dict[Origin, int]:
    """Step 1 of both checks: every entry line Pi reads today that no fix touches or removes is in
    the repaired file with the same bytes (violations go to ``report``). Returns each repaired
    entry's position by its origin."""
    after_pos: dict[Origin, int] = {}
    for k, line in enumerate(n_sess.lines):
        after_pos[origins[line - 1]] = k
    first_line = old_raw.lines[0] if old_raw.lines else 0
    for k, line in enumerate(o_sess.lines):
        if line in touched or line in removed:
            continue
        j = after_pos.get((line, 0))
        if j is None:
            report.violations.append(f"line {line}: an entry Pi reads today is missing from the repaired file")
            continue
        pos_o = o_sess.positions[k]
        pos_n = n_sess.positions[j]
        a = _normalized_line(before, old_raw.offsets[pos_o], old_raw.lengths[pos_o], old_raw.lines[pos_o] == first_line)
        b = _normalized_line(after, new_raw.offsets[pos_n], new_raw.lengths[pos_n], False)
        if a != b:
            report.violations.append(f"line {line}: an entry Pi reads today changed without a reported fix")
    return after_pos


def _show(value: JsValue) -> str:
    return repr(value) if value is not UNDEFINED else "(no id)"


# -- the same check on skeletons (big files) ---------------------------------------------------------
#
# ``check_invariant`` holds both files parsed: on a 1 GB text-heavy session that is about 2.3x the
# file each, on top of the two files' bytes. The lean check loads each file keeping only the
# skeleton of every entry (``type``, ``id``, ``parentId``; compactions and headers whole) and the
# offset of its line, and parses an entry again only when a context is built from it. Two
# shortcuts keep it from building every context twice, each a proof rather than a guess:
#
# * A leaf whose old path no fix touches and whose new path is the same source lines in the same
#   order gets the same context: a context is a function of the path's values, and step 1 checks
#   that every one of those lines kept its bytes (which then parse to the same values).
# * "the repaired file still loops" needs only the parent walk, not the context.
#
# v1 files get Pi's migration on the skeletons (ids are ordinals chained in file order, and a
# compaction, kept whole, converts its firstKeptEntryIndex there); an entry parsed again takes
# the id and parentId its skeleton was given, in the same order the migration assigns them.


@dataclass(slots=True)
class _Lean:
    """A file loaded with the loader's "skeleton" policy, and how to parse an entry again."""

    data: bytes
    raw: RawSession
    session: Session
    index: SessionIndex
    #: A v1 or v2 file: an entry parsed again gets Pi's v2 → v3 migration (``hookMessage`` → ``custom``).
    v2: bool = False
    #: A v1 file: an entry parsed again also takes the id and parentId the migration gave its skeleton.
    v1: bool = False


def _lean(data: bytes, loaded: LoadedSession) -> _Lean:
    """A file loaded as skeletons, and what parsing one of its entries again needs.

    A v2 file's migration only renames a message role, which skeletons do not hold: it is applied
    to each entry parsed again (:func:`_whole`). A v1 file's migration gives every entry an id and
    a parentId (and converts a compaction's index, which skeletons keep whole): it runs on the
    skeletons, and an entry parsed again takes its skeleton's id and parentId."""
    from pitools.core.session.migrate import effective_version

    session = loaded.session
    version = effective_version(session.migration.version_before)
    return _Lean(data, session.raw, session, loaded.index, v2=version < 3, v1=version < 2)


def _judge_leaf(
    report: InvariantReport, line: Any, leaf_id: EntryId, comparable: bool, before_fp: bytes, after_fp: bytes
) -> None:
    """One leaf's verdict, for the full and the lean check alike.

    ``comparable``: no fix touched the leaf's path and the new path holds only entries Pi read
    before, so Pi's context there must not change. Otherwise (or when Pi could not build it
    before) the leaf counts as restored and need only build after the repair.
    """
    if comparable and not before_fp.startswith(b"!"):
        report.leaves_compared += 1
        if before_fp != after_fp:
            report.violations.append(
                f"line {line}: Pi's context at leaf {_show(leaf_id)} would change, though no fix touches its path"
            )
    else:
        report.leaves_restored += 1
        if after_fp == b"!cycle" or (after_fp.startswith(b"!crash") and not before_fp.startswith(b"!")):
            report.violations.append(
                f"line {line}: Pi cannot build the context at leaf {_show(leaf_id)} after the repair"
            )


def _whole(lo: _Lean, at: int) -> Any:
    """The full value of the entry at position ``at``, parsed again from its line."""
    from pitools.core.js.json.parse import parse_json_line

    entry = lo.session.entries[at]
    if type(entry) is not dict or kept_whole(entry.get("type")):
        return entry
    pos = lo.session.positions[at]
    start = lo.raw.offsets[pos]
    value = parse_json_line(lo.data[start : start + lo.raw.lengths[pos]])[0]
    if lo.v1 and type(value) is dict:
        value["id"] = entry.get("id")
        value["parentId"] = entry.get("parentId")
    if lo.v2:
        from pitools.core.session.migrate import MigrationReport, migrate_v2_to_v3

        value = migrate_v2_to_v3([value], MigrationReport())[0]
    return value


def _lean_fingerprint(lo: _Lean, start: int) -> bytes:
    """:func:`context_fingerprint` on skeletons: only the entries the context holds are parsed at once."""
    from pitools.core.context.build import context_entries_from_path, latest_compaction_on
    from pitools.core.js import ops as jsops

    try:
        at = lo.index.walk_positions(start)
    except CycleError:
        return b"!cycle"
    at.reverse()
    path = lo.index.entries_at(at)
    # Where the context starts: the newest compaction's first kept entry (or the compaction),
    # found on the skeletons exactly as buildContextEntries finds it; everything from there on
    # is parsed whole, the entries before stay skeletons (only their ids are read).
    first = 0
    compaction = latest_compaction_on(path)
    if compaction is not None:
        comp_id = compaction.get("id", UNDEFINED)
        comp_idx = next((i for i, e in enumerate(path) if jsops.strict_equal(entry_id(e), comp_id)), -1)
        if comp_idx >= 0:
            kept = compaction.get("firstKeptEntryId", UNDEFINED)
            first = next((i for i in range(comp_idx) if jsops.strict_equal(entry_id(path[i]), kept)), comp_idx)
    mixed = path[:first] + [_whole(lo, p) for p in at[first:]]
    context = context_entries_from_path(mixed)
    # The thinking level and model come from the whole path: stream it, one entry at a time.
    settings_path: Any = (mixed[i] if i >= first else _whole(lo, at[i]) for i in range(len(at)))
    return _fingerprint(lambda: build_projection(settings_path, context))


def _chains(lo: _Lean, key_of: Any, intern: dict[tuple[Any, int], int]) -> Callable[[int], tuple[bool, int] | None]:
    """Per entry position: ``(flag, chain)``, or None when its walk loops (one walk per entry in all).

    ``flag`` is true when ``key_of`` flags any entry of its path; ``chain`` is a number equal for
    two entries exactly when their paths have the same keys in the same order (hash-consed in
    ``intern``, shared by both files).
    """

    def step(base: tuple[bool, int], pos: int) -> tuple[bool, int]:
        flagged, key = key_of(pos)
        return base[0] or flagged, intern.setdefault((key, base[1]), len(intern) + 1)

    return lo.index.fold_positions(step, (False, 0))


def _loops(index: SessionIndex, start: int) -> bool:
    try:
        index.walk_positions(start)
    except CycleError:
        return True
    return False


def _compare_skeletons(
    report: InvariantReport,
    old: _Lean,
    new: _Lean,
    after_pos: dict[Origin, int],
    origins: Sequence[Origin],
    touched: set[int],
    removed: set[int],
) -> None:
    """Steps 2 and 3 on skeletons (same verdicts as :func:`_compare_parsed`).

    ``leavesCompared`` counts the leaves proven unchanged (their paths are the same lines with
    the same bytes), including one where Pi throws today, which the parsed check counts as
    restored. When a line changed without a fix, that line is the violation reported: the
    contexts of the leaves above it are not reported again (the parsed check names those too).
    Either way the promise fails exactly when the parsed check's does.

    Each path is summarised once per entry: old: does a fix touch it, and its source lines; new:
    is it made only of old entries no fix touched, and their source lines.
    """
    o_sess, o_idx, n_sess, n_idx = old.session, old.index, new.session, new.index
    old_lines = set(o_sess.lines)
    o_lines, n_lines = o_sess.lines, n_sess.lines

    def old_key(p: int) -> tuple[bool, Any]:
        line = o_lines[p]
        return line in touched, line

    def new_key(p: int) -> tuple[bool, Any]:
        origin = origins[n_lines[p] - 1]
        src = origin[0]
        return origin[1] != 0 or src is None or src not in old_lines or src in touched, src

    intern: dict[tuple[Any, int], int] = {}
    old_chain = _chains(old, old_key, intern)
    new_chain = _chains(new, new_key, intern)
    for leaf, line, target in _leaf_targets(report, o_idx, o_sess, n_sess, after_pos, removed):
        o_sum, n_sum = old_chain(leaf), new_chain(target)
        untouched = o_sum is not None and not o_sum[0]  # the old path loops or a fix touches it
        new_path_ok = n_sum is not None and not n_sum[0]
        if untouched and new_path_ok and o_sum is not None and n_sum is not None and o_sum[1] == n_sum[1]:
            report.leaves_compared += 1  # the same lines, the same bytes: the same context
            continue
        before_fp = _lean_fingerprint(old, leaf)
        after_fp = _lean_fingerprint(new, target)
        _judge_leaf(report, line, o_idx.ids[leaf], untouched and new_path_ok, before_fp, after_fp)
    for leaf in n_idx.leaf_positions():
        if new_chain(leaf) is None:
            report.violations.append(f"the repaired file still loops at leaf {_show(n_idx.ids[leaf])}")
