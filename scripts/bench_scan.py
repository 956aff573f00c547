#!/usr/bin/env python3
"""Scanning speed of ``pitools scan`` (target: >= 50 MB/s on the 100 MB bench session).

Two figures per size, median of ``--reps`` runs:

* ``core``: :func:`pitools.ops.scan.scan_file` in this process (reading + prefilter + detectors);
* ``cli``: the whole ``pitools scan --no-pi-keys FILE`` process, start-up included.

Each is given per wall-clock second and per CPU second (user + system: steadier on a shared
machine, as in ``scripts/bench.py``); the target is judged on the CLI's CPU rate.

Sessions come from ``scripts/gen_big.py`` (``bench/data/big-<N>mb.jsonl``, made on first use).
Usage: scripts/bench_scan.py [--sizes 1,10,100] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import resource
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
    print("| session | core MB/s (wall / CPU) | cli MB/s (wall / CPU) | findings | target (CLI, CPU) |")
    print("|---|---|---|---|---|")
    ok = True
    for size in sizes:
        path = files[size]
        mb = os.path.getsize(path) / 1e6
        core, core_cpu, cli, cli_cpu = [], [], [], []
        found = 0
        for _ in range(args.reps):
            t, c = time.perf_counter(), time.process_time()
            found = len(scan_file(str(path), Detector()))
            core.append(time.perf_counter() - t)
            core_cpu.append(time.process_time() - c)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "pitools", "scan", "--no-pi-keys", str(path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
            cli.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cli_cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        rate = {
            name: mb / statistics.median(xs)
            for name, xs in (("core", core), ("core_cpu", core_cpu), ("cli", cli), ("cli_cpu", cli_cpu))
        }
        # The target is for the 100 MB session; on small files start-up time dominates.
        if float(size) >= 100:
            met = rate["cli_cpu"] >= TARGET_MB_S
            ok = ok and met
            verdict = f"{'met' if met else 'MISSED'} (>= {TARGET_MB_S:.0f})"
        else:
            verdict = "-"
        print(
            f"| {size} MB | {rate['core']:.0f} / {rate['core_cpu']:.0f} | {rate['cli']:.0f} / {rate['cli_cpu']:.0f} "
            f"| {found} | {verdict} |"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
