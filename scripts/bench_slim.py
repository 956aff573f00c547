#!/usr/bin/env python3
"""``pitools slim`` against one ``pitools validate -j 1`` pass, on big image-heavy sessions (issue 15).

Target: slim within about 1.5x of validate (CPU and wall, same run), peak memory <= 3x the file.
For each session the two commands run interleaved, ``--reps`` rounds, one process at a time (so
never two 1 GB processes together); each child's wall time, CPU (user + sys, from ``os.wait4``)
and peak RSS are recorded, and the medians printed as a Markdown table together with the file's
size before and after. CPU is the steadier figure on a shared machine.

``--base DIR`` also runs another checkout's slim (``PYTHONPATH=DIR``), e.g. the code before a
change, in the same rounds.

Usage: scripts/bench_slim.py [--data /work/benchdata] [--sizes 200,1000] [--reps 3]
       [--out /tmp/c-slim] [--base DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLIM_ARGS = ["--images", "--thinking", "--tool-output", "65536"]


@dataclass
class Sample:
    wall: float
    cpu: float
    rss: int
    rc: int
    stdout: bytes


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Sample:
    start = time.perf_counter()
    # From a folder without a pitools package in it: `python -m` puts the cwd first on sys.path,
    # which would shadow --base.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    out = proc.stdout.read() if proc.stdout else b""
    err = proc.stderr.read() if proc.stderr else b""
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    rc = os.waitstatus_to_exitcode(status)
    if rc not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({rc}): {err.decode(errors='replace')[-2000:]}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, rc, out)


def pitools(*args: str, pythonpath: str | None = None) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    env.pop("PITOOLS_DEBUG", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return [sys.executable, "-m", "pitools", *args], env


def fmt_s(x: float) -> str:
    return f"{x:.2f} s"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/work/benchdata")
    p.add_argument("--sizes", default="200,1000", help="images-<N>mb.jsonl sessions to run")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", default="/tmp/c-slim", help="folder for the slimmed files (deleted after each run)")
    p.add_argument("--base", help="also run slim from this checkout (PYTHONPATH), for a before/after")
    p.add_argument("--json", help="write the raw samples here")
    args = p.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    raw: dict[str, dict[str, list[dict[str, float]]]] = {}
    for size in [s.strip() for s in args.sizes.split(",") if s.strip()]:
        path = Path(args.data) / f"images-{size}mb.jsonl"
        if not path.exists():
            print(f"skipping {path}: missing", file=sys.stderr)
            continue
        before = path.stat().st_size
        kinds = ["validate", "slim"] + (["slim (base)"] if args.base else [])
        samples: dict[str, list[Sample]] = {k: [] for k in kinds}
        after = 0
        report: dict[str, object] = {}
        for _ in range(args.reps):
            for kind in kinds:
                target = out_dir / f"bench-slim-{size}.jsonl"
                target.unlink(missing_ok=True)
                if kind == "validate":
                    cmd, env = pitools("validate", "-j", "1", str(path))
                else:
                    cmd, env = pitools(
                        "slim",
                        str(path),
                        *SLIM_ARGS,
                        "-o",
                        str(target),
                        "--format",
                        "json",
                        pythonpath=args.base if kind == "slim (base)" else None,
                    )
                s = run(cmd, env, out_dir)
                samples[kind].append(s)
                if kind != "validate":
                    if s.rc != 0:
                        raise SystemExit(f"slim refused or failed on {path}: {s.stdout.decode()[-2000:]}")
                    after = target.stat().st_size
                    report = json.loads(s.stdout)
                    target.unlink()
        raw[str(path)] = {k: [vars(x) | {"stdout": None} for x in v] for k, v in samples.items()}
        med = {
            k: (statistics.median(x.wall for x in v), statistics.median(x.cpu for x in v), max(x.rss for x in v))
            for k, v in samples.items()
        }
        vw, vc, _ = med["validate"]
        for kind in kinds[1:]:
            w, c, rss = med[kind]
            rows.append(
                f"| {path.name} | {kind} | {fmt_s(w)} / {fmt_s(c)} | {fmt_s(vw)} / {fmt_s(vc)} | "
                f"{w / vw:.2f}x / {c / vc:.2f}x | {rss / 1e6:,.0f} MB ({rss / before:.2f}x) | "
                f"{before / 1e6:,.1f} MB -> {after / 1e6:,.1f} MB |"
            )
        inv = report.get("invariant") if isinstance(report, dict) else None
        print(
            f"{path.name}: leaves {inv.get('leaves') if isinstance(inv, dict) else '?'}, "
            f"entries changed {report.get('entriesChanged')}",
            file=sys.stderr,
        )
    print(
        "| session | command | wall / CPU (median) | validate -j 1 wall / CPU | ratio wall / CPU "
        "| peak RSS (/ file) | size before -> after |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for row in rows:
        print(row)
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
