"""The checks that need every entry: ids, the parent tree, tool-call pairing along paths, references.

They run on :class:`~pitools.core.validate.scan.Records` (positions, keys and a few fields per
entry), never on the parsed entries themselves, and without recursion: a 100,000-deep chain is
an ordinary input.
"""

from __future__ import annotations

from array import array
from typing import Any

from pitools.core.js.json.encode import short_json as _js
from pitools.core.session.findings import Finding
from pitools.core.validate.codes import CODES
from pitools.core.validate.scan import R_DUPLICATE, UNDEF_KEY, RankedFinding, Records, before

_TURN_ROLES = ("user", "assistant")
#: The findings a context edit can take out of every context (see :meth:`Structure.edited_out`).
_EDITABLE_PAIRING = frozenset({"tool-result-without-call", "tool-call-unanswered"})
_NO_TARGETS: frozenset[int] = frozenset()
#: The order in which reference checks report (each in file order).
_REF_ORDER = {"compaction": 0, "context_edit": 1, "label": 2, "branch_summary": 3}


def _earlier(key: str | float | None, parent_key: str | float | None) -> bool:
    """Whether an entry's time key is before its parent's (False when either is unknown)."""
    if type(key) is str and type(parent_key) is str:  # Pi's own format: text order (the usual case)
        return key < parent_key
    return key is not None and parent_key is not None and before(key, parent_key)


class Structure:
    """Pi's ``byId`` over the records, and the checks that use it."""

    def __init__(self, rec: Records) -> None:
        self.rec = rec
        keys = rec.keys
        n = len(keys)
        #: Key -> position of the entry Pi's ``byId`` keeps (the last one with that id).
        pos_by_key: dict[Any, int] = dict(zip(keys, range(n), strict=True))
        self.pos_by_key = pos_by_key
        #: Every key distinct (the usual case): ``byId`` holds every entry.
        self.all_held = len(pos_by_key) == n
        #: Position of each entry's parent in ``byId`` (None: no parentId, or it matches nothing).
        get = pos_by_key.get
        self.parents: list[int | None] = [None if key is None else get(key) for key in rec.parent_keys]
        #: Every parent comes earlier in the file (how Pi appends): no loops, and file order is
        #: a topological order, which lets the walk run as plain loops (see :meth:`walk`).
        self.parents_first = all(parent is None or parent < pos for pos, parent in enumerate(self.parents))
        #: Euler-tour times of the walked entries (-1: not reachable from a root).
        self.tin: list[int] = []
        self.tout: list[int] = []
        #: Depth of each entry, when the walk ran as loops (ancestry is then answered by climbing).
        self.depth: array[int] | list[int] = []

    def finding(self, code: str, message: str, pos: int | None) -> Finding:
        if pos is None:
            return Finding(code, CODES[code].severity, message, None, None)
        return Finding(code, CODES[code].severity, message, self.rec.lines[pos], self.rec.shown_id(pos))

    def held(self) -> range | list[int]:
        """Positions of the entries ``byId`` holds, in file order."""
        return range(len(self.rec)) if self.all_held else sorted(self.pos_by_key.values())

    # -- duplicate ids (reported with the entry pass) ---------------------------------------------
    def duplicates(self) -> list[RankedFinding]:
        rec = self.rec
        first_line: dict[Any, int] = {}
        out: list[RankedFinding] = []
        if self.all_held:
            return out
        for pos, (key, line) in enumerate(zip(rec.keys, rec.lines, strict=True)):
            if key == UNDEF_KEY:
                continue  # no id (or not an object)
            first = first_line.setdefault(key, line)
            if first != line:
                message = (
                    f"id {rec.id_text(pos)} is already used on line {first}; Pi's index keeps only the "
                    "last entry with an id, so parent links and leaves resolve to that one"
                )
                out.append((line, R_DUPLICATE, self.finding("duplicate-id", message, pos)))
        return out

    # -- roots, orphans, cycles -------------------------------------------------------------------
    def tree(self) -> list[Finding]:
        rec = self.rec
        out: list[Finding] = []
        roots: list[int] = []
        parent_keys, parents, non_objects = rec.parent_keys, self.parents, rec.non_objects
        for pos in self.held():
            if parents[pos] is not None or pos in non_objects:
                continue
            if parent_keys[pos] is None:
                roots.append(pos)
            else:
                out.append(
                    self.finding(
                        "orphan-entry",
                        f"parentId {rec.parent_text(pos)} matches no entry; Pi's path stops here, so nothing "
                        "before it reaches the context",
                        pos,
                    )
                )
        if len(roots) > 1:
            shown = ", ".join(str(rec.lines[p]) for p in roots[:8]) + (" …" if len(roots) > 8 else "")
            out.append(
                self.finding(
                    "multiple-roots",
                    f"{len(roots)} entries have no parent (lines {shown}); a path from a later root "
                    "does not see the entries before it",
                    roots[1],
                )
            )
        for cycle in self.cycles():
            if len(cycle) < 2:
                continue  # a self-parent, reported per entry
            ids = [rec.tree_id_text(p) for p in cycle]
            loop = " -> ".join([*ids, ids[0]]) if len(ids) <= 6 else " -> ".join([*ids[:5], "…"])
            out.append(
                self.finding(
                    "parent-cycle",
                    f"parentId loop of {len(ids)} entries ({loop}); Pi's getBranch/buildSessionPath "
                    "would loop forever on any path through it",
                    min(cycle),
                )
            )
        return out

    def cycles(self) -> list[list[int]]:
        """Every distinct parentId loop, as positions in walk order (iterative, linear)."""
        parents = self.parents
        out: list[list[int]] = []
        if self.parents_first:  # parents that all come earlier cannot form a loop
            return out
        done = bytearray(len(parents))
        for start in self.pos_by_key.values():
            if done[start]:
                continue
            trail: list[int] = []
            on_trail: dict[int, int] = {}
            current: int | None = start
            while current is not None and not done[current]:
                at = on_trail.get(current)
                if at is not None:
                    out.append(trail[at:])
                    break
                on_trail[current] = len(trail)
                trail.append(current)
                current = parents[current]
            for pos in trail:
                done[pos] = 1
        return out

    # -- one walk over the tree: ancestry, tool calls, timestamps ---------------------------------
    def walk(self) -> list[Finding]:
        """Timestamps against parents, tool results against the calls on their path, and tool
        calls nobody answers; also prepares :meth:`is_ancestor`."""
        found = None
        if self.parents_first and not self.rec.self_parents:
            found = self._walk_in_file_order()
        if found is None:
            found = self._walk_depth_first()
        edited = self.edited_out()
        if not edited:
            return found
        lines = {self.rec.lines[pos] for pos in edited}
        return [f for f in found if f.code not in _EDITABLE_PAIRING or f.line not in lines]

    # -- context edits that take a pairing problem out of every context -------------------------------
    def edited_out(self) -> set[int]:
        """Tool results and assistant turns whose pairing problem no context that holds them sends.

        Pi's projection (``buildSessionProjection``) applies the latest ``context_edit`` of each
        entry on the path, while the raw entry stays in the file: ``pitools heal`` takes an orphaned
        result out with ``replacement: null`` and turns an assistant turn's calls into text. Such an
        entry is left out of ``tool-result-without-call`` / ``tool-call-unanswered`` when every
        leaf below it has an edit that removes the problem on its path below the entry (for a
        result: hides it; for a turn: hides it or replaces its content with no tool call), and no
        edit of it anywhere keeps the problem. An edit on another branch, or a leaf below the entry
        that no edit reaches, leaves the finding as it was.

        Pi collects the edits from the whole context, so an edit *above* its target (which Pi's
        ``appendContextEdit`` never writes, but a hand-made file may hold) applies too, unless a
        compaction between them leaves the edit out of the context while keeping the target
        (:meth:`_edited_from_above`).
        """
        rec = self.rec
        removing: dict[int, set[int]] = {}  # edit position -> the targets it takes the problem out of
        kept: set[int] = set()  # targets some edit leaves the problem in
        for pos, etype, data in rec.refs:
            if etype != "context_edit":
                continue
            target = self.pos_by_key.get(data["key"])
            if target is None or not (target in rec.results or target in rec.calls):
                continue
            if "why" not in data and (data["hides"] or (target in rec.calls and not data["keeps_calls"])):
                removing.setdefault(pos, set()).add(target)
            else:
                kept.add(target)
        candidates = {t for targets in removing.values() for t in targets} - kept
        if not candidates:
            return set()
        children = self._children()
        if self.parents_first and not rec.self_parents:
            out = self._edited_out_bottom_up(removing, candidates)
        else:
            out = {t for t in candidates if self._edited_below(t, removing, children)}
        above: dict[int, list[int]] = {}  # target -> the removing edits among its ancestors
        for pos, targets in removing.items():
            for t in targets:
                if t in candidates and t not in out and self.is_ancestor(pos, t):
                    above.setdefault(t, []).append(pos)
        if above:
            out |= self._edited_from_above(above, removing, children)
        return out

    def _children(self) -> dict[int, list[int]]:
        children: dict[int, list[int]] = {}
        for pos in self.held():
            parent = self.parents[pos]
            if parent is not None and parent != pos:
                children.setdefault(parent, []).append(pos)
        return children

    def _edited_out_bottom_up(self, removing: dict[int, set[int]], candidates: set[int]) -> set[int]:
        """:meth:`edited_out` in one pass from the last entry up (each parent comes before its children):
        the targets taken out on every path from an entry down to a leaf are its own removals plus
        those every child takes out."""
        parents = self.parents
        below: dict[int, frozenset[int]] = {}  # entry -> the intersection over its children so far
        for pos in reversed(self.held()):
            mine = below.get(pos, _NO_TARGETS)
            own = removing.get(pos)
            if own is not None:
                mine = mine | (own & candidates)
            parent = parents[pos]
            if parent is not None:
                seen = below.get(parent)
                below[parent] = mine if seen is None else seen & mine
        return {t for t in candidates if t in below.get(t, _NO_TARGETS)}

    def _edited_below(self, target: int, removing: dict[int, set[int]], children: dict[int, list[int]]) -> bool:
        """Whether every leaf below ``target`` passes an edit that removes its problem (any tree)."""
        stack, seen = list(children.get(target, ())), {target}
        if not stack:
            return False
        while stack:
            pos = stack.pop()
            if pos in seen:
                continue
            seen.add(pos)
            if target in removing.get(pos, ()):
                continue
            kids = children.get(pos)
            if not kids:
                return False
            stack.extend(kids)
        return True

    def _edited_from_above(
        self, above: dict[int, list[int]], removing: dict[int, set[int]], children: dict[int, list[int]]
    ) -> set[int]:
        """Targets taken out by a removing edit among their ancestors, at every leaf below them.

        Pi's ``buildSessionProjection`` gathers the edits of every context entry, before or after
        the target. The edit is in a leaf's context unless the latest compaction on that path lies
        below the edit and keeps nothing from the edit on (its ``firstKeptEntryId`` is not the edit
        nor above it): then Pi sends the target as it is, unless an edit below the target takes it
        out there. Only the edit nearest the target matters (a compaction that keeps an edit keeps
        every later one). Without a compaction in the file every such edit applies; otherwise the
        walks share one budget (8 steps an entry), and targets left when it runs out stay reported.
        """
        rec = self.rec
        types, parents = rec.types, self.parents
        if "compaction" not in types:  # nothing can leave an edit out of a context
            return set(above)
        first_kept: dict[int, int | None] = {}
        for pos, etype, data in rec.refs:
            if etype == "compaction":
                first_kept[pos] = self.pos_by_key.get(data["key"])

        def keeps(compaction: int, edit: int) -> bool:
            kept = first_kept.get(compaction)  # absent: no firstKeptEntryId, or its own id (keeps nothing)
            return kept is not None and (kept == edit or self.is_ancestor(kept, edit) is True)

        budget = 8 * len(rec) + 64
        out: set[int] = set()
        for target, edits in above.items():
            # The nearest: all are on the target's path, so the deepest (latest in the walk's order).
            edit = max(edits, key=lambda e: self.depth[e] if self.depth else self.tin[e])
            # The latest compaction between the edit and the target decides where the walk starts.
            state, current = True, parents[target]
            while current is not None and current != edit:
                budget -= 1
                if budget < 0:
                    return out
                if types[current] == "compaction":
                    state = keeps(current, edit)
                    break
                current = parents[current]
            stack = [(child, state) for child in children.get(target, ())]
            healed = state if not stack else True
            seen = {target}
            while stack and healed:
                budget -= 1
                if budget < 0:
                    return out
                pos, alive = stack.pop()
                if pos in seen:
                    continue
                seen.add(pos)
                if target in removing.get(pos, ()):
                    continue  # an edit below the target: taken out on every path through here
                if types[pos] == "compaction":
                    alive = keeps(pos, edit)
                kids = children.get(pos)
                if not kids:
                    healed = alive
                else:
                    stack.extend((kid, alive) for kid in kids)
            if healed:
                out.add(target)
        return out

    def _walk_in_file_order(self, budget_per_entry: int = 8) -> list[Finding] | None:
        """:meth:`walk` as loops over file order (valid when every parent comes first).

        A tool result climbs to the nearest ancestor that made its call (usually the entry
        just above). Returns None when the climbs grow past ``budget_per_entry`` steps per
        entry on average (results far from their calls): the depth-first walk is linear.
        """
        rec = self.rec
        n = len(rec)
        parents, roles, calls, results, time_keys = self.parents, rec.roles, rec.calls, rec.results, rec.time_keys
        types = rec.types
        held = self.held()
        budget = budget_per_entry * n + 64
        out: list[Finding] = []
        answered: set[tuple[int, int]] = set()  # (assistant position, index of the call in it)
        for pos in held:
            parent = parents[pos]
            if parent is not None and _earlier(time_keys[pos], time_keys[parent]) and types[pos] != "label":
                out.append(self._backwards(pos, parent))
            result_id = results.get(pos)
            if result_id is None or pos in calls:
                continue
            # The innermost open call with this id on the path: the nearest ancestor making it
            # (its last block with that id).
            up = parent
            while up is not None:
                budget -= 1
                made = calls.get(up)
                if made is not None:
                    pairs = made[1]
                    at = next((i for i in range(len(pairs) - 1, -1, -1) if pairs[i][0] == result_id), -1)
                    if at >= 0:
                        answered.add((up, at))
                        break
                up = parents[up]
            if budget < 0:
                return None
            if up is None:
                out.append(self._unmatched_result(pos, result_id))
        later_turn = bytearray(n)
        for pos in reversed(held):
            parent = parents[pos]
            if parent is not None and (later_turn[pos] or roles[pos] in _TURN_ROLES):
                later_turn[parent] = 1
        for pos, (skip, pairs) in sorted(calls.items()):
            if skip or not later_turn[pos]:
                continue
            for i, (call_id, name) in enumerate(pairs):
                if (pos, i) not in answered:
                    out.append(self._unanswered(pos, call_id, name))
        depth = array("q", bytes(8 * n))  # machine integers: 8 bytes per entry
        for pos in held:
            parent = parents[pos]
            if parent is not None:
                depth[pos] = depth[parent] + 1
        self.depth = depth
        return out

    def _backwards(self, pos: int, parent: int) -> Finding:
        """``timestamp-backwards``. Never for a ``label`` entry: its timestamp is when the label was
        set, and Pi's createBranchedSession (/clone, /fork) re-creates the labels after the copied
        path with those times, so a label older than its parent is how Pi writes them."""
        rec = self.rec
        return self.finding(
            "timestamp-backwards",
            f"timestamp {rec.stamp(pos)} is earlier than its parent's "
            f"({rec.stamp(parent)}, line {rec.lines[parent]}); "
            "Pi's tree orders siblings by timestamp",
            pos,
        )

    def _unmatched_result(self, pos: int, result_id: str) -> Finding:
        return self.finding(
            "tool-result-without-call",
            f"tool result for call {_js(result_id)} has no matching toolCall earlier on "
            "its path; providers reject an unmatched result",
            pos,
        )

    def _unanswered(self, pos: int, call_id: str, name: str) -> Finding:
        return self.finding(
            "tool-call-unanswered",
            f"tool call {_js(call_id)} ({name}) has no result before the conversation goes on; "
            "Pi sends a synthetic 'No result provided' error in its place",
            pos,
        )

    def _walk_depth_first(self) -> list[Finding]:
        rec = self.rec
        n = len(rec)
        out: list[Finding] = []
        parents, self_parents = self.parents, rec.self_parents
        children: dict[int, list[int]] = {}
        roots: list[int] = []
        up = [-1] * n  # the parent the walk reaches each entry from
        for pos in self.held():
            # Roots as Pi's getTree sees them: no parent, a missing parent, or itself as parent.
            parent = parents[pos]
            if parent is None or pos in self_parents:
                roots.append(pos)
            else:
                up[pos] = parent
                children.setdefault(parent, []).append(pos)
        tin = [-1] * n
        tout = [-1] * n
        self.tin, self.tout = tin, tout
        roles, calls, results = rec.roles, rec.calls, rec.results
        time_keys = rec.time_keys
        # tool call id -> stack of [assistant position, answered] on the current path
        open_calls: dict[str, list[list[Any]]] = {}
        declared: list[tuple[int, str, str, list[Any]]] = []
        later_turn = bytearray(n)
        timer = 0
        # Entering pushes ~pos (negative): popped again, it means "leaving pos".
        stack: list[int] = roots[::-1]
        while stack:
            pos = stack.pop()
            if pos < 0:
                pos = ~pos
                tout[pos] = timer
                timer += 1
                made = calls.get(pos)
                if made is not None:
                    for call_id, _ in made[1]:
                        open_calls[call_id].pop()
                parent = up[pos]
                if parent >= 0 and (later_turn[pos] or roles[pos] in _TURN_ROLES):
                    later_turn[parent] = 1
                continue
            if tin[pos] != -1:
                continue
            tin[pos] = timer
            timer += 1
            stack.append(~pos)
            parent = up[pos]
            if parent >= 0 and _earlier(time_keys[pos], time_keys[parent]) and rec.types[pos] != "label":
                out.append(self._backwards(pos, parent))
            made = calls.get(pos)
            if made is not None:
                skip, pairs = made
                for call_id, name in pairs:
                    record = [pos, False]
                    open_calls.setdefault(call_id, []).append(record)
                    if not skip:
                        declared.append((pos, call_id, name, record))
            else:
                result_id = results.get(pos)
                if result_id is not None:
                    pending = open_calls.get(result_id)
                    if pending:
                        pending[-1][1] = True
                    else:
                        out.append(self._unmatched_result(pos, result_id))
            kids = children.get(pos)
            if kids is not None:
                stack.extend(reversed(kids))
        for pos, call_id, name, record in declared:
            if not record[1] and later_turn[pos]:
                out.append(self._unanswered(pos, call_id, name))
        return out

    def is_ancestor(self, anc: int, desc: int) -> bool | None:
        """True/False when both are in the walked tree; None when unknown (cycles, duplicates)."""
        if self.depth:  # the walk ran in file order: climb from desc to anc's depth
            if not self.all_held and not (self._held(anc) and self._held(desc)):
                return None  # an earlier entry with a duplicated id: not in the walked tree
            depth, parents = self.depth, self.parents
            steps = depth[desc] - depth[anc]
            if steps < 0:
                return False
            current: int | None = desc
            for _ in range(steps):
                current = parents[current] if current is not None else None
            return current == anc
        tin, tout = self.tin, self.tout
        if not tin or tin[anc] < 0 or tin[desc] < 0:
            return None
        return tin[anc] <= tin[desc] and tout[desc] <= tout[anc]

    def _held(self, pos: int) -> bool:
        return self.pos_by_key.get(self.rec.keys[pos]) == pos

    # -- getContextUsage: a reply's usage is read only once a compaction is on the branch ------------
    def context_usage(self) -> list[Finding]:
        """``pi-would-crash`` for a reply whose usage Pi's ``getContextUsage`` throws on, where Pi
        meets it: at a leaf whose branch holds a compaction while the reply is in that leaf's
        context. That is a reply below a compaction, or one a compaction above it keeps (from its
        firstKeptEntryId on). Without a compaction Pi never reads the usage there."""
        rec = self.rec
        if not rec.usage_crashes:
            return []
        parents, types = self.parents, rec.types
        compactions = [pos for pos in self.held() if types[pos] == "compaction"]
        if not compactions:
            return []
        kept_by: dict[int, int] = {}  # reply position -> the compaction that keeps it
        first_kept = {pos: self.pos_by_key.get(data["key"]) for pos, etype, data in rec.refs if etype == "compaction"}
        for comp in compactions:
            target = first_kept.get(comp)
            if target is None:
                continue  # keeps nothing from before it (or keeps only itself)
            trail: list[int] = []
            seen: set[int] = set()
            up: int | None = parents[comp]
            while up is not None and up not in seen:
                seen.add(up)
                trail.append(up)
                if up == target:
                    for pos in trail:
                        if pos in rec.usage_crashes:
                            kept_by.setdefault(pos, comp)
                    break
                up = parents[up]
        out: list[Finding] = []
        for pos, error in sorted(rec.usage_crashes.items()):
            found = kept_by.get(pos)
            if found is None:
                found = self._compaction_above(pos)
            if found is None:
                continue
            out.append(
                self.finding(
                    "pi-would-crash",
                    f"Pi 1.6.0 throws on this entry: {error} (in getContextUsage, at leaves whose branch holds "
                    f"the compaction on line {rec.lines[found]} while their context holds this reply)",
                    pos,
                )
            )
        return out

    def _compaction_above(self, pos: int) -> int | None:
        """The nearest compaction among ``pos``'s ancestors (None: none, or a parentId loop first)."""
        parents, types = self.parents, self.rec.types
        seen: set[int] = set()
        up: int | None = parents[pos]
        while up is not None and up not in seen:
            if types[up] == "compaction":
                return up
            seen.add(up)
            up = parents[up]
        return None

    # -- references ---------------------------------------------------------------------------------
    def references(self) -> list[Finding]:
        rec = self.rec
        out: list[Finding] = []
        refs = sorted(self.rec.refs, key=lambda ref: _REF_ORDER[ref[1]])
        for pos, etype, data in refs:
            target = self.pos_by_key.get(data["key"])
            text = data["text"]
            if etype == "compaction":
                if target is None:
                    out.append(
                        self.finding(
                            "compaction-missing-first-kept",
                            f"firstKeptEntryId {text} matches no entry; Pi keeps nothing from before the compaction",
                            pos,
                        )
                    )
                elif self.is_ancestor(target, pos) is False:
                    out.append(
                        self.finding(
                            "compaction-first-kept-off-path",
                            f"firstKeptEntryId {text} (line {rec.lines[target]}) is not an "
                            "ancestor of the compaction; Pi keeps nothing from before it",
                            pos,
                        )
                    )
            elif etype == "context_edit":
                out.extend(self._context_edit(pos, target, data))
            elif target is None and etype == "label":
                out.append(self.finding("label-missing-target", f"label targets {text}, which matches no entry", pos))
            elif target is None:
                out.append(self.finding("branch-summary-missing-from", f"fromId {text} matches no entry", pos))
        return out

    def _context_edit(self, pos: int, target: int | None, data: dict[str, Any]) -> list[Finding]:
        rec = self.rec
        text = data["text"]
        if target is None:
            message = f"targetId {text} matches no entry; the edit does nothing"
            return [self.finding("context-edit-missing-target", message, pos)]
        out = []
        if not rec.editable(target):
            if data["hides"]:
                effect = "Pi 1.6.0 still hides it from the context"
            elif rec.contributes_editable_role(target):  # a message entry with the custom role
                effect = "Pi 1.6.0's projection still applies the replacement"
            else:
                effect = "Pi ignores the replacement"
            out.append(
                self.finding(
                    "context-edit-not-editable",
                    f"target {text} is a {rec.kind(target)}, which Pi's appendContextEdit refuses; {effect}",
                    pos,
                )
            )
        up = self.is_ancestor(target, pos)
        if up is False:
            out.append(
                self.finding(
                    "context-edit-off-branch",
                    f"target {text} (line {rec.lines[target]}) is not on the edit's branch; "
                    "Pi's appendContextEdit refuses that, and the edit applies only where both share a path",
                    pos,
                )
            )
        why = data.get("why")
        if why is not None and rec.contributes_editable_role(target) and (up or self.is_ancestor(pos, target)):
            out.append(
                self.finding("pi-would-crash", f"Pi 1.6.0 throws when it applies this edit to {text}: {why}", pos)
            )
        return out
