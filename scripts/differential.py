#!/usr/bin/env python3
"""Differential run against Pi 1.6.0 on freshly generated sessions (``make differential``).

Generates sessions with the reference generator (``../shared/reference/gen.py``), runs the
reference oracle on each at every leaf (``run_oracle_all.sh``: keepRecentTokens 20000 and 300),
computes pitools' view of the same files, and reports every difference. Needs node and the
reference package (``PI_REF_DIR``, or it is installed into ``.pi-ref/`` as for ``make golden``).

Usage: scripts/differential.py [--seed N] [--count N] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from pi_reference import oracle_candidates, oracle_path  # noqa: E402
from record_golden import reference_dir  # noqa: E402

from pitools.core.compaction.prepare import CompactionSettings  # noqa: E402
from pitools.core.parity import diff_values, oracle_view  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--count", type=int, default=250)
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "differential")
    args = parser.parse_args(argv)
    oracle = oracle_path()
    if oracle is None:
        print(
            f"differential: Pi's reference oracle is not at {oracle_candidates()[0]} (set PI_ORACLE)", file=sys.stderr
        )
        return 2
    shared = oracle.parent  # the oracle's folder also holds the session generator and its runner
    sessions = args.work / f"gen-{args.seed}"
    outputs = args.work / f"oracle-{args.seed}"
    if not sessions.is_dir():
        subprocess.run(
            [
                sys.executable,
                str(shared / "gen.py"),
                "--seed",
                str(args.seed),
                "--out",
                str(sessions),
                "--count",
                str(args.count),
            ],
            check=True,
        )
    if not outputs.is_dir():
        env = dict(os.environ, PI_REF_DIR=str(reference_dir()))
        subprocess.run(["bash", str(shared / "run_oracle_all.sh"), str(sessions), str(outputs)], check=True, env=env)
    compared = leaves = differing = 0
    for path in sorted(sessions.glob("*.jsonl")):
        for variant, krt in (("", 20000), (".krt300", 300)):
            expected = json.loads((outputs / f"{path.stem}{variant}.json").read_text())
            if expected.get("error") in ("timeout", "crash"):
                print(f"{path.name}{variant}: the oracle itself failed ({expected['error']}); skipped")
                continue
            ours = oracle_view(path, settings=CompactionSettings(keep_recent_tokens=krt))
            compared += 1
            leaves += len(expected.get("byLeaf", {}))
            diffs = diff_values(ours, expected, limit=10)
            if diffs:
                differing += 1
                print(f"== {path.name} (keepRecentTokens {krt})")
                for d in diffs:
                    print(f"   {d}")
    print(f"{compared} session runs, {leaves} leaves compared; {differing} runs differ")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
