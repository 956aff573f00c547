#!/usr/bin/env python3
"""Scanning speed of ``pitools scan`` (target: >= 50 MB/s on the 100 MB bench session).

Two figures per size, median of ``--reps`` runs:

* ``core``: :func:`pitools.ops.scan.scan_file` in this process (reading + prefilter + detectors);
* ``cli``: the whole ``pitools scan --no-pi-keys FILE`` process, start-up included.

Sessions come from ``scripts/gen_big.py`` (``bench/data/big-<N>mb.jsonl``, made on first use).
Usage: scripts/bench_scan.py [--sizes 1,10,100] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

TARGET_MB_S = 50.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="100")
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args(argv)
    from bench import ensure_data
    from pitools.core.secrets.detect import Detector
    from pitools.ops.scan import scan_file

    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    files = ensure_data(sizes)
    print("| session | core MB/s | cli MB/s | findings | target |")
    print("|---|---|---|---|---|")
    ok = True
    for size in sizes:
        path = files[size]
        mb = os.path.getsize(path) / 1e6
        core, cli = [], []
        found = 0
        for _ in range(args.reps):
            t = time.perf_counter()
            found = len(scan_file(str(path), Detector()))
            core.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "pitools", "scan", "--no-pi-keys", str(path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
            cli.append(time.perf_counter() - t)
        core_rate, cli_rate = mb / statistics.median(core), mb / statistics.median(cli)
        # The target is for the 100 MB session; on small files start-up time dominates.
        if float(size) >= 100:
            met = cli_rate >= TARGET_MB_S
            ok = ok and met
            verdict = f"{'met' if met else 'MISSED'} (>= {TARGET_MB_S:.0f})"
        else:
            verdict = "-"
        print(f"| {size} MB | {core_rate:.0f} | {cli_rate:.0f} | {found} | {verdict} |")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
