"""Entries pitools appended to broken-but-loadable sessions, read back by Pi 1.6.0 (issue 40).

Two shapes Pi loads and appends to, but whose first line is not the header or whose last line
has no newline:

- ``gen-s0021_broken-garbagefirst+secondheader+dupidcycle``: a non-JSON first line (Pi skips it),
  the header, a second header later on and a duplicate id forming a parent cycle;
- ``gen-s0008_broken-crlf+unterminated``: CRLF line ends and no newline after the last line
  (Pi's loader terminates it before appending).

Each goes through ``compact --apply`` and ``navigate --summarize`` (with a label), in place and
with ``-o`` (a new session: new header after the garbage line). ``make golden`` runs this module:
it builds every case with fixed ids and times, runs the reference oracle on the written file at the
new leaf, and stores the file's hash with what Pi read (``golden/appended/pi-appended.json.xz``).
The tests rebuild each file, check the hash (so Pi's verdict is about these very bytes) and
compare pitools' view of the written file with Pi's; they never need node.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests import support

GOLDEN = support.GOLDEN
FOLDER = GOLDEN / "appended"
RECORDING = FOLDER / "pi-appended.json.xz"
NOW = dt.datetime(2026, 2, 3, 4, 5, 6, 789000, tzinfo=dt.UTC)
GARBAGE = "gen-s0021_broken-garbagefirst+secondheader+dupidcycle"
CRLF = "gen-s0008_broken-crlf+unterminated"
NEW_SESSION_ID = "019c2170-0e55-7000-8000-00000000a40d"


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    command: str  # "compact" or "navigate"
    in_place: bool
    leaf: str | None = None  # compact: --leaf; navigate: FROM
    to: str | None = None  # navigate: TARGET


CASES = [
    Case(f"{src}:{cmd}:{'in-place' if in_place else '-o'}", src, cmd, in_place, *where)
    for src, legs in (
        (GARBAGE, {"compact": (None, None), "navigate": ("a7237a1a", "4085740e")}),
        (CRLF, {"compact": (None, None), "navigate": (None, "6991c0cb")}),
    )
    for cmd, where in legs.items()
    for in_place in (True, False)
]


@contextmanager
def _fixed_session_id() -> Any:
    """A ``-o`` copy gets a new session id (random bits): fixed here so the bytes repeat."""
    from pitools.core.session import ids

    real = ids.uuid7
    ids.uuid7 = lambda now=None: NEW_SESSION_ID  # type: ignore[assignment]
    try:
        yield
    finally:
        ids.uuid7 = real  # type: ignore[assignment]


#: Where an ``-o`` case reads its source: the new file's ``parentSession`` is the source's absolute
#: path, so it must be the same in every checkout for the written bytes (and their hash, which Pi's
#: recording is keyed by) to be.
STABLE_SOURCES = Path("/tmp/pitools-append-golden")


def _stable_source(name: str) -> Path:
    """A copy of ``golden/<name>/session.jsonl`` at a path that is the same on every machine
    (replaced atomically: several test processes may make it at once)."""
    target = STABLE_SOURCES / name / "session.jsonl"
    data = (GOLDEN / name / "session.jsonl").read_bytes()
    if not target.exists() or target.read_bytes() != data:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".session.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    return target


def build(case: Case, out: Path) -> list[dict[str, Any]]:
    """Write ``case`` to ``out`` with pitools; returns the entries appended."""
    from pitools import store
    from pitools.core.session.load import load
    from pitools.ops.compaction import apply_compaction, plan_compact
    from pitools.ops.navigate import NavigateSetup, navigate_apply
    from pitools.ops.summarizing import SummarizeRequest
    from pitools.summarize import build_summarizer, builtin_spec

    source = GOLDEN / case.source / "session.jsonl"
    if out.exists():
        out.unlink()
    if case.in_place:
        shutil.copyfile(source, out)
        path, output = out, None
    else:
        path, output = _stable_source(case.source), out
    n = CASES.index(case)
    summarizer = build_summarizer(builtin_spec())
    target = None if output is None else str(output)
    with _fixed_session_id():
        if case.command == "compact":
            planning = plan_compact(str(path), case.leaf, keep_recent_tokens=2000, use_config=False, for_apply=True)
            request = SummarizeRequest(
                output=target, backup=False, now=NOW, entry_ids=(f"c0a40d{n:02x}",), summarizer=summarizer
            )
            return [apply_compaction(planning, request).entry]
        stamp = store.stamp(path)
        loaded = load(str(path))
        setup = NavigateSetup(
            loaded, loaded.leaf(case.leaf), loaded.leaf(case.to), 200000, 16384, {}, None, [], str(path), stamp, True
        )
        request = SummarizeRequest(
            output=target,
            backup=False,
            use_config=False,
            now=NOW,
            entry_ids=(f"b5a40d{n:02x}", f"1ab40d{n:02x}"),
            summarizer=summarizer,
        )
        return navigate_apply(setup, request, summarize=True, label="issue-40").entries


def _oracle(path: Path, leaf: str) -> dict[str, Any]:
    sys.path.insert(0, str(support.ROOT / "scripts"))
    import record_golden  # type: ignore[import-not-found]

    env = dict(os.environ, PI_REF_DIR=str(record_golden.reference_dir()), TZ="UTC")
    cmd = ["node", str(record_golden.oracle_script()), str(path), "--leaf", leaf]
    proc = subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=True)
    return json.loads(proc.stdout)


def record_all(tmp: Path) -> None:
    """Write ``golden/appended/pi-appended.json.xz`` (needs node and the reference)."""
    records = []
    for case in CASES:
        out = tmp / "session.jsonl"
        appended = build(case, out)
        leaf = appended[-1]["id"]
        pi = _oracle(out, leaf)
        at = pi["byLeaf"][leaf]
        records.append(
            {
                "case": asdict(case),
                "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
                "appended": [e["id"] for e in appended],
                "pi": {
                    "invalid": pi.get("invalid"),
                    "loaderAppendedNewline": pi.get("loaderAppendedNewline"),
                    "loadedEntryCount": pi.get("loadedEntryCount"),
                    "sessionId": pi.get("sessionId"),
                    "leafId": pi.get("leafId"),
                    "entryIds": [e.get("id") for e in pi.get("entries", [])],
                    "path": at.get("path"),
                    "contextEntries": at.get("contextEntries"),
                    "messages": at.get("context", {}).get("messages"),
                },
            }
        )
    FOLDER.mkdir(exist_ok=True)
    blob = json.dumps(records, ensure_ascii=False, sort_keys=True).encode()
    RECORDING.write_bytes(lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME))


def load_recording() -> list[dict[str, Any]]:
    return json.loads(lzma.decompress(RECORDING.read_bytes()))


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        record_all(Path(scratch))
    print(f"wrote {RECORDING.relative_to(support.ROOT)} ({len(CASES)} cases)")
