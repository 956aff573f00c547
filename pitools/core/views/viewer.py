"""What the HTML viewer knows that the page's script cannot work out alone: the read model.

The page embeds the session's entries as they are and renders them itself; this module adds the
facts only pitools computes exactly: each entry's parent position (Pi's ``byId`` lookup), the
tree in Pi's ``getTree`` order, labels, each entry's token estimate (``estimateTokens`` of its
projected messages) and assistant usage, and, at the leaves (within a budget), the exact context
estimate and the compaction plan (``prepareCompaction``). It also carries the facts of Pi's
context at every entry, so the page only slices paths: each compaction's cut (``compactions``:
Pi's ``buildContextEntries`` at the entries below it, the nearest one on a path governing) and
the context total at each entry (``ctxTokens``: Pi's ``estimateProjectedContextTokens``, exact
or, past the replay budget, marked as estimated by :data:`FLAG_ESTIMATED`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pitools.core.js.json.record import record_json
from pitools.core.js.value import UNDEFINED, js_to_string
from pitools.core.session.tree import js_truthy_id, labels_by_id, mkey

if TYPE_CHECKING:
    from pitools.core.compaction.prepare import CompactionSettings
    from pitools.core.session.load import Loaded

#: Exact replays (context estimate + compaction plan) are made at leaves while the branches
#: walked stay under this many entries in total; beyond it, at the default and chosen leaf only.
REPLAY_BUDGET = 400_000
#: Under the lean loader a replay reads its branch back from the file (about ten times the cost
#: of walking parsed entries): the budget is divided by this.
LEAN_BUDGET_DIVISOR = 10

#: ``(provider, modelId) or None`` → ``(compaction settings, context window)``.
SettingsFor = Callable[[Any], "tuple[CompactionSettings, int]"]


#: The read model's columns as the page's data names them (camelCase), after its header and file.
_META_FIELDS = (
    "name", "parent", "order", "tokens", "ctx_tokens", "compactions", "labels", "ids", "kinds", "flags",
    "cost", "usage_total", "calls", "default_leaf", "initial_leaf", "leaves", "replays",
)  # fmt: skip


@dataclass(slots=True)
class ViewerModel:
    """Column arrays over the entries (file order), plus per-leaf replays keyed by position."""

    header: dict[str, Any]
    path: str
    #: What the page is titled: the session's name (its latest ``session_info``), else the first
    #: user message's first line, else the header's id.
    name: str
    parent: list[int]
    order: list[int]
    tokens: list[int | None]
    usage_tokens: list[int | None]
    labels: dict[int, str]
    #: Per entry, what the page's tree, filters and branch totals read without parsing the
    #: entry: its id as the page shows it, its kind (a message's role, else its type), FLAG_* bits,
    #: and an assistant reply's cost, usage total and tool-call count.
    ids: list[str]
    kinds: list[str]
    flags: list[int]
    cost: list[float]
    usage_total: list[int | float]
    calls: list[int]
    default_leaf: int
    initial_leaf: int
    leaves: list[int]
    replays: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: Entries whose ``tokens`` is not ``estimateTokens`` itself (not a whole number, or made one):
    #: a replay estimates their messages again (not in the page's data).
    inexact: set[int] = field(default_factory=set)
    #: Pi's estimate at entries where the page cannot work it out from usage (see
    #: :func:`exact_totals`): position → tokens.
    exact: dict[int, int | None] = field(default_factory=dict)
    #: Per entry, Pi's context total there (see :func:`context_facts`); None when unknown.
    ctx_tokens: list[int | None] = field(default_factory=list)
    #: Per entry, the position of the newest compaction on its path (-1: none; not in the page's
    #: data: the page takes the nearest entry of its path that ``compactions`` names), and per
    #: compaction, ``[where Pi puts it, where its kept range starts]`` (both positions on its path).
    ctx_comp: list[int] = field(default_factory=list)
    compactions: dict[int, list[int]] = field(default_factory=dict)
    #: Each context edit's position → its ``targetId`` (not in the page's data).
    edit_targets: dict[int, Any] = field(default_factory=dict)
    #: :func:`_unique_ids`' answer once it is asked (not in the page's data; four readers).
    unique_ids_memo: list[dict[str, int] | None] = field(default_factory=list)

    def known_tokens(self, pos: int) -> int | None:
        """Pi's ``estimateTokens`` of the one message entry ``pos`` contributes unedited, as
        gathered with the entry's facts (None: not known; a replay estimates it again)."""
        return None if pos in self.inexact else self.tokens[pos]

    def meta_json(self) -> dict[str, Any]:
        """The part of the page's data that is not the entries themselves."""
        meta = {"header": self.header, "file": self.path, **record_json(self, _META_FIELDS)}
        for name in ("labels", "compactions", "replays"):  # maps by position: JSON keys are text
            meta[name] = {str(k): v for k, v in meta[name].items()}
        return meta


#: ``flags`` bits: the entry is a message (``type: "message"`` with an object ``message``); an
#: assistant reply Pi's tree hides unless the filter is "all" (no text, not an error or abort);
#: its id is not a string (the page compares such ids by parsing the entry); a settings entry;
#: its context total (``ctxTokens``) is not Pi's exact figure (past the replay budget, or an
#: estimate was not a whole number).
FLAG_MESSAGE = 1
FLAG_EMPTY_REPLY = 2
FLAG_ODD_ID = 4
FLAG_SETTINGS = 8
FLAG_ESTIMATED = 16

#: JavaScript's ``String.prototype.trim`` whitespace (Python's ``str.strip`` differs).
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_SETTINGS_TYPES = frozenset(("label", "custom", "context_edit", "model_change", "thinking_level_change"))


def _has_text(content: Any) -> bool:
    if type(content) is str:
        return bool(content.strip(_JS_SPACE))
    if type(content) is not list:
        return False
    return any(
        type(c) is dict and c.get("type") == "text" and type(c.get("text")) is str and c["text"].strip(_JS_SPACE)
        for c in content
    )


def _first_line(content: Any) -> str | None:
    """A user message's first line of text (None when it has none)."""
    if type(content) is str:
        text = content
    elif type(content) is list:
        text = " ".join(
            c["text"] for c in content if type(c) is dict and c.get("type") == "text" and type(c.get("text")) is str
        )
    else:
        return None
    for line in text.split("\n"):
        line = line.strip(_JS_SPACE)
        if line:
            return line[:100] + ("…" if len(line) > 100 else "")
    return None


def _title(info_name: Any, first_text: str | None, header: dict[str, Any]) -> str:
    """The page's title: Pi's session name (the latest ``session_info``; an empty one clears it),
    else the first user message's first line, else the header's id."""
    if type(info_name) is str and info_name.strip(_JS_SPACE):
        return info_name.strip(_JS_SPACE)
    if first_text:
        return first_text
    sid = header.get("id")
    return f"session {sid}" if type(sid) is str else "pi session"


def _js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` for a scalar; an array or object as its JSON text (which
    tells them apart, where ``String`` gives ``[object Object]`` or a bare join)."""
    if type(value) is dict or type(value) is list:
        from pitools.core.js.json.encode import to_json_bytes

        return to_json_bytes(value).decode("utf-8", "replace")
    return js_to_string(value)


def _number(value: Any) -> float | int:
    return value if type(value) in (int, float) and value == value and abs(value) != float("inf") else 0


def _int_or_none(value: Any) -> int | None:
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def _tree(times: list[float | str], parent: list[int]) -> list[int]:
    """Pi's ``getTree`` as a flat pre-order list of positions (the page draws the connectors
    over the rows its filter shows); ``times`` are the entries' timestamps in ms (NaN: none or
    unreadable), or a timestamp string not parsed yet: only the roots and entries with a sibling
    are sorted, so most of a long session's timestamps are never parsed."""
    from pitools.core.js.date import js_date_ms

    n = len(times)
    children: list[list[int]] = [[] for _ in range(n)]
    roots: list[int] = []
    for i, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(i)

    def ts(i: int) -> float:
        stamp = times[i]
        # A string never throws: only other values are parsed up front.
        value = js_date_ms(stamp) if isinstance(stamp, str) else stamp
        return float("inf") if value != value else value  # NaN sorts last (a stable, total order)

    order: list[int] = []
    seen = [False] * n
    stack: list[int] = list(reversed(sorted(roots, key=ts)))
    while True:
        while stack:
            i = stack.pop()
            if seen[i]:
                continue
            seen[i] = True
            order.append(i)
            kids = children[i]
            if len(kids) > 1:
                kids.sort(key=ts)
            stack.extend(reversed(kids))
        # Entries on a parentId loop are reachable from no root: list them too (every entry has a row).
        rest = next((i for i in range(n) if not seen[i]), -1)
        if rest < 0:
            return order
        stack.append(rest)


def _leaves(index: Any) -> list[Any]:
    """``SessionIndex.leaves()`` (string ids, file order, deduplicated, that no entry's parentId
    names, the entries being those ``byId`` holds), from the lean loader's columns too."""
    if hasattr(index, "leaves"):
        return list(index.leaves())
    ids, parents = index.ids, index.parents
    named = {mkey(parents[p]) for p in index.pos_by_id.values()}
    out: list[Any] = []
    seen: set[str] = set()
    for eid in ids:
        if type(eid) is not str or eid in seen:
            continue
        seen.add(eid)
        if mkey(eid) not in named:
            out.append(eid)
    return out


def all_entries(loaded: Loaded) -> Iterator[Any]:
    """Every entry in file order; under the lean loader (``keep="context"``) read back from the
    file in batches and not kept, so the page's model needs no more than one batch parsed."""
    from pitools.core.session.load import LoadedSession

    if isinstance(loaded, LoadedSession):
        yield from loaded.session.entries
        return
    index: Any = loaded.index
    n = len(index)
    for start in range(0, n, 512):
        yield from index.entries_at(range(start, min(n, start + 512)), keep=False)


class EntryFacts:
    """The read model's per-entry columns (everything but the parent positions), gathered one
    entry at a time: by :func:`build_viewer_model` over the loaded entries, or before that as
    the loader's ``on_entry`` (``load(path, keep="context", on_entry=facts)``), so a lean load
    of a big session is not parsed a second time for them.

    As ``on_entry`` a failure is not raised inside the loader: the facts are marked incomplete
    and :func:`build_viewer_model` gathers them again itself, failing where it always did.
    """

    def __init__(self) -> None:
        from pitools.core.context.build import project_entry
        from pitools.core.context.tokens import assistant_usage, calculate_context_tokens, estimate_tokens
        from pitools.core.js import ops as jsops
        from pitools.core.js.date import js_date_ms

        self._project_entry = project_entry
        self._assistant_usage = assistant_usage
        self._calculate_context_tokens = calculate_context_tokens
        self._estimate_tokens = estimate_tokens
        self._truthy = jsops.truthy
        self._add = jsops.add
        self._js_date_ms = js_date_ms
        self.times: list[float | str] = []
        self.label_entries: list[Any] = []
        self.tokens: list[int | None] = []
        self.usage_tokens: list[int | None] = []
        self.ids: list[str] = []
        self.kinds: list[str] = []
        self.flags: list[int] = []
        self.cost: list[float] = []
        self.usage_total: list[int | float] = []
        self.calls: list[int] = []
        self.info_name: Any = None
        self.edit_targets: dict[int, Any] = {}
        self.first_text: str | None = None
        #: Positions whose ``tokens`` is not Pi's estimate itself (see ViewerModel.inexact).
        self.inexact: set[int] = set()
        #: Whether gathering failed as the loader's ``on_entry`` (then the facts are not used).
        self.failed = False

    def __len__(self) -> int:
        return len(self.flags)

    #: The facts the read model carries as they were gathered (:class:`ViewerModel`'s fields).
    COLUMNS = (
        "tokens",
        "usage_tokens",
        "ids",
        "kinds",
        "flags",
        "cost",
        "usage_total",
        "calls",
        "edit_targets",
        "inexact",
    )

    def columns(self) -> dict[str, Any]:
        """The :data:`COLUMNS`, by name."""
        return {name: getattr(self, name) for name in self.COLUMNS}

    def __call__(self, e: Any) -> None:
        """The loader's ``on_entry``: :meth:`add`, never raising inside the loader's scan."""
        if self.failed:
            return
        try:
            self.add(e)
        except Exception:  # gathered again by build_viewer_model, which then raises it
            self.failed = True

    def add(self, e: Any) -> None:
        """The next entry's facts."""
        total: Any = 0
        flag = 0
        c_cost: float = 0
        c_usage: int | float = 0
        c_calls = 0
        if type(e) is dict:
            stamp = e.get("timestamp", UNDEFINED)
            # A string is parsed only if the tree compares it (see _tree); a string never throws.
            self.times.append(stamp if type(stamp) is str else self._js_date_ms(stamp))
            if e.get("type") == "label":
                self.label_entries.append(e)
            eid = e.get("id", UNDEFINED)
            if type(eid) is str:
                self.ids.append(eid)
            else:
                self.ids.append("" if eid is UNDEFINED else _js_string(eid))
                flag |= FLAG_ODD_ID
            message = e.get("message") if e.get("type") == "message" else None
            if type(message) is dict:
                flag |= FLAG_MESSAGE
                role = message.get("role", UNDEFINED)
                self.kinds.append(role if type(role) is str else _js_string(role))
                if role == "user" and self.first_text is None:
                    self.first_text = _first_line(message.get("content"))
                if role == "assistant":
                    stop = message.get("stopReason")
                    if not _has_text(message.get("content")) and not (
                        self._truthy(stop) and stop not in ("stop", "toolUse")
                    ):
                        flag |= FLAG_EMPTY_REPLY
                    u = message.get("usage")
                    if type(u) is dict:
                        for key in ("input", "output", "cacheRead", "cacheWrite"):
                            v = u.get(key)
                            c_usage += v if type(v) is int else _number(v)
                        if type(u.get("cost")) is dict:
                            c_cost = _number(u["cost"].get("total"))
                    content = message.get("content")
                    if type(content) is list:
                        c_calls = sum(1 for c in content if type(c) is dict and c.get("type") == "toolCall")
            else:
                etype = e.get("type", UNDEFINED)
                self.kinds.append(_js_string(etype))
                if etype in _SETTINGS_TYPES:
                    flag |= FLAG_SETTINGS
                    if etype == "context_edit":
                        self.edit_targets[len(self.flags)] = e.get("targetId", UNDEFINED)
                elif etype == "session_info":
                    self.info_name = e.get("name")
            if type(message) is dict and message.get("content") is not None:
                # the usual entry: its message is all it contributes (0 + a whole number is itself)
                total = self._estimate_tokens(message)
                if type(total) is not int:
                    total = self._add(0, total)
            else:
                estimate, add = self._estimate_tokens, self._add
                for m in self._project_entry(e, None):
                    total = add(total, estimate(m))
            usage = self._assistant_usage(message) if type(message) is dict else None
            self.usage_tokens.append(_int_or_none(self._calculate_context_tokens(usage)) if usage is not None else None)
        else:
            self.times.append(float("nan"))
            self.ids.append("")
            self.kinds.append("other")
            flag |= FLAG_ODD_ID
            self.usage_tokens.append(None)
        self.flags.append(flag)
        self.cost.append(c_cost)
        self.usage_total.append(c_usage)
        self.calls.append(c_calls)
        if type(total) is not int:
            self.inexact.add(len(self.tokens))
        self.tokens.append(_int_or_none(total))


def build_viewer_model(
    loaded: Loaded,
    initial_leaf: Any,
    settings_for: SettingsFor | None,
    *,
    budget: int = REPLAY_BUDGET,
    facts: EntryFacts | None = None,
) -> ViewerModel:
    """The viewer's read model of ``loaded``; ``initial_leaf`` is the entry selected on open.
    ``facts``: the entries' facts gathered while ``loaded`` was read (used when complete)."""
    from pitools.core.js.json.parse import gc_paused

    # Lists of numbers and acyclic replays: paused once here, not re-enabled (and a collection
    # run) after each of the replays' own pauses (see gc_paused).
    with gc_paused():
        return _build_viewer_model(loaded, initial_leaf, settings_for, budget, facts)


def _build_viewer_model(
    loaded: Loaded, initial_leaf: Any, settings_for: SettingsFor | None, budget: int, facts: EntryFacts | None
) -> ViewerModel:
    index = loaded.index
    if loaded.kept == "context":
        budget //= LEAN_BUDGET_DIVISOR
    pos_by_id = index.pos_by_id
    if facts is None or facts.failed or len(facts) != len(index):
        facts = EntryFacts()
        for e in all_entries(loaded):
            facts.add(e)
    parent: list[int] = []
    entry_ids, parent_ids = index.ids, index.parents
    for i in range(len(facts)):
        pid = parent_ids[i]
        p = -1
        if js_truthy_id(pid):
            k = pid if type(pid) is str else mkey(pid)
            p = pos_by_id.get(k, -1)
            if p >= 0 and mkey(pid) == mkey(entry_ids[i]):
                p = -1  # Pi's tree treats parentId === id as a root
        parent.append(p)
    times, label_entries, info_name, first_text = facts.times, facts.label_entries, facts.info_name, facts.first_text
    order = _tree(times, parent)
    facts.times = []
    labels: dict[int, str] = {}
    found = labels_by_id(label_entries)
    if found:
        for i, eid in enumerate(index.ids):
            lab = found.get(mkey(eid))
            if lab is not None and type(lab[0]) is str:
                labels[i] = lab[0]

    def position_of(leaf: Any) -> int:
        if leaf is None or leaf is UNDEFINED or not index.has(leaf):
            return -1
        return pos_by_id[mkey(leaf)]

    default_leaf = position_of(index.leaf_id)
    chosen = position_of(initial_leaf)
    if chosen < 0:
        chosen = default_leaf
    leaf_positions = [pos_by_id[leaf] for leaf in _leaves(index) if leaf in pos_by_id]
    header = dict(loaded.session.header or {})
    model = ViewerModel(
        header=header,
        path=loaded.path,
        name=_title(info_name, first_text, header),
        parent=parent,
        order=order,
        labels=labels,
        default_leaf=default_leaf,
        initial_leaf=chosen,
        leaves=leaf_positions,
        **facts.columns(),
    )
    if settings_for is None:
        model.exact = exact_totals(loaded, model, budget)
        context_facts(loaded, model)
        return model
    wanted = [p for p in (chosen, default_leaf) if p >= 0]
    wanted += [p for p in leaf_positions if p not in wanted]
    spent = 0
    for i, p in enumerate(wanted):
        length = _path_length(parent, p)
        if i >= 2 and spent + length > budget:
            break
        spent += length
        if p not in model.replays:  # the chosen leaf is usually the default one: replayed once
            model.replays[p] = replay_at(loaded, index.ids[p], settings_for, model.known_tokens)
    model.exact = exact_totals(loaded, model, budget)
    context_facts(loaded, model)
    return model


def exact_totals(loaded: Loaded, model: ViewerModel, budget: int = REPLAY_BUDGET) -> dict[int, int | None]:
    """Pi's ``estimateProjectedContextTokens`` at the entries where the page cannot compute it.

    At an entry whose branch has an assistant reply with usage after its latest compaction or
    context edit, Pi's estimate is that usage plus the estimates of the entries after it: the
    page adds them up from ``usageTokens`` and ``tokens``. Everywhere else (no usage yet, or a
    compaction or edit since) Pi sums the whole projected context, which only a replay gives:
    those entries get one here, in tree order, while the branches replayed stay under ``budget``
    entries in total (the page marks the rest as estimated). Duplicate ids (Pi finds the usage
    entry by its first id on the branch) make every entry a replayed one.
    """
    from pitools.core.context.build import replay_context

    n = len(model.parent)
    parent, flags, kinds, usage = model.parent, model.flags, model.kinds, model.usage_tokens
    trusted = [False] * n
    if _unique_ids(model) is not None:
        edited = _edited_by_ancestor(model, *_preorder(model))
        for p in model.order:
            if usage[p] is not None:
                trusted[p] = True
            elif p in edited or (not flags[p] & FLAG_MESSAGE and kinds[p] in ("compaction", "context_edit")):
                trusted[p] = False
            else:
                q = parent[p]
                trusted[p] = trusted[q] if q >= 0 else False
    out: dict[int, int | None] = {}
    depth = [0] * n
    for p in model.order:
        q = parent[p]
        depth[p] = depth[q] + 1 if q >= 0 else 1
    ids = loaded.index.ids
    spent = 0
    for p in model.order:
        if trusted[p]:
            continue
        replay = model.replays.get(p)
        if replay is not None:
            out[p] = replay.get("tokens")
            continue
        if spent + depth[p] > budget:
            break
        spent += depth[p]
        out[p] = _int_or_none(replay_context(loaded.index, ids[p], model.known_tokens).estimate.tokens)
    return out


def _preorder(model: ViewerModel) -> tuple[list[int], list[int]]:
    """Each entry's place in the tree order and the size of its subtree there: ``a`` is a proper
    ancestor of ``b`` when ``at[a] < at[b] < at[a] + size[a]`` (a parent that comes later in the
    order, on a parentId loop, starts no subtree)."""
    n = len(model.parent)
    at = [0] * n
    for i, p in enumerate(model.order):
        at[p] = i
    size = [1] * n
    for p in reversed(model.order):
        q = model.parent[p]
        if q >= 0 and at[q] < at[p]:
            size[q] += size[p]
    return at, size


def _unique_ids(model: ViewerModel) -> dict[str, int] | None:
    """Position by id when every id is a distinct string (then ``===`` on ids is a lookup)."""
    if model.unique_ids_memo:
        return model.unique_ids_memo[0]
    pos_of: dict[str, int] | None = {eid: p for p, eid in enumerate(model.ids)}
    if len(pos_of or ()) != len(model.ids) or any(f & FLAG_ODD_ID for f in model.flags):
        pos_of = None
    model.unique_ids_memo.append(pos_of)
    return pos_of


def _edited_by_ancestor(model: ViewerModel, at: list[int], size: list[int]) -> set[int]:
    """The entries a context edit earlier on their own path targets (an edit may name an entry
    written after it): their estimate in ``tokens`` is of the unedited message, so a total that
    adds it to an earlier usage is not Pi's. Only with unique ids (else every total is replayed
    or flagged)."""
    pos_of = _unique_ids(model) if model.edit_targets else None
    if pos_of is None:
        return set()
    out: set[int] = set()
    for e, target in model.edit_targets.items():
        t = pos_of.get(target, -1) if type(target) is str else -1
        if t >= 0 and at[e] < at[t] < at[e] + size[e]:
            out.add(t)
    return out


def context_facts(loaded: Loaded, model: ViewerModel) -> None:
    """Fill the model's per-entry context facts, so the page slices paths instead of applying
    Pi's context rules itself.

    ``ctx_comp[p]``: the newest compaction on ``p``'s path (-1: none); ``compactions[c]``: where
    Pi's ``buildContextEntries`` cuts that path (the first entry whose id is ``===`` the
    compaction's, and the first before it whose id is ``===`` its ``firstKeptEntryId``, else the
    compaction itself). ``ctx_tokens[p]``: the total the page shows at ``p``, in this order: the
    leaf's replay, the exact replay of :func:`exact_totals`, the newest assistant usage since the
    last compaction or context edit plus the estimates after it (Pi's own formula), else the sum
    of the context entries' estimates (flagged :data:`FLAG_ESTIMATED`, as is a sum with a gap).
    One pass over the tree order (a parent before its children); an entry whose parent comes
    later (a parentId loop) starts afresh, as a root.
    """
    from pitools.core.context.build import context_layout

    parent, order, kinds, flags, tokens = model.parent, model.order, model.kinds, model.flags, model.tokens
    usage = model.usage_tokens
    n = len(parent)
    at, size = _preorder(model)
    ids = loaded.index.ids
    edited = _edited_by_ancestor(model, at, size)
    pos_of = _unique_ids(model)
    latest = [-1] * n
    # Along each path, running sums of the estimates: every entry but compactions (all_sum), and
    # also without system messages (kept_sum: Pi leaves those out of the kept range).
    all_sum = [0] * n
    kept_sum = [0] * n
    # The usage-based total so far (None: no usage since the last compaction or context edit),
    # and whether every estimate it adds up is known.
    use: list[int | None] = [None] * n
    use_ok = [True] * n
    compactions: dict[int, list[int]] = {}
    for p in order:
        q = parent[p]
        base = q if q >= 0 and at[q] < at[p] else -1
        f = flags[p]
        is_comp = not f & FLAG_MESSAGE and kinds[p] == "compaction"
        tk = tokens[p] or 0
        latest[p] = p if is_comp else (latest[base] if base >= 0 else -1)
        all_sum[p] = (all_sum[base] if base >= 0 else 0) + (0 if is_comp else tk)
        system = f & FLAG_MESSAGE and kinds[p] == "system"
        kept_sum[p] = (kept_sum[base] if base >= 0 else 0) + (0 if is_comp or system else tk)
        if usage[p] is not None:
            use[p], use_ok[p] = usage[p], True
        elif is_comp or (not f & FLAG_MESSAGE and kinds[p] == "context_edit") or base < 0 or use[base] is None:
            use[p] = None
        else:
            use[p] = use[base] + tk  # type: ignore[operator]
            use_ok[p] = use_ok[base] and tokens[p] is not None and p not in edited
        if is_comp:
            entry = loaded.index.entry(p)
            if type(entry) is not dict:
                entry = {}
            if pos_of is not None:  # unique string ids: the compaction is its own first; kept by lookup
                kept_id = entry.get("firstKeptEntryId")
                k = pos_of.get(kept_id, -1) if type(kept_id) is str else -1
                compactions[p] = [p, k if k >= 0 and at[k] < at[p] < at[k] + size[k] else p]
                continue
            path = [p]
            while path[-1] >= 0 and len(path) <= n:
                up = parent[path[-1]]
                path.append(up if up >= 0 and at[up] < at[path[-1]] else -1)
            path = path[-2::-1]
            cut, start = context_layout([ids[x] for x in path], len(path) - 1, entry)
            compactions[p] = [path[cut], path[start]] if cut >= 0 else [p, p]
    ctx_tokens: list[int | None] = [None] * n
    for p in range(n):
        replay = model.replays.get(p)
        estimated = False
        total: int | None
        if replay is not None and type(replay.get("tokens")) is int:
            total = replay["tokens"]
        elif p in model.exact:
            total = model.exact[p]
            estimated = total is None
        elif use[p] is not None:
            total, estimated = use[p], not use_ok[p]
        else:
            c = latest[p]
            if c < 0:
                total = all_sum[p]
            else:
                cut, start = compactions[c]
                kept = 0  # the kept range [start, cut) of the path
                if start != cut:
                    kept = kept_sum[parent[cut]] - (kept_sum[parent[start]] if parent[start] >= 0 else 0)
                total = (tokens[cut] or 0) + kept + all_sum[p] - all_sum[cut]
            estimated = True
        ctx_tokens[p] = total
        if estimated:
            flags[p] |= FLAG_ESTIMATED
    model.ctx_tokens = ctx_tokens
    model.ctx_comp = latest
    model.compactions = compactions


def _path_length(parent: list[int], p: int) -> int:
    n = 0
    limit = len(parent) + 1
    while p >= 0 and n < limit:
        n += 1
        p = parent[p]
    return n


def replay_at(
    loaded: Loaded, leaf: Any, settings_for: SettingsFor, known: Callable[[int], int | None] | None = None
) -> dict[str, Any]:
    """The exact context estimate and compaction plan at ``leaf`` (what ``pitools context`` and
    ``pitools compact --dry-run`` report), in the small shape the page shows. ``known``: the
    estimates gathered already (:meth:`ViewerModel.known_tokens`)."""
    from pitools.core.compaction.plan import plan_compaction
    from pitools.core.context.build import BranchKeys, replay_context

    replay = replay_context(loaded.index, leaf, known)
    model = replay.projection.model
    key = None
    if isinstance(model, dict) and isinstance(model.get("provider"), str) and isinstance(model.get("modelId"), str):
        key = (model["provider"], model["modelId"])
    settings, window = settings_for(key)
    est = replay.estimate
    out: dict[str, Any] = {
        "tokens": _int_or_none(est.tokens),
        "usageTokens": _int_or_none(est.usage_tokens),
        "trailingTokens": _int_or_none(est.trailing_tokens),
        "contextWindow": window,
        "model": list(key) if key else None,
        "contextEntries": len(replay.context_entries),
    }
    if not replay.path:
        return out
    plan = plan_compaction(
        loaded,
        leaf,
        settings,
        context_window=window,
        branch=replay.path,
        projection=replay.projection,
        estimates=replay.token_estimates,
        # the path's ids and types from the index: without them the plan reads every entry of a
        # lean branch back from the file twice just to learn its ids and types
        keys=None if replay.path_ids is None else BranchKeys(replay.path_ids, replay.path_types),
    )
    runs: list[list[Any]] = []
    for _e, _eid, region, _tokens, _cut in plan.rows:
        if runs and runs[-1][0] == region:
            runs[-1][1] += 1
        else:
            runs.append([region, 1])
    prep = plan.preparation
    first_kept = prep.first_kept_entry_id if prep is not None else None
    out["plan"] = {
        "wouldCompact": plan.would_compact,
        "threshold": plan.threshold,
        "reserveTokens": settings.reserve_tokens,
        "keepRecentTokens": settings.keep_recent_tokens,
        "reason": plan.reason,
        "regions": runs,
        "totals": plan.region_totals(),
        "firstKeptEntryId": first_kept if type(first_kept) is str else None,
        "isSplitTurn": prep.is_split_turn if prep is not None else False,
    }
    return out
