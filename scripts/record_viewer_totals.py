#!/usr/bin/env python3
"""Record Pi's context estimate at every entry of the golden sessions (scripts/pi_entry_totals.mjs)
into tests/viewer/fixtures/pi_entry_totals.json.gz: the viewer's per-entry totals are checked
against it (tests/viewer/test_viewer_totals.py). Needs node and Pi 1.6.0 (PI_REF_DIR).

Usage: PI_REF_DIR=... scripts/record_viewer_totals.py
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "viewer" / "fixtures" / "pi_entry_totals.json.gz"


def main() -> int:
    if not os.environ.get("PI_REF_DIR"):
        print("record_viewer_totals: set PI_REF_DIR", file=sys.stderr)
        return 2
    out: dict[str, dict[str, int | None]] = {}
    for session in sorted((ROOT / "golden").glob("*/session.jsonl")):
        case = session.parent.name
        done = subprocess.run(
            ["node", str(ROOT / "scripts" / "pi_entry_totals.mjs"), str(session)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            print(f"record_viewer_totals: {case}: skipped ({done.stderr.strip()[-200:]})", file=sys.stderr)
            continue
        out[case] = json.loads(done.stdout)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(out, indent=0, sort_keys=True) + "\n"
    OUT.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    count = sum(map(len, out.values()))
    print(f"record_viewer_totals: {count} entries of {len(out)} sessions → {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
