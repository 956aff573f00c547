"""Shared machinery for the fuzz tests: budgets, a watchdog, seed sessions, mutators, the core
pipeline every input goes through, and the CLI invariant.

Budgets come from the environment:

* ``PITOOLS_FUZZ_EXAMPLES`` — the total input budget (default 25, so the whole ``tests/fuzz``
  folder stays under a minute; ``make fuzz`` sets 100000), shared out as described at
  :data:`PROPERTY_EXAMPLES` below.
* ``PITOOLS_FUZZ_SEED`` — seed of the volume loop (default 0).
* ``PITOOLS_FUZZ_STRICT=1`` — also fail on the known bugs listed in :data:`KNOWN_BUGS` (by
  default they are counted, not failed, so the suite stays green until they are fixed; the
  ``xfail(strict=True)`` regression tests in ``test_fuzz_regressions.py`` pin each of them).
* ``PITOOLS_FUZZ_REPORT=FILE`` — write counts and findings as JSON (every 500 runs and at the end).
* ``PITOOLS_FUZZ_CRASH_DIR`` — where failing inputs are saved (default: a temp folder).

Without ``PITOOLS_FUZZ_EXAMPLES`` hypothesis runs derandomized, so CI is reproducible.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import tempfile
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import support

ROOT = support.ROOT
GOLDEN = ROOT / "golden"

EXAMPLES = int(os.environ.get("PITOOLS_FUZZ_EXAMPLES", "25"))
EXPLICIT = "PITOOLS_FUZZ_EXAMPLES" in os.environ
STRICT = os.environ.get("PITOOLS_FUZZ_STRICT") == "1"
SEED = int(os.environ.get("PITOOLS_FUZZ_SEED", "0"))
#: The budget is shared so that ``make fuzz`` (100,000) feeds about that many inputs in total:
#: 1/8 to each of the four hypothesis core tests, 1/2 to the volume loop, 1/20 to the field
#: sweep, 1/200 to each in-process CLI test (every command and format per input), 1/5000 to
#: real subprocesses, 1/100 to the hostile-Markdown test (test_fuzz_markdown.py). Small budgets
#: keep a floor so the default run still tries everything.
PROPERTY_EXAMPLES = max(min(EXAMPLES, 25), EXAMPLES // 8)
VOLUME_EXAMPLES = max(min(EXAMPLES, 25), EXAMPLES // 2)
SWEEP_EXAMPLES = max(min(EXAMPLES, 40), EXAMPLES // 20)
CLI_EXAMPLES = max(min(EXAMPLES, 6), EXAMPLES // 200)
SUBPROCESS_EXAMPLES = max(1, EXAMPLES // 5000)
#: Seconds one core pipeline run or one CLI command may take before it counts as a hang.
CORE_TIMEOUT = float(os.environ.get("PITOOLS_FUZZ_TIMEOUT", "60"))
CLI_TIMEOUT = CORE_TIMEOUT


def hypothesis_settings(examples: int | None = None) -> Any:
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=PROPERTY_EXAMPLES if examples is None else examples,
        deadline=None,
        derandomize=not EXPLICIT,
        database=None if not EXPLICIT else settings.default.database,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


# -- stats and findings -----------------------------------------------------------------------------


@dataclass
class Stats:
    runs: Counter[str] = field(default_factory=Counter)
    known: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "examples": EXAMPLES,
            "seed": SEED,
            "runs": dict(self.runs),
            "totalRuns": sum(self.runs.values()),
            "knownBugHits": dict(self.known),
            "failures": self.failures,
        }


STATS = Stats()


def crash_dir() -> Path:
    env = os.environ.get("PITOOLS_FUZZ_CRASH_DIR")
    folder = Path(env) if env else Path(tempfile.gettempdir()) / "pitools-fuzz-crashes"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save_crash(kind: str, data: bytes, detail: str) -> Path:
    import hashlib

    name = f"{kind}-{hashlib.sha256(data).hexdigest()[:16]}.jsonl"
    target = crash_dir() / name
    target.write_bytes(data)
    (crash_dir() / (name + ".txt")).write_text(detail)
    STATS.failures.append({"kind": kind, "input": str(target), "detail": detail[-2000:]})
    return target


#: Open bugs found by fuzzing in code outside the fuzz suite, each with a strict-xfail regression
#: test; name -> predicate over the error text (exception or stderr). Hits are counted, not failed,
#: unless PITOOLS_FUZZ_STRICT=1. Empty: everything found so far is fixed (192f03d, 79450e7,
#: 3832f2c, ca79533), with a regression test in test_fuzz_regressions.py.
KNOWN_BUGS: dict[str, Callable[[str], bool]] = {}


def known_bug(text: str) -> str | None:
    if STRICT:
        return None
    for name, pred in KNOWN_BUGS.items():
        if pred(text):
            return name
    return None


# -- watchdog -------------------------------------------------------------------------------------


class FuzzTimeout(BaseException):
    """Raised in the main thread when one run takes longer than its budget (a hang)."""


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """Interrupt the block with :class:`FuzzTimeout` after ``seconds`` (SIGALRM, main thread)."""

    def fire(signum: int, frame: Any) -> None:
        raise FuzzTimeout(f"no result after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- seed sessions ----------------------------------------------------------------------------------

_SEEDS: list[tuple[str, list[bytes]]] | None = None


def seed_sessions(max_lines: int = 40) -> list[tuple[str, list[bytes]]]:
    """Every golden session, cut to its first ``max_lines`` lines (each keeps its ``\\n``)."""
    global _SEEDS
    if _SEEDS is None:
        seeds = []
        for path in sorted(GOLDEN.glob("*/session.jsonl")):
            lines = path.read_bytes().splitlines(keepends=True)[:max_lines]
            seeds.append((path.parent.name, lines))
        _SEEDS = seeds
    return _SEEDS


def full_golden() -> list[Path]:
    return sorted(GOLDEN.glob("*/session.jsonl"))


# -- values and mutators ------------------------------------------------------------------------------

ENTRY_TYPES = [
    "message",
    "compaction",
    "context_edit",
    "branch_summary",
    "label",
    "custom_message",
    "custom",
    "model_change",
    "thinking_level_change",
    "session_info",
    "session",
    "usage",
    "unknown",
]
ROLES = [
    "user",
    "assistant",
    "toolResult",
    "system",
    "custom",
    "bashExecution",
    "branchSummary",
    "compactionSummary",
    "hookMessage",
    "developer",
    "",
]
LONE_SURROGATE = "\ud800"
DEEP = "\x00DEEP\x00"


def wrong_values(rng: random.Random) -> Any:
    """A value of a random JSON type, biased towards the ones Pi's code trips over."""
    return rng.choice(
        [
            None,
            True,
            False,
            0,
            -1,
            1,
            1.5,
            -0.0,
            2**64,
            1e308,
            200.0,
            1e-7,
            "",
            "x",
            "00000001",
            "null",
            "2025-02-30T25:61:00Z",
            "\u2028",
            "a\x00b",
            "🚀",
            LONE_SURROGATE,
            [],
            [None],
            [1, "a"],
            [{"type": "text", "text": 5}],
            {},
            {"a": None},
            {"type": "text", "text": None},
            {"type": "toolCall", "name": None, "arguments": None},
            {"toString": 1},
            {"0": "a", "1": "b"},
        ]
    )


def to_line(value: Any) -> bytes:
    """JSON text of ``value`` (ASCII-escaped so lone surrogates survive), deep-nesting markers expanded."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    text = _DEEP_RE.sub(lambda m: "[" * int(m[1]) + '"x"' + "]" * int(m[1]), text)
    return text.encode("ascii") + b"\n"


_DEEP_RE = re.compile(r'"\\u0000DEEP\\u0000(\d+)"')


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if depth > 6:
        return out
    if type(value) is dict:
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k), depth + 1))
    elif type(value) is list:
        for i, v in enumerate(value[:8]):
            out.extend(_paths(v, (*prefix, i), depth + 1))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any, delete: bool = False) -> None:
    for key in path[:-1]:
        value = value[key]
    if delete and type(value) is dict:
        del value[path[-1]]
    else:
        value[path[-1]] = new


def mutate_field(rng: random.Random, obj: dict[str, Any]) -> None:
    """One field (any depth) gets a wrong type, a huge string, deep nesting, or disappears."""
    paths = _paths(obj)
    if not paths:
        obj[rng.choice(["id", "parentId", "type"])] = wrong_values(rng)
        return
    path = rng.choice(paths)
    op = rng.random()
    if op < 0.6:
        _set(obj, path, wrong_values(rng))
    elif op < 0.75:
        _set(obj, path, None, delete=True)
    elif op < 0.85:
        _set(obj, path, "é" * rng.choice([3000, 70000]) + LONE_SURROGATE * rng.randint(0, 1))
    else:
        _set(obj, path, DEEP + str(rng.choice([20, 200, 300, 700, 1100])))


def _ids(objs: list[Any]) -> list[Any]:
    return [o.get("id") for o in objs if type(o) is dict and "id" in o] or ["missing"]


def mutate_lines(rng: random.Random, lines: list[bytes], rounds: int | None = None) -> bytes:
    """Apply 1-4 random mutations (line-level, JSON-level or structural) to a session's lines."""
    lines = list(lines)
    for _ in range(rounds or rng.randint(1, 4)):
        if not lines:
            lines = [b"\n"]
        op = rng.randrange(28)
        i = rng.randrange(len(lines))
        if op == 0:  # drop a line
            del lines[i]
        elif op == 1:  # duplicate a line
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        elif op == 2:  # swap two lines
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:  # reverse a slice
            j = rng.randrange(i, len(lines))
            lines[i : j + 1] = lines[i : j + 1][::-1]
        elif op == 4:  # truncate the file at a random byte
            data = b"".join(lines)
            cut = rng.randrange(len(data) + 1)
            lines = data[:cut].splitlines(keepends=True)
        elif op == 5:  # flip / insert random bytes
            line = bytearray(lines[i])
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(len(line) + 1)
                line[pos:pos] = bytes([rng.randrange(256)])
            lines[i] = bytes(line)
        elif op == 6:  # NUL bytes and invalid UTF-8
            junk = rng.choice([b"\x00", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x00\x00\x00", b"\xf0\x9f"])
            line = lines[i]
            pos = rng.randrange(len(line) + 1)
            lines[i] = line[:pos] + junk + line[pos:]
        elif op == 7:  # odd whole lines
            lines.insert(
                i,
                rng.choice(
                    [
                        b"\n",
                        b"   \t\n",
                        b"\r\n",
                        b"\xef\xbb\xbf\n",
                        b"0\n",
                        b"false\n",
                        b"null\n",
                        b'""\n',
                        b"42\n",
                        b'"s"\n',
                        b"[]\n",
                        b"true\n",
                        b"{}\n",
                        b"{\n",
                        b"\x00\n",
                        b"\xa0\n",
                        b"\xe2\x80\xa8\n",
                        b'{"type":"session","id":"S2","version":3}\n',
                        b'{"type":"session"}\n',
                    ]
                ),
            )
        elif op == 8:  # CRLF, BOM, missing final newline
            kind = rng.randrange(3)
            if kind == 0:
                lines = [ln.rstrip(b"\n") + b"\r\n" if ln.endswith(b"\n") else ln for ln in lines]
            elif kind == 1:
                lines[0] = b"\xef\xbb\xbf" + lines[0]
            else:
                lines[-1] = lines[-1].rstrip(b"\n")
        elif op == 9:  # a random raw line
            lines.insert(i, bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))) + b"\n")
        elif op >= 26:  # big tool output: a base64 dump, or one token repeated (scan/redact stay linear)
            lines.insert(i, to_line(_big_tool_result(rng, dump=op == 26)))
        else:  # JSON-level
            lines = _mutate_json(rng, lines, op)
    return b"".join(lines)


def _big_tool_result(rng: random.Random, *, dump: bool) -> dict[str, Any]:
    """A tool result holding a base64 dump of binary data (wrapped at a real or odd width, maybe
    with text base64 and a secret inside) or a long run of one repeated token."""
    import base64

    if dump:
        size = rng.choice([2_000, 30_000, 200_000])
        data = rng.randbytes(size)
        if rng.random() < 0.3:
            data = b"password=Zq8mW3pL9xR2 " * (size // 22)  # base64 of text: inner findings everywhere
        text = base64.b64encode(data).decode()
        width = rng.choice([0, 60, 64, 76, 22, 41])
        if width:
            nl = rng.choice(["\n", "\r\n"])
            text = nl.join(text[k : k + width] for k in range(0, len(text), width))
    else:
        token = rng.choice(["Xk4mPq9Zr7Lw2Nc8Vb5TgH3jK6sD1fA0", "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4", "a"])
        text = rng.choice([" ", "\n", "", ","]).join([token] * rng.choice([1_000, 16_000]))
    return {
        "type": "message",
        "id": f"big{rng.randrange(10**6)}",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "t",
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
        },
    }


def _parse(line: bytes) -> Any:
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def _mutate_json(rng: random.Random, lines: list[bytes], op: int) -> list[bytes]:
    parsed = [_parse(ln) for ln in lines]
    objs = [(k, v) for k, v in enumerate(parsed) if type(v) is dict]
    if not objs:
        return lines
    k, obj = rng.choice(objs)
    ids = _ids([v for _, v in objs])
    if op <= 13:  # wrong type / missing / huge / deep field
        mutate_field(rng, obj)
    elif op == 14:  # self-parent
        obj["parentId"] = obj.get("id")
    elif op == 15:  # parent somewhere else (cycles, forward references)
        obj["parentId"] = rng.choice([*ids, None, "nope", 0, ""])
    elif op == 16:  # duplicate id
        obj["id"] = rng.choice(ids)
    elif op == 17:  # a two-entry cycle
        k2, other = rng.choice(objs)
        obj["parentId"], other["parentId"] = other.get("id"), obj.get("id")
        lines[k2] = to_line(other)
    elif op == 18:  # another entry type
        obj["type"] = rng.choice(ENTRY_TYPES)
    elif op == 19:  # another role
        msg = obj.get("message")
        if type(msg) is dict:
            msg["role"] = rng.choice(ROLES)
        else:
            obj["message"] = {"role": rng.choice(ROLES), "content": wrong_values(rng)}
    elif op == 20:  # header version: forces (or skips) migration, so ids collide after it
        for kk, v in enumerate(parsed):
            if type(v) is dict and v.get("type") == "session":
                v["version"] = rng.choice([1, 2, 3, "3", None, "x", 4, 0, -1, 2.5, [3]])
                if rng.random() < 0.3:
                    v.pop("version", None)
                lines[kk] = to_line(v)
                break
        obj["id"] = rng.choice(["00000001", "00000002", "00000003", *ids])
    elif op == 21:  # references to entries: edits, labels, compactions, branch summaries
        key = rng.choice(["targetId", "firstKeptEntryId", "firstKeptEntryIndex", "fromId", "replacement"])
        obj[key] = rng.choice([*ids, "00000002", None, 0, 3, -1, 10**9, "1", {"content": "x"}, {"content": None}])
    elif op == 22:  # a long linear chain appended under a random entry
        parent = rng.choice(ids)
        n = rng.choice([20, 20, 200, 200, 1000])
        chain = []
        for c in range(n):
            eid = f"chain{c}"
            chain.append(
                to_line(
                    {
                        "type": "message",
                        "id": eid,
                        "parentId": parent,
                        "timestamp": "2026-01-01T00:00:00Z",
                        "message": {
                            "role": rng.choice(["user", "assistant", "toolResult"]),
                            "content": [{"type": "text", "text": "t" * 40}],
                        },
                    }
                )
            )
            parent = eid
        lines.extend(chain)
        return lines
    elif op == 23:  # compaction / edit entries with plausible and implausible fields
        new = {
            "type": rng.choice(["compaction", "context_edit", "branch_summary", "label"]),
            "id": f"z{rng.randrange(1000)}",
            "parentId": rng.choice(ids),
            "timestamp": "2026-01-01T00:00:00Z",
            "summary": rng.choice(["s", "", None, 5]),
            "firstKeptEntryId": rng.choice(ids),
            "targetId": rng.choice(ids),
            "replacement": rng.choice([None, "text", {"content": "x"}, []]),
            "label": rng.choice(["L", "", None]),
            "tokensBefore": rng.choice([0, 10**6, None, "x"]),
        }
        lines.insert(rng.randrange(len(lines) + 1), to_line(new))
        return lines
    else:  # remove a required key
        for key in ("id", "parentId", "type", "message", "timestamp"):
            if key in obj and rng.random() < 0.4:
                del obj[key]
    lines[k] = to_line(obj)
    return lines


# -- the core pipeline ----------------------------------------------------------------------------------


def exercise_core(path: Path, rng: random.Random | None = None) -> None:
    """Run every core stage a command would run on ``path``; only PitoolsError may escape.

    Also checks invariants: parallel loader arrays, paths that never repeat an entry, v3 files
    dumping back byte for byte, migration idempotence, and validate reporting no internal error.
    """
    from pitools.core.compaction.prepare import CompactionSettings
    from pitools.core.js.json.encode import to_json_bytes
    from pitools.core.session.load import LoadedSession, load
    from pitools.core.session.migrate_file import migrated_lines
    from pitools.core.session.tree import SessionIndex, flatten_tree, get_tree
    from pitools.core.views.inspect import inspect_session
    from pitools.errors import PitoolsError

    rng = rng or random.Random(0)
    raw = load(path, strict=False, migrate=False).session.raw
    assert len(raw.values) == len(raw.lines) == len(raw.offsets) == len(raw.lengths)
    assert all(a < b for a, b in zip(raw.lines, raw.lines[1:], strict=False)), "line numbers not increasing"
    assert all(d.severity in ("error", "warning", "info") for d in raw.diagnostics)
    _validate(path)
    _exercise_secrets(path)
    try:
        session = load(path, strict=False).session
    except PitoolsError:
        return
    if not session.valid:
        return
    data = path.read_bytes()
    dumped = b"".join(migrated_lines(session))
    if not session.migration.needed:
        expected = data if data.endswith(b"\n") or not data else data + b"\n"
        assert dumped == expected, "a v3 file does not dump back byte for byte"
    else:
        again = path.with_name(path.name + ".migrated")
        again.write_bytes(dumped)
        try:
            second = load(again, strict=False).session
            assert second.valid, "the migrated file is not a valid session"
            # A version Number() makes NaN ("x", "null") is "migrated" by Pi on every open
            # without change; pitools mirrors that (reported, not a crash).
            nan_version = any(step.startswith("none") for step in session.migration.steps)
            assert nan_version or not second.migration.needed, "migration is not idempotent"
        finally:
            again.unlink()
    index = SessionIndex.build(session.entries)
    loaded = LoadedSession(session, index)
    index.leaves()
    index.find_cycles()
    flatten_tree(get_tree(index))
    with contextlib.suppress(PitoolsError):
        to_json_bytes(inspect_session(session, index))
    leaves: list[Any] = [index.leaf_id, *index.leaves()[:3]]
    if session.entries and rng.random() < 0.3:
        leaves.append(rng.choice(list(index.by_id)))
    leaves = list({repr(leaf): leaf for leaf in leaves}.values())
    settings = CompactionSettings(keep_recent_tokens=rng.choice([0, 1, 300, 2000, 20000]))
    for leaf in leaves:
        _exercise_leaf(loaded, leaf, settings, rng)
    _exercise_lean(path, loaded, leaves, rng)
    _exercise_views(index)


def _exercise_secrets(path: Path) -> None:
    """``scan`` and ``redact`` on the file: redacting leaves nothing a rescan finds (or refuses)."""
    from pitools.core.secrets.detect import Detector
    from pitools.core.secrets.redact import RedactOptions, Redactor
    from pitools.core.secrets.scan import scan_chunks, scan_lines
    from pitools.errors import PitoolsError

    detector = Detector()
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    by_line = [(f.line, f.kind) for f in scan_lines(lines, detector, file="f")]
    by_chunk = [(f.line, f.kind) for f in scan_chunks([data], detector, file="f")]
    assert by_line == by_chunk, "scan_lines and scan_chunks disagree"
    try:
        redacted = list(Redactor(detector, RedactOptions(key=b"k"), file="f").redact_lines(lines))
    except PitoolsError:
        return
    assert len(redacted) == len(lines)
    left = list(scan_lines(redacted, detector, file="f"))
    assert not left, f"redact left {len(left)} finding(s), e.g. {left[0].kind} on line {left[0].line}"


def _exercise_lean(path: Path, loaded: Any, leaves: list[Any], rng: random.Random) -> None:
    """``context``'s lean load: the same diagnostics, and the same document (or the same error)
    at every leaf as the full load, written in one piece or in consumed pieces. Parsed values
    are dropped and read back, kept, or a mix (how long a stretch is kept is drawn)."""
    from pitools.core.context.build import replay_context
    from pitools.core.js.json.encode import to_json_bytes
    from pitools.core.session import lean as lean_module
    from pitools.core.session.load import load
    from pitools.core.session.tree import mkey
    from pitools.render.context import context_json_chunks
    from tests.oracles.context_document import context_json

    keep_after = lean_module.KEEP_AFTER_BYTES
    lean_module.KEEP_AFTER_BYTES = rng.choice([0, 300, keep_after])
    try:
        lean = load(path, keep="context")
    finally:
        lean_module.KEEP_AFTER_BYTES = keep_after
    if lean.kept != "context":
        assert loaded.session.migration.needed, "a v3 file did not load lean"
        return
    assert lean.session.diagnostics == loaded.session.diagnostics, "lean diagnostics differ"

    def doc(index: Any, leaf: Any, chunks: bool) -> tuple[str, Any]:
        try:
            replay = replay_context(index, leaf)
            if chunks:
                return "ok", b"".join(context_json_chunks(replay, consume=True))
            return "ok", to_json_bytes(context_json(replay)) + b"\n"
        except Exception as exc:  # Pi's own errors: the same on both paths
            return type(exc).__name__, str(exc)

    def own(leaf: Any) -> Any:
        # An object id (a JSON array or object) is a key by identity, as in Pi's Map: the id
        # object from the full load is unknown to the lean load, which holds its own copy of it.
        if type(leaf) not in (list, dict):
            return leaf
        pos = loaded.index.pos_by_id.get(mkey(leaf))
        if pos is None or pos >= len(lean.index.ids) or lean.index.ids[pos] != leaf:
            return leaf
        return lean.index.ids[pos]

    for leaf in leaves:
        want = doc(loaded.index, leaf, False)
        assert doc(lean.index, own(leaf), True) == want, f"lean context differs at leaf {leaf!r}"
    lean.index.close()


def _exercise_leaf(loaded: Any, leaf: Any, settings: Any, rng: random.Random) -> None:
    from pitools.core.compaction.plan import plan_compaction
    from pitools.core.context.build import context_usage, replay_context
    from pitools.core.js.json.encode import to_json_bytes
    from pitools.errors import PitoolsError
    from pitools.render.context import context_json_chunks

    index = loaded.index
    try:
        replay = replay_context(index, leaf)
        seen: set[int] = set()
        for entry in replay.path:
            assert id(entry) not in seen, "a reported path repeats an entry"
            seen.add(id(entry))
        b"".join(context_json_chunks(replay))
        context_usage(replay.projection, replay.path, 200000)
    except PitoolsError:
        pass
    try:
        plan = plan_compaction(loaded, leaf, settings, context_window=rng.choice([1, 1000, 200000]))
        whole = to_json_bytes(plan.to_json())
        # compact --dry-run --format json writes the same document in pieces
        assert b"".join(plan.json_chunks()) == whole, "the streamed plan differs from the whole document"
        if plan.preparation is not None:
            from pitools.core.compaction.prompts import summary_requests

            summary_requests(plan.preparation)
    except PitoolsError:
        pass


def _exercise_views(index: Any) -> None:
    from pitools.errors import PitoolsError

    try:
        from pitools.core.views import branches
    except ImportError:  # pragma: no cover - being written
        return
    for mode in ("default", "all"):
        with contextlib.suppress(PitoolsError):
            branches.tree_view(index, index.leaf_id, mode, home="/home/me")
    with contextlib.suppress(PitoolsError):
        branches.list_branches(index)


def _validate(path: Path) -> None:
    try:
        from pitools.core.validate import validate_file
    except ImportError:  # pragma: no cover - being written
        return
    report = validate_file(path)
    internal = [f for f in report.findings if f.code == "internal-check-error"]
    assert not internal, f"validate hit an internal error: {internal[0].message}"
    # The same file split between this process and a forked child must report the same.
    import pitools.core.validate.parts as parts
    from pitools.ops.parallel import share_work

    saved = parts.SPLIT_MIN_BYTES, parts.PART_BYTES
    parts.SPLIT_MIN_BYTES, parts.PART_BYTES = 1, 256
    try:
        assert validate_file(path, share=share_work) == report, "validate split into parts reports differently"
    finally:
        parts.SPLIT_MIN_BYTES, parts.PART_BYTES = saved


def run_core(
    data: bytes, scratch: Path, kind: str, rng: random.Random | None = None, timeout: float = CORE_TIMEOUT
) -> str | None:
    """Write ``data`` to ``scratch`` and run :func:`exercise_core` under the watchdog.

    Returns None when fine, the known-bug name when a known bug was hit, or raises
    AssertionError naming the saved input.
    """
    scratch.write_bytes(data)
    STATS.runs[kind] += 1
    _progress()
    try:
        with watchdog(timeout), support.cli_recursion_limit():
            exercise_core(scratch, rng)
    except FuzzTimeout as exc:
        path = save_crash(f"{kind}-hang", data, str(exc))
        raise AssertionError(f"core pipeline hung on {path}") from None
    except Exception as exc:
        from pitools.errors import PitoolsError

        if isinstance(exc, PitoolsError) and not isinstance(exc, AssertionError):
            # read_session's "cannot read" and similar: a clean error, fine.
            return None
        detail = "".join(traceback.format_exception(exc))
        bug = known_bug(detail)
        if bug is not None:
            STATS.known[bug] += 1
            return bug
        path = save_crash(kind, data, detail)
        raise AssertionError(f"core pipeline failed on {path}: {type(exc).__name__}: {exc}\n{detail[-3000:]}") from None
    return None


# -- the CLI invariant ---------------------------------------------------------------------------------


def available_commands() -> dict[str, Any]:
    """Subcommands whose module imports today (validate and branches are being written)."""
    import importlib

    from pitools.cli import COMMANDS

    found = {}
    for name, (module, _) in COMMANDS.items():
        try:
            found[name] = importlib.import_module(module).command
        except ImportError:
            continue
    return found


def _formats(command: Any) -> list[str]:
    import click

    for param in command.params:
        if param.name == "format_" and isinstance(param.type, click.Choice):
            return [str(c) for c in param.type.choices]
    return ["human"]


def _has_option(command: Any, flag: str) -> bool:
    return any(flag in getattr(p, "opts", []) for p in command.params)


def cli_invocations(file: str) -> list[list[str]]:
    """Every read-only command of the issue, in each of its output formats, on ``file``."""
    cmds = available_commands()
    out: list[list[str]] = []
    for name in ("inspect", "validate", "context", "tree", "branches"):
        if name in cmds:
            for fmt in _formats(cmds[name]):
                out.append([name, file, "--format", fmt])
    if "migrate" in cmds:
        out.append(["migrate", file, "--check"])
    if "compact" in cmds:
        extra = ["--no-config"] if _has_option(cmds["compact"], "--no-config") else []
        for fmt in _formats(cmds["compact"]):
            out.append(["compact", file, "--dry-run", "--format", fmt, *extra])
        out.append(["compact", file, "--dry-run", "--format", "json", "--keep-recent-tokens", "300", *extra])
    if "navigate" in cmds:
        for fmt in _formats(cmds["navigate"]):
            out.append(["navigate", file, "--to", "L2", "--format", fmt, "--no-config"])
        out.append(["navigate", file, "--to", "L3", "--show-prompt", "--entries", "--no-config"])
    if "watch" in cmds:
        for fmt in _formats(cmds["watch"]):
            out.append(["watch", file, "--once", "--format", fmt, "--no-config"])
    return out


#: stderr lines that inform rather than report a failure (the output layer's message kinds).
INFORMATIONAL = ("pitools: warning", "pitools: note:", "pitools: hint:", "pitools: retry:")


def message_lines(stderr: str) -> list[str]:
    """The non-blank lines of ``stderr``."""
    return [line for line in stderr.splitlines() if line.strip()]


def promise_problem(rc: int | None, stderr: str) -> str | None:
    """What every run promises, whatever the command: exit 0/1, no traceback, and every stderr
    line a ``pitools: `` message. None when it kept that."""
    if rc not in (0, 1):
        return f"exit code {rc}"
    if "Traceback (most recent call last)" in stderr:
        return "traceback on stderr"
    if any(not line.startswith("pitools: ") for line in message_lines(stderr)):
        return "a stderr line does not start with 'pitools: ' (wrapped or foreign output)"
    return None


def outcome_problem(rc: int | None, stderr: str) -> str | None:
    """None when a run kept the promise (:func:`promise_problem`; warnings, notes, hints and
    retries allowed) and at most one of its messages is an error."""
    problem = promise_problem(rc, stderr)
    if problem is not None:
        return problem
    errors = [line for line in message_lines(stderr) if not line.startswith(INFORMATIONAL)]
    if len(errors) > 1:
        return f"{len(errors)} error messages on stderr"
    return None


def run_cli_inprocess(
    args: list[str], timeout: float = CLI_TIMEOUT, debug: bool = False, columns: int = 100
) -> tuple[int | None, str, str]:
    """``pitools ARGS`` via CliRunner under the watchdog: (exit code or None on a hang, stdout, stderr)."""
    from click.testing import CliRunner

    from tests.support import PITOOLS

    runner = CliRunner()
    env = {"PITOOLS_DEBUG": "1" if debug else None, "COLUMNS": str(columns)}
    try:
        # Outside pytest DeprecationWarnings are silent; mirror that, so a library deprecation does
        # not read as a crash under `filterwarnings = error` (click 8.5's get_binary_stream did).
        with watchdog(timeout), warnings.catch_warnings(), support.cli_recursion_limit():
            warnings.simplefilter("ignore", DeprecationWarning)
            result = runner.invoke(PITOOLS, args, catch_exceptions=False, env=env)
    except FuzzTimeout:
        return None, "", f"hang: no result after {timeout:.0f} s"
    except Exception as exc:
        return 3, "", "".join(traceback.format_exception(exc))
    return result.exit_code, result.stdout, result.stderr


def check_cli(
    data: bytes,
    scratch: Path,
    kind: str,
    invocations: list[list[str]] | None = None,
    timeout: float = CLI_TIMEOUT,
) -> list[str]:
    """Run every CLI invocation on ``data`` in-process; returns the known bugs hit, raises on new ones."""
    scratch.write_bytes(data)
    hits = []
    for args in invocations or cli_invocations(str(scratch)):
        STATS.runs[f"cli-{kind}"] += 1
        _progress()
        rc, _out, err = run_cli_inprocess(args, timeout)
        problem = outcome_problem(rc, err)
        if problem is None:
            continue
        if rc is not None:  # rerun with --debug semantics for the traceback (classification, report)
            err = err + "\n" + run_cli_inprocess(args, debug=True)[2]
        bug = known_bug(err)
        if bug is not None:
            STATS.known[bug] += 1
            hits.append(bug)
            continue
        path = save_crash(f"cli-{kind}", data, f"pitools {' '.join(args)}\nexit {rc}\n{err}")
        raise AssertionError(f"`pitools {' '.join(args[:1] + args[2:])}` on {path}: {problem}\n{err[-3000:]}")
    return hits


def _progress() -> None:
    """Long runs: refresh the report every 500 runs, so an interrupted run still says how far it got."""
    if sum(STATS.runs.values()) % 500 == 0:
        write_report()


def write_report() -> None:
    target = os.environ.get("PITOOLS_FUZZ_REPORT")
    if target:
        Path(target).write_text(json.dumps(STATS.to_json(), indent=2) + "\n")
