"""``pitools heal``: turn ``request --check`` findings into Pi-native remedies.

A remedy is a ``context_edit`` entry as Pi 1.6.0 appends it (``appendContextEdit``): it names an
entry on the active branch (``targetId``) and either hides it from the model
(``replacement: null``) or gives it new content (``{content}``); Pi's ``projectContextEntry``
applies the latest edit of each target when it builds the context, so nothing already in the
file is rewritten. Only entries that contribute editable model content can be targets (a user,
assistant or toolResult message, or a custom message).

The plan is computed in rounds: build the body for the target model (the same chain as
``pitools request``), check it, map each finding back to the entry whose message produced it,
make the edits, and build again on the session *with* those edits appended, until a round finds
nothing more to do. So the plan is what Pi would see after the write, checked by the same rules,
and a second plan over the healed session is empty.

Where a finding comes from: each body finding names a field path; the values along that path
that identify a message (a tool call id, a thinking signature, image bytes) are looked up in
Pi's LLM messages at the leaf, and each LLM message is known to come from one projected entry.
The few rules whose path names no such value (an empty block, a tool loop without thinking, a
Gemini turn without thought signatures) are located by the same rule applied to the LLM
messages themselves.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js.json.record import record_json

#: Codes whose remedy rewrites a tool exchange (the call and its results) as plain text.
EXCHANGE_CODES = frozenset(
    {
        "tool-id-pattern",
        "tool-id-length",
        "duplicate-tool-id",
        "missing-thought-signature",
        "thinking-missing-in-tool-loop",
    }
)
#: Codes whose remedy repairs the call's arguments in place when it can (else: the exchange as text).
ARGUMENT_CODES = frozenset({"tool-arguments-not-object", "tool-arguments-lone-surrogate"})
#: Codes whose remedy replaces one image with a short text note.
IMAGE_CODES = frozenset({"image-media-type", "image-too-large", "image-base64-invalid", "image-data-mismatch"})
#: Codes no context edit can fix, and what to do instead.
ADVICE = {
    "tool-name-pattern": "the tool list comes from the session's system messages, which Pi does not let an edit "
    "change; rename the tool in the extension that declares it",
    "thinking-budget-too-small": "a settings value, not session content: raise thinkingBudgets in Pi's settings.json",
    "request-too-large": "what is left after cutting tool output and images is still too large: `pitools compact` "
    "(or Pi's /compact) summarizes older turns",
    "context-over-window": "shrink the context: `pitools compact` (or Pi's /compact) summarizes older turns",
    "context-near-window": "a warning only; `pitools compact` makes room",
}
#: Any other finding left: its rule has no remedy, or its message comes from an entry Pi's
#: appendContextEdit does not edit.
NO_EDIT = (
    "no context edit can express the remedy here: the rule has none, or the message comes from an entry Pi's "
    "appendContextEdit does not edit (a compaction or branch summary, a message with the custom role)"
)
#: Rounds of plan → build → check before giving up (each round fixes what the last one uncovered).
MAX_ROUNDS = 4
#: How a removed image reads to the model.
IMAGE_NOTE = "[image removed by pitools heal: {why}]"
#: The message roles Pi's ``appendContextEdit`` edits (a ``custom_message`` entry too, but not a
#: ``message`` entry whose role is "custom", although the projection would apply such an edit).
_EDITABLE_ROLES = ("user", "assistant", "toolResult")
_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(slots=True)
class Remedy:
    """One entry's change: dropped from the context, or given new content."""

    entry_id: Any
    role: str
    action: str  # "drop" or "replace"
    change: str  # what changes, one line
    why: list[str]  # the finding codes
    loses: str  # what the model no longer sees
    replacement: Any = None  # None (drop) or {"content": [...]}

    def to_json(self) -> dict[str, Any]:
        return {
            "entryId": self.entry_id,
            "role": self.role,
            "action": self.action,
            "change": self.change,
            "why": list(self.why),
            "loses": self.loses,
            "replacement": self.replacement,
        }


@dataclass(slots=True)
class Unhealed:
    """A finding no context edit fixes, with the advice for it."""

    code: str
    message: str
    path: str | None
    advice: str

    def to_json(self) -> dict[str, Any]:
        return record_json(self, ("code", "message", "path", "advice"))


@dataclass(slots=True)
class HealPlan:
    """The findings before, the remedies (merged per entry), the new entries and what is left after."""

    leaf_id: Any
    model: dict[str, Any]
    before: list[Any]
    remedies: list[Remedy]
    entries: list[dict[str, Any]]
    after: list[Any]
    unhealed: list[Unhealed]
    #: Pi's leaf once the entries are appended (the last new entry, else the leaf).
    new_leaf_id: Any
    #: Pi's LLM messages at the new leaf (what the model will see), and the body after healing.
    llm_messages: list[Any] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    rounds: int = 0
    #: For each finding of ``before``: the entries whose edit answers it (first round).
    healed_by: list[list[Any]] = field(default_factory=list)

    def healed_by_finding(self) -> list[list[Any]]:
        """``healed_by`` aligned with ``before`` (empty lists where it was not computed)."""
        return self.healed_by if len(self.healed_by) == len(self.before) else [[] for _ in self.before]

    @property
    def needed(self) -> bool:
        return bool(self.entries)

    def to_json(self) -> dict[str, Any]:
        from pitools.core.request.check import worst_severity

        return {
            "model": f"{self.model.get('provider')}/{self.model.get('id')}",
            "leafId": self.leaf_id,
            "newLeafId": self.new_leaf_id,
            "needed": self.needed,
            "before": [
                {**f.to_json(), "healedBy": ids} for f, ids in zip(self.before, self.healed_by_finding(), strict=True)
            ],
            "remedies": [r.to_json() for r in self.remedies],
            "entries": self.entries,
            "after": [f.to_json() for f in self.after],
            "unhealed": [u.to_json() for u in self.unhealed],
            "ok": worst_severity(self.after) != "error",
        }


@dataclass(slots=True)
class _Edit:
    """The working state of one entry's edit during a round."""

    owner: Any  # the projected entry
    role: str
    content: Any
    drop: bool = False
    why: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    losses: list[str] = field(default_factory=list)

    def record(self, code: str, change: str, loss: str, content: Any = None) -> None:
        """One remedy applied to this entry: the rule, what changed, what the model loses (and
        the new content, when the remedy rewrote it)."""
        if content is not None:
            self.content = content
        self.why.append(code)
        self.changes.append(change)
        self.losses.append(loss)


#: What the model loses when an image becomes a one-line note.
IMAGE_LOSS = "the image itself (a note says one was there and why it was removed)"


@dataclass(slots=True)
class _Context:
    """Pi's LLM messages at a leaf and the projected entry each one came from."""

    llm: list[Any]
    owners: list[Any]
    #: How many context entries carry each id (an edit targets an id: every entry with it).
    id_counts: dict[Any, int] = field(default_factory=dict)


def _targetable(entry_id: Any, ctx: _Context) -> bool:
    """Pi's edits are keyed by id: an entry without a usable id of its own cannot be targeted alone."""
    return type(entry_id) is str and entry_id != "" and ctx.id_counts.get(entry_id, 0) == 1


def plan_heal(
    entries: Sequence[Any],
    leaf_id: Any,
    session_id: Any,
    model: dict[str, Any],
    thinking: str | None,
    *,
    default_level: str | None = None,
    budgets: Any = None,
    now: _dt.datetime | None = None,
    new_id: Callable[[Callable[[str], bool]], str] | None = None,
) -> HealPlan:
    """The remedies for ``model`` at ``leaf_id`` of the session made of ``entries`` (all of its
    entries, in file order), and the ``context_edit`` entries Pi would append for them."""
    from pitools.core.request.build import build_request
    from pitools.core.request.check import check_request
    from pitools.core.session.tree import SessionIndex
    from pitools.errors import PitoolsError

    if type(leaf_id) is not str or leaf_id == "":
        # Pi would append with that parentId, and a falsy one ends every walk: the edits would
        # start a new tree without the conversation they edit.
        raise PitoolsError("the leaf has no usable id; Pi cannot append after it (run `pitools repair` first)")
    base = list(entries)
    added: list[dict[str, Any]] = []
    merged: dict[Any, Remedy] = {}
    order: list[Any] = []
    index = SessionIndex.build(base)
    leaf = leaf_id
    before: list[Any] | None = None
    healed_by: list[list[Any]] = []
    rounds = 0
    while True:
        build = build_request(index, leaf, session_id, model, thinking, default_level=default_level, budgets=budgets)
        findings = check_request(build.model, build.payload, build.llm_messages, build.input_tokens)
        if before is None:
            before = findings
        errors = [f for f in findings if f.severity == "error"]
        if not errors or rounds >= MAX_ROUNDS:
            break
        context = _context(index, leaf, build.llm_messages)
        edits, answered = _plan_round(errors, build, context)
        if rounds == 0:
            by_finding = {id(f): ids for f, ids in zip(errors, answered, strict=True)}
            healed_by = [by_finding.get(id(f), []) for f in findings]
        if not edits:
            break
        rounds += 1
        for edit in edits:
            eid = edit.owner.source_id
            replacement = None if edit.drop else {"content": edit.content}
            entry = _context_edit(index, leaf, eid, replacement, added, now, new_id)
            added.append(entry)
            leaf = entry["id"]
            _merge(merged, order, eid, edit, replacement)
        index = SessionIndex.build([*base, *added])
    unhealed = [
        Unhealed(f.code, f.message, f.path, ADVICE.get(f.code, NO_EDIT)) for f in findings if f.severity == "error"
    ]
    return HealPlan(
        leaf_id=leaf_id,
        model=model,
        before=before or [],
        remedies=[merged[k] for k in order],
        entries=added,
        after=findings,
        unhealed=unhealed,
        new_leaf_id=leaf,
        llm_messages=build.llm_messages,
        payload=build.payload,
        rounds=rounds,
        healed_by=healed_by or [[] for _ in before or []],
    )


def _merge(merged: dict[Any, Remedy], order: list[Any], eid: Any, edit: _Edit, replacement: Any) -> None:
    """One remedy per entry: a later round's edit of the same entry supersedes the earlier one in Pi
    (the latest edit wins), so its content is the one shown; the reasons add up."""
    action = "drop" if edit.drop else "replace"
    old = merged.get(eid)
    if old is None:
        order.append(eid)
        merged[eid] = Remedy(
            eid, edit.role, action, "; ".join(edit.changes), list(edit.why), "; ".join(edit.losses), replacement
        )
        return
    old.action = action
    old.replacement = replacement
    old.change = "; ".join([old.change, *edit.changes])
    old.why = [*old.why, *(c for c in edit.why if c not in old.why)]
    old.loses = "; ".join(x for x in (old.loses, *edit.losses) if x)


def _context(index: Any, leaf: Any, llm: list[Any]) -> _Context:
    """Pi's LLM messages at ``leaf``, each with the projected entry it came from (convertToLlm maps
    message by message, so converting entry by entry gives the same list)."""
    from pitools.core.context.build import build_projection, context_entries_from_path
    from pitools.core.context.messages import convert_to_llm

    branch = index.get_branch(leaf)
    path = list(branch) if branch else index.session_path(leaf)
    projection = build_projection(path, context_entries_from_path(path))
    owners: list[Any] = []
    counts: dict[Any, int] = {}
    for pe in projection.entries:
        owners.extend(pe for _ in convert_to_llm(list(pe.messages)))
        if type(pe.source_id) is str:
            counts[pe.source_id] = counts.get(pe.source_id, 0) + 1
    if len(owners) != len(llm):  # cannot happen while convertToLlm maps message by message
        owners = [None] * len(llm)
    return _Context(llm, owners, counts)


def _context_edit(
    index: Any,
    leaf: Any,
    target: Any,
    replacement: Any,
    added: list[dict[str, Any]],
    now: _dt.datetime | None,
    new_id: Callable[[Callable[[str], bool]], str] | None,
) -> dict[str, Any]:
    """The entry Pi's ``appendContextEdit(targetId, replacement)`` appends after ``leaf``."""
    from pitools.core.js.date import iso_now
    from pitools.core.session.ids import generate_id

    taken = {e["id"] for e in added}

    def has(value: str) -> bool:
        return index.has(value) or value in taken

    return {
        "type": "context_edit",
        "id": (new_id or generate_id)(has),
        "parentId": leaf,
        "timestamp": iso_now(now),
        "targetId": target,
        "replacement": replacement,
    }


# --- one round: findings -> edits -------------------------------------------------------------


def _plan_round(errors: list[Any], build: Any, ctx: _Context) -> tuple[list[_Edit], list[list[Any]]]:
    """This round's edits, and for each finding the entries whose edit answers it.

    A finding's value (an id, a signature, image bytes) can sit in several messages; the finding
    is about one of them (its path names one body node), and only that message's entry, with the
    entries its remedy drops alongside (a tool exchange's results), answers it. Where its own
    message cannot be told (see ``_Where``), every message the value leads to does."""
    edits: dict[int, _Edit] = {}  # by the owner's position in the LLM messages
    touched: list[set[Any]] = [set() for _ in errors]
    current: list[set[Any]] = []  # the findings being remedied now

    def edit_of(i: int) -> _Edit | None:
        owner = ctx.owners[i]
        if owner is None or not _editable(owner) or not _targetable(owner.source_id, ctx):
            return None
        key = id(owner)
        if key not in edits:
            msg = ctx.llm[i]
            edits[key] = _Edit(owner, _role(owner), _copy_content(msg.get("content")))
        for sink in current:
            sink.add(owner.source_id)
        return edits[key]

    def credit(n: int, i: int, own: set[int] | None) -> None:
        """The edits made next are credited to finding ``n`` only when ``i`` is its own message."""
        current[:] = [touched[n]] if own is None or i in own else []

    exchanges: dict[int, set[str]] = {}
    exchange_findings: dict[int, set[int]] = {}
    look = _Lookup.build(ctx.llm)
    where = _Where(build.payload, ctx.llm)
    by_code: dict[str, list[int]] = {}
    for n, f in enumerate(errors):
        by_code.setdefault(f.code, []).append(n)

    def own_of(n: int, kind: str, found: list[int]) -> set[int] | None:
        i = where.message(errors[n].path, kind)
        return {i} if i is not None and i in found else None

    def nth(n: int, found: list[int]) -> set[int] | None:
        """A rule located by scanning the messages: the k-th finding of its code is about the k-th
        message found, when both counts agree."""
        group = by_code[errors[n].code]
        return {found[group.index(n)]} if len(found) > 1 and len(group) == len(found) else None

    for n, f in enumerate(errors):
        current[:] = [touched[n]]
        code = f.code
        keys = _identifiers(build.payload, f.path)
        if code in ARGUMENT_CODES:
            found = look.find(look.calls, keys.get("id", ()))
            own = own_of(n, "call", found)
            # Only its own call: another call with the same id may hold good arguments.
            for a in sorted(own) if own else found:
                e = edit_of(a)
                if e is None or not _repair_arguments(e, set(keys.get("id", ())), code):
                    exchanges.setdefault(a, set()).add(code)  # no faithful repair: the call as text
                    exchange_findings.setdefault(a, set()).add(n)
        elif code in EXCHANGE_CODES:
            found = look.find(look.calls, keys.get("id", ()))
            if code == "duplicate-tool-id" and len(found) > 1:
                found = found[1:]  # the first call keeps its id; the later ones are the duplicates
            own = own_of(n, "call", found)
            if own is None and found:  # a result's id: the exchange is the latest call before it
                r = where.message(f.path, "result")
                before = [a for a in found if r is not None and a < r]
                own = {before[-1]} if before else None
            if not found and code == "thinking-missing-in-tool-loop":
                found = _last_tool_turn(ctx.llm)
            if not found and code == "missing-thought-signature":
                found = _unsigned_current_turn(ctx.llm)
                own = nth(n, found)
            if not found:
                results = look.find(look.results, keys.get("id", ()))
                own = own_of(n, "result", results)
                for r in results:
                    credit(n, r, own)
                    _drop(edit_of(r), code, "the tool result (its call is gone)")
            for a in found:
                exchanges.setdefault(a, set()).add(code)
                if own is None or a in own:
                    exchange_findings.setdefault(a, set()).add(n)
        elif code == "tool-result-without-call":
            named = look.find(look.results, keys.get("id", ()))
            orphans = [r for r in named if not look.answers.get(r, False)]
            own = own_of(n, "result", orphans)
            if not orphans:
                orphans = _orphans(ctx.llm, look)
                own = nth(n, orphans)
            for r in orphans:
                credit(n, r, own)
                _drop(edit_of(r), code, "this tool result, which answers no call the model made")
        elif code == "foreign-thinking-signature":
            found = look.find(look.signatures, keys.get("signature", ()))
            own = own_of(n, "signature", found)
            for i in found:
                credit(n, i, own)
                e = edit_of(i)
                if e is not None:
                    _strip_thinking(e, set(keys.get("signature", ())), code)
        elif code in IMAGE_CODES:
            found = look.find(look.images, keys.get("data", ()))
            own = own_of(n, "data", found)
            # Only its own image: the same bytes elsewhere may be declared with a type the API takes.
            for i in sorted(own) if own else found:
                e = edit_of(i)
                if e is not None:
                    _replace_images(e, set(keys.get("data", ())), code, f.message)
        elif code == "image-count":
            _trim_images(ctx.llm, build.model, edit_of, code)
        elif code == "request-too-large":
            _shrink_body(ctx.llm, build, edit_of, code)
        elif code == "empty-text-block":
            found = [i for i, msg in enumerate(ctx.llm) for b in _blocks(msg) if _is_empty_text(b)]
            own = nth(n, found)
            for i in sorted(set(found)):
                credit(n, i, own)
                e = edit_of(i)
                if e is not None:
                    _strip_empty_text(e, code)
        elif code == "empty-message":
            found = [i for i, msg in enumerate(ctx.llm) if _is_empty_message(msg, build.model)]
            own = nth(n, found)
            for i in found:
                credit(n, i, own)
                _drop(edit_of(i), code, "an empty message")
    for a, codes in exchanges.items():
        current[:] = [touched[n] for n in exchange_findings.get(a, ())]
        _exchange_as_text(ctx.llm, a, edit_of, sorted(codes))
    made = [e for e in edits.values() if e.drop or e.changes]
    changed = {e.owner.source_id for e in made}
    return made, [sorted(t & changed) for t in touched]


def _editable(owner: Any) -> bool:
    source = owner.source
    if type(source) is not dict:
        return False
    if source.get("type") == "custom_message":
        return True
    message = source.get("message")
    return source.get("type") == "message" and type(message) is dict and message.get("role") in _EDITABLE_ROLES


def _role(owner: Any) -> str:
    source = owner.source
    if source.get("type") == "custom_message":
        return "custom"
    return str(source["message"].get("role"))


def _copy_content(content: Any) -> Any:
    if isinstance(content, list):
        return [dict(b) if type(b) is dict else b for b in content]
    return content


def _drop(e: _Edit | None, code: str, loses: str) -> None:
    if e is None:
        return
    if e.drop:  # dropped already by another finding: only the reason adds up
        if code not in e.why:
            e.why.append(code)
        return
    e.drop = True
    if code not in e.why:
        e.why.append(code)
    e.changes.append("dropped from the context")
    e.losses.append(loses)


# --- where a finding came from -----------------------------------------------------------------


def _path_nodes(payload: Any, path: str | None) -> list[tuple[str, Any]]:
    """The body's nodes along ``path``, each with its own path (the body itself first, as "")."""
    node = payload
    nodes: list[tuple[str, Any]] = [("", node)]
    where = ""
    for part in (path or "").split(".") if path else ():
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            break
        where = f"{where}.{part}" if where else part
        nodes.append((where, node))
    return nodes


def _node_keys(n: Any) -> dict[str, list[Any]]:
    """The identifying values one body node holds, by kind: ``call`` (a tool call's id),
    ``result`` (the call id a tool result answers), ``signature`` and ``data`` (image bytes)."""
    keys: dict[str, list[Any]] = {}
    if type(n) is not dict:
        return keys
    ntype = n.get("type")
    for name in ("tool_use_id", "tool_call_id", "call_id"):
        if type(n.get(name)) is str:
            # Responses' function_call carries the call_id it makes; every other holder answers one.
            keys.setdefault("call" if ntype == "function_call" else "result", []).append(n[name])
    if ntype in ("tool_use", "function_call", "function") and type(n.get("id")) is str:
        keys.setdefault("call", []).append(n["id"])
    for inner, kind in (("functionCall", "call"), ("functionResponse", "result")):
        if type(n.get(inner)) is dict and type(n[inner].get("id")) is str:
            keys.setdefault(kind, []).append(n[inner]["id"])
    if type(n.get("signature")) is str:
        keys.setdefault("signature", []).append(n["signature"])
    source = n.get("source")
    if type(source) is dict and type(source.get("data")) is str:
        keys.setdefault("data", []).append(source["data"])
    inline = n.get("inlineData")
    if type(inline) is dict and type(inline.get("data")) is str:
        keys.setdefault("data", []).append(inline["data"])
    url = n.get("image_url")
    url = url.get("url") if type(url) is dict else url
    if type(url) is str and url.startswith("data:") and "," in url:
        keys.setdefault("data", []).append(url.split(",", 1)[1])
    return keys


def _identifiers(payload: Any, path: str | None) -> dict[str, list[Any]]:
    """The identifying values along ``path`` in the body: tool call ids (``id``: made or answered),
    signatures, image data."""
    keys: dict[str, list[Any]] = {}
    for _where, n in _path_nodes(payload, path):
        for kind, values in _node_keys(n).items():
            keys.setdefault("id" if kind in ("call", "result") else kind, []).extend(values)
    return keys


def _body_occurrences(payload: Any) -> list[tuple[str, dict[str, list[Any]]]]:
    """Every body node holding an identifying value, in document order, with its path."""
    out: list[tuple[str, dict[str, list[Any]]]] = []
    stack: list[tuple[str, Any]] = [("", payload)]
    while stack:
        where, node = stack.pop()
        if type(node) is dict:
            keys = _node_keys(node)
            if keys:
                out.append((where, keys))
            children = list(node.items())
        elif type(node) is list:
            children = list(enumerate(node))
        else:
            continue
        for name, child in reversed(children):
            if type(child) in (dict, list):
                stack.append((f"{where}.{name}" if where else str(name), child))
    return out


def _llm_occurrences(llm: list[Any], kind: str, values: set[Any]) -> list[int]:
    """The LLM message of each occurrence of one of ``values`` (of ``kind``), in order: a message
    appears once per block that holds one."""
    out: list[int] = []
    for i, m in enumerate(llm):
        role = m.get("role") if type(m) is dict else None
        if kind == "result":
            if role == "toolResult" and _id_forms(m.get("toolCallId")) & values:
                out.append(i)
            continue
        for b in _blocks(m):
            if type(b) is not dict:
                continue
            btype = b.get("type")
            if (
                (kind == "call" and role == "assistant" and btype == "toolCall" and _id_forms(b.get("id")) & values)
                or (kind == "signature" and btype == "thinking" and b.get("thinkingSignature") in values)
                or (kind == "data" and btype == "image" and b.get("data") in values)
            ):
                out.append(i)
    return out


@dataclass(slots=True)
class _Where:
    """Which LLM message a body finding is about, when several hold the same value (the same
    image bytes, a tool call id used twice): the n-th body node with that value is the n-th
    occurrence in Pi's LLM messages, as long as both hold it the same number of times (pi-ai
    keeps the order of blocks; when it drops or adds some, the count differs and no one message
    is chosen)."""

    payload: Any
    llm: list[Any]
    _nodes: list[tuple[str, dict[str, list[Any]]]] | None = None

    def message(self, path: str | None, kind: str) -> int | None:
        node = next(
            ((where, n) for where, n in reversed(_path_nodes(self.payload, path)) if _node_keys(n).get(kind)),
            None,
        )
        if node is None:
            return None
        where, values = node[0], set(_node_keys(node[1])[kind])
        if self._nodes is None:
            self._nodes = _body_occurrences(self.payload)
        peers = [w for w, keys in self._nodes if values & set(keys.get(kind, ()))]
        found = _llm_occurrences(self.llm, kind, values)
        if where not in peers or len(peers) != len(found):
            return None
        return found[peers.index(where)]


def _k(value: Any) -> Any:
    """A value usable as a set member or dict key (a damaged session may hold a list as an id)."""
    return value if value is None or type(value) in (str, int, float, bool) else ("\0", repr(value))


def _id_forms(tool_id: Any) -> set[Any]:
    """The id as stored and the forms pi-ai's adapters rewrite it to (so a body id finds its call)."""
    if type(tool_id) is not str:
        return {_k(tool_id)}
    return {tool_id, _BAD_ID_CHARS.sub("_", tool_id)[:64], tool_id.split("|", 1)[0]}


def _blocks(msg: Any) -> list[Any]:
    content = msg.get("content") if type(msg) is dict else None
    return content if isinstance(content, list) else []


def _call_ids(msg: Any) -> set[Any]:
    return {_k(b.get("id")) for b in _blocks(msg) if type(b) is dict and b.get("type") == "toolCall"}


@dataclass(slots=True)
class _Lookup:
    """Where each identifying value sits in Pi's LLM messages (built once per round)."""

    calls: dict[Any, list[int]] = field(default_factory=dict)  # id form -> assistant messages
    results: dict[Any, list[int]] = field(default_factory=dict)  # id form -> tool results
    signatures: dict[Any, list[int]] = field(default_factory=dict)
    images: dict[Any, list[int]] = field(default_factory=dict)
    #: Per tool result: whether it answers a call of the assistant turn before it.
    answers: dict[int, bool] = field(default_factory=dict)

    @staticmethod
    def build(llm: list[Any]) -> _Lookup:
        look = _Lookup()

        def put(table: dict[Any, list[int]], key: Any, i: int) -> None:
            at = table.setdefault(key, [])
            if not at or at[-1] != i:
                at.append(i)

        turn: set[Any] = set()
        for i, m in enumerate(llm):
            role = m.get("role") if type(m) is dict else None
            if role == "assistant":
                turn = _call_ids(m)
                for b in _blocks(m):
                    if type(b) is not dict:
                        continue
                    if b.get("type") == "toolCall":
                        for form in _id_forms(b.get("id")):
                            put(look.calls, form, i)
                    elif b.get("type") == "thinking" and type(b.get("thinkingSignature")) is str:
                        put(look.signatures, b["thinkingSignature"], i)
            elif role == "toolResult":
                for form in _id_forms(m.get("toolCallId")):
                    put(look.results, form, i)
                look.answers[i] = _k(m.get("toolCallId")) in turn
            elif role == "user":
                turn = set()
            for b in _blocks(m):
                if type(b) is dict and b.get("type") == "image" and type(b.get("data")) is str:
                    put(look.images, b["data"], i)
        return look

    def find(self, table: dict[Any, list[int]], values: Sequence[Any]) -> list[int]:
        return sorted({i for v in values if type(v) is str for i in table.get(v, ())})


def _orphans(llm: list[Any], look: _Lookup) -> list[int]:
    """Tool results answering no call of their turn, and second answers to the same call."""
    out = []
    answered: set[Any] = set()
    for i, m in enumerate(llm):
        role = m.get("role")
        if role == "assistant" or role == "user":
            answered = set()
        elif role == "toolResult":
            tid = _k(m.get("toolCallId"))
            if not look.answers.get(i, False) or tid in answered:
                out.append(i)
            answered.add(tid)
    return out


def _last_tool_turn(llm: list[Any]) -> list[int]:
    for i in range(len(llm) - 1, -1, -1):
        m = llm[i]
        if m.get("role") == "assistant":
            return [i] if any(type(b) is dict and b.get("type") == "toolCall" for b in _blocks(m)) else []
    return []


def _unsigned_current_turn(llm: list[Any]) -> list[int]:
    """Gemini 3's current turn (after the last user text): assistant turns with tool calls."""
    start = 0
    for i, m in enumerate(llm):
        if m.get("role") == "user":
            start = i + 1
    return [
        i
        for i in range(start, len(llm))
        if llm[i].get("role") == "assistant"
        and any(type(b) is dict and b.get("type") == "toolCall" for b in _blocks(llm[i]))
    ]


# --- the edits ---------------------------------------------------------------------------------


def _repair_arguments(e: _Edit, ids: set[Any], code: str) -> bool:
    """Fix the arguments of the calls with ``ids`` in place: a JSON string that holds an object
    becomes that object; lone surrogates are dropped from every string (what pi-ai does to text).
    False when some call cannot be repaired that way."""
    content = e.content if isinstance(e.content, list) else []
    new = []
    fixed = 0
    for b in content:
        if type(b) is dict and b.get("type") == "toolCall" and _id_forms(b.get("id")) & ids:
            args = _fixed_arguments(b.get("arguments"), code)
            if args is None:
                return False
            b = {**b, "arguments": args}
            fixed += 1
        new.append(b)
    if not fixed:
        return False
    e.content = new
    e.why.append(code)
    if code == "tool-arguments-not-object":
        e.changes.append(f"{fixed} tool call(s): arguments stored as a JSON string given as the object it holds")
        e.losses.append("nothing (the same arguments, as an object)")
    else:
        e.changes.append(f"{fixed} tool call(s): lone UTF-16 surrogates removed from the arguments")
        e.losses.append("the broken half-characters in the arguments")
    return True


def _fixed_arguments(args: Any, code: str) -> Any:
    if code == "tool-arguments-not-object":
        if type(args) is not str:
            return None
        from pitools.core.js.json.parse import parse_json_line

        try:
            value = parse_json_line(args.encode("utf-8", "surrogatepass"))[0]
        except ValueError:
            return None
        return value if type(value) is dict else None
    return _without_lone_surrogates(args)


def _without_lone_surrogates(value: Any) -> Any:
    from pitools.core.request.sanitize_unicode import sanitize_surrogates

    if type(value) is str:
        return sanitize_surrogates(value)
    if type(value) is list:
        return [_without_lone_surrogates(v) for v in value]
    if type(value) is dict:
        return {sanitize_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


def _strip_thinking(e: _Edit, signatures: set[Any], code: str) -> None:
    content = e.content if isinstance(e.content, list) else []
    kept = [
        b
        for b in content
        if not (type(b) is dict and b.get("type") == "thinking" and b.get("thinkingSignature") in signatures)
    ]
    removed = len(content) - len(kept)
    if not removed:
        return
    change = f"{removed} thinking block(s) signed by another provider removed"
    e.record(code, change, "the model's earlier reasoning in that turn", kept)
    if not kept:
        _drop(e, code, "a turn that held nothing but that reasoning")


def _replace_images(e: _Edit, data: set[Any], code: str, why: str) -> None:
    content = e.content if isinstance(e.content, list) else []
    count = 0
    new = []
    for b in content:
        if type(b) is dict and b.get("type") == "image" and b.get("data") in data:
            count += 1
            new.append({"type": "text", "text": IMAGE_NOTE.format(why=_plain(why))})
        else:
            new.append(b)
    if not count:
        return
    e.record(code, f"{count} image(s) replaced by a one-line note", IMAGE_LOSS, new)


def _trim_images(llm: list[Any], model: dict[str, Any], edit_of: Callable[[int], _Edit | None], code: str) -> None:
    """Keep the newest images the model takes; the older ones (by position) become notes."""
    most = ((model.get("inputLimits") or {}).get("images") or {}).get("maxPerRequest")
    if not most:
        return
    places = [
        (i, k)
        for i, m in enumerate(llm)
        for k, b in enumerate(_blocks(m))
        if type(b) is dict and b.get("type") == "image"
    ]
    oldest: dict[int, set[int]] = {}
    for i, k in places[: max(len(places) - most, 0)]:
        oldest.setdefault(i, set()).add(k)
    why = f"one of the oldest images; the model takes at most {most} per request"
    for i, positions in oldest.items():
        e = edit_of(i)
        if e is None:
            continue
        content = e.content if isinstance(e.content, list) else []
        if len(content) != len(_blocks(llm[i])):
            continue  # reshaped by another remedy of this round: the next round counts again
        count = 0
        new = []
        for k, b in enumerate(content):
            if k in positions and type(b) is dict and b.get("type") == "image":
                count += 1
                new.append({"type": "text", "text": IMAGE_NOTE.format(why=why)})
            else:
                new.append(b)
        if count:
            e.record(code, f"{count} image(s) replaced by a one-line note", IMAGE_LOSS, new)


#: What a cut tool output keeps (characters), and the margin a cut aims under the limit by.
KEEP_CHARS = 2000
SIZE_MARGIN = 1.05


def _shrink_body(llm: list[Any], build: Any, edit_of: Callable[[int], _Edit | None], code: str) -> None:
    """Under pi-ai's ``maxRequestBytes``: cut the largest tool outputs to their first
    ``KEEP_CHARS`` characters and replace the largest images by notes, biggest first, until the
    bytes saved cover the excess (with a margin); the next round checks again."""
    from pitools.core.js.json.encode import js_stringify

    limit = (build.model.get("inputLimits") or {}).get("maxRequestBytes")
    if not limit:
        return
    size = len((js_stringify(build.payload) or "").encode("utf-8", "surrogatepass"))
    excess = size * SIZE_MARGIN - limit
    candidates: list[tuple[int, int, int]] = []  # (bytes saved, message, block)
    for i, m in enumerate(llm):
        for k, b in enumerate(_blocks(m)):
            if type(b) is not dict:
                continue
            if b.get("type") == "image" and type(b.get("data")) is str:
                candidates.append((len(b["data"]), i, k))
            elif m.get("role") == "toolResult" and b.get("type") == "text" and type(b.get("text")) is str:
                saved = len(b["text"].encode("utf-8", "surrogatepass")) - KEEP_CHARS * 4
                if saved > 0:
                    candidates.append((saved, i, k))
    chosen: dict[int, set[int]] = {}
    for saved, i, k in sorted(candidates, key=lambda c: -c[0]):
        if excess <= 0:
            break
        chosen.setdefault(i, set()).add(k)
        excess -= saved
    for i, positions in chosen.items():
        e = edit_of(i)
        if e is None or not isinstance(e.content, list) or len(e.content) != len(_blocks(llm[i])):
            continue
        cut_chars = images = 0
        new = []
        for k, b in enumerate(e.content):
            if k in positions and b.get("type") == "image":
                images += 1
                new.append({"type": "text", "text": IMAGE_NOTE.format(why="the request was over the API's size limit")})
            elif k in positions and b.get("type") == "text":
                text = b["text"]
                cut_chars += len(text) - KEEP_CHARS
                note = f"\n[... {len(text) - KEEP_CHARS:,} characters cut by pitools heal: the request was too large]"
                new.append({**b, "text": text[:KEEP_CHARS] + note})
            else:
                new.append(b)
        e.content = new
        e.why.append(code)
        if cut_chars:
            e.changes.append(f"tool output cut to its first {KEEP_CHARS:,} characters")
            e.losses.append(f"{cut_chars:,} characters of tool output")
        if images:
            e.changes.append(f"{images} image(s) replaced by a one-line note")
            e.losses.append(IMAGE_LOSS)


def _is_empty_text(b: Any) -> bool:
    return type(b) is dict and b.get("type") == "text" and b.get("text") == ""


def _strip_empty_text(e: _Edit, code: str) -> None:
    content = e.content if isinstance(e.content, list) else []
    kept = [b for b in content if not _is_empty_text(b)]
    if len(kept) == len(content):
        return
    e.why.append(code)
    if not kept and e.role in ("user", "assistant", "custom"):
        _drop(e, code, "an empty message")
        return
    e.content = kept or [{"type": "text", "text": "(no output)"}]
    e.changes.append(f"{len(content) - len(kept)} empty text block(s) removed")
    e.losses.append("nothing (the blocks were empty)")


def _is_empty_message(msg: Any, model: dict[str, Any]) -> bool:
    role = msg.get("role")
    if role not in ("user", "assistant"):
        return False
    content = msg.get("content")
    if content == "" or content == [] or content is None:
        return not (role == "assistant" and msg.get("stopReason") in ("error", "aborted"))
    if role == "assistant" and isinstance(content, list) and msg.get("stopReason") not in ("error", "aborted"):
        same = (msg.get("provider"), msg.get("api"), msg.get("model")) == (
            model.get("provider"),
            model.get("api"),
            model.get("id"),
        )
        return not same and all(type(b) is dict and b.get("type") == "thinking" for b in content)
    return False


def _exchange_as_text(llm: list[Any], a: int, edit_of: Callable[[int], _Edit | None], codes: list[str]) -> None:
    """The assistant turn at ``a``: each tool call becomes a text block telling what was called and
    what came back; the tool results answering it leave the context (their text moved here)."""
    e = edit_of(a)
    if e is None:
        return
    msg = llm[a]
    results: dict[Any, list[int]] = {}
    for j in range(a + 1, len(llm)):
        role = llm[j].get("role")
        if role == "assistant" or role == "user":
            break
        if role == "toolResult":
            results.setdefault(_k(llm[j].get("toolCallId")), []).append(j)
    content = e.content if isinstance(e.content, list) else []
    left = {key: len([b for b in content if type(b) is dict and b.get("type") == "toolCall" and _k(b.get("id")) == key])
            for key in results}  # fmt: skip
    unclaimed = {key: list(js) for key, js in results.items()}
    new: list[Any] = []
    calls = 0
    images = 0
    for b in content:
        if type(b) is dict and b.get("type") == "toolCall":
            calls += 1
            key = _k(b.get("id"))
            # Calls sharing an id take its results in order; the last of them takes what is left.
            queue = unclaimed.get(key, [])
            left[key] = left.get(key, 1) - 1
            taken = queue[:] if left.get(key, 0) <= 0 else queue[:1]
            del queue[: len(taken)]
            answers = [llm[j] for j in taken]
            images += sum(1 for r in answers for c in _blocks(r) if type(c) is dict and c.get("type") == "image")
            new.append({"type": "text", "text": _render_call(b, answers)})
        else:
            new.append(b)
    if not calls:
        return
    e.content = new
    e.why.extend(c for c in codes if c not in e.why)
    e.changes.append(f"{calls} tool call(s) and their result(s) rewritten as plain text")
    lost = "the structured tool call(s) and their ids"
    if images:
        lost += f", and {images} image(s) the results held"
    e.losses.append(lost)
    calls_here = _call_ids(msg)
    for j in (j for js in results.values() for j in js):
        if _k(llm[j].get("toolCallId")) in calls_here:
            r = edit_of(j)
            if r is not None:
                _drop(r, codes[0], "this tool result as a separate message (its text is in the assistant turn above)")


def _render_call(call: dict[str, Any], results: list[Any]) -> str:
    from pitools.core.js.json.encode import js_stringify

    args = js_stringify(call.get("arguments"))
    name = _plain(call.get("name"))
    lines = [f"[tool call {name} with arguments {args if args is not None else '{}'}, shown as text by pitools heal]"]
    if not results:
        lines.append("[no result was recorded]")
    for r in results:
        text = "\n".join(str(c.get("text")) for c in _blocks(r) if type(c) is dict and c.get("type") == "text")
        label = "error" if r.get("isError") is True else "result"
        lines.append(f"[{label}]\n{text}" if text else f"[{label}: no text]")
    return "\n".join(lines)


def _plain(value: Any) -> str:
    return value if type(value) is str else repr(value)


# --- ids a context edit cannot change (``-o``) -------------------------------------------------

#: A tool call id every supported API takes: Anthropic's pattern, Chat Completions' 40 characters.
SAFE_TOOL_ID = re.compile(r"[a-zA-Z0-9_-]{1,40}")


@dataclass(slots=True)
class IdRewrite:
    """One tool call id changed in the new session, on the call and on every result answering it."""

    entry_id: Any
    old: Any
    new: str
    why: str
    results: list[Any] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"entryId": self.entry_id, "old": self.old, "new": self.new, "why": self.why, "results": self.results}


def rewrite_tool_ids(entries: Sequence[Any]) -> tuple[list[Any], list[IdRewrite]]:
    """``entries`` (a branch, in order) with each tool call id that some API refuses (empty, not
    a string, characters outside ``[a-zA-Z0-9_-]``, longer than 40) or that repeats an earlier
    call's id replaced by a fresh one, and the ``toolCallId`` of the results answering that call
    changed to match. A result answers the latest assistant turn that called its id; when that
    turn called the id more than once, the results pair with its calls in order (the last call
    takes any extra results). Entries without a change are returned as they were (the same
    objects)."""
    import hashlib

    out: list[Any] = []
    rewrites: list[IdRewrite] = []
    seen: set[Any] = set()
    #: old id -> the calls of the latest turn with it, in order (None: the call kept its id).
    pending: dict[Any, list[IdRewrite | None]] = {}
    for entry in entries:
        message: Any = entry.get("message") if type(entry) is dict and entry.get("type") == "message" else None
        role = message.get("role") if type(message) is dict else None
        content = message.get("content") if type(message) is dict else None
        if role == "assistant" and isinstance(content, list):
            new_content = list(content)
            turn: dict[Any, list[IdRewrite | None]] = {}
            for k, block in enumerate(content):
                if type(block) is not dict or block.get("type") != "toolCall":
                    continue
                old = block.get("id")
                key = old if type(old) is str else repr(old)
                why = _id_problem(old, key in seen)
                seen.add(key)
                if why is None:
                    turn.setdefault(key, []).append(None)
                    continue
                digest = hashlib.sha256(f"{entry.get('id')}:{k}:{key}".encode("utf-8", "surrogatepass")).hexdigest()
                rw = IdRewrite(entry.get("id"), old, f"call_{digest[:24]}", why)
                rewrites.append(rw)
                turn.setdefault(key, []).append(rw)
                seen.add(rw.new)
                new_content[k] = {**block, "id": rw.new}
            pending.update(turn)
            if any(rw is not None for calls in turn.values() for rw in calls):
                entry = {**entry, "message": {**message, "content": new_content}}
        elif role == "toolResult":
            old = message.get("toolCallId")
            key = old if type(old) is str else repr(old)
            calls = pending.get(key)
            if calls:
                answered = calls.pop(0) if len(calls) > 1 else calls[0]
                if answered is not None:
                    answered.results.append(entry.get("id"))
                    entry = {**entry, "message": {**message, "toolCallId": answered.new}}
        out.append(entry)
    return out, rewrites


def _id_problem(tool_id: Any, repeated: bool) -> str | None:
    if type(tool_id) is not str or tool_id == "":
        return "empty or missing id"
    if repeated:
        return "the same id as an earlier tool call"
    if not SAFE_TOOL_ID.fullmatch(tool_id):
        return "characters or a length some APIs refuse"
    return None
