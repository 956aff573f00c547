"""Golden cases for ``pitools repair`` and ``pitools slim``, built from undamaged sessions.

``golden/repair-<kind>/`` holds ``original.jsonl`` (an undamaged session), ``session.jsonl``
(the same session with one kind of damage: the conformance suite records and checks it like any
other case) and ``repaired.jsonl`` (what ``pitools repair`` makes of it). ``golden/slim-<name>/``
holds ``original.jsonl`` and ``session.jsonl`` (the slimmed file). Pi's own results on
``original.jsonl`` and ``repaired.jsonl`` are recorded by the reference oracle into
``original.pi.json.xz`` / ``repaired.pi.json.xz`` (``python -m tests.golden.repair_cases``
rewrites the cases and records them; ``scripts/record_golden.py CASE...`` records
``session.jsonl``).
"""

from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import support

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden"
SMALL = GOLDEN / "gen-s0012_v3" / "session.jsonl"
MEDIUM = GOLDEN / "gen-s0041_v3" / "session.jsonl"
BRANCHY = GOLDEN / "gen-s0049_v3" / "session.jsonl"


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _obj(line: bytes) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(line)
    return value


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _entry_positions(lines: list[bytes], pred: Callable[[dict[str, Any]], bool]) -> list[int]:
    return [i for i, line in enumerate(lines) if i > 0 and pred(_obj(line))]


# -- damage recipes: original lines -> damaged bytes ---------------------------------------------------


def fused(lines: list[bytes]) -> bytes:
    """Two complete entries on one line (the newline between them lost)."""
    out = list(lines)
    k = len(out) // 2
    out[k] = out[k].rstrip(b"\n") + out.pop(k + 1)
    return b"".join(out)


def torn_fused(lines: list[bytes]) -> bytes:
    """A torn write (an entry cut mid-way) and the next append on the same line."""
    out = list(lines)
    k = len(out) // 2
    out[k] = out[k][: len(out[k]) * 3 // 5] + out.pop(k + 1)
    return b"".join(out)


def torn_tail(lines: list[bytes]) -> bytes:
    """The last line cut mid-way, without its newline."""
    return b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]


def unterminated(lines: list[bytes]) -> bytes:
    """The last line complete but without its newline."""
    return b"".join(lines).rstrip(b"\n")


def bom(lines: list[bytes]) -> bytes:
    return b"\xef\xbb\xbf" + b"".join(lines)


def crlf(lines: list[bytes]) -> bytes:
    return b"".join(line.rstrip(b"\n") + b"\r\n" for line in lines)


def header_not_first(lines: list[bytes]) -> bytes:
    """Two entries before the header (Pi rejects the file)."""
    return b"".join([lines[1], lines[2], lines[0], *lines[3:]])


def no_header(lines: list[bytes]) -> bytes:
    return b"".join(lines[1:])


def bad_header_id(lines: list[bytes]) -> bytes:
    header = _obj(lines[0])
    header["id"] = 12345
    return b"".join([_dump(header), *lines[1:]])


def skipped_lines(lines: list[bytes]) -> bytes:
    """Blank, malformed, falsy and non-object lines among the entries."""
    out = list(lines)
    n = len(out)
    out.insert(n - 1, b"42\n")
    out.insert(n // 2, b'{"type":"message","id":"zz\n')
    out.insert(n // 2, b"   \n")
    out.insert(3, b"null\n")
    out.insert(2, b'["not", "an", "entry"]\n')
    out.insert(1, b"\n")
    return b"".join(out)


def duplicate_id(lines: list[bytes]) -> bytes:
    """An earlier leaf takes the id of the last entry (Pi resolves the id to the later one)."""
    out = list(lines)
    parents = {_obj(line).get("parentId") for line in out[1:]}
    leaves = _entry_positions(out, lambda e: e.get("type") == "message" and e["id"] not in parents)
    early, late = leaves[0], len(out) - 1  # an earlier branch tip takes the id of the last entry
    e = _obj(out[early])
    e["id"] = _obj(out[late])["id"]
    out[early] = _dump(e)
    return b"".join(out)


def cycle(lines: list[bytes]) -> bytes:
    """An early entry's parent becomes a later entry of its own subtree: a loop."""
    out = list(lines)
    positions = _entry_positions(out, lambda e: True)
    a, c = positions[1], positions[4]
    e = _obj(out[a])
    e["parentId"] = _obj(out[c])["id"]
    out[a] = _dump(e)
    return b"".join(out)


def self_parent(lines: list[bytes]) -> bytes:
    out = list(lines)
    k = _entry_positions(out, lambda e: True)[2]
    e = _obj(out[k])
    e["parentId"] = e["id"]
    out[k] = _dump(e)
    return b"".join(out)


def crash_content(lines: list[bytes]) -> bytes:
    """An assistant message whose content is a string (Pi's transformMessages throws)."""
    out = list(lines)
    for k in _entry_positions(out, lambda e: e.get("type") == "message" and e["message"].get("role") == "assistant"):
        e = _obj(out[k])
        blocks = e["message"]["content"]
        if len(blocks) == 1 and blocks[0].get("type") == "text":
            e["message"]["content"] = blocks[0]["text"]
            out[k] = _dump(e)
            return b"".join(out)
    raise AssertionError("no assistant message with a single text block")


def crash_no_message(lines: list[bytes]) -> bytes:
    """A message entry without its message (Pi's getSessionStats throws)."""
    out = list(lines)
    k = _entry_positions(out, lambda e: e.get("type") == "message" and e["message"].get("role") == "user")[0]
    e = _obj(out[k])
    del e["message"]
    out[k] = _dump(e)
    return b"".join(out)


def orphan(lines: list[bytes]) -> bytes:
    out = list(lines)
    k = _entry_positions(out, lambda e: True)[3]
    e = _obj(out[k])
    e["parentId"] = "gone0000"
    out[k] = _dump(e)
    return b"".join(out)


@dataclass(frozen=True)
class RepairCase:
    name: str
    source: Path
    damage: Callable[[list[bytes]], bytes]
    #: Every leaf of the original builds the same context after the repair.
    all_leaves: bool = True
    reattach: bool = False
    #: --cwd for a rebuilt header (None: the original header's cwd).
    needs_cwd: bool = False


REPAIR_CASES = [
    RepairCase("fused", MEDIUM, fused),
    RepairCase("torn-fused", MEDIUM, torn_fused, all_leaves=False),
    RepairCase("torn-tail", SMALL, torn_tail, all_leaves=False),
    RepairCase("unterminated", SMALL, unterminated),
    RepairCase("bom", SMALL, bom),
    RepairCase("crlf", SMALL, crlf),
    RepairCase("header-not-first", SMALL, header_not_first),
    RepairCase("no-header", SMALL, no_header, needs_cwd=True),
    RepairCase("bad-header-id", SMALL, bad_header_id),
    RepairCase("skipped-lines", MEDIUM, skipped_lines),
    RepairCase("duplicate-id", BRANCHY, duplicate_id, all_leaves=False),
    RepairCase("cycle", MEDIUM, cycle, all_leaves=False),
    RepairCase("self-parent", SMALL, self_parent, all_leaves=False),
    RepairCase("crash-content", MEDIUM, crash_content),
    RepairCase("crash-no-message", SMALL, crash_no_message, all_leaves=False),
    RepairCase("orphan", SMALL, orphan, all_leaves=False),
    RepairCase("orphan-reattach", SMALL, orphan, all_leaves=False, reattach=True),
]


def repair_options(case: RepairCase, original: bytes) -> Any:
    from pitools.core.repair.repair import RepairOptions

    header = json.loads(original.split(b"\n", 1)[0])
    return RepairOptions(
        file_name="session.jsonl",
        folder_name=None,
        cwd=header["cwd"] if case.needs_cwd else None,
        reattach=case.reattach,
        new_session_id=header["id"],
        now_timestamp=header["timestamp"],
    )


def repaired_bytes(case: RepairCase, damaged: bytes, original: bytes) -> bytes:
    from pitools.core.repair.repair import plan_repair

    plan = plan_repair(damaged, repair_options(case, original))
    return plan.output_bytes()


@dataclass(frozen=True)
class SlimCase:
    name: str
    source: Path | None
    args: tuple[str, ...]


def image_session() -> bytes:
    """A compacted session with small base64 images in user messages and some tool results."""
    import base64
    import random

    rng = random.Random(15)
    out = []
    for i, line in enumerate(MEDIUM.read_bytes().splitlines(keepends=True)):
        e = _obj(line)
        message = e.get("message") if e.get("type") == "message" else None
        if message and message.get("role") in ("user", "toolResult") and (message["role"] == "user" or i % 3 == 0):
            if type(message.get("content")) is str:
                message["content"] = [{"type": "text", "text": message["content"]}]
            data = base64.b64encode(rng.randbytes(1500)).decode()
            message["content"].append({"type": "image", "data": data, "mimeType": "image/png"})
            line = _dump(e)
        out.append(line)
    return b"".join(out)


SLIM_CASES = [
    SlimCase("images", None, ("--images", "--thinking", "--tool-output", "2000")),
    SlimCase("compacted", GOLDEN / "gen-s0034_v3" / "session.jsonl", ("--tool-output", "500", "--thinking")),
    SlimCase("compacted-images", GOLDEN / "gen-s0005_v3" / "session.jsonl", ("--images", "--tool-output", "200")),
]


def slim_options(args: tuple[str, ...]) -> Any:
    from pitools.core.repair.slim import SlimOptions

    tool = args[args.index("--tool-output") + 1] if "--tool-output" in args else None
    return SlimOptions(
        images="--images" in args, tool_output=int(tool) if tool else None, thinking="--thinking" in args
    )


def slimmed_bytes(original: bytes, args: tuple[str, ...]) -> bytes:
    """The slimmed file, computed by the same core as ``pitools slim`` (in memory)."""
    from pitools.core.repair.slim import plan_slim
    from pitools.core.session.load import line_spans, load

    session = load(original, strict=False, freeze=False).session
    plan = plan_slim(session.entries, slim_options(args))
    by_line = {session.lines[pos]: data for pos, data in plan.replacements.items()}
    lines = (original[start : end + 1] for start, end in line_spans(original))
    return b"".join(by_line.get(n, line) for n, line in enumerate(lines, start=1))


def write_all() -> list[Path]:
    """(Re)write every repair and slim case; returns their folders."""
    folders = []
    for case in REPAIR_CASES:
        folder = GOLDEN / f"repair-{case.name}"
        folder.mkdir(exist_ok=True)
        original = case.source.read_bytes()
        damaged = case.damage(case.source.read_bytes().splitlines(keepends=True))
        (folder / "original.jsonl").write_bytes(original)
        (folder / "session.jsonl").write_bytes(damaged)
        (folder / "repaired.jsonl").write_bytes(repaired_bytes(case, damaged, original))
        folders.append(folder)
    for slim in SLIM_CASES:
        folder = GOLDEN / f"slim-{slim.name}"
        folder.mkdir(exist_ok=True)
        original = image_session() if slim.source is None else slim.source.read_bytes()
        (folder / "original.jsonl").write_bytes(original)
        (folder / "session.jsonl").write_bytes(slimmed_bytes(original, slim.args))
        folders.append(folder)
    return folders


def record_extra(folder: Path, oracle: Path, ref: Path) -> None:
    """Pi's results on ``original.jsonl`` (and ``repaired.jsonl``) at every leaf, default settings."""
    env = dict(os.environ, PI_REF_DIR=str(ref), TZ="UTC")
    for name in ("original", "repaired"):
        source = folder / f"{name}.jsonl"
        if not source.exists():
            continue
        cmd = ["node", "--max-old-space-size=3072", str(oracle), str(source), "--all-leaves"]
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=300, check=False)
        blob = proc.stdout if proc.returncode == 0 else json.dumps({"error": "crash"}).encode()
        (folder / f"{name}.pi.json.xz").write_bytes(lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME))


def load_extra(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(support.recording_text(folder / f"{name}.pi.json.xz"))
    return data


def main(argv: list[str]) -> int:
    """Write every case, then record those named (default: all)."""
    from tests.support import load_script

    record_golden = load_script("record_golden")

    oracle = record_golden.oracle_script()
    ref = record_golden.reference_dir()
    folders = (
        [GOLDEN / a for a in argv] if os.environ.get("PITOOLS_RECORD_ONLY") else write_all()
    )  # PITOOLS_RECORD_ONLY=1: record the named cases as they are (parallel recorders)
    for folder in folders:
        if argv and folder.name not in argv:
            continue
        record_extra(folder, oracle, ref)
        record_golden.record(folder, oracle, ref)
        print(f"recorded {folder.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
