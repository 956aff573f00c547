"""How pi-ai's recorded request bodies are stored under golden/: ``<name>.jsonl``, kept small in git.

A recording is ``{"piAi": ..., ["case": ...,] "records": [...]}`` (``scripts/record_requests.mjs``).
On disk it is JSON lines: the first line is the object without ``records``, then one record a line,
each as JavaScript's ``JSON.stringify`` writes it (record_requests.mjs writes them that way too), so
a re-record of unchanged bodies gives the same bytes. Uncompressed on purpose: git stores a
re-recorded file as a delta against the one before (unchanged records cost nothing, a changed body
little), where a gzip stream differs from the first change on and each re-record added the whole
file to the history again (224 versions of ``requests.json.gz``, 32 MB of a 56 MB pack).

Usage:
  scripts/golden_store.py --convert [FILE.json.gz ...]
      rewrite each gzip recording (default: every golden/*/*.json.gz) as FILE.jsonl, check that
      it reads back to the same JSON text, and remove the .json.gz
  scripts/golden_store.py --check
      exit 1, naming them, when a gzip recording is left under golden/
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden"


def stored(folder: Path, name: str) -> Path:
    """``folder/<name>.jsonl``, or a not yet converted ``folder/<name>.json.gz`` when only that exists."""
    lines = folder / f"{name}.jsonl"
    legacy = folder / f"{name}.json.gz"
    return legacy if not lines.exists() and legacy.exists() else lines


def read_recording(path: Path) -> dict[str, Any]:
    """A recording as record_requests.mjs built it, from ``.jsonl`` (or a legacy ``.json.gz``)."""
    if path.name.endswith(".json.gz"):
        value: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
        return value
    head, *records = path.read_bytes().splitlines()
    recording: dict[str, Any] = json.loads(head)
    recording["records"] = [json.loads(line) for line in records]
    return recording


def recording_lines(recording: dict[str, Any]) -> bytes:
    """The ``.jsonl`` bytes of a recording, each value as JSON.stringify writes it."""
    from pitools.core.js.json.encode import to_json_bytes

    head = {k: v for k, v in recording.items() if k != "records"}
    return b"".join(to_json_bytes(v) + b"\n" for v in (head, *recording["records"]))


def convert(path: Path) -> Path:
    """Rewrite one ``.json.gz`` recording as ``.jsonl``; refuse when it would not read back the same."""
    from pitools.core.js.json.encode import to_json_bytes
    from pitools.core.js.json.parse import parse_json_line

    text = gzip.decompress(path.read_bytes())
    recording = parse_json_line(text)[0]
    if not (isinstance(recording, dict) and isinstance(recording.get("records"), list)):
        raise SystemExit(f"golden_store: {path}: not a recording (an object with a records list)")
    if list(recording)[-1] != "records":
        raise SystemExit(f"golden_store: {path}: records is not the last field")
    data = recording_lines(recording)
    target = path.with_name(path.name[: -len(".json.gz")] + ".jsonl")
    target.write_bytes(data)
    if to_json_bytes(read_recording(target)) != text:
        target.unlink()
        raise SystemExit(f"golden_store: {path}: the .jsonl would not read back to the same JSON")
    path.unlink()
    return target


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def leftovers() -> list[Path]:
    return sorted(GOLDEN.glob("*/*.json.gz"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--convert", action="store_true")
    group.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    if args.check:
        left = leftovers()
        for path in left:
            print(f"golden_store: {_shown(path)} is gzip: run scripts/golden_store.py --convert")
        return 1 if left else 0
    for path in [p.resolve() for p in args.files] or leftovers():
        print(_shown(convert(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
