"""The session tree as Pi's ``/tree`` shows it, and one record per branch (leaf).

:func:`tree_view` mirrors ``TreeList`` of Pi 1.6.0 (``modes/interactive/components/tree-selector.js``):
``flattenTree`` (pre-order, the branch holding the current leaf first), ``applyFilter`` (the five
filter modes), ``recalculateVisualStructure`` (indent only at forks) and ``getEntryDisplayText``
(the one-line text per entry). :func:`list_branches` reports every leaf of the tree.

Everything is iterative, so a 100k-entry chain neither recurses nor indents. Knowing differences
from Pi, all on files Pi itself cannot show:

- Pi's ``getTree`` links a duplicated id in several places and can then loop forever; here a node
  reached a second time becomes a *revisit* row and is not expanded again.
- Entries inside (or hanging below) a parentId cycle are unreachable from any root; Pi omits them
  silently, here they are listed in :attr:`TreeView.unreachable`.
- The visible parent of a row is its nearest visible ancestor in the walk (Pi follows ``parentId``
  through an id map, which loops on self-parents and cycles; on a well-formed file both agree).
- Where Pi's display code would throw (a message entry without a message, a non-string summary)
  the row shows a best-effort text instead.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.access import entry_id, entry_type
from pitools.core.js.json.encode import js_stringify
from pitools.core.js.nesting import MAX_NESTING, nesting_ok
from pitools.core.js.ops import to_number, to_string, truthy
from pitools.core.js.types import Entry, EntryId, JsValue
from pitools.core.js.value import JS_WHITESPACE, UNDEFINED, js_number_to_string, slice_head_utf16, utf16_len
from pitools.core.session.tree import SessionIndex, TreeNode, get_tree, js_truthy_id, mkey
from pitools.errors import PitoolsError

#: Pi's filter modes, in the order its cycle key walks them.
FILTERS: tuple[str, ...] = ("default", "no-tools", "user-only", "labeled-only", "all")

#: Entry types the default view hides (Pi's ``isSettingsEntry``).
SETTINGS_TYPES = frozenset({"label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"})


def safe_value(value: JsValue) -> Any:
    """``value`` itself, or a marker string when it nests absurdly deep (broken or hostile files)."""
    return value if nesting_ok(value) else f"[value nested more than {MAX_NESTING} levels deep]"


def js_text(value: JsValue) -> str:
    """``String(value)`` as a template literal does it, guarded against absurd nesting."""
    return to_string(value) if type(value) is str or nesting_ok(value) else "[nested value]"


# -- the tree view ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gutter:
    """A vertical line kept for descendants of a connector (Pi's ``{position, show}``)."""

    position: int
    show: bool


@dataclass(slots=True)
class TreeRow:
    """One visible line of Pi's ``/tree``, with its visual structure."""

    node: TreeNode
    #: Pi's ``indent`` after ``recalculateVisualStructure``.
    indent: int = 0
    show_connector: bool = False
    is_last: bool = False
    gutters: tuple[Gutter, ...] = ()
    is_virtual_root_child: bool = False
    #: Row index of the nearest visible ancestor (``None`` for a visible root).
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    on_path: bool = False
    is_leaf: bool = False
    #: This node was already shown above (duplicate ids linked it twice, or a loop).
    revisit: bool = False
    #: What Pi prints: a styled prefix (``"user: "``, ``"assistant: "``...) then the text.
    prefix: str = ""
    text: str = ""
    #: Pi's colour role for the text: user, assistant, tool, dim, compaction, branch-summary, custom,
    #: muted, error.
    style: str = ""

    @property
    def entry(self) -> Entry:
        entry: Entry = self.node.entry
        return entry

    @property
    def id(self) -> EntryId:
        eid: EntryId = entry_id(self.node.entry)
        return eid

    @property
    def preview(self) -> str:
        return self.prefix + self.text


@dataclass(slots=True)
class TreeView:
    """Pi's ``/tree`` for one leaf and filter: the visible rows in display order."""

    rows: list[TreeRow]
    leaf_id: Any
    filter: str
    multiple_roots: bool
    #: Row Pi's cursor starts on: the leaf, or its nearest visible ancestor, or the last row.
    selected: int | None
    entry_count: int
    revisits: int
    #: Ids of entries no root reaches (they sit in or below a parentId cycle), file order.
    unreachable: list[Any]


@dataclass(slots=True)
class _Flat:
    node: TreeNode
    dfs_parent: int
    revisit: bool


def tree_view(
    index: SessionIndex, leaf_id: EntryId, filter_mode: str = "default", *, home: str | None = None
) -> TreeView:
    """Pi's ``TreeList`` (flattenTree → applyFilter → recalculateVisualStructure) as data.

    ``home`` is ``$HOME`` for shortening tool paths to ``~/…`` as Pi does; ``None`` keeps them.
    """
    if filter_mode not in FILTERS:
        raise PitoolsError(f"unknown tree filter {filter_mode!r}; expected one of {', '.join(FILTERS)}")
    roots = get_tree(index)
    contains_active = _contains_active(roots, leaf_id)
    flat = _flatten(roots, contains_active)
    tool_calls = _tool_call_map(flat)
    active = _active_path(index, leaf_id)

    leaf_key = mkey(leaf_id)
    rows: list[TreeRow] = []
    row_of: list[int] = [-1] * len(flat)  # flat index -> row index, -1 when hidden
    visible_ancestor: list[int] = [-1] * len(flat)
    visited: set[Any] = set()
    for i, item in enumerate(flat):
        p = item.dfs_parent
        anc = -1 if p < 0 else (p if row_of[p] >= 0 else visible_ancestor[p])
        visible_ancestor[i] = anc
        entry = item.node.entry
        key = mkey(entry_id(entry))
        visited.add(key)
        # `entry.id === currentLeafId`: mkey equality (the two differ only on NaN, never an id).
        is_leaf = key == leaf_key
        if not _passes(item.node, filter_mode, is_leaf):
            continue
        row = TreeRow(node=item.node, revisit=item.revisit, is_leaf=is_leaf, on_path=key in active)
        row.prefix, row.text, row.style = display_text(entry, tool_calls, home)
        if anc >= 0:
            row.parent = row_of[anc]
            rows[row_of[anc]].children.append(len(rows))
        row_of[i] = len(rows)
        rows.append(row)

    multiple_roots = _layout(rows)
    unreachable: dict[Any, Any] = {}
    for e in index.entries:
        eid = entry_id(e)
        if eid is not UNDEFINED and mkey(eid) not in visited:
            unreachable.setdefault(mkey(eid), eid)
    return TreeView(
        rows=rows,
        leaf_id=leaf_id,
        filter=filter_mode,
        multiple_roots=multiple_roots,
        selected=_nearest_visible(rows, flat, row_of, leaf_id),
        entry_count=len(index.entries),
        revisits=sum(1 for f in flat if f.revisit),
        unreachable=list(unreachable.values()),
    )


def _contains_active(roots: list[TreeNode], leaf_id: EntryId) -> set[int]:
    """Nodes (by ``id()``) with the current leaf in their subtree (Pi's post-order ``containsActive``)."""
    if leaf_id is None:
        return set()
    leaf_key = mkey(leaf_id)
    order: list[TreeNode] = []
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(node.children)
    # `entry.id === leafId` is mkey equality except for NaN, which no parsed id can be.
    has = {id(n) for n in order if mkey(entry_id(n.entry)) == leaf_key}
    if not has:
        return has
    for node in reversed(order):
        if id(node) not in has:
            for child in node.children:
                if id(child) in has:
                    has.add(id(node))
                    break
    return has


def _flatten(roots: list[TreeNode], contains_active: set[int]) -> list[_Flat]:
    """Pi's ``flattenTree`` order: pre-order, active root and active child first; revisits marked."""

    def active_first(nodes: list[TreeNode]) -> list[TreeNode]:
        if len(nodes) < 2:
            return nodes
        return [n for n in nodes if id(n) in contains_active] + [n for n in nodes if id(n) not in contains_active]

    flat: list[_Flat] = []
    seen: set[int] = set()
    stack: list[tuple[TreeNode, int]] = [(r, -1) for r in reversed(active_first(roots))]
    while stack:
        node, parent = stack.pop()
        if id(node) in seen:
            flat.append(_Flat(node, parent, True))
            continue
        seen.add(id(node))
        here = len(flat)
        flat.append(_Flat(node, parent, False))
        children = node.children
        if len(children) == 1:
            stack.append((children[0], here))
        elif children:
            stack.extend((c, here) for c in reversed(active_first(children)))
    return flat


def _tool_call_map(flat: list[_Flat]) -> dict[Any, tuple[Any, Any]]:
    """toolCall id → (name, arguments) over assistant messages in walk order, last one wins."""
    calls: dict[Any, tuple[Any, Any]] = {}
    for item in flat:
        entry = item.node.entry
        if type(entry) is not dict or entry.get("type") != "message":
            continue
        msg = entry.get("message")
        if type(msg) is not dict or msg.get("role") != "assistant" or type(msg.get("content")) is not list:
            continue
        for block in msg["content"]:
            if type(block) is dict and block.get("type") == "toolCall":
                calls[mkey(block.get("id", UNDEFINED))] = (
                    block.get("name", UNDEFINED),
                    block.get("arguments", UNDEFINED),
                )
    return calls


def _active_path(index: SessionIndex, leaf_id: EntryId) -> set[Any]:
    """Ids from the leaf up to its root (Pi's ``buildActivePath``), stopping at a revisit."""
    keys: set[Any] = set()
    current = leaf_id
    seen: set[int] = set()
    while js_truthy_id(current):
        keys.add(mkey(current))
        pos = index.position_of(current)
        if pos is None or pos in seen:
            break
        seen.add(pos)
        pid = index.parents[pos]
        current = None if pid is UNDEFINED else pid
    return keys


def _nearest_visible(rows: list[TreeRow], flat: list[_Flat], row_of: list[int], leaf_id: EntryId) -> int | None:
    """Pi's ``findNearestVisibleIndex``: the leaf's row, else its nearest visible ancestor's."""
    if not rows:
        return None
    leaf_key = mkey(leaf_id)
    for i, item in enumerate(flat):
        if item.revisit or mkey(entry_id(item.node.entry)) != leaf_key:
            continue
        j = i
        while j >= 0:
            if row_of[j] >= 0:
                return row_of[j]
            j = flat[j].dfs_parent
        break
    return len(rows) - 1


def _passes(node: TreeNode, mode: str, is_leaf: bool) -> bool:
    """Pi's ``applyFilter`` predicate (without the interactive search and folding)."""
    entry = node.entry
    etype = entry_type(entry)
    if etype == "usage":
        return False
    msg = entry.get("message") if type(entry) is dict else None
    role = msg.get("role", UNDEFINED) if type(msg) is dict else UNDEFINED
    if etype == "message" and role == "assistant" and not is_leaf:
        # Tool-call-only assistant turns are hidden unless they errored or were aborted.
        stop = msg.get("stopReason", UNDEFINED) if type(msg) is dict else UNDEFINED
        error_or_aborted = truthy(stop) and stop != "stop" and stop != "toolUse"
        if not has_text_content(msg.get("content") if type(msg) is dict else None) and not error_or_aborted:
            return False
    settings = type(etype) is str and etype in SETTINGS_TYPES
    if mode == "user-only":
        return etype == "message" and role == "user"
    if mode == "no-tools":
        return not settings and not (etype == "message" and role == "toolResult")
    if mode == "labeled-only":
        return node.label is not None
    if mode == "all":
        return True
    return not settings


def _layout(rows: list[TreeRow]) -> bool:
    """Pi's ``recalculateVisualStructure``: indent, connectors and gutters; returns multipleRoots."""
    roots = [i for i, r in enumerate(rows) if r.parent is None]
    multiple = len(roots) > 1
    # (row, indent, justBranched, showConnector, isLast, gutters, isVirtualRootChild), as in Pi.
    stack: list[tuple[int, int, bool, bool, bool, tuple[Gutter, ...], bool]] = [
        (roots[i], 1 if multiple else 0, multiple, multiple, i == len(roots) - 1, (), multiple)
        for i in range(len(roots) - 1, -1, -1)
    ]
    while stack:
        idx, indent, just_branched, show_connector, is_last, gutters, virtual_child = stack.pop()
        row = rows[idx]
        row.indent, row.show_connector, row.is_last = indent, show_connector, is_last
        row.gutters, row.is_virtual_root_child = gutters, virtual_child
        children = row.children
        forks = len(children) > 1
        # Indent only where the tree forks, and once more for the first generation after a fork.
        child_indent = indent + 1 if forks or (just_branched and indent > 0) else indent
        if show_connector and not virtual_child:
            display = max(0, indent - 1) if multiple else indent
            child_gutters = (*gutters, Gutter(max(0, display - 1), not is_last))
        else:
            child_gutters = gutters
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], child_indent, forks, forks, i == len(children) - 1, child_gutters, False))
    return multiple


# -- Pi's getEntryDisplayText -------------------------------------------------------------------


def _normalize(text: str) -> str:
    # s.replace(/[\n\t]/g, " ").trim()
    return text.replace("\n", " ").replace("\t", " ").strip(_JS_TRIM)


_JS_TRIM = JS_WHITESPACE  # what String.prototype.trim() removes


def extract_full_content(content: JsValue) -> str:
    """Pi's ``extractFullContent``: a string as is, else the text blocks concatenated."""
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    return "".join(js_text(b.get("text", UNDEFINED)) for b in content if type(b) is dict and b.get("type") == "text")


def _extract(content: JsValue) -> str:
    # extractContent: the first 200 UTF-16 units (a surrogate pair is never split here).
    return slice_head_utf16(extract_full_content(content), 200)


def has_text_content(content: JsValue) -> bool:
    """Pi's ``hasTextContent``: some non-blank text."""
    if type(content) is str:
        return content.strip(_JS_TRIM) != ""
    if type(content) is list:
        for b in content:
            if type(b) is dict and b.get("type") == "text":
                text = b.get("text", UNDEFINED)
                if truthy(text) and js_text(text).strip(_JS_TRIM):
                    return True
    return False


def display_text(entry: Entry, tool_calls: dict[Any, tuple[Any, Any]], home: str | None = None) -> tuple[str, str, str]:
    """Pi's ``getEntryDisplayText`` as ``(prefix, text, style)``; Pi prints ``prefix + text``."""
    etype = entry_type(entry)
    e: dict[str, Any] = entry if type(entry) is dict else {}
    get = e.get
    if etype == "message":
        msg = get("message", UNDEFINED)
        if type(msg) is not dict:
            return "", "[message without a message]", "error"
        role = msg.get("role", UNDEFINED)
        if role == "user":
            return "user: ", _normalize(_extract(msg.get("content"))), "user"
        if role == "assistant":
            text = _normalize(_extract(msg.get("content")))
            if text:
                return "assistant: ", text, "assistant"
            if msg.get("stopReason") == "aborted":
                return "assistant: ", "(aborted)", "muted"
            if truthy(msg.get("errorMessage", UNDEFINED)):
                return "assistant: ", slice_head_utf16(_normalize(js_text(msg["errorMessage"])), 80), "error"
            return "assistant: ", "(no content)", "muted"
        if role == "toolResult":
            call_id = msg.get("toolCallId", UNDEFINED)
            call = tool_calls.get(mkey(call_id)) if truthy(call_id) else None
            if call is not None:
                return "", format_tool_call(call[0], call[1], home), "tool"
            name = msg.get("toolName")
            return "", f"[{'tool' if name is None else js_text(name)}]", "tool"
        if role == "bashExecution":
            cmd = msg.get("command")
            return "", f"[bash]: {_normalize('' if cmd is None else js_text(cmd))}", "dim"
        return "", f"[{js_text(role)}]", "dim"
    if etype == "custom_message":
        content = get("content", UNDEFINED)
        if type(content) is str:
            text = content
        else:
            # content.filter(c => c.type === "text").map(c => c.text).join("")
            blocks = content if type(content) is list else []
            texts = [b.get("text", UNDEFINED) for b in blocks if type(b) is dict and b.get("type") == "text"]
            text = "".join("" if t is None or t is UNDEFINED else js_text(t) for t in texts)
        return f"[{js_text(get('customType', UNDEFINED))}]: ", _normalize(text), "custom"
    if etype == "compaction":
        return "", f"[compaction: {_round_thousands(get('tokensBefore', UNDEFINED))}k tokens]", "compaction"
    if etype == "branch_summary":
        return "[branch summary]: ", _normalize(js_text(get("summary", UNDEFINED))), "branch-summary"
    if etype == "model_change":
        return "", f"[model: {js_text(get('modelId', UNDEFINED))}]", "dim"
    if etype == "thinking_level_change":
        return "", f"[thinking: {js_text(get('thinkingLevel', UNDEFINED))}]", "dim"
    if etype == "custom":
        return "", f"[custom: {js_text(get('customType', UNDEFINED))}]", "dim"
    if etype == "context_edit":
        what = "omit" if get("replacement", UNDEFINED) is None else "replace"
        return "", f"[context {what}: {js_text(get('targetId', UNDEFINED))}]", "dim"
    if etype == "label":
        label = get("label", UNDEFINED)
        return "", f"[label: {'(cleared)' if label is None or label is UNDEFINED else js_text(label)}]", "dim"
    if etype == "session_info":
        name = get("name", UNDEFINED)
        return "", f"[title: {js_text(name) if truthy(name) else 'empty'}]", "dim"
    return "", "", "dim"


def _round_thousands(value: JsValue) -> str:
    """``Math.round(value / 1000)`` printed as JavaScript prints numbers."""
    n = to_number(value)
    x = n / 1000
    if math.isnan(x) or math.isinf(x):
        return js_number_to_string(x)
    return js_number_to_string(math.floor(x + 0.5))


def _shorten_home(path: str, home: str | None) -> str:
    """Pi's ``shortenHomePath`` (POSIX rules)."""
    if not home or not path.startswith("/"):
        return path
    h = posixpath.normpath(posixpath.join("/", home)) if not home.startswith("/") else posixpath.normpath(home)
    p = posixpath.normpath(path)
    if p == h:
        return "~"
    base = h if h.endswith("/") else h + "/"
    if not p.startswith(base):
        return path
    return "~/" + p[len(base) :]


def _line_number(value: Any) -> float | int | None:
    if type(value) is str and value.strip(_JS_TRIM) != "":
        value = to_number(value)
    if type(value) in (int, float) and math.isfinite(value):
        number: float | int = value
        return number
    return None


def format_read_range(offset: JsValue, limit: JsValue) -> str:
    """Pi's ``formatReadLineRange``: ``:start`` or ``:start-end``."""
    if (offset is None or offset is UNDEFINED) and (limit is None or limit is UNDEFINED):
        return ""
    start = 1 if offset is None or offset is UNDEFINED else _line_number(offset)
    if start is None:
        return ""
    if limit is None or limit is UNDEFINED:
        return f":{js_number_to_string(start)}"
    count = _line_number(limit)
    if count is None:
        return ""
    end = start + count - 1
    return f":{js_number_to_string(start)}" + (f"-{js_number_to_string(end)}" if end else "")


def format_tool_call(name: JsValue, args: JsValue, home: str | None = None) -> str:
    """Pi's ``formatToolCall`` for a tool result row: ``[read: ~/src/a.ts:1-40]`` and so on."""
    a: dict[str, Any] = args if type(args) is dict else {}

    def arg(*keys: str, default: str = "") -> str:
        for k in keys:
            v = a.get(k, UNDEFINED)
            if truthy(v):
                return js_text(v)
        return default

    if name == "read":
        path = _shorten_home(arg("path", "file_path"), home)
        return f"[read: {path}{format_read_range(a.get('offset', UNDEFINED), a.get('limit', UNDEFINED))}]"
    if name in ("write", "edit"):
        return f"[{name}: {_shorten_home(arg('path', 'file_path'), home)}]"
    if name == "bash":
        raw = arg("command")
        cmd = slice_head_utf16(raw.replace("\n", " ").replace("\t", " ").strip(_JS_TRIM), 50)
        return f"[bash: {cmd}{'...' if utf16_len(raw) > 50 else ''}]"
    if name == "grep":
        return f"[grep: /{arg('pattern')}/ in {_shorten_home(arg('path', default='.'), home)}]"
    if name == "find":
        return f"[find: {arg('pattern')} in {_shorten_home(arg('path', default='.'), home)}]"
    if name == "ls":
        return f"[ls: {_shorten_home(arg('path', default='.'), home)}]"
    text = (js_stringify(args) or "") if nesting_ok(args) else "[nested value]"
    return f"[{js_text(name)}: {slice_head_utf16(text, 40)}{'...' if utf16_len(text) > 40 else ''}]"


# -- branches ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Branch:
    """One leaf of the session and what distinguishes its branch."""

    leaf_id: Any
    #: The entry at the leaf (``None`` when the path could not be built).
    leaf: Any
    is_default_leaf: bool
    #: False for Pi's default leaf when entries hang below it.
    is_leaf: bool
    #: Entries on the path root → leaf (``getBranch``), and the leaf's depth (root = 0).
    entry_count: int | None = None
    depth: int | None = None
    #: The leaf entry's own ``timestamp`` value.
    timestamp: Any = None
    #: The deepest ancestor with more than one child: where this branch leaves its siblings.
    fork: Any = None
    #: The first user message after the fork (from the root when there is no fork).
    divergent_user: Any = None
    #: The leaf's own label (Pi's ``labelsById``), not labels elsewhere on the path.
    label: Any = None
    #: Pi's estimated context tokens at this leaf (``estimateProjectedContextTokens``).
    tokens: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BranchList:
    branches: list[Branch]
    default_leaf_id: Any
    entry_count: int


def list_branches(index: SessionIndex) -> BranchList:
    """Every leaf (``SessionIndex.leaves()``) plus Pi's default leaf, in file order.

    Linear in the file for the usual shapes: a leaf's path length comes from one memoised depth
    pass, its fork and divergent user message from the walk up to its nearest fork, and its token
    estimate from the part of its path Pi's context reads after the latest compaction (see
    :func:`_context_tokens`). Walking every leaf's whole path instead cost leaves x depth: 169 s
    for 210 leaves of 300,000-entry paths.
    """
    from pitools.core.js.json.parse import gc_paused
    from pitools.core.session.tree import labels_by_id

    default = index.leaf_id
    ids: list[Any] = list(index.leaves())
    leaf_keys = {mkey(i) for i in ids}
    default_is_extra = js_truthy_id(default) and index.has(default) and mkey(default) not in leaf_keys
    if default_is_extra:
        ids.append(default)
        ids.sort(key=lambda i: index.pos_by_id.get(mkey(i), 0))
    children = index.children_positions()
    labels = labels_by_id(index.label_entries())
    depths = index.depths()
    entries = index.entries
    held = [entries[p] for p in index.pos_by_id.values()]
    # Pi reads the whole path for the model and thinking level, and that scan throws on a message
    # entry without a message: then the estimate needs the whole path (broken files only).
    tails = not any(type(e) is dict and e.get("type") == "message" and (e.get("message") is None) for e in held)
    edited = {mkey(e.get("targetId", UNDEFINED)) for e in held if type(e) is dict and e.get("type") == "context_edit"}
    with gc_paused():  # only acyclic objects are made here (see gc_paused)
        out = [
            _branch(
                index,
                leaf,
                children,
                labels,
                depths,
                tails,
                edited,
                mkey(leaf) == mkey(default),
                mkey(leaf) in leaf_keys,
            )
            for leaf in ids
        ]
    return BranchList(out, default, len(index.entries))


def _branch(
    index: SessionIndex,
    leaf_id: EntryId,
    children: dict[Any, list[int]],
    labels: dict[Any, tuple[Any, Any]],
    depths: dict[int, int | None],
    tails: bool,
    edited: set[Any],
    is_default: bool,
    is_leaf: bool,
) -> Branch:
    """One leaf's record; ``children``/``depths``: the index's ``children_positions()``/``depths()``;
    ``tails``: see :func:`_context_tokens`."""
    from pitools.errors import CycleError

    leaf_pos = index.position_of(leaf_id)
    leaf = None if leaf_pos is None else index.entries[leaf_pos]
    lab = labels.get(mkey(leaf_id))
    base: dict[str, Any] = {
        "leaf_id": leaf_id,
        "leaf": leaf,
        "is_default_leaf": is_default,
        "is_leaf": is_leaf,
        "label": lab[0] if lab else None,
        "timestamp": leaf.get("timestamp", None) if type(leaf) is dict else None,
    }
    depth = depths.get(leaf_pos) if leaf_pos is not None else None
    if leaf_pos is None or depth is None:  # the path loops, or getBranch stops early: let getBranch say how
        try:
            path = index.get_branch(leaf_id)
        except CycleError as exc:
            return Branch(**base, error=exc.message)
        # No loop, yet no depth: a leaf Pi's getBranch does not walk from (an entry whose id is
        # "", which is falsy, above a cycle): the record of the path getBranch does give.
        return _branch_from_path(index, leaf_id, base, path, children)
    # Up from the leaf to its nearest fork (the deepest ancestor with more than one child).
    ids = index.ids
    segment = [leaf_pos]  # leaf first, then its single-child ancestors
    fork: Any = None
    current = index.parent_position(leaf_pos)
    while current is not None:
        if len(children.get(mkey(ids[current]), ())) > 1:
            fork = index.entries[current]
            break
        segment.append(current)
        current = index.parent_position(current)
    segment.reverse()
    error: str | None = None
    try:
        if tails:
            tokens = _context_tokens(index, leaf_id, leaf_pos, depths, edited)
        else:
            from pitools.core.context.build import replay_context

            tokens = replay_context(index, leaf_id).estimate.tokens
    except PitoolsError as exc:
        tokens, error = None, f"token estimate: {exc.message}"
    return Branch(
        **base,
        entry_count=depth + 1,
        depth=depth,
        fork=fork,
        divergent_user=first_user_message(index.entries_at(segment)),
        tokens=tokens,
        error=error,
    )


def _branch_from_path(
    index: SessionIndex, leaf_id: EntryId, base: dict[str, Any], path: list[Entry], children: dict[Any, list[int]]
) -> Branch:
    """A leaf's record from its whole ``getBranch`` path (the rare leaves the depth pass skips)."""
    from pitools.core.context.build import replay_context

    fork_at = fork_index(path, children)
    error: str | None = None
    try:
        tokens = replay_context(index, leaf_id).estimate.tokens
    except PitoolsError as exc:
        tokens, error = None, f"token estimate: {exc.message}"
    return Branch(
        **base,
        entry_count=len(path),
        depth=len(path) - 1,
        fork=path[fork_at] if fork_at is not None else None,
        divergent_user=first_user_message(path[fork_at + 1 if fork_at is not None else 0 :]),
        tokens=tokens,
        error=error,
    )


def _context_tokens(
    index: SessionIndex, leaf_id: EntryId, leaf_pos: int, depths: dict[int, int | None], edited: set[Any]
) -> Any:
    """Pi's ``estimateProjectedContextTokens`` at ``leaf``, from the tail of its path that matters.

    Walking up from the leaf, the first of these ends the walk:

    - an assistant reply with usage (Pi's ``getAssistantUsage``), with no context edit or
      compaction below it and no entry below it (itself included) that any context edit in the
      file targets (``edited``): Pi's estimate is then that usage plus the estimates of the
      messages after it, and it trusts that usage because nothing after it invalidates it;
    - a compaction: Pi's context reads the path only from its ``firstKeptEntryId`` (or from the
      compaction itself when that id is not an earlier entry of the path) down to the leaf, and
      the latest compaction is the latest entry that can invalidate usage at or above it.

    In both cases the estimate over the tail equals the one over the whole path: lookups by id
    on one path are unaffected by cutting it (its entries have distinct ``byId`` keys), and the
    model and thinking level, which do need the whole path, do not enter the estimate. The
    golden sessions check it against Pi. A path with neither, or a compaction whose id is not a
    string, is replayed whole as ``pitools context`` does; so are all paths when some message
    entry has no message (the caller checks): Pi's model scan over the whole path throws there.
    """
    from pitools.core.context.build import replay_context
    from pitools.core.context.tokens import assistant_usage

    entries = index.entries
    parent_position = index.parent_position
    tail: list[int] = []  # positions, leaf first
    current: int | None = leaf_pos
    usable = True  # nothing below invalidates a usage found further up
    while current is not None:
        tail.append(current)
        entry = entries[current]
        if type(entry) is dict:
            etype = entry.get("type")
            if etype == "compaction":
                break
            if usable:
                eid = entry.get("id", UNDEFINED)
                if etype == "context_edit" or (eid if type(eid) is str else mkey(eid)) in edited:
                    usable = False
                elif etype == "message" and type(eid) is str and eid:
                    message = entry.get("message")
                    try:
                        found = type(message) is dict and assistant_usage(message) is not None
                    except PitoolsError:
                        found, usable = False, False
                    if found:
                        tail.reverse()
                        return _tail_estimate(index.entries_at(tail))
        current = parent_position(current)
    if current is None or type(entries[current].get("id", UNDEFINED)) is not str:
        return replay_context(index, leaf_id).estimate.tokens
    compaction = current
    kept = index.position_of(entries[compaction].get("firstKeptEntryId", UNDEFINED))
    if kept is not None and kept != compaction:
        kept_depth, comp_depth = depths.get(kept), depths.get(compaction)
        if kept_depth is not None and comp_depth is not None and kept_depth < comp_depth:
            above: list[int] = []
            up: int | None = compaction
            for _ in range(comp_depth - kept_depth):
                up = parent_position(up) if up is not None else None
                if up is None:  # pragma: no cover - the depths say the walk is that long
                    break
                above.append(up)
            if up == kept:  # an ancestor: Pi keeps the entries from it on
                tail.extend(above)
    tail.reverse()
    return _tail_estimate(index.entries_at(tail))


def _tail_estimate(tail: list[Any]) -> Any:
    from pitools.core.context.build import (
        build_projection,
        context_entries_from_path,
        estimate_projected_context_tokens,
        message_estimates,
    )

    projection = build_projection(tail, context_entries_from_path(tail))
    return estimate_projected_context_tokens(projection, tail, message_estimates(projection)).tokens


def fork_index(path: Sequence[Entry], children: dict[Any, list[int]]) -> int | None:
    """Position on ``path`` of the deepest ancestor of the leaf with more than one child
    (``children``: the index's ``children_positions()``)."""
    for i in range(len(path) - 2, -1, -1):
        if len(children.get(mkey(entry_id(path[i])), ())) > 1:
            return i
    return None


def first_user_message(entries: Sequence[Entry]) -> Entry | None:
    for entry in entries:
        if entry_type(entry) == "message":
            msg = entry.get("message")
            if type(msg) is dict and msg.get("role") == "user":
                return entry
    return None
