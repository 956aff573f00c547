"""New sessions made from a branch, as Pi's ``/fork``, ``/clone`` and ``/export`` (JSONL) make them.

* ``/clone`` (``interactive-mode.js`` ``handleCloneCommand`` → ``AgentSessionRuntime.fork(leafId,
  {position: "at"})``) and ``/fork`` (``showUserMessageSelector`` → ``fork(entryId)``, position
  ``"before"``) both end in ``SessionManager.createBranchedSession(targetLeafId)``
  (``session-manager.js``), mirrored by :func:`branched_session`:

  - the path root → target (``getBranch``) without its ``label`` entries, each kept entry copied
    with ``parentId`` set to the previous kept entry (``null`` for the first);
  - a ``compaction`` whose ``firstKeptEntryId`` named a removed label now names the first kept
    entry after that label;
  - one new ``label`` entry per resolved label (``labelsById``, built from *every* entry of the
    file, in first-labelled order) whose target is on the new path, chained after the path with a
    fresh 8-hex id and the original label's timestamp;
  - a header ``{type, version: 3, id: uuidv7, timestamp, cwd, parentSession: <source path>}``,
    where cwd is the source header's cwd resolved (``SessionManager.open``);
  - the file ``<sessionDir>/<timestamp with : and . as ->_<id>.jsonl``, sessionDir being the
    configured session directory or else the source file's folder (``SessionManager.open``
    derives it from the file when none is configured).

* ``/fork`` on a user message targets that message's parent and hands its text back to the
  editor (``extractUserMessageText``). On the first message (no parent) Pi starts an empty session
  whose header carries ``parentSession`` (``SessionManager.create`` + ``newSession``).

* ``/export`` to JSONL (``session-export.js``, ``serializeSessionBranch``): the *same* session id,
  a new timestamp, the cwd, no ``parentSession``, and the branch re-chained with its label entries
  left in place (:func:`export_branch`).

Differences from Pi, on purpose: Pi writes a branched file only once it holds a user or assistant
message (``_persist``); pitools always writes it and reports ``piWouldDefer``. Pi also rewrites a
v1/v2 source file to v3 when it opens it; pitools never touches the source.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pitools.core.js import ops as jsops
from pitools.core.js.access import entry_id, entry_type
from pitools.core.js.date import iso_now
from pitools.core.js.json.encode import js_stringify
from pitools.core.js.value import UNDEFINED
from pitools.core.session.ids import generate_id, uuid7
from pitools.core.session.tree import SessionIndex, mkey
from pitools.errors import PitoolsError

CURRENT_VERSION = 3

IdFactory = Callable[[set[Any]], str]


# -- ids and times ------------------------------------------------------------------------------


def file_timestamp(timestamp: str) -> str:
    """The timestamp as Pi puts it in a file name: ``:`` and ``.`` become ``-``."""
    return re.sub(r"[:.]", "-", timestamp)


# -- labels -------------------------------------------------------------------------------------


def resolved_labels(entries: Sequence[Any]) -> dict[Any, tuple[Any, Any, Any]]:
    """Pi's ``labelsById``/``labelTimestampsById`` over every entry: key → (targetId, label, timestamp).

    A truthy label (JavaScript truthiness) sets, anything else clears; re-setting keeps the
    target's first position, clearing and setting again moves it to the end (``Map`` order).
    """
    labels: dict[Any, tuple[Any, Any, Any]] = {}
    for entry in entries:
        if type(entry) is not dict or entry.get("type") != "label":
            continue
        target = entry.get("targetId", UNDEFINED)
        label = entry.get("label", UNDEFINED)
        key = mkey(target)
        if jsops.truthy(label):
            labels[key] = (target, label, entry.get("timestamp", UNDEFINED))
        else:
            labels.pop(key, None)
    return labels


# -- createBranchedSession ------------------------------------------------------------------------


@dataclass(slots=True)
class NewSession:
    """A session file to write: header and entries, plus what the command reports."""

    kind: str  # "fork", "clone" or "export"
    header: dict[str, Any]
    entries: list[Any]
    #: The entry the new session's path ends at in the source (None: an empty session).
    source_leaf: Any
    #: The user message's text Pi puts back in the editor (``/fork`` only).
    selected_text: str | None = None
    #: The forked-from user message (``/fork`` only).
    forked_entry: Any = None
    labels_recreated: int = 0
    labels_dropped: int = 0
    remapped_first_kept: list[str] = field(default_factory=list)
    target: str | None = None

    @property
    def session_id(self) -> Any:
        return self.header.get("id")

    @property
    def file_name(self) -> str:
        return f"{file_timestamp(self.header['timestamp'])}_{self.header['id']}.jsonl"

    @property
    def leaf_id(self) -> Any:
        """The new file's default leaf (its last entry), as Pi will see it."""
        return entry_id(self.entries[-1]) if self.entries else None

    @property
    def has_conversation(self) -> bool:
        """Pi's ``_hasConversation``: any user or assistant message."""
        return any(
            entry_type(e) == "message" and jsops.prop(e.get("message", UNDEFINED), "role") in ("user", "assistant")
            for e in self.entries
        )

    @property
    def pi_would_defer(self) -> bool:
        """Pi writes the file only after the next message when there is no conversation yet."""
        return self.kind != "export" and not self.has_conversation

    def lines(self) -> Iterator[bytes]:
        """The file's bytes, one ``JSON.stringify`` line per entry, header first."""
        for value in (self.header, *self.entries):
            yield (js_stringify(value) or "null").encode("utf-8") + b"\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.target,
            "sessionId": self.session_id,
            "parentSession": self.header.get("parentSession"),
            "cwd": self.header.get("cwd"),
            "sourceLeaf": self.source_leaf,
            "leafId": self.leaf_id,
            "entryCount": len(self.entries),
            "labelsRecreated": self.labels_recreated,
            "remappedFirstKeptEntryIds": self.remapped_first_kept,
            "selectedText": self.selected_text,
            "forkedEntry": self.forked_entry,
            "piWouldDefer": self.pi_would_defer,
        }


def _header(session_id: str, timestamp: str, cwd: str, parent_session: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
        "parentSession": parent_session,
    }


def branched_entries(
    index: SessionIndex, leaf_id: Any, *, new_id: IdFactory = generate_id
) -> tuple[list[Any], int, list[str]]:
    """Entries of Pi's ``createBranchedSession(leafId)``: re-chained path, then recreated labels.

    Returns the entries, the number of label entries written, and the compactions whose
    ``firstKeptEntryId`` was moved off a removed label.
    """
    path = index.get_branch(leaf_id)
    if not path:
        raise PitoolsError(f"Entry {leaf_id} not found")
    kept: list[Any] = []
    replacement: dict[Any, Any] = {}
    pending: list[Any] = []
    remapped: list[str] = []
    parent: Any = None
    for entry in path:
        if entry_type(entry) == "label":
            pending.append(entry_id(entry))
            continue
        own_id = entry_id(entry)
        for label_id in pending:
            replacement[mkey(label_id)] = own_id
        pending.clear()
        copy = dict(entry)
        copy["parentId"] = parent
        if entry_type(entry) == "compaction":
            first_kept = entry.get("firstKeptEntryId", UNDEFINED)
            if jsops.strict_equal(first_kept, own_id):
                copy["firstKeptEntryId"] = own_id
            else:
                moved = replacement.get(mkey(first_kept), UNDEFINED)
                copy["firstKeptEntryId"] = first_kept if moved is UNDEFINED else moved
                if moved is not UNDEFINED:
                    remapped.append(str(own_id))
        kept.append(copy)
        parent = own_id
    on_path = {mkey(entry_id(e)) for e in kept}
    # Only a string id can equal a new (string) label id; an id that is an array or object (a broken
    # line) is unhashable here and collides with nothing.
    taken: set[Any] = {i for e in kept if type(i := entry_id(e)) is str}
    label_parent = entry_id(kept[-1]) if kept else None
    if not jsops.truthy(label_parent):
        label_parent = None
    labels: list[Any] = []
    for key, (target, label, timestamp) in resolved_labels(index.entries).items():
        if key not in on_path:
            continue
        lid = new_id(taken)
        taken.add(lid)
        labels.append(
            {
                "type": "label",
                "id": lid,
                "parentId": label_parent,
                "timestamp": timestamp,
                "targetId": target,
                "label": label,
            }
        )
        label_parent = lid
    return kept + labels, len(labels), remapped


def session_cwd(header: Mapping[str, Any] | None, env: Mapping[str, str], process_cwd: str | None = None) -> str:
    """``SessionManager.open``'s cwd: the header's string cwd (else the current directory), resolved."""
    from pitools.core.session.locate import resolve_path

    here = process_cwd or os.getcwd()
    cwd = header.get("cwd") if header else None
    return resolve_path(cwd if type(cwd) is str else here, here, env)


@dataclass(frozen=True, slots=True)
class NewSessionOptions:
    """Knobs for reproducible output (golden files, tests); the defaults are Pi's."""

    now: _dt.datetime | None = None
    session_id: str | None = None
    new_label_id: IdFactory = generate_id
    #: Value for the header's ``parentSession``; default: the source path, absolute.
    parent_session: str | None = None
    process_cwd: str | None = None
    env: Mapping[str, str] | None = None


def _common(loaded: Any, opts: NewSessionOptions) -> tuple[str, str, str, Mapping[str, str]]:
    env = os.environ if opts.env is None else opts.env
    timestamp = iso_now(opts.now)
    sid = opts.session_id or uuid7(opts.now)
    parent = opts.parent_session
    if parent is None:
        from pitools.core.session.locate import resolve_path

        parent = resolve_path(os.fspath(loaded.path), opts.process_cwd or os.getcwd(), env)
    return timestamp, sid, parent, env


def clone_session(loaded: Any, leaf: Any, opts: NewSessionOptions | None = None) -> NewSession:
    """Pi's ``/clone``: ``createBranchedSession`` at ``leaf`` (the default leaf unless given)."""
    opts = opts or NewSessionOptions()
    if not jsops.truthy(leaf):
        raise PitoolsError("Nothing to clone yet: the session has no entries", path=loaded.path)
    entry = loaded.index.get(leaf)
    if entry is None:
        raise PitoolsError(f"Invalid entry ID for forking: {leaf}", path=loaded.path)
    timestamp, sid, parent, env = _common(loaded, opts)
    entries, labels, remapped = branched_entries(loaded.index, entry_id(entry), new_id=opts.new_label_id)
    header = _header(sid, timestamp, session_cwd(loaded.session.header, env, opts.process_cwd), parent)
    return NewSession("clone", header, entries, entry_id(entry), labels_recreated=labels, remapped_first_kept=remapped)


def user_message_text(content: Any) -> str:
    """``extractUserMessageText``: a string as is, else its string ``text`` parts joined with ``""``."""
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    return "".join(
        part["text"]
        for part in content
        if type(part) is dict and part.get("type") == "text" and type(part.get("text")) is str
    )


def fork_session(loaded: Any, at: Any, opts: NewSessionOptions | None = None) -> NewSession:
    """Pi's ``/fork`` from user message ``at``: the path to its parent, and the message text."""
    opts = opts or NewSessionOptions()
    entry = loaded.index.get(at) if jsops.truthy(at) else None
    if entry is None:
        raise PitoolsError(f"Invalid entry ID for forking: {at}", path=loaded.path)
    message = entry.get("message", UNDEFINED) if type(entry) is dict else UNDEFINED
    if entry_type(entry) != "message" or jsops.prop(message, "role") != "user":
        raise PitoolsError(
            f"entry {at} is not a user message; Pi's /fork starts from a user message "
            "(use `pitools clone --leaf` to copy the path up to and including any entry)",
            path=loaded.path,
        )
    text = user_message_text(jsops.prop(message, "content"))
    target = entry.get("parentId", UNDEFINED)
    timestamp, sid, parent, env = _common(loaded, opts)
    header = _header(sid, timestamp, session_cwd(loaded.session.header, env, opts.process_cwd), parent)
    if not jsops.truthy(target):
        # The first message: Pi opens an empty session that remembers where it came from.
        return NewSession("fork", header, [], None, selected_text=text, forked_entry=entry_id(entry))
    entries, labels, remapped = branched_entries(loaded.index, target, new_id=opts.new_label_id)
    return NewSession(
        "fork",
        header,
        entries,
        target,
        selected_text=text,
        forked_entry=entry_id(entry),
        labels_recreated=labels,
        remapped_first_kept=remapped,
    )


def export_branch(loaded: Any, leaf: Any, opts: NewSessionOptions | None = None) -> NewSession:
    """Pi's ``serializeSessionBranch``: same session id, new timestamp, branch re-chained as is."""
    opts = opts or NewSessionOptions()
    env = os.environ if opts.env is None else opts.env
    header_in = loaded.session.header or {}
    header = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": header_in.get("id"),
        "timestamp": iso_now(opts.now),
        "cwd": session_cwd(header_in, env, opts.process_cwd),
    }
    entries: list[Any] = []
    parent: Any = None
    for entry in loaded.index.get_branch(leaf):
        copy = dict(entry)
        copy["parentId"] = parent
        entries.append(copy)
        parent = entry_id(entry)
    return NewSession("export", header, entries, leaf)


# -- where and how it is written ------------------------------------------------------------------


def new_session_dir(
    source: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    session_dir: str | None = None,
    cwd: str | None = None,
) -> str:
    """Where Pi puts a forked/cloned file: the configured session dir, else the source's folder."""
    from pitools.core.session.locate import choose_session_dir

    choice = choose_session_dir(cwd=cwd, env=env, session_dir=session_dir)
    if choice.configured:
        return choice.configured
    return os.path.dirname(os.path.abspath(os.fspath(source)))
