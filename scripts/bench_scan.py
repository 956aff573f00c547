#!/usr/bin/env python3
"""Scanning speed of ``pitools scan`` (target: >= 50 MB/s on the 100 MB bench session).

Two figures per size, median of ``--reps`` runs:

* ``core``: :func:`pitools.ops.scan.scan_file` in this process (reading + prefilter + detectors);
* ``cli``: the whole ``pitools scan --no-pi-keys FILE`` process, start-up included.

Each is given per wall-clock second and per CPU second (user + system: steadier on a shared
machine, as in ``scripts/bench.py``); the target is judged on the CLI's CPU rate.

Sessions come from ``scripts/gen_big.py`` (``bench/data/big-<N>mb.jsonl``, made on first use).

``--shapes`` adds one row per hostile shape of issue 27 (a base64 dump of binary data wrapped at
76, one token repeated in a single string, many short base64-of-text lines, random tokens on
consecutive lines), each at two sizes 4x apart: CPU seconds of ``scan`` and ``redact -o`` in
this process, and the ratio (linear: ~4; quadratic: ~16).
Usage: scripts/bench_scan.py [--sizes 1,10,100] [--reps 3] [--shapes [--shape-kb 200]]
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
    p.add_argument("--shapes", action="store_true", help="time the hostile shapes (linear-time check)")
    p.add_argument("--shape-kb", type=int, default=200, help="size of the smaller shape files (KB)")
    p.add_argument("--no-sizes", action="store_true", help="only the shapes")
    args = p.parse_args(argv)
    if args.shapes:
        shapes(args.shape_kb, args.reps)
        if args.no_sizes:
            return 0
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


def _shape_text(shape: str, kb: int) -> str:
    import base64
    import random

    rng = random.Random(27)
    n = kb * 1000
    if shape == "base64 dump (binary, 76 wide)":
        return base64.encodebytes(rng.randbytes(n * 3 // 4)).decode()
    if shape == "one token repeated":
        token = "Xk4mPq9Zr7Lw2Nc8Vb5TgH3jK6sD1fA0"
        return " ".join([token] * (n // (len(token) + 1)))
    if shape == "base64-of-text lines":
        line = base64.b64encode(b"password=Zq8mW3pL9xR2 and more words").decode()
        return "\n".join([line] * (n // (len(line) + 1)))
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "\n".join("".join(rng.choice(alnum) for _ in range(40)) for _ in range(n // 41))


SHAPES = ("base64 dump (binary, 76 wide)", "one token repeated", "base64-of-text lines", "random tokens, one a line")


def shapes(kb: int, reps: int) -> None:
    """One row per hostile shape: CPU seconds at ``kb`` and ``4 * kb`` KB, and their ratio."""
    import tempfile

    import orjson

    from pitools.core.secrets.detect import Detector
    from pitools.core.secrets.redact import RedactOptions, Redactor
    from pitools.ops.scan import scan_file

    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    print("| shape | size | scan CPU s | redact CPU s | findings | ratio for 4x the input (scan / redact) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in SHAPES:
            times: list[tuple[float, float]] = []
            for size in (kb, 4 * kb):
                entry = {
                    "type": "message",
                    "id": "m",
                    "parentId": None,
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": {"role": "toolResult", "content": [{"type": "text", "text": _shape_text(shape, size)}]},
                }
                path = Path(tmp) / "s.jsonl"
                path.write_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(entry) + b"\n")
                scan_cpu, redact_cpu = [], []
                found = 0
                for _ in range(reps):
                    c = time.process_time()
                    found = len(scan_file(str(path), Detector()))
                    scan_cpu.append(time.process_time() - c)
                    c = time.process_time()
                    redactor = Redactor(Detector(), RedactOptions(key=b"k"), file=str(path))
                    with path.open("rb") as fh:
                        for _line in redactor.redact_lines(fh):
                            pass
                    redact_cpu.append(time.process_time() - c)
                times.append((statistics.median(scan_cpu), statistics.median(redact_cpu)))
                mb = path.stat().st_size / 1e6
                ratio = ""
                if len(times) == 2:
                    ratio = f"{times[1][0] / max(times[0][0], 1e-6):.1f} / {times[1][1] / max(times[0][1], 1e-6):.1f}"
                print(f"| {shape} | {mb:.2f} MB | {times[-1][0]:.3f} | {times[-1][1]:.3f} | {found} | {ratio} |")


if __name__ == "__main__":
    raise SystemExit(main())
