"""Sessions forked and cloned by pitools, kept in golden/ so Pi's view of them is recorded.

Each case writes ``golden/<name>/session.jsonl`` with :func:`build` (fixed time, session id, label
ids and ``parentSession``), and records Pi 1.6.0's view of the *source* at the fork point into
``golden/<name>/source.pi.krt<N>.json.xz`` (the reference oracle with ``--leaf <point>``), because
a fork point is usually not a leaf of the source and so is missing from the source's own
recording. ``make golden`` then records the new session like any other golden case, and
``tests/golden/test_fork_parity.py`` compares the two views message by message.

Sources are golden cases, except ``*-labels`` whose source (``source.jsonl`` in the case folder,
written by :func:`write_all` from :data:`LABELS_SOURCE`) puts labels in the middle of the path, a
compaction whose ``firstKeptEntryId`` names a label, labels set from another branch, a label on a
label, and a cleared-then-reset label.
"""

from __future__ import annotations

import datetime as dt
import json
import lzma
import os
import shutil
import subprocess
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pitools.core.js.json.encode import js_stringify
from pitools.core.session.fork import NewSession, NewSessionOptions, clone_session, fork_session
from pitools.core.session.load import load
from pitools.ops.newsession import write_session
from tests import support

ROOT = support.ROOT
GOLDEN = ROOT / "golden"
NOW = dt.datetime(2026, 2, 3, 4, 5, 6, 789000, tzinfo=dt.UTC)
KEEP_RECENT = (20000, 2000, 300)
#: Stand-in for the absolute source path Pi writes into parentSession (machine-independent).
PARENT_ROOT = "/pitools-golden"


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # "fork" (ref = a user message) or "clone" (ref = a leaf; None = default leaf)
    source: str | None  # a golden case, or None for <case>/source.jsonl
    ref: str | None = None


CASES = [
    Case("clone-seed-default", "clone", "seed-running-example"),
    Case("clone-seed-a3", "clone", "seed-running-example", "A3"),
    Case("fork-seed-u3", "fork", "seed-running-example", "U3"),
    Case("fork-seed-first", "fork", "seed-running-example", "U1"),
    Case("fork-s0022-compactions", "fork", "gen-s0022_v3", "c1026ebd"),
    Case("clone-s0022-compactions", "clone", "gen-s0022_v3", "56ab776d-ef7f-7d59-8d27-87c479af9796"),
    Case("fork-s0037-edits", "fork", "gen-s0037_v3", "1e2c05be"),
    Case("clone-s0014-labels", "clone", "gen-s0014_v3", "86d808f9"),
    Case("clone-s0000-default", "clone", "gen-s0000_v3"),
    Case("clone-v1-s0010", "clone", "gen-s0010_v1"),
    Case("clone-v2-hook", "clone", "v2-hook-message"),
    Case("clone-s0013-dupids", "clone", "gen-s0013_broken-orphan+dupids", "0e318f10"),
    Case("clone-s0013-orphan", "clone", "gen-s0013_broken-orphan+dupids", "7aa2e72f"),
    Case("clone-labels", "clone", None, "A4"),
    Case("fork-labels", "fork", None, "U4"),
]


def _assistant(text: str, ms: int) -> dict[str, Any]:
    cost = {"input": 0.0003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00105}
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 100,
            "output": 50,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 150,
            "cost": cost,
        },
        "stopReason": "stop",
        "timestamp": ms,
    }


def _entry(kind: str, eid: str, parent: str | None, minute: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": eid,
        "parentId": parent,
        "timestamp": f"2026-03-01T10:{minute:02d}:00.000Z",
        **fields,
    }


def _msg(eid: str, parent: str | None, minute: int, message: dict[str, Any]) -> dict[str, Any]:
    return _entry("message", eid, parent, minute, message=message)


def _user(text: str, minute: int) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1772359200000 + minute * 60000}


def _label(eid: str, parent: str, minute: int, target: str, label: str | None) -> dict[str, Any]:
    return _entry("label", eid, parent, minute, targetId=target, label=label)


#: The crafted source of the ``*-labels`` cases (header first).
LABELS_SOURCE: list[dict[str, Any]] = [
    {
        "type": "session",
        "version": 3,
        "id": "labels-source",
        "timestamp": "2026-03-01T10:00:00.000Z",
        "cwd": "/work/labels",
    },
    _msg("U1", None, 1, _user("Start the audit", 1)),
    _label("L1", "U1", 2, "U1", "first"),
    _msg("A1", "L1", 3, _assistant("Audit started.", 1772359380000)),
    _label("L2", "A1", 4, "A1", "answer"),
    _label("L3", "L2", 5, "L2", "label on a label"),
    _msg("U2", "L3", 6, _user("Check the login flow", 6)),
    _msg("A2", "U2", 7, _assistant("The login flow is fine.", 1772359620000)),
    _label("L4", "A2", 8, "U2", "temporary"),
    _label("L5", "L4", 9, "U2", ""),
    _msg("U3", "L5", 10, _user("Now the session store", 10)),
    _msg("A3", "U3", 11, _assistant("The session store leaks on logout.", 1772359860000)),
    _entry(
        "compaction",
        "C1",
        "A3",
        12,
        summary="## Goal\nAudit login and session store.",
        firstKeptEntryId="L4",
        tokensBefore=1234,
        details={"readFiles": [], "modifiedFiles": []},
        fromHook=False,
    ),
    _msg("U4", "C1", 13, _user("Fix the leak", 13)),
    _msg("A4", "U4", 14, _assistant("Fixed: the store is cleared on logout.", 1772360040000)),
    # Another branch from A1, whose labels name entries of the first branch.
    _msg("U2b", "A1", 15, _user("Or look at billing first?", 15)),
    _label("L6", "U2b", 16, "A1", "answer (renamed)"),
    _label("L7", "L6", 17, "U3", "set from the other branch"),
    _label("L8", "L7", 18, "U1", None),
    _label("L9", "L8", 19, "U1", "first, again"),
    _label("L10", "L9", 20, "U2b", "off the first branch"),
]


def source_path(case: Case) -> Path:
    if case.source is None:
        return GOLDEN / case.name / "source.jsonl"
    return GOLDEN / case.source / "session.jsonl"


def parent_session_text(case: Case) -> str:
    where = case.name + "/source.jsonl" if case.source is None else case.source + "/session.jsonl"
    return f"{PARENT_ROOT}/{where}"


def _label_ids(case: Case) -> Callable[[set[Any]], str]:
    counter = [CASES.index(case) * 0x100]

    def next_id(taken: set[Any]) -> str:
        while True:
            counter[0] += 1
            candidate = f"1abe{counter[0]:04x}"
            if candidate not in taken:
                return candidate

    return next_id


def session_id(case: Case) -> str:
    return f"019c21b5-e1c5-7000-8000-{CASES.index(case) + 1:012x}"


def new_session(case: Case) -> NewSession:
    """The fork or clone of ``case`` with fixed ids, time and parentSession."""
    loaded = load(source_path(case))
    opts = NewSessionOptions(
        now=NOW,
        session_id=session_id(case),
        new_label_id=_label_ids(case),
        parent_session=parent_session_text(case),
        process_cwd=PARENT_ROOT,
        env={"HOME": "/home/pitools"},
    )
    if case.kind == "fork":
        return fork_session(loaded, case.ref, opts)
    leaf = case.ref if case.ref is not None else loaded.index.leaf_id
    return clone_session(loaded, leaf, opts)


def fork_point(case: Case) -> str | None:
    """Where the source's context must equal the new session's: the new path's last source entry."""
    return new_session(case).source_leaf


def labels_source_bytes() -> bytes:
    return b"".join((js_stringify(v) or "").encode() + b"\n" for v in LABELS_SOURCE)


def build(case: Case, out: Path) -> None:
    if out.exists():
        out.unlink()
    write_session(new_session(case), out)


def _oracle() -> tuple[Path, dict[str, str]] | None:
    script = support.load_script("pi_reference").oracle_path(ROOT)  # as record_golden finds it
    if script is None or shutil.which("node") is None:
        return None
    env = dict(os.environ, TZ="UTC")
    local = ROOT / ".pi-ref" / "node_modules" / "@earendil-works" / "pi-coding-agent"
    if "PI_REF_DIR" not in env and local.is_dir():
        env["PI_REF_DIR"] = str(local)
    return script, env


def record_source(case: Case) -> None:
    """Pi's view of the source at the fork point (``source.pi.krt<N>.json.xz``)."""
    found = _oracle()
    if found is None:
        raise SystemExit("fork_cases: node and the reference oracle are needed to record the source views")
    script, env = found
    point = fork_point(case)
    for krt in KEEP_RECENT:
        cmd = ["node", str(script), str(source_path(case)), "--leaf", "null" if point is None else str(point)]
        cmd += ["--keep-recent-tokens", str(krt)]
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=True)
        json.loads(proc.stdout)  # fail loudly on anything that is not the oracle's JSON
        (GOLDEN / case.name / f"source.pi.krt{krt}.json.xz").write_bytes(
            lzma.compress(proc.stdout, preset=9 | lzma.PRESET_EXTREME)
        )


def write_all(only: Collection[str] = ()) -> None:
    """Write every case's session (and the crafted source), then record the sources at the fork
    points: of every case, or of the cases named in ``only`` (a recording runs Pi, in node)."""
    for case in CASES:
        folder = GOLDEN / case.name
        folder.mkdir(exist_ok=True)
        if case.source is None:
            (folder / "source.jsonl").write_bytes(labels_source_bytes())
        tmp = folder / "session.jsonl.new"
        build(case, tmp)
        shutil.move(str(tmp), folder / "session.jsonl")
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(record_source, [case for case in CASES if not only or case.name in only]))


if __name__ == "__main__":
    write_all()
